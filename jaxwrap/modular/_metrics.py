"""Design metrics: tip-over energy stability, joint-limit gradient, velocity limits and the
per-DOF motor queries of Darwin2K's ``configuration`` (``maxVel``, ``maxTorque``,
``contTorque``, ``power``, ``isPassive``). Formulas: docs/modular.md#metrics.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Real

from .._misc import safe_norm
from ._configuration import Configuration, num_base_dofs
from ._kinematics import cg_from_pose, posed, update_pose

STANDARD_GRAVITY = (0.0, 0.0, -9.81)


# ---------------------------------------------------------------------------- energy stability
def energy_stability(
    support_points: Real[ArrayLike, "k 3"] | Sequence,
    cg: Real[ArrayLike, "3"] | Sequence,
    mass: Real[ArrayLike, ""],
    gravity: Real[ArrayLike, "3"] | Sequence = STANDARD_GRAVITY,
    stable_point: Real[ArrayLike, "3"] | Sequence | None = None,
    softness: float | None = None,
) -> Float[Array, ""]:
    """Energy (J) needed to tip the robot over the nearest edge of its support polygon
    (the Messuri-Klein energy stability margin).

    For each edge (s_k, s_k+1) with unit direction e and up = -g/|g|, the centre of
    gravity rises by ``h = |r_perp| |u_perp| - r_perp . up`` (r_perp, u_perp: the CG
    offset and up, perpendicular to e) before it passes over the edge; the margin is
    ``m |g| min_k h``. When the CG projects (along gravity) outside the polygon the result
    is ``-m |g| d``, with d the largest distance outside an edge, so the value is
    continuous and its sign says which side the CG is on.

    **Arguments:** `support_points` (k, 3), in order around the polygon; `cg`, `mass`;
    `gravity`; `stable_point`, a point inside the polygon (default: the vertices' mean)
    that fixes which side of each edge is inside; `softness`: None for the exact minimum,
    or an energy scale for the smooth ``-softness * logsumexp(-E_k / softness)``.
    """
    s0, cg, mass, gravity = (jnp.asarray(x) for x in (support_points, cg, mass, gravity))
    dtype = jnp.result_type(s0, cg, mass, float)
    s0, cg, mass, gravity = (x.astype(dtype) for x in (s0, cg, mass, gravity))
    stable = jnp.mean(s0, axis=0) if stable_point is None else jnp.asarray(stable_point, dtype=dtype)
    g = safe_norm(gravity)
    up = -gravity / jnp.where(g > 0, g, 1.0)
    s1 = jnp.roll(s0, -1, axis=0)
    edge = s1 - s0
    e = edge / safe_norm(edge)[:, None]
    r = cg - s0
    r_perp = r - jnp.sum(r * e, axis=1)[:, None] * e
    u_perp = up - (e @ up)[:, None] * e
    h = safe_norm(r_perp) * safe_norm(u_perp) - r_perp @ up
    # Which side of each edge's vertical plane the CG is on, relative to the stable point.
    n = jnp.cross(e, up)
    n_len = safe_norm(n)
    side = jnp.sign(jnp.sum(n * (stable - s0), axis=1))
    outside = jnp.maximum(-side * jnp.sum(n * r, axis=1) / jnp.where(n_len > 0, n_len, 1.0), 0.0)
    weight = mass * g
    energies = weight * h
    if softness is None:
        inside_value = jnp.min(energies)
    else:
        inside_value = -softness * jax.nn.logsumexp(-energies / softness)
    d = jnp.max(outside)
    return jnp.where(d > 0, -weight * d, inside_value)


def support_polygon(
    config: Configuration, q: Real[ArrayLike, " nq"] | Sequence
) -> tuple[Float[Array, "k 3"], Float[Array, "3"]]:
    """World support polygon vertices and stable point of the base at ``q``."""
    return _support(config, update_pose(config, q))


def _support(config: Configuration, pose) -> tuple[Array, Array]:
    X_G_base = pose.body_poses[1]
    p = config.params_of(0)
    return X_G_base.apply(config.base.support_polygon(p)), X_G_base.apply(config.base.stable_point(p))


def compute_energy_stability(
    config: Configuration,
    q: Real[ArrayLike, " nq"] | Sequence,
    gravity: Real[ArrayLike, "3"] | Sequence = STANDARD_GRAVITY,
    softness: float | None = None,
) -> Float[Array, ""]:
    """`energy_stability` of the whole robot (modules and payloads) over its base's
    support polygon (Darwin2K ``computeEnergyStability``); negative when the CG projects
    outside. ``gravity`` may include inertial terms (g - a)."""
    mech, pose = posed(config, q)
    mass, cg = cg_from_pose(config, mech, pose)
    points, stable = _support(config, pose)
    return energy_stability(points, cg, mass, gravity, stable, softness)


# ---------------------------------------------------------------------------- joint limits
def limit_gradient(
    q: Real[ArrayLike, " n"] | Sequence,
    lower: Real[ArrayLike, "..."] | Sequence,
    upper: Real[ArrayLike, "..."] | Sequence,
    ignore_threshold: float | None = None,
) -> Float[Array, " n"]:
    """Gradient of the joint-limit potential ``H = sum (u - l)^2 / (4 (u - q)(q - l))``
    (Zghal et al.; minimal, H = n, mid-range): ``dH/dq = (u - l)^2 (2q - u - l) /
    (4 (u - q)^2 (q - l)^2)``. Components are zero for unbounded joints, and where the
    distance to the nearer limit, over the range, exceeds ``ignore_threshold``."""
    q, lower, upper = (jnp.asarray(x) for x in (q, lower, upper))
    dtype = jnp.result_type(q, float)
    q, lower, upper = jnp.broadcast_arrays(*(x.astype(dtype) for x in (q, lower, upper)))
    bounded = jnp.isfinite(lower) & jnp.isfinite(upper) & (upper > lower)
    lo = jnp.where(bounded, lower, -1.0)
    hi = jnp.where(bounded, upper, 1.0)
    qq = jnp.where(bounded, q, 0.0)
    span = hi - lo
    grad = span**2 * (2 * qq - hi - lo) / (4 * (hi - qq) ** 2 * (qq - lo) ** 2)
    keep = bounded
    if ignore_threshold is not None:
        keep = keep & (jnp.minimum(qq - lo, hi - qq) / span <= ignore_threshold)
    return jnp.where(keep, grad, 0.0)


def compute_limit_gradient(
    config: Configuration, q: Real[ArrayLike, " nq"] | Sequence, ignore_threshold: float | None = None
) -> Float[Array, " nv"]:
    """`limit_gradient` over the configuration's DOFs (``v`` order; base DOFs 0), for
    null-space joint-limit avoidance (Darwin2K ``computeLimitGradient``)."""
    q = jnp.asarray(q)
    n_base_q = {"fixed": 0, "planar": 4, "spatial": 7}[config.base.motion]
    joints = q[n_base_q:]
    lower = (
        jnp.stack([config.params_of(j)["lower"] for j in config.structure.joints]) if config.num_joints() else joints
    )
    upper = (
        jnp.stack([config.params_of(j)["upper"] for j in config.structure.joints]) if config.num_joints() else joints
    )
    grad = limit_gradient(joints, lower, upper, ignore_threshold)
    return jnp.concatenate([jnp.zeros(num_base_dofs(config), dtype=grad.dtype), grad])


# ---------------------------------------------------------------------------- motors
def _dof(config: Configuration, joint: int | str, dof: int):
    """(kind, module, params, dof) for a joint module or, by the base's name, a base DOF."""
    if isinstance(joint, str) and joint == config.structure.instances[0].name:
        n = num_base_dofs(config)
        if not 0 <= dof < n:
            raise ValueError(f"the base {joint!r} has {n} DOFs; dof {dof} does not exist")
        return "base", config.base, config.params_of(0), dof
    j = config.joint_index(joint)
    if dof != 0:
        raise ValueError(f"joint {config.get_joint(j)!r} has one DOF; dof must be 0, got {dof}")
    inst = config.structure.joints[j]
    return "joint", config.module_of(inst), config.params_of(inst), 0


def max_vel(config: Configuration, joint: int | str, dof: int = 0) -> Float[Array, ""]:
    """Largest speed of a DOF (rad/s or m/s): motor no-load speed over the gear ratio."""
    kind, module, p, dof = _dof(config, joint, dof)
    return module.max_velocities(p)[dof] if kind == "base" else module.max_vel(p)


def max_torque(
    config: Configuration, joint: int | str, dof: int = 0, is_braking: bool = False, velocity: ArrayLike = 0.0
) -> Float[Array, ""]:
    """Largest torque (force) magnitude of a DOF at joint speed ``velocity``; with
    ``is_braking``, the largest braking torque (docs/modular.md#motors)."""
    kind, module, p, dof = _dof(config, joint, dof)
    return module.drive_limits(p)[dof] if kind == "base" else module.max_torque(p, velocity, bool(is_braking))


def cont_torque(config: Configuration, joint: int | str, dof: int = 0) -> Float[Array, ""]:
    """Continuous torque (force) rating of a DOF."""
    kind, module, p, dof = _dof(config, joint, dof)
    return module.drive_limits(p)[dof] if kind == "base" else module.cont_torque(p)


def power(
    config: Configuration, joint: int | str, dof: int = 0, velocity: ArrayLike = 0.0, torque: ArrayLike = 0.0
) -> Float[Array, ""]:
    """Power drawn by a DOF at ``velocity`` and ``torque``: the motor's electrical power
    (negative when regenerating); a base DOF's mechanical power."""
    kind, module, p, dof = _dof(config, joint, dof)
    if kind == "base":
        return jnp.asarray(velocity, dtype=p["mass"].dtype) * torque
    return module.power(p, velocity, torque)


def is_passive(config: Configuration, joint: int | str, dof: int = 0) -> bool:
    """True for an unactuated joint (static)."""
    kind, module, _, _ = _dof(config, joint, dof)
    return False if kind == "base" else bool(module.passive)


def get_max_velocity_vector(config: Configuration) -> Float[Array, " nv"]:
    """`max_vel` of every DOF, in ``v`` order (Darwin2K ``getMaxVelocityVector``)."""
    parts = [config.base.max_velocities(config.params_of(0))]
    parts += [config.module_of(j).max_vel(config.params_of(j))[None] for j in config.structure.joints]
    return jnp.concatenate(parts)
