"""`BicubicHeightMap`: a height field z = z_surf(x, y) over a rectangular grid (Simbody's
`SmoothHeightMap` over a `BicubicSurface`); geodesics are integrated numerically.

Fit (Simbody's `BicubicSurface(x, y, f, smoothness = 0)`): at every grid point the
patches need f, f_x, f_y and f_xy. Simbody estimates the derivatives from degree-3
`SplineFitter` splines with smoothing parameter 0, i.e. *interpolating natural cubic
splines* (GCVSPL's natural splines, second derivative 0 at both ends): f_x from splines
along x through each column f[:, j], f_y from splines along y through each row f[i, :],
f_xy from splines along x through the columns of f_y. The spline derivative at the knots is
a linear map D_x (resp. D_y) of the data, so f_xy = D_x f D_yᵀ whichever direction is
taken first. Each grid cell is then the bicubic Hermite patch of its four corners, which is
C1 across cell edges (value and normal slope along an edge depend only on that edge's
corners).

Outside the grid (Simbody's `isSurfaceDefined` is false there) the polynomial of the
nearest boundary patch is continued, so the surface stays C1 (C∞ off the grid lines) and
a geodesic or Newton iterate that strays off the domain sees a smooth surface.
"""

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Float

from .._misc import as_float_array, concretely
from ._base import AbstractSurface


