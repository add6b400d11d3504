"""Rigid transforms and rotations.

Frame notation (monogram, as in Simbody and Drake): ``X_AB`` is the pose of frame B in
frame A, so ``X_AB.apply(p_B) == p_A`` and ``X_AB @ X_BC == X_AC``; ``R_AB`` is its
rotation and ``p_AB`` its translation (the position of B's origin in A).

The SO(3)/SO(2) exponential and logarithm maps, quaternion conversions and
matrix-to-quaternion extraction are jaxlie's (NaN-safe at zero rotation and at angle pi);
this module adapts them to the rotation-matrix representation used throughout jaxwrap.
Quaternions are ``(x, y, z, w)``, pinocchio's and Eigen's coefficient order.

The SE(3) and SE(2) maps are not jaxlie's: jaxlie 1.5's small-angle branch of the SE(3)
left Jacobian ``V`` returns the rotation matrix (``I + [w]``, not ``I + [w]/2``), an error
of ``|w| |v| / 2`` below ``|w| < 1e-5`` in float64 (``3e-3`` in float32), and its SE(2)
series loses ~1e-9 near ``|w| = 1e-4``. Here ``V`` and ``V^-1`` use the rotation from
jaxlie and five-term series at small angles, accurate to rounding everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
import jaxlie
from jaxtyping import Array, ArrayLike, Float

from ._misc import as_float_array, axis_rotation, skew


def _matvec(matrix: Array, vector: Array) -> Array:
    """``matrix @ vector`` over broadcast leading axes."""
    return jnp.einsum("...ij,...j->...i", matrix, vector)


class Transform(eqx.Module):
    """A rigid transform ``X_AB``: rotation ``R_AB`` (..., 3, 3) and translation ``p_AB`` (..., 3).

    Leading axes batch: a ``Transform`` with rotation ``(n, 3, 3)`` holds ``n`` poses
    (``forward_kinematics`` returns one per body this way). Composition, inversion and
    application broadcast over leading axes like NumPy arithmetic.

    **Arguments:**

    - `rotation`: rotation matrices, shape ``(..., 3, 3)``.
    - `translation`: translations, shape ``(..., 3)``.
    """

    rotation: Float[Array, "*batch 3 3"]
    translation: Float[Array, "*batch 3"]

    def __init__(self, rotation: ArrayLike | Sequence, translation: ArrayLike | Sequence):
        rotation = as_float_array(rotation)
        translation = as_float_array(translation)
        if rotation.shape[-2:] != (3, 3):
            raise ValueError(f"Transform rotation must have shape (..., 3, 3), got {rotation.shape}")
        if translation.shape[-1:] != (3,):
            raise ValueError(f"Transform translation must have shape (..., 3), got {translation.shape}")
        self.rotation = rotation
        self.translation = translation

    # ---------------------------------------------------------------- constructors
    @classmethod
    def identity(cls, batch_shape: tuple[int, ...] = (), dtype=None) -> Transform:
        """The identity transform, optionally repeated over ``batch_shape``."""
        dtype = dtype or jnp.result_type(float)
        rotation = jnp.broadcast_to(jnp.eye(3, dtype=dtype), (*batch_shape, 3, 3))
        return cls(rotation, jnp.zeros((*batch_shape, 3), dtype=dtype))

    @classmethod
    def from_translation(cls, translation: ArrayLike | Sequence) -> Transform:
        translation = as_float_array(translation)
        rotation = jnp.broadcast_to(jnp.eye(3, dtype=translation.dtype), (*translation.shape[:-1], 3, 3))
        return cls(rotation, translation)

    @classmethod
    def from_rotation(cls, rotation: ArrayLike | Sequence) -> Transform:
        rotation = as_float_array(rotation)
        return cls(rotation, jnp.zeros(rotation.shape[:-1], dtype=rotation.dtype))

    @classmethod
    def from_quaternion(
        cls, quaternion_xyzw: ArrayLike | Sequence, translation: ArrayLike | Sequence | None = None
    ) -> Transform:
        """From a unit quaternion ``(x, y, z, w)`` and an optional translation."""
        rotation = quaternion_to_rotation(quaternion_xyzw)
        if translation is None:
            return cls.from_rotation(rotation)
        return cls(rotation, translation)

    @classmethod
    def from_axis_angle(
        cls, axis_angle: ArrayLike | Sequence, translation: ArrayLike | Sequence | None = None
    ) -> Transform:
        """From a rotation vector (axis times angle, the SO(3) exponential) and a translation."""
        rotation = axis_angle_to_rotation(axis_angle)
        if translation is None:
            return cls.from_rotation(rotation)
        return cls(rotation, translation)

    @classmethod
    def from_matrix(cls, matrix: ArrayLike | Sequence) -> Transform:
        """From homogeneous 4 x 4 matrices ``(..., 4, 4)``."""
        matrix = as_float_array(matrix)
        return cls(matrix[..., :3, :3], matrix[..., :3, 3])

    @classmethod
    def exp(cls, twist: ArrayLike | Sequence) -> Transform:
        """SE(3) exponential of a twist ``(linear, angular)`` (pinocchio's ``exp6`` ordering)."""
        rotation, translation = se3_exp(twist)
        return cls(rotation, translation)

    @classmethod
    def from_jaxlie(cls, pose: jaxlie.SE3) -> Transform:
        return cls(pose.rotation().as_matrix(), pose.translation())

    # ---------------------------------------------------------------- conversions
    def as_matrix(self) -> Float[Array, "*batch 4 4"]:
        top = jnp.concatenate([self.rotation, self.translation[..., None]], axis=-1)
        bottom = jnp.broadcast_to(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=top.dtype), (*self.batch_shape, 1, 4))
        return jnp.concatenate([top, bottom], axis=-2)

    def as_quaternion(self) -> Float[Array, "*batch 4"]:
        """The rotation as a unit quaternion ``(x, y, z, w)``."""
        return rotation_to_quaternion(self.rotation)

    def as_axis_angle(self) -> Float[Array, "*batch 3"]:
        """The rotation as a rotation vector (the SO(3) logarithm)."""
        return rotation_to_axis_angle(self.rotation)

    def as_jaxlie(self) -> jaxlie.SE3:
        return jaxlie.SE3.from_rotation_and_translation(jaxlie.SO3.from_matrix(self.rotation), self.translation)

    def log(self) -> Float[Array, "*batch 6"]:
        """SE(3) logarithm as a twist ``(linear, angular)`` (pinocchio's ``log6`` ordering)."""
        return se3_log(self.rotation, self.translation)

    # ---------------------------------------------------------------- group operations
    def inverse(self) -> Transform:
        rotation_t = jnp.swapaxes(self.rotation, -1, -2)
        return Transform(rotation_t, -_matvec(rotation_t, self.translation))

    def __matmul__(self, other: Transform) -> Transform:
        if not isinstance(other, Transform):
            return NotImplemented
        return Transform(
            jnp.matmul(self.rotation, other.rotation),
            _matvec(self.rotation, other.translation) + self.translation,
        )

    def apply(self, points: ArrayLike | Sequence) -> Array:
        """Map points (..., 3) from frame B to frame A: ``R p + t``."""
        return _matvec(self.rotation, as_float_array(points)) + self.translation

    def rotate(self, vectors: ArrayLike | Sequence) -> Array:
        """Map free vectors (..., 3) from frame B to frame A: ``R v``."""
        return _matvec(self.rotation, as_float_array(vectors))

    # ---------------------------------------------------------------- batching helpers
    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.translation.shape[:-1]

    def __getitem__(self, index) -> Transform:
        return Transform(self.rotation[index], self.translation[index])

    def __len__(self) -> int:
        if not self.batch_shape:
            raise TypeError("len() of an unbatched Transform")
        return self.batch_shape[0]

    @staticmethod
    def stack(transforms: list[Transform], axis: int = 0) -> Transform:
        """Stack transforms along a new leading axis."""
        return Transform(
            jnp.stack([X.rotation for X in transforms], axis=axis),
            jnp.stack([X.translation for X in transforms], axis=axis),
        )


