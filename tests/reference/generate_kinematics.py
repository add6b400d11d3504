"""Regenerate the pinocchio golden values used by tests/kinematics/test_against_pinocchio.py.

    pip install pin      # pinocchio's PyPI wheel
    python tests/reference/generate_kinematics.py

For each robot in ``ROBOTS`` (URDFs copied from example-robot-data into
tests/reference/robots/, see NOTICE.md there) it writes ``kinematics_<name>.npz`` with,
for 24 random configurations: the pose and LOCAL_WORLD_ALIGNED Jacobian of every link
frame, the link frame velocities, the centre of mass, ``integrate`` and ``difference``,
plus the model's joint names, nq, nv and total mass.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pinocchio as pin

HERE = pathlib.Path(__file__).parent
ROBOTS = {
    # name: (urdf file, floating base)
    "ur5": ("ur5_robot.urdf", False),
    "panda": ("panda.urdf", False),
    "solo12": ("solo12.urdf", True),
    "anymal_b": ("anymal_b.urdf", True),
    # every joint kind, branching (written for jaxwrap)
    "all_joints": ("all_joints.urdf", True),
}
NUM_CONFIGURATIONS = 24


def generate(name: str, urdf: str, floating: bool) -> None:
    path = str(HERE / "robots" / urdf)
    if floating:
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    else:
        model = pin.buildModelFromUrdf(path)
    # Unbounded translations (free-flyer, planar): sample them from [-1, 1].
    unbounded = ~np.isfinite(model.lowerPositionLimit) | (np.abs(model.lowerPositionLimit) > 1e10)
    model.lowerPositionLimit[unbounded] = -1.0
    unbounded = ~np.isfinite(model.upperPositionLimit) | (np.abs(model.upperPositionLimit) > 1e10)
    model.upperPositionLimit[unbounded] = 1.0
    data = model.createData()
    seed = sum(map(ord, name))
    pin.seed(seed)
    rng = np.random.default_rng(seed)

    links = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
    frame_ids = [model.getFrameId(link, pin.FrameType.BODY) for link in links]
    out = {k: [] for k in ("q", "v", "q_next", "q_other", "difference", "poses", "jacobians", "velocities", "com")}
    for _ in range(NUM_CONFIGURATIONS):
        q = pin.randomConfiguration(model)
        v = rng.normal(size=model.nv)
        q1 = pin.randomConfiguration(model)
        pin.forwardKinematics(model, data, q, v)
        pin.updateFramePlacements(model, data)
        pin.computeJointJacobians(model, data, q)
        out["q"].append(q)
        out["v"].append(v)
        out["q_next"].append(pin.integrate(model, q, v))
        out["q_other"].append(q1)
        out["difference"].append(pin.difference(model, q, q1))
        out["poses"].append([data.oMf[f].homogeneous for f in frame_ids])
        out["jacobians"].append(
            [pin.getFrameJacobian(model, data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) for f in frame_ids]
        )
        out["velocities"].append(
            [
                np.stack(
                    [
                        pin.getFrameVelocity(model, data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).angular,
                        pin.getFrameVelocity(model, data, f, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).linear,
                    ]
                )
                for f in frame_ids
            ]
        )
        out["com"].append(pin.centerOfMass(model, data, q))
    np.savez_compressed(
        HERE / f"kinematics_{name}.npz",
        urdf=urdf,
        floating_base=floating,
        joint_names=np.array(list(model.names)[1:]),
        nq=model.nq,
        nv=model.nv,
        total_mass=pin.computeTotalMass(model),
        links=np.array(links),
        q=np.array(out["q"]),
        v=np.array(out["v"]),
        q_next=np.array(out["q_next"]),
        q_other=np.array(out["q_other"]),
        difference=np.array(out["difference"]),
        poses=np.array(out["poses"]),
        jacobians=np.array(out["jacobians"]),
        velocities=np.array(out["velocities"]),
        com=np.array(out["com"]),
        pinocchio_version=pin.__version__,
    )
    print(f"{name}: nq={model.nq} nv={model.nv} links={len(links)} -> kinematics_{name}.npz")


if __name__ == "__main__":
    for robot, (urdf_file, floating_base) in ROBOTS.items():
        generate(robot, urdf_file, floating_base)