class BicubicHeightMap(AbstractSurface):
    """Height map z = z_surf(x, y) in S, z up; f(x) = z_surf(x, y) - z (> 0 below).

    `z_surf` interpolates `values` with C1 bicubic Hermite patches whose knot derivatives
    come from natural cubic splines (Simbody's `BicubicSurface` with smoothness 0; see the
    module docstring). Gradient and Hessian are closed form. The outward normal points up
    (+z side).

    **Arguments:**

    - `x`: (nx,) strictly increasing grid coordinates, nx ≥ 2.
    - `y`: (ny,) strictly increasing grid coordinates, ny ≥ 2.
    - `values`: (nx, ny) heights; `values[i, j]` is z_surf(x[i], y[j]).

    **Fields** (besides the arguments): `knot_derivatives`, (nx, ny, 2, 2) with
    `[i, j, p, q]` = ∂ˣᵖ ∂ʸ^q z_surf at (x[i], y[j]) (p, q ∈ {0, 1}).
    """

    x: Float[Array, " nx"]
    y: Float[Array, " ny"]
    values: Float[Array, "nx ny"]
    knot_derivatives: Float[Array, "nx ny 2 2"]

    def __init__(self, x: ArrayLike | Sequence, y: ArrayLike | Sequence, values: ArrayLike | Sequence):
        x, y, values = as_float_array(x), as_float_array(y), as_float_array(values)
        _check_grid("x", x)
        _check_grid("y", y)
        if values.shape != (x.shape[0], y.shape[0]):
            raise ValueError(
                f"`values` must have shape (len(x), len(y)) = {(x.shape[0], y.shape[0])}, got {values.shape}."
            )
        if concretely(lambda v: not np.all(np.isfinite(v)), values):
            raise ValueError("`values` must be finite.")
        dtype = jnp.result_type(x, y, values)
        x, y, values = x.astype(dtype), y.astype(dtype), values.astype(dtype)
        D_x, D_y = _spline_slope_operator(x), _spline_slope_operator(y)
        f_x = D_x @ values
        f_y = values @ D_y.T
        f_xy = D_x @ f_y
        self.x, self.y, self.values = x, y, values
        self.knot_derivatives = jnp.stack([jnp.stack([values, f_y], -1), jnp.stack([f_x, f_xy], -1)], -2)

    def extent(self) -> Float[Array, ""]:
        # The grid's farthest corner, at the largest height.
        x, y = jnp.maximum(-self.x[0], self.x[-1]), jnp.maximum(-self.y[0], self.y[-1])
        return jnp.sqrt(x**2 + y**2 + jnp.max(jnp.abs(self.values)) ** 2)

    def height(self, x: Float[Array, "2"]) -> Float[Array, ""]:
        """z_surf at the point (x, y) = `x[:2]`."""
        return self._derivatives(x, 0)[0]

    def is_surface_defined(self, x: Float[Array, "3"]) -> Bool[Array, ""]:
        """True where (x, y) lies in the grid domain (Simbody's `isSurfaceDefined`)."""
        return (x[0] >= self.x[0]) & (x[0] <= self.x[-1]) & (x[1] >= self.y[0]) & (x[1] <= self.y[-1])

    def implicit(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        return self._derivatives(x, 0)[0] - x[2]

    def gradient(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        z_x, z_y = self._derivatives(x, 1)
        return jnp.stack([z_x, z_y, -jnp.ones_like(z_x)])

    def hessian(self, x: Float[Array, "3"]) -> Float[Array, "3 3"]:
        z_xx, z_xy, z_yy = self._derivatives(x, 2)
        zero = jnp.zeros_like(z_xx)
        return jnp.stack(
            [
                jnp.stack([z_xx, z_xy, zero]),
                jnp.stack([z_xy, z_yy, zero]),
                jnp.stack([zero, zero, zero]),
            ]
        )

    def _derivatives(self, x: Float[Array, " _xy"], order: int) -> tuple[Array, ...]:
        """Derivatives of z_surf of the given total order (0: z; 1: z_x, z_y; 2: z_xx,
        z_xy, z_yy), from the patch containing (or, off the grid, nearest to) x[:2]."""
        i, u, h_x = _cell(self.x, x[0])
        j, v, h_y = _cell(self.y, x[1])
        corners = jax.lax.dynamic_slice(self.knot_derivatives, (i, j, 0 * i, 0 * i), (2, 2, 2, 2))
        # G[(p, a), (q, b)] = ∂ˣᵖ ∂ʸ^q z at corner (x[i + a], y[j + b]).
        G = jnp.transpose(corners, (2, 0, 3, 1)).reshape(4, 4)
        bu = [_hermite_basis(u, h_x, k) / h_x**k for k in range(order + 1)]
        bv = [_hermite_basis(v, h_y, k) / h_y**k for k in range(order + 1)]
        return tuple(bu[order - k] @ G @ bv[k] for k in range(order + 1))


def _check_grid(name: str, t: Array) -> None:
    if t.ndim != 1 or t.shape[0] < 2:
        raise ValueError(f"`{name}` must be a 1-D array of at least 2 points, got shape {t.shape}.")
    if concretely(lambda t: not np.all(np.isfinite(t)), t):
        raise ValueError(f"`{name}` must be finite.")
    if concretely(lambda t: not np.all(np.diff(t) > 0), t):
        raise ValueError(f"`{name}` must be strictly increasing, got {t}.")


def _spline_slope_operator(t: Float[Array, " n"]) -> Float[Array, "n n"]:
    """D with (D F)[k] = slope at knot t[k] of the interpolating natural cubic spline
    through (t, F), for F of shape (n, ...)."""
    n = t.shape[0]
    h = jnp.diff(t)
    eye = jnp.eye(n, dtype=t.dtype)
    # Divided differences d_k = (F[k+1] - F[k]) / h_k as an (n-1, n) operator.
    Dd = (eye[1:] - eye[:-1]) / h[:, None]
    # Second derivatives M: natural ends M[0] = M[n-1] = 0; interior rows
    # h_{k-1} M_{k-1} + 2 (h_{k-1} + h_k) M_k + h_k M_{k+1} = 6 (d_k - d_{k-1}).
    A = eye
    rhs = jnp.zeros((n, n), t.dtype)
    if n > 2:
        k = np.arange(1, n - 1)
        A = A.at[k, k].set(2 * (h[:-1] + h[1:]))
        A = A.at[k, k - 1].set(h[:-1])
        A = A.at[k, k + 1].set(h[1:])
        rhs = rhs.at[k].set(6 * (Dd[1:] - Dd[:-1]))
    M = jnp.linalg.solve(A, rhs)
    # Slope at the left end of each interval, and at the right end of the last one.
    left = Dd - h[:, None] * (2 * M[:-1] + M[1:]) / 6
    last = Dd[-1] + h[-1] * (M[-2] + 2 * M[-1]) / 6
    return jnp.concatenate([left, last[None]], axis=0)


def _cell(t: Float[Array, " n"], s: Float[Array, ""]):
    """Index i of the interval [t_i, t_{i+1}] holding s (clamped to the end intervals),
    the local coordinate u = (s - t_i)/h (outside [0, 1] off the grid) and h."""
    i = jnp.clip(jnp.searchsorted(t, s, side="right") - 1, 0, t.shape[0] - 2)
    h = t[i + 1] - t[i]
    return i, (s - t[i]) / h, h


def _hermite_basis(u: Float[Array, ""], h: Float[Array, ""], k: int) -> Float[Array, "4"]:
    """k-th u-derivative of the cubic Hermite basis paired with (value at 0, value at 1,
    slope at 0, slope at 1); the slope functions carry the interval length h."""
    if k == 0:
        b = [2 * u**3 - 3 * u**2 + 1, -2 * u**3 + 3 * u**2, u**3 - 2 * u**2 + u, u**3 - u**2]
    elif k == 1:
        b = [6 * u**2 - 6 * u, -6 * u**2 + 6 * u, 3 * u**2 - 4 * u + 1, 3 * u**2 - 2 * u]
    else:
        b = [12 * u - 6, -12 * u + 6, 6 * u - 4, 6 * u - 2]
    return jnp.stack([b[0], b[1], h * b[2], h * b[3]])
