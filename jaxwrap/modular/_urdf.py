"""`to_urdf`: a configuration's mechanism as URDF text, so a design opens in any robotics tool.

One URDF link per rigid body (named after the base or joint module that owns it), one
joint per joint module, numbers written with 17 significant digits so that
``RobotModel.from_urdf(to_urdf(config))`` reproduces `to_robot_model` to rounding. The
base's joint from the world follows `RobotModel.from_urdf`'s conventions: a fixed base is
the URDF root (the reader welds it to the world), a planar base hangs from a ``world``
link by a ``planar`` joint, and a free-flying base is the root of a file to be read with
``floating_base=True``.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

from .._misc import concrete_value
from ._configuration import Configuration
from ._kinematics import to_robot_model


def _num(x: float) -> str:
    return repr(float(x))


def _vec(v) -> str:
    return " ".join(_num(x) for x in v)


def rotation_to_rpy(R: np.ndarray) -> tuple[float, float, float]:
    """URDF's fixed-axis roll, pitch, yaw (``R = Rz(yaw) Ry(pitch) Rx(roll)``); at
    pitch = +-pi/2 the yaw is set to 0."""
    R = np.asarray(R, dtype=float)
    cos_pitch = math.hypot(R[0, 0], R[1, 0])
    pitch = math.atan2(-R[2, 0], cos_pitch)
    if cos_pitch > 1e-12:
        return math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])
    return math.atan2(-R[1, 2], R[1, 1]), pitch, 0.0


def to_urdf(config: Configuration, name: str | None = None) -> str:
    """URDF text of the configuration's mechanism (needs concrete parameters, not traced).

    Link inertials carry each body's mass, centre of mass and inertia; joints carry their
    placement, axis (z) and limits (position, velocity = `max_vel`, effort =
    `max_torque` at rest). The ``q`` layout of the file read back equals the
    configuration's.
    """
    model = to_robot_model(config)
    leaves = [concrete_value(x) for x in (model.body_masses, model.joint_placements.rotation)]
    if any(v is None for v in leaves):
        raise ValueError("to_urdf needs concrete parameter values; call it outside jit/grad/vmap")
    masses = np.asarray(model.body_masses)
    coms = np.asarray(model.body_coms)
    inertias = np.asarray(model.body_inertias)
    R = np.asarray(model.joint_placements.rotation)
    p = np.asarray(model.joint_placements.translation)
    lower, upper = np.asarray(model.lower_position_limit), np.asarray(model.upper_position_limit)
    velocity, effort = np.asarray(model.velocity_limit), np.asarray(model.effort_limit)

    robot = ET.Element("robot", name=name or config.label)
    base_kind = model.body_joint_kinds[1]
    if base_kind == "planar":
        ET.SubElement(robot, "link", name="world")
    for b in range(1, model.num_bodies):
        link = ET.SubElement(robot, "link", name=model.body_names[b])
        inertial = ET.SubElement(link, "inertial")
        ET.SubElement(inertial, "origin", xyz=_vec(coms[b]), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=_num(masses[b]))
        I = inertias[b]
        ET.SubElement(
            inertial,
            "inertia",
            ixx=_num(I[0, 0]),
            ixy=_num(I[0, 1]),
            ixz=_num(I[0, 2]),
            iyy=_num(I[1, 1]),
            iyz=_num(I[1, 2]),
            izz=_num(I[2, 2]),
        )
    if base_kind == "planar":
        joint = ET.SubElement(robot, "joint", name="root_joint", type="planar")
        ET.SubElement(joint, "parent", link="world")
        ET.SubElement(joint, "child", link=model.body_names[1])
        ET.SubElement(joint, "axis", xyz="0 0 1")
        ET.SubElement(joint, "limit", effort=_num(np.min(effort[:3])), velocity=_num(np.min(velocity[:3])))
    for b in range(2, model.num_bodies):
        kind = model.body_joint_kinds[b]
        joint = ET.SubElement(robot, "joint", name=model.body_joint_names[b], type=kind)
        ET.SubElement(joint, "parent", link=model.body_names[model.body_parents[b]])
        ET.SubElement(joint, "child", link=model.body_names[b])
        ET.SubElement(joint, "origin", xyz=_vec(p[b]), rpy=_vec(rotation_to_rpy(R[b])))
        ET.SubElement(joint, "axis", xyz="0 0 1")
        qi, vi = model.body_q_starts[b], model.body_v_starts[b]
        ET.SubElement(
            joint,
            "limit",
            lower=_num(lower[qi]),
            upper=_num(upper[qi]),
            velocity=_num(velocity[vi]),
            effort=_num(effort[vi]),
        )
    ET.indent(robot)
    return ET.tostring(robot, encoding="unicode") + "\n"