# -------------------------------------------------------------------- rotations
def rotation_x(angle: ArrayLike | Sequence) -> Float[Array, "*batch 3 3"]:
    """Right-handed rotation by ``angle`` (rad) about the x axis."""
    return axis_rotation(angle, 0)


def rotation_y(angle: ArrayLike | Sequence) -> Float[Array, "*batch 3 3"]:
    """Right-handed rotation by ``angle`` (rad) about the y axis."""
    return axis_rotation(angle, 1)


def rotation_z(angle: ArrayLike | Sequence) -> Float[Array, "*batch 3 3"]:
    """Right-handed rotation by ``angle`` (rad) about the z axis."""
    return axis_rotation(angle, 2)


def _xyzw_to_wxyz(q: Array) -> Array:
    return jnp.concatenate([q[..., 3:], q[..., :3]], axis=-1)


def _wxyz_to_xyzw(q: Array) -> Array:
    return jnp.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def quaternion_to_rotation(quaternion_xyzw: ArrayLike | Sequence) -> Float[Array, "*batch 3 3"]:
    """Rotation matrix of a quaternion ``(x, y, z, w)``: the rotation of ``q / |q|`` (jaxlie's
    formula divides by the squared norm; pinocchio assumes a unit quaternion)."""
    q = as_float_array(quaternion_xyzw)
    return jaxlie.SO3(_xyzw_to_wxyz(q)).as_matrix()


def rotation_to_quaternion(rotation: ArrayLike | Sequence) -> Float[Array, "*batch 4"]:
    """Unit quaternion ``(x, y, z, w)`` of a rotation matrix (sign as jaxlie picks it)."""
    return _wxyz_to_xyzw(jaxlie.SO3.from_matrix(as_float_array(rotation)).wxyz)


def axis_angle_to_rotation(axis_angle: ArrayLike | Sequence) -> Float[Array, "*batch 3 3"]:
    """SO(3) exponential: rotation by ``|w|`` about ``w/|w|`` (identity at ``w = 0``)."""
    return jaxlie.SO3.exp(as_float_array(axis_angle)).as_matrix()


