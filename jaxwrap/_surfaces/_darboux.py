"""Local differential geometry shared by the surfaces: Darboux frames and the Gaussian
curvature of an implicit surface (conventions in docs/surfaces.md#sign-conventions)."""

from collections.abc import Sequence

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Real

from .._misc import as_float_array, safe_normalize


def darboux_frame(normal: Float[Array, "3"], tangent: Float[Array, "3"]) -> Float[Array, "3 3"]:
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
    fallback = safe_normalize(helper - jnp.dot(helper, normal) * normal, jnp.array([1.0, 0.0, 0.0], normal.dtype))
    t = safe_normalize(t, fallback)
    b = jnp.cross(t, normal)
    return jnp.stack([t, normal, b], axis=-1)


def geodesic_inputs(
    point: Real[ArrayLike, "3"] | Sequence,
    tangent: Real[ArrayLike, "3"] | Sequence,
    length: Real[ArrayLike, ""] | Sequence,
) -> tuple[Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
    """(point, tangent, length) as float arrays of one dtype; `ValueError` on wrong shapes."""
    point, tangent, length = (as_float_array(x) for x in (point, tangent, length))
    dtype = jnp.result_type(point, tangent, length)
    point, tangent, length = (x.astype(dtype) for x in (point, tangent, length))
    for name, value, shape in (("point", point, (3,)), ("tangent", tangent, (3,)), ("length", length, ())):
        if value.shape != shape:
            raise ValueError(f"geodesic {name} must have shape {shape}, got {value.shape}; batch with jax.vmap")
    return point, tangent, length


def gaussian_curvature_from(g: Float[Array, "3"], H: Float[Array, "3 3"]) -> Float[Array, ""]:
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
