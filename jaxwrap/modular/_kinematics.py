"""Poses, Jacobians, mass and centre of gravity of a configuration.

Every function here computes the mechanism from the configuration's parameters inside
the trace (`to_robot_model` builds a `RobotModel` whose placements, inertias and limits
are traced expressions of module parameters), so `jax.grad` with respect to link
lengths, and `vmap` over designs, go through without rebuilding anything.

Attachment rule (docs/modular.md#graph), for child module M hanging from parent frame P::

    X_PM = C_P[k] @ Rz(twist) @ Ry(pi) @ inverse(C_M[k'])

with ``C_P[k]`` the parent's connector and ``C_M[k']`` the child's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float, Real

from .._kinematics import RobotModel
from .._kinematics._joints import JOINT_KINDS
from .._kinematics._model import forward_kinematics, jacobian_from_poses
from .._misc import axis_rotation
from .._spatial import Transform
from ._configuration import ALL, BASE_ONLY, CHAINS_ONLY, Configuration, num_base_dofs
from ._module import POINT_MINUS_Z, MassProperties, combine, transform_mass


def _flip_twist(twist: Array) -> Transform:
    R = axis_rotation(twist, 2) @ jnp.asarray(POINT_MINUS_Z, dtype=twist.dtype)
    return Transform(R, jnp.zeros(3, dtype=twist.dtype))


def module_placements(config: Configuration) -> Transform:
    """``X_BM`` of every module instance (leading axis n_instances): the module frame in
    the frame of its body (`Instance.body`; for a joint module, the housing's body)."""
    s = config.structure
    dtype = config.twists.dtype
    out: list[Transform] = []
    for i, inst in enumerate(s.instances):
        if inst.parent < 0:
            out.append(Transform.identity(dtype=dtype))
            continue
        a = config.attachments[inst.attachment]
        parent_module = config.module_of(inst.parent)
        # A joint's output connectors are in its output frame, the origin of the body the
        # child sits on; anything else's connectors are in its module frame.
        X_BP = Transform.identity(dtype=dtype) if parent_module.kind == "joint" else out[inst.parent]
        C_parent = parent_module.connectors(config.params_of(inst.parent))[a.parent_connector]
        C_child = config.module_of(i).connectors(config.params_of(i))[a.child_connector]
        out.append(X_BP @ C_parent @ _flip_twist(config.twists[inst.attachment]) @ C_child.inverse())
    return Transform.stack(out)


def body_mass_properties(config: Configuration, X_BM: Transform | None = None) -> MassProperties:
    """Mass, centre of mass and inertia of every body (n_bodies), in the body frame."""
    s = config.structure
    X_BM = module_placements(config) if X_BM is None else X_BM
    dtype = config.twists.dtype
    per_body: list[list[MassProperties]] = [[] for _ in range(s.num_bodies)]
    for i, inst in enumerate(s.instances):
        m = config.module_of(i).mass_properties(config.params_of(i))
        per_body[inst.body].append(transform_mass(X_BM[i], m))
    zero = MassProperties(jnp.zeros((), dtype), jnp.zeros(3, dtype), jnp.zeros((3, 3), dtype))
    bodies = [combine(parts) if parts else zero for parts in per_body]
    return MassProperties(*(jnp.stack(x) for x in zip(*bodies)))


class Mechanism(NamedTuple):
    """What one pass over the module tree gives: the `RobotModel`, every module's
    placement in its body (``X_BM``) and every body's mass properties."""

    model: RobotModel
    X_BM: Transform
    mass: MassProperties


def to_robot_model(config: Configuration) -> RobotModel:
    """The configuration's mechanism as a `RobotModel` (Darwin2K's ``mechanism``): body 0
    the world, body 1 the base (``root_joint``: fixed, planar or floating), then one body
    per joint module, named after the module instance. Traceable: its arrays are
    expressions of the configuration's parameters."""
    return mechanism(config).model


def mechanism(config: Configuration) -> Mechanism:
    """`to_robot_model` with the module placements and body masses it is built from."""
    s = config.structure
    dtype = config.twists.dtype
    X_BM = module_placements(config)
    base = config.base
    identity = Transform.identity(dtype=dtype)
    placements = [identity, identity] + [X_BM[s.body_owner[b]] for b in range(2, s.num_bodies)]
    axes = np.zeros((s.num_bodies, 3))
    axes[2:, 2] = 1.0
    kinds = ("root", base.joint_kind) + tuple(config.module_of(j).joint_kind for j in s.joints)
    base_kind = JOINT_KINDS[base.joint_kind]
    base_params = config.params_of(0)
    inf = jnp.full(base_kind.nq, jnp.inf, dtype=dtype)
    lower = [-inf] + [config.params_of(j)["lower"][None] for j in s.joints]
    upper = [inf] + [config.params_of(j)["upper"][None] for j in s.joints]
    velocity = [base.max_velocities(base_params)] + [
        config.module_of(j).max_vel(config.params_of(j))[None] for j in s.joints
    ]
    effort = [base.drive_limits(base_params)] + [
        config.module_of(j).max_torque(config.params_of(j), 0.0, False)[None] for j in s.joints
    ]
    mass = body_mass_properties(config, X_BM)
    q_starts, v_starts, nq, nv = [0], [0], 0, 0
    for kind in kinds[1:]:
        q_starts.append(nq)
        v_starts.append(nv)
        nq += JOINT_KINDS[kind].nq
        nv += JOINT_KINDS[kind].nv
    names = ("world",) + tuple(s.instances[s.body_owner[b]].name for b in range(1, s.num_bodies))
    model = RobotModel(
        joint_placements=Transform.stack(placements),
        joint_axes=jnp.asarray(axes, dtype=dtype),
        body_masses=mass.mass,
        body_coms=mass.com,
        body_inertias=mass.inertia,
        lower_position_limit=jnp.concatenate(lower).astype(dtype),
        upper_position_limit=jnp.concatenate(upper).astype(dtype),
        velocity_limit=jnp.concatenate(velocity).astype(dtype),
        effort_limit=jnp.concatenate(effort).astype(dtype),
        name=config.label,
        body_names=names,
        body_joint_names=("", "root_joint") + names[2:],
        body_joint_kinds=kinds,
        body_parents=s.body_parent,
        body_q_starts=tuple(q_starts),
        body_v_starts=tuple(v_starts),
        nq=nq,
        nv=nv,
    )
    return Mechanism(model, X_BM, mass)


def neutral(config: Configuration) -> Float[Array, " nq"]:
    """The zero configuration (joints at 0, base at the origin)."""
    from .._kinematics._model import neutral as model_neutral

    return model_neutral(to_robot_model(config))


class ConfigurationPose(eqx.Module):
    """The result of `update_pose`: world poses of bodies, modules and end points (TCPs)."""

    body_poses: Transform  # (n_bodies,) X_GB
    module_poses: Transform  # (n_instances,) X_GM; a joint module's frame is its housing's
    end_point_poses: Transform  # (n_end_points,) the TCP frames


def _tcp_in_body(config: Configuration, X_BM: Transform) -> Transform:
    frames = []
    for i in config.structure.end_points:
        frames.append(X_BM[i] @ config.module_of(i).tcp(config.params_of(i)))
    if not frames:
        return Transform.identity((0,), dtype=config.twists.dtype)
    return Transform.stack(frames)


def check_q(config: Configuration, model: RobotModel, q) -> Array:
    q = jnp.asarray(q)
    if q.shape != (model.nq,):
        raise ValueError(
            f"q must have shape ({model.nq},) for configuration {config.label!r} (base "
            f"{model.body_joint_kinds[1]} + {config.num_joints()} joints), got {q.shape}; batch with jax.vmap"
        )
    return q if jnp.issubdtype(q.dtype, jnp.floating) else q.astype(config.twists.dtype)


def update_pose(config: Configuration, q: Real[ArrayLike, " nq"] | Sequence) -> ConfigurationPose:
    """Poses from the joint vector (Darwin2K ``updatePose``). ``q`` is `RobotModel`'s:
    base coordinates first (planar: x, y, cos, sin; free: x, y, z, qx, qy, qz, qw), then
    one per joint in joint order."""
    return posed(config, q)[1]


def posed(config: Configuration, q: Real[ArrayLike, " nq"] | Sequence) -> tuple[Mechanism, ConfigurationPose]:
    """The `Mechanism` and the `update_pose` result, from one pass (what the metrics share)."""
    mech = mechanism(config)
    q = check_q(config, mech.model, q)
    X_GB = forward_kinematics(mech.model, q)
    bodies = np.array([inst.body for inst in config.structure.instances])
    X_GM = X_GB[bodies] @ mech.X_BM
    ep_bodies = np.array([config.structure.instances[i].body for i in config.structure.end_points], dtype=int)
    X_G_tcp = X_GB[ep_bodies] @ _tcp_in_body(config, mech.X_BM)
    return mech, ConfigurationPose(X_GB, X_GM, X_G_tcp)


def end_point_poses(config: Configuration, q: Real[ArrayLike, " nq"] | Sequence) -> Transform:
    """World TCP frames of every end point (n_end_points,)."""
    return update_pose(config, q).end_point_poses


def dof_mask(config: Configuration) -> Float[Array, " nv"]:
    """1 where a DOF may move: the motion mode's columns, minus locked joints."""
    n_base = num_base_dofs(config)
    base = jnp.full(n_base, 1.0 if config.motion_mode in (BASE_ONLY, ALL) else 0.0, dtype=config.locked.dtype)
    chains = (1.0 if config.motion_mode in (CHAINS_ONLY, ALL) else 0.0) * (1.0 - config.locked)
    return jnp.concatenate([base, chains])


def compute_jacobian(
    config: Configuration, q: Real[ArrayLike, " nq"] | Sequence, include_rotations: bool = True
) -> Float[Array, "rows nv"]:
    """Jacobian of all end points (Darwin2K ``computeJacobian``): for each TCP, 3 rows of
    linear velocity and (``include_rotations``) 3 of angular velocity, world axes; columns
    in ``v`` order, zero where the motion mode excludes a DOF or a joint is locked."""
    mech, pose = posed(config, q)
    model, X_GB = mech.model, pose.body_poses
    tcp = _tcp_in_body(config, mech.X_BM)
    rows = 6 if include_rotations else 3
    blocks = []
    for k, i in enumerate(config.structure.end_points):
        body = config.structure.instances[i].body
        blocks.append(jacobian_from_poses(model, X_GB, body, tcp[k].translation)[:rows])
    if not blocks:
        return jnp.zeros((0, model.nv), dtype=X_GB.translation.dtype)
    return jnp.concatenate(blocks) * dof_mask(config)


def chain_dofs(config: Configuration, chain: int) -> slice:
    """The velocity coordinates of a serial chain (Darwin2K ``serialChain::offset``)."""
    if not 0 <= chain < config.num_chains():
        raise ValueError(f"chain {chain} does not exist; the configuration has {config.num_chains()}")
    joints = config.structure.chains[chain].joints
    start = num_base_dofs(config) + joints[0]
    return slice(start, start + len(joints))


def compute_chain_jacobian(
    config: Configuration,
    q: Real[ArrayLike, " nq"] | Sequence,
    chain: int,
    link: str | int,
    point: Real[ArrayLike, "3"] | Sequence = (0.0, 0.0, 0.0),
    include_rotations: bool = True,
) -> Float[Array, "rows chain_dofs"]:
    """Jacobian of a point on a link with respect to one chain's DOFs (Darwin2K
    ``computeJacobian(Jc, chain, link, xlink, includeRotations)``).

    **Arguments:** `chain` index; `link`: a module instance name (``point`` in that
    module's frame; a joint module's output frame) or a body index (``point`` in the body
    frame); `include_rotations`: 6 rows (linear; angular) or 3.
    """
    mech, pose = posed(config, q)
    model, X_GB = mech.model, pose.body_poses
    point = jnp.asarray(point, dtype=X_GB.translation.dtype)
    if isinstance(link, str):
        i = config.instance_index(link)
        inst = config.structure.instances[i]
        if config.module_of(i).kind == "joint":
            body, p_B = inst.output_body, point
        else:
            body, p_B = inst.body, mech.X_BM[i].apply(point)
    else:
        body, p_B = model.resolve_body(link), point
    J = jacobian_from_poses(model, X_GB, body, p_B)[: 6 if include_rotations else 3]
    cols = chain_dofs(config, chain)
    return (J * dof_mask(config))[:, cols]


# ---------------------------------------------------------------------------- mass and CG
def _payload_masses(config: Configuration, X_G_tcp: Transform) -> list[tuple[Array, Array]]:
    out = []
    for e, payload in enumerate(config.payloads):
        if payload is not None:
            out.append((payload.mass, (X_G_tcp[e] @ payload.X_TP).apply(payload.com)))
    return out


def compute_mass(config: Configuration) -> Float[Array, ""]:
    """Total mass of all modules (base included) and payloads (Darwin2K ``computeMass``)."""
    masses = [config.module_of(i).mass_properties(config.params_of(i)).mass for i in range(config.num_modules())]
    masses += [p.mass for p in config.payloads if p is not None]
    return jnp.sum(jnp.stack(masses))


def compute_cg(
    config: Configuration, q: Real[ArrayLike, " nq"] | Sequence
) -> tuple[Float[Array, ""], Float[Array, "3"]]:
    """Mass and world centre of gravity of modules and payloads (Darwin2K ``computeCG``)."""
    return cg_from_pose(config, *posed(config, q))


def cg_from_pose(config: Configuration, mech: Mechanism, pose: ConfigurationPose) -> tuple[Array, Array]:
    body_mass = mech.mass
    masses = [body_mass.mass]
    points = [pose.body_poses.apply(body_mass.com)]
    for m, c in _payload_masses(config, pose.end_point_poses):
        masses.append(m[None])
        points.append(c[None])
    masses, points = jnp.concatenate(masses), jnp.concatenate(points)
    total = jnp.sum(masses)
    safe = jnp.where(total > 0, total, 1.0)
    return total, jnp.where(total > 0, jnp.sum(masses[:, None] * points, axis=0) / safe, 0.0)