def rotation_to_axis_angle(rotation: ArrayLike | Sequence) -> Float[Array, "*batch 3"]:
    """SO(3) logarithm: the rotation vector of angle in ``[0, pi]``."""
    return jaxlie.SO3.from_matrix(as_float_array(rotation)).log()


# -------------------------------------------------------------------- SE(3) and SE(2) maps
# Power series in theta^2 of the coefficients below, used where theta^2 is below a
# dtype-dependent switch: there the series' truncation error (theta^10 / 10!) and the
# closed form's cancellation error (eps / theta^2) are both at rounding level.
def _series_below(dtype) -> float:
    return 1e-2 if jnp.finfo(dtype).bits >= 64 else 1e-1


_SERIES = {
    "sinc": (1.0, -1 / 6, 1 / 120, -1 / 5040, 1 / 362880),  # sin t / t
    "A": (1 / 2, -1 / 24, 1 / 720, -1 / 40320, 1 / 3628800),  # (1 - cos t) / t^2
    "B": (1 / 6, -1 / 120, 1 / 5040, -1 / 362880, 1 / 39916800),  # (t - sin t) / t^3
    "C": (1 / 12, 1 / 720, 1 / 30240, 1 / 1209600, 1 / 119750400),  # (1 - t sin t / (2 (1 - cos t))) / t^2
}


def _coefficient(name: str, theta2: Array) -> Array:
    """One of the `_SERIES` functions of ``theta^2``, NaN-free in value and gradient."""
    switch = _series_below(theta2.dtype)
    small = theta2 < switch
    t2 = jnp.where(small, switch, theta2)  # double-where: the closed form never sees 0
    t = jnp.sqrt(t2)
    closed = {
        "sinc": lambda: jnp.sin(t) / t,
        "A": lambda: (1.0 - jnp.cos(t)) / t2,
        "B": lambda: (t - jnp.sin(t)) / (t2 * t),
        "C": lambda: (1.0 - t * jnp.sin(t) / (2.0 * (1.0 - jnp.cos(t)))) / t2,
    }[name]()
    series = jnp.polyval(jnp.asarray(_SERIES[name][::-1], dtype=theta2.dtype), theta2)
    return jnp.where(small, series, closed)


def se3_exp(twist: ArrayLike | Sequence) -> tuple[Array, Array]:
    """SE(3) exponential of ``(linear, angular)`` twists (..., 6) -> (rotation, translation)."""
    twist = as_float_array(twist)
    v, w = twist[..., :3], twist[..., 3:]
    theta2 = jnp.sum(w * w, axis=-1)[..., None, None]
    W = skew(w)
    V = jnp.eye(3, dtype=twist.dtype) + _coefficient("A", theta2) * W + _coefficient("B", theta2) * (W @ W)
    return axis_angle_to_rotation(w), _matvec(V, v)


def se3_log(rotation: ArrayLike | Sequence, translation: ArrayLike | Sequence) -> Array:
    """SE(3) logarithm -> ``(linear, angular)`` twist (..., 6), angle in [0, pi]."""
    w = rotation_to_axis_angle(rotation)
    theta2 = jnp.sum(w * w, axis=-1)[..., None, None]
    W = skew(w)
    V_inv = jnp.eye(3, dtype=w.dtype) - 0.5 * W + _coefficient("C", theta2) * (W @ W)
    return jnp.concatenate([_matvec(V_inv, as_float_array(translation)), w], axis=-1)


def se2_exp(twist: ArrayLike | Sequence) -> tuple[Array, Array]:
    """SE(2) exponential of ``(vx, vy, omega)`` -> ((cos, sin), (x, y))."""
    twist = as_float_array(twist)
    theta = twist[..., 2]
    theta2 = theta * theta
    a, b = _coefficient("sinc", theta2), theta * _coefficient("A", theta2)
    vx, vy = twist[..., 0], twist[..., 1]
    unit = jaxlie.SO2.from_radians(theta).unit_complex
    return unit, jnp.stack([a * vx - b * vy, b * vx + a * vy], axis=-1)


def se2_log(unit_complex: ArrayLike | Sequence, xy: ArrayLike | Sequence) -> Array:
    """SE(2) logarithm of ((cos, sin), (x, y)) -> ``(vx, vy, omega)``, omega in (-pi, pi]."""
    theta = jaxlie.SO2(unit_complex=as_float_array(unit_complex)).log()[..., 0]
    theta2 = theta * theta
    a, b = _coefficient("sinc", theta2), theta * _coefficient("A", theta2)
    det = 2.0 * _coefficient("A", theta2)  # a^2 + b^2 = 2 (1 - cos t) / t^2 > 0 on (-pi, pi]
    x, y = as_float_array(xy)[..., 0], as_float_array(xy)[..., 1]
    return jnp.stack([(a * x + b * y) / det, (-b * x + a * y) / det, theta], axis=-1)
