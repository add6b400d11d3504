"""Joint kinds: configuration spaces, joint transforms and motion subspaces.

Each kind follows pinocchio's model of the same URDF joint, so ``q`` and ``v`` arrays move
between the two libraries unchanged:

========== ===== ===== ============================================== =====================
kind        nq    nv   q                                              v (child frame)
========== ===== ===== ============================================== =====================
revolute     1     1   angle                                          angle rate
continuous   2     1   (cos, sin)                                     angle rate
prismatic    1     1   displacement                                   displacement rate
floating     7     6   (x, y, z, qx, qy, qz, qw)                      (linear, angular)
spherical    4     3   (qx, qy, qz, qw)                               angular
planar       4     3   (x, y, cos, sin)                               (vx, vy, wz)
fixed        0     0   -                                              -
========== ===== ===== ============================================== =====================

Two more kinds have no coordinates of their own: ``coupled_revolute`` and
``coupled_prismatic`` turn or slide by ``f(q_c)``, a function of another joint's
coordinate (docs/kinematics.md#coupled-joints); the model evaluates ``f`` and hands the
value to ``transform``.

A joint maps its frame J (fixed in the parent, placed by the joint origin) to the child
body frame B: ``X_JB(q)``. The child's spatial velocity expressed in B is ``S v`` with the
constant motion subspace ``S`` (6 x nv, rows ``[linear; angular]``); integration is the
group exponential on the right, ``X_JB(q + v) = X_JB(q) exp(S v)``, as in pinocchio.
The SO(2) maps come from jaxlie, the SE(2)/SE(3) ones from ``jaxwrap._spatial`` (see
there why not jaxlie's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
import jaxlie
from jaxtyping import Array

from .._misc import safe_normalize, skew
from .._spatial import (
    axis_angle_to_rotation,
    quaternion_to_rotation,
    rotation_to_axis_angle,
    rotation_to_quaternion,
    se2_exp,
    se2_log,
    se3_exp,
    se3_log,
)

# Sampling range for random configurations of coordinates without finite limits
# (free-flyer and planar translations; pinocchio would refuse infinite bounds).
DEFAULT_UNBOUNDED_RANGE = 1.0


def rotation_about_axis(axis: Array, cos: Array, sin: Array) -> Array:
    """Rodrigues' formula from a unit ``axis`` and the cosine and sine of the angle.

    Used instead of an exponential map because revolute and continuous joints know the
    angle's cosine and sine directly (``continuous`` stores them as its coordinates);
    there is no singular point to guard.
    """
    K = skew(axis)
    return jnp.eye(3, dtype=K.dtype) + sin * K + (1.0 - cos) * (K @ K)


def _renormalize(unit: Array) -> Array:
    # pinocchio's firstOrderNormalize: one Newton step towards |u| = 1, NaN-free everywhere.
    return unit * (3.0 - jnp.sum(unit * unit)) / 2.0


def _uniform(key, lower, upper, default_half_range, shape=()):
    finite = jnp.isfinite(lower) & jnp.isfinite(upper)
    lo = jnp.where(finite, lower, -default_half_range)
    hi = jnp.where(finite, upper, default_half_range)
    return jax.random.uniform(key, shape, dtype=jnp.result_type(lo), minval=lo, maxval=hi)


@dataclasses.dataclass(frozen=True)
class JointKind:
    """Static description of one joint kind (no array data; axes live in the model)."""

    name: str
    nq: int
    nv: int
    # (q, axis) -> (R_JB, p_JB)
    transform: Callable[[Array, Array], tuple[Array, Array]]
    # axis -> S (6, nv), rows [linear; angular], in the child frame
    motion_subspace: Callable[[Array], Array]
    integrate: Callable[[Array, Array], Array]
    difference: Callable[[Array, Array], Array]
    neutral: Callable[[jnp.dtype], Array]
    # (key, lower, upper) -> q
    random: Callable[[Array, Array, Array], Array]


def _zeros_motion(nv):
    def subspace(axis):
        return jnp.zeros((6, nv), dtype=axis.dtype)

    return subspace


# ---------------------------------------------------------------------------- revolute
def _revolute_transform(q, axis):
    return rotation_about_axis(axis, jnp.cos(q[0]), jnp.sin(q[0])), jnp.zeros(3, dtype=q.dtype)


def _angular_subspace(axis):
    return jnp.concatenate([jnp.zeros(3, dtype=axis.dtype), axis])[:, None]


def _linear_subspace(axis):
    return jnp.concatenate([axis, jnp.zeros(3, dtype=axis.dtype)])[:, None]


def _vector_integrate(q, v):
    return q + v


def _vector_difference(q0, q1):
    return q1 - q0


REVOLUTE = JointKind(
    name="revolute",
    nq=1,
    nv=1,
    transform=_revolute_transform,
    motion_subspace=_angular_subspace,
    integrate=_vector_integrate,
    difference=_vector_difference,
    neutral=lambda dtype: jnp.zeros(1, dtype=dtype),
    random=lambda key, lower, upper: _uniform(key, lower, upper, jnp.pi, shape=(1,)),
)


# ---------------------------------------------------------------------------- continuous
def _continuous_transform(q, axis):
    return rotation_about_axis(axis, q[0], q[1]), jnp.zeros(3, dtype=q.dtype)


def _continuous_integrate(q, v):
    rotated = (jaxlie.SO2(unit_complex=q) @ jaxlie.SO2.exp(v)).unit_complex
    return _renormalize(rotated)


def _continuous_difference(q0, q1):
    return (jaxlie.SO2(unit_complex=q0).inverse() @ jaxlie.SO2(unit_complex=q1)).log()


def _continuous_random(key, lower, upper):
    angle = jax.random.uniform(key, (), dtype=jnp.result_type(lower), minval=-jnp.pi, maxval=jnp.pi)
    return jnp.stack([jnp.cos(angle), jnp.sin(angle)])


CONTINUOUS = JointKind(
    name="continuous",
    nq=2,
    nv=1,
    transform=_continuous_transform,
    motion_subspace=_angular_subspace,
    integrate=_continuous_integrate,
    difference=_continuous_difference,
    neutral=lambda dtype: jnp.array([1.0, 0.0], dtype=dtype),
    random=_continuous_random,
)


# ---------------------------------------------------------------------------- prismatic
def _prismatic_transform(q, axis):
    return jnp.eye(3, dtype=q.dtype), axis * q[0]


PRISMATIC = JointKind(
    name="prismatic",
    nq=1,
    nv=1,
    transform=_prismatic_transform,
    motion_subspace=_linear_subspace,
    integrate=_vector_integrate,
    difference=_vector_difference,
    neutral=lambda dtype: jnp.zeros(1, dtype=dtype),
    random=lambda key, lower, upper: _uniform(key, lower, upper, DEFAULT_UNBOUNDED_RANGE, shape=(1,)),
)


# ---------------------------------------------------------------------------- floating (SE(3))
def _floating_transform(q, axis):
    return quaternion_to_rotation(q[3:7]), q[:3]


def _floating_integrate(q, v):
    # q ⊕ v = X(q) exp(v), as pinocchio's SpecialEuclideanOperation<3>.
    R0, p0 = _floating_transform(q, None)
    R_step, p_step = se3_exp(v)
    xyzw = rotation_to_quaternion(R0 @ R_step)
    # pinocchio picks the quaternion sign on the same hemisphere as the input.
    xyzw = jnp.where(jnp.dot(xyzw, q[3:7]) < 0, -xyzw, xyzw)
    return jnp.concatenate([R0 @ p_step + p0, _renormalize(xyzw)])


def _floating_difference(q0, q1):
    # log(X(q0)^-1 X(q1)), pinocchio's log6 of the relative transform.
    R0, p0 = _floating_transform(q0, None)
    R1, p1 = _floating_transform(q1, None)
    return se3_log(R0.T @ R1, R0.T @ (p1 - p0))


def _floating_random(key, lower, upper):
    key_t, key_r = jax.random.split(key)
    translation = _uniform(key_t, lower[:3], upper[:3], DEFAULT_UNBOUNDED_RANGE, shape=(3,))
    # A normalized Gaussian 4-vector is uniform on S^3, i.e. a uniform rotation.
    xyzw = jax.random.normal(key_r, (4,), dtype=jnp.result_type(lower))
    xyzw = safe_normalize(xyzw, jnp.array([0.0, 0.0, 0.0, 1.0], dtype=xyzw.dtype))
    return jnp.concatenate([translation, xyzw])


FLOATING = JointKind(
    name="floating",
    nq=7,
    nv=6,
    transform=_floating_transform,
    motion_subspace=lambda axis: jnp.eye(6, dtype=axis.dtype),
    integrate=_floating_integrate,
    difference=_floating_difference,
    neutral=lambda dtype: jnp.array([0, 0, 0, 0, 0, 0, 1], dtype=dtype),
    random=_floating_random,
)


# ---------------------------------------------------------------------------- spherical (SO(3))
def _spherical_transform(q, axis):
    return quaternion_to_rotation(q), jnp.zeros(3, dtype=q.dtype)


def _spherical_integrate(q, v):
    # q ⊕ v = R(q) exp(v), as pinocchio's SpecialOrthogonalOperation<3>; same hemisphere.
    xyzw = rotation_to_quaternion(quaternion_to_rotation(q) @ axis_angle_to_rotation(v))
    xyzw = jnp.where(jnp.dot(xyzw, q) < 0, -xyzw, xyzw)
    return _renormalize(xyzw)


def _spherical_difference(q0, q1):
    R0, R1 = quaternion_to_rotation(q0), quaternion_to_rotation(q1)
    return rotation_to_axis_angle(R0.T @ R1)


def _spherical_random(key, lower, upper):
    xyzw = jax.random.normal(key, (4,), dtype=jnp.result_type(lower))
    return safe_normalize(xyzw, jnp.array([0.0, 0.0, 0.0, 1.0], dtype=xyzw.dtype))


SPHERICAL = JointKind(
    name="spherical",
    nq=4,
    nv=3,
    transform=_spherical_transform,
    motion_subspace=lambda axis: jnp.eye(6, 3, -3, dtype=axis.dtype),
    integrate=_spherical_integrate,
    difference=_spherical_difference,
    neutral=lambda dtype: jnp.array([0, 0, 0, 1], dtype=dtype),
    random=_spherical_random,
)


# ---------------------------------------------------------------------------- planar (SE(2))
def _planar_transform(q, axis):
    rotation = rotation_about_axis(jnp.array([0.0, 0.0, 1.0], dtype=q.dtype), q[2], q[3])
    return rotation, jnp.concatenate([q[:2], jnp.zeros(1, dtype=q.dtype)])


def _planar_subspace(axis):
    S = jnp.zeros((6, 3), dtype=axis.dtype)
    return S.at[0, 0].set(1.0).at[1, 1].set(1.0).at[5, 2].set(1.0)


def _complex_product(a, b):
    return jnp.stack([a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]])


def _planar_integrate(q, v):
    # (x, y, c, s) ⊕ v = X(q) exp(v) in SE(2).
    unit_step, xy_step = se2_exp(v)
    unit0 = q[2:4]
    xy = q[:2] + _complex_product(unit0, xy_step)
    return jnp.concatenate([xy, _renormalize(_complex_product(unit0, unit_step))])


def _planar_difference(q0, q1):
    conj0 = jnp.stack([q0[2], -q0[3]])
    return se2_log(_complex_product(conj0, q1[2:4]), _complex_product(conj0, q1[:2] - q0[:2]))


def _planar_random(key, lower, upper):
    key_t, key_r = jax.random.split(key)
    xy = _uniform(key_t, lower[:2], upper[:2], DEFAULT_UNBOUNDED_RANGE, shape=(2,))
    angle = jax.random.uniform(key_r, (), dtype=jnp.result_type(lower), minval=-jnp.pi, maxval=jnp.pi)
    return jnp.concatenate([xy, jnp.stack([jnp.cos(angle), jnp.sin(angle)])])


PLANAR = JointKind(
    name="planar",
    nq=4,
    nv=3,
    transform=_planar_transform,
    motion_subspace=_planar_subspace,
    integrate=_planar_integrate,
    difference=_planar_difference,
    neutral=lambda dtype: jnp.array([0, 0, 1, 0], dtype=dtype),
    random=_planar_random,
)


# ---------------------------------------------------------------------------- fixed
FIXED = JointKind(
    name="fixed",
    nq=0,
    nv=0,
    transform=lambda q, axis: (jnp.eye(3, dtype=axis.dtype), jnp.zeros(3, dtype=axis.dtype)),
    motion_subspace=_zeros_motion(0),
    integrate=_vector_integrate,
    difference=_vector_difference,
    neutral=lambda dtype: jnp.zeros(0, dtype=dtype),
    random=lambda key, lower, upper: jnp.zeros(0, dtype=jnp.result_type(lower)),
)


# ---------------------------------------------------------------------------- coupled
def _coupled(name: str, of: JointKind) -> JointKind:
    # `transform` takes the joint value f(q_c), shape (1,); `motion_subspace` is the
    # motion per unit of that value (scaled by f' in the twists).
    return dataclasses.replace(FIXED, name=name, transform=of.transform, motion_subspace=of.motion_subspace)


COUPLED_REVOLUTE = _coupled("coupled_revolute", REVOLUTE)
COUPLED_PRISMATIC = _coupled("coupled_prismatic", PRISMATIC)
COUPLED_KINDS = {"revolute": "coupled_revolute", "prismatic": "coupled_prismatic"}


_KINDS = (REVOLUTE, CONTINUOUS, PRISMATIC, FLOATING, SPHERICAL, PLANAR, FIXED, COUPLED_REVOLUTE, COUPLED_PRISMATIC)
JOINT_KINDS: dict[str, JointKind] = {kind.name: kind for kind in _KINDS}

# Kinds whose axis is meaningful (and therefore must be a non-zero vector).
AXIS_KINDS = frozenset({"revolute", "continuous", "prismatic"})
