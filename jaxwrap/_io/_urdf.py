"""URDF import through yourdfpy (kinematics and inertia only; meshes are never loaded)."""

from __future__ import annotations

import io
import logging
import os
import xml.etree.ElementTree as ET

import numpy as np

from .._kinematics._joints import JOINT_KINDS
from .._kinematics._spec import WORLD, ModelSpec
from ._urdf_validation import validate_urdf


def _read_text(path_or_xml: str) -> tuple[str, str]:
    """Return (xml text, label for messages)."""
    if isinstance(path_or_xml, os.PathLike):
        path_or_xml = os.fspath(path_or_xml)
    if not isinstance(path_or_xml, str):
        raise TypeError(f"load_urdf expects a path or an XML string, got {type(path_or_xml).__name__}")
    if path_or_xml.lstrip().startswith("<"):
        return path_or_xml, "<URDF string>"
    if not os.path.exists(path_or_xml):
        raise ValueError(f"URDF file {path_or_xml!r} does not exist (and the text is not XML)")
    with open(path_or_xml, encoding="utf-8") as f:
        return f.read(), path_or_xml


def _parse(text: str, label: str):
    try:
        root = ET.fromstring(text.encode("utf-8"))
    except ET.ParseError as error:
        raise ValueError(f"malformed URDF XML in {label}: {error}") from None
    if root.tag != "robot":
        raise ValueError(f"{label}: the root element is <{root.tag}>, expected <robot>")
    validate_urdf(root, label)
    import yourdfpy

    # yourdfpy logs parse fallbacks at INFO/WARNING level; keep imports quiet.
    logger = logging.getLogger("yourdfpy")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        urdf = yourdfpy.URDF.load(
            io.BytesIO(text.encode("utf-8")),
            load_meshes=False,
            build_scene_graph=False,
            load_collision_meshes=False,
            build_collision_scene_graph=False,
        )
    finally:
        logger.setLevel(previous)
    return urdf.robot


def _origin(matrix) -> np.ndarray:
    return np.eye(4) if matrix is None else np.asarray(matrix, dtype=float)


def read_urdf(path_or_xml: str | os.PathLike, floating_base: bool = False) -> ModelSpec:
    """Translate a URDF into a `ModelSpec` (see `jaxwrap.load_urdf` for the conventions)."""
    text, label = _read_text(path_or_xml)
    robot = _parse(text, label)
    links = {link.name: link for link in robot.links}
    if len(links) != len(robot.links):
        raise ValueError(f"{label}: a link name is used twice")

    for joint in robot.joints:
        if joint.type not in JOINT_KINDS:
            raise ValueError(f"{label}: joint {joint.name!r} has unknown type {joint.type!r}")
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in links:
                raise ValueError(f"{label}: joint {joint.name!r} names {role} link {link!r}, which is not defined")
        if joint.type == "planar":
            axis = np.asarray(joint.axis if joint.axis is not None else (0, 0, 1), dtype=float)
            if np.linalg.norm(np.cross(axis, (0.0, 0.0, 1.0))) > 1e-12 or axis[2] <= 0:
                raise ValueError(
                    f"{label}: planar joint {joint.name!r} has axis {axis.tolist()}; only (0 0 1) is "
                    "supported (motion in the joint frame's xy plane, as pinocchio)"
                )

    children = {j.child for j in robot.joints}
    roots = [name for name in links if name not in children]
    if not roots:
        raise ValueError(f"{label}: every link has a parent joint, so the joints form a cycle")
    if len(roots) > 1:
        raise ValueError(f"{label}: several root links {roots}; a URDF must form a single tree")
    root = roots[0]

    spec = ModelSpec(robot.name or "robot")
    for link in robot.links:
        if link.name == root and root == WORLD:
            continue  # a link called "world" is jaxwrap's body 0
        inertial = link.inertial
        if inertial is None:
            spec = spec.add_body(link.name)
            continue
        mass = 0.0 if inertial.mass is None else float(inertial.mass)
        if mass < 0:
            raise ValueError(f"{label}: link {link.name!r} has negative mass {mass}")
        X = _origin(inertial.origin)
        inertia = np.zeros((3, 3)) if inertial.inertia is None else np.asarray(inertial.inertia, dtype=float)
        spec = spec.add_body(link.name, mass=mass, com=X[:3, 3], inertia=X[:3, :3] @ inertia @ X[:3, :3].T)

    if root != WORLD:
        kind = "floating" if floating_base else "fixed"
        spec = spec.add_joint("root_joint", kind, WORLD, root)

    # urdfdom keeps joints in a name-sorted map, so siblings are visited in joint-name order.
    for joint in sorted(robot.joints, key=lambda j: j.name):
        kind = joint.type  # URDF joint types are jaxwrap's joint kinds
        axis = np.asarray(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
        if kind in ("revolute", "continuous", "prismatic") and np.linalg.norm(axis) < 1e-12:
            raise ValueError(f"{label}: joint {joint.name!r} has a zero axis")
        limit = joint.limit
        lower = upper = velocity = effort = None
        if limit is not None:
            if kind in ("revolute", "prismatic"):
                lower = limit.lower if limit.lower is not None else 0.0
                upper = limit.upper if limit.upper is not None else 0.0
            velocity = limit.velocity
            effort = limit.effort
        if kind == "floating":
            lower = upper = None  # URDF floating joints carry no position limits
        parent = WORLD if joint.parent == root and root == WORLD else joint.parent
        spec = spec.add_joint(
            joint.name,
            kind,
            parent,
            joint.child,
            placement=_origin(joint.origin),
            axis=axis if kind != "planar" else (0.0, 0.0, 1.0),
            lower=lower,
            upper=upper,
            velocity=velocity,
            effort=effort,
        )
    return spec
