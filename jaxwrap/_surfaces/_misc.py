"""Small NaN-safe helpers shared by the surface layer."""

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float


def safe_norm(v: Float[Array, "... n"]) -> Float[Array, "..."]:
    """Euclidean norm with a zero (not NaN) gradient at the origin.

    The double-`where` keeps `sqrt` away from 0 on the differentiated branch.
    """
    norm2 = jnp.sum(v * v, axis=-1)
    positive = norm2 > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, norm2, 1)), 0)


def safe_normalize(
    v: Float[Array, "... n"], fallback: Float[ArrayLike, "... n"]
) -> Float[Array, "... n"]:
    """Unit vector along `v`, or `fallback` (assumed unit) where `v` is (numerically) zero.

    Values and gradients stay finite at `v = 0` (double-`where`).
    """
    tiny = jnp.finfo(v.dtype).tiny
    norm2 = jnp.sum(v * v, axis=-1, keepdims=True)
    ok = norm2 > tiny
    unit = v / jnp.sqrt(jnp.where(ok, norm2, 1))
    return jnp.where(ok, unit, jnp.asarray(fallback, v.dtype))


def darboux_frame(
    normal: Float[Array, "3"], tangent: Float[Array, "3"]
) -> Float[Array, "3 3"]:
    """Darboux frame with columns (t, n, b), Simbody's `setRotationFromTwoAxes(n, Y, t, X)`.

    The Y column is exactly `normal`; X is `tangent` made orthogonal to `normal` and
    normalised; Z = X × Y is the binormal. A tangent parallel to the normal falls back to
    any direction orthogonal to the normal, so the frame is always a rotation.

    **Arguments:**

    - `normal`: outward unit surface normal n.
    - `tangent`: curve direction (need not be unit nor exactly tangent).

    **Returns:**

    A (3, 3) rotation matrix whose columns are t, n, b = t × n.
    """
    t = tangent - jnp.dot(tangent, normal) * normal
    # Any vector orthogonal to n, used only when the tangent is degenerate.
    helper = jnp.where(
        jnp.abs(normal[0]) < 0.9,
        jnp.array([1.0, 0.0, 0.0], normal.dtype),
        jnp.array([0.0, 1.0, 0.0], normal.dtype),
    )
    fallback = safe_normalize(
        helper - jnp.dot(helper, normal) * normal, jnp.array([1.0, 0.0, 0.0], normal.dtype)
    )
    t = safe_normalize(t, fallback)
    b = jnp.cross(t, normal)
    return jnp.stack([t, normal, b], axis=-1)


def check_positive(name: str, value) -> None:
    """Raise `ValueError` if a *concrete* value has a non-positive entry.

    Traced values (under `jit`/`vmap`/`grad`) are not checked, so surfaces can be built
    inside transformed functions.
    """
    concrete = _concrete(value)
    if concrete is not None and not np.all(concrete > 0):
        raise ValueError(f"`{name}` must be positive, got {concrete}.")


def _concrete(value):
    if isinstance(value, jax.core.Tracer):
        return None
    try:
        return np.asarray(value)
    except Exception:  # e.g. abstract placeholders created by eqx.filter_* transforms
        return None


def is_concrete_and(predicate: Callable[..., ArrayLike], *values) -> bool:
    """True when every value is concrete and `predicate(*values)` holds (used for validation)."""
    concretes = [_concrete(v) for v in values]
    if any(c is None for c in concretes):
        return False
    return bool(np.all(predicate(*concretes)))


def as_float_array(value) -> Array:
    """`jnp.asarray`, promoting integer input to the default float dtype (dtype kept otherwise)."""
    value = jnp.asarray(value)
    if not jnp.issubdtype(value.dtype, jnp.inexact):
        value = value.astype(jnp.result_type(float))
    return value


def geodesic_inputs(point, tangent, length):
    """Common dtype for (point, tangent, length), as float arrays."""
    dtype = jnp.result_type(point, tangent, length, float)
    return (
        jnp.asarray(point, dtype),
        jnp.asarray(tangent, dtype),
        jnp.asarray(length, dtype),
    )


def gaussian_curvature_from(
    g: Float[Array, "3"], H: Float[Array, "3 3"]
) -> Float[Array, ""]:
    """K = ∇fᵀ adj(H) ∇f / |∇f|⁴ from a gradient and a (symmetric) Hessian."""
    fxx, fyy, fzz = H[0, 0], H[1, 1], H[2, 2]
    fxy, fxz, fyz = H[0, 1], H[0, 2], H[1, 2]
    adj = jnp.array(
        [
            [fyy * fzz - fyz**2, fxz * fyz - fxy * fzz, fxy * fyz - fxz * fyy],
            [fxz * fyz - fxy * fzz, fxx * fzz - fxz**2, fxy * fxz - fxx * fyz],
            [fxy * fyz - fxz * fyy, fxy * fxz - fxx * fyz, fxx * fyy - fxy**2],
        ]
    )
    g2 = jnp.dot(g, g)
    return jnp.dot(g, adj @ g) / jnp.where(g2 > 0, g2 * g2, 1)
