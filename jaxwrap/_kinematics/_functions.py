"""`PiecewiseCubic`: one coordinate's function of another, for coupled joints.

A coupled joint (docs/kinematics.md#coupled-joints) moves by ``f(q_c)``, a function of
another joint's coordinate ``q_c``: OpenSim's ``CustomJoint`` transform axes (the knee's
translations along splines of the knee angle) and ``MovingPathPoint`` locations, URDF's
``mimic`` joints. Every such function is stored as one piecewise cubic over knots
``x_0 < ... < x_{n-1}``,

    f(x) = y_k + b_k t + c_k t² + d_k t³,   t = x - x_k,   x_k <= x <= x_{k+1},

extended linearly outside the knots with the end slopes ``b_0`` and ``b_{n-1}`` (how
OpenSim's ``SimmSpline`` and ``PiecewiseLinearFunction`` extrapolate). Constants, linear
functions and splines are all of this form, so a model's functions are one pytree type
with array leaves: they batch, and gradients reach the spline values.

A `Polynomial` (OpenSim's ``PolynomialFunction``, e.g. the knee of Rajagopal, Lai and
Uhlrich's 2023 model: quartics of the knee angle) has no knots and is not linear beyond
any range, so it is a type of its own with the same interface (``f(x)``,
`derivative`, `scaled`); `CoordinateFunction` is either.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float


class PiecewiseCubic(eqx.Module):
    """A piecewise cubic ``f(x)`` with linear extension beyond its knots (module docstring).

    Build with `constant`, `linear`, `piecewise_linear` or `simm_spline`; call as
    ``f(x)`` (a scalar, or any shape elementwise)."""

    knots: Float[Array, " n"]
    y: Float[Array, " n"]
    b: Float[Array, " n"]
    c: Float[Array, " n"]
    d: Float[Array, " n"]

    def _piece(self, x: Array) -> tuple[Array, Array]:
        """The piece ``k`` holding ``x`` (the end pieces beyond the knots) and ``t = x - x_k``."""
        n = self.knots.shape[0]
        k = jnp.clip(jnp.searchsorted(self.knots, x, side="right") - 1, 0, n - 2)
        return k, x - self.knots[k]

    def __call__(self, x: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
        x = jnp.asarray(x)
        k, t = self._piece(x)
        inside = self.y[k] + t * (self.b[k] + t * (self.c[k] + t * self.d[k]))
        below = self.y[0] + (x - self.knots[0]) * self.b[0]
        above = self.y[-1] + (x - self.knots[-1]) * self.b[-1]
        return jnp.where(x < self.knots[0], below, jnp.where(x > self.knots[-1], above, inside))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def _of(cls, knots, y, b, c, d) -> PiecewiseCubic:
        dtype = jnp.result_type(float)
        return cls(*(jnp.asarray(np.asarray(a, dtype=float), dtype=dtype) for a in (knots, y, b, c, d)))

    @classmethod
    def constant(cls, value: float) -> PiecewiseCubic:
        return cls.linear(0.0, value)

    @classmethod
    def linear(cls, slope: float, intercept: float) -> PiecewiseCubic:
        """``slope x + intercept`` everywhere."""
        slope, intercept = float(slope), float(intercept)
        return cls._of([0.0, 1.0], [intercept, intercept + slope], [slope, slope], [0.0, 0.0], [0.0, 0.0])

    @classmethod
    def piecewise_linear(cls, x, y) -> PiecewiseCubic:
        """Straight pieces through the points, extended with the end pieces' slopes."""
        x, y = _points(x, y, 2, "piecewise_linear")
        slopes = np.diff(y) / np.diff(x)
        b = np.append(slopes, slopes[-1])
        zeros = np.zeros_like(x)
        return cls._of(x, y, b, zeros, zeros)

    @classmethod
    def simm_spline(cls, x, y) -> PiecewiseCubic:
        """OpenSim's ``SimmSpline``: the interpolating cubic spline of Forsythe, Malcolm
        and Moler, whose third derivative at each end equals that of the cubic through
        the four end points (two points: a straight line; docs/opensim.md#functions)."""
        x, y = _points(x, y, 2, "simm_spline")
        n = len(x)
        if n == 2:
            slope = (y[1] - y[0]) / (x[1] - x[0])
            return cls._of(x, y, [slope, slope], [0.0, 0.0], [0.0, 0.0])
        h = np.diff(x)
        slopes = np.diff(y) / h
        # Tridiagonal system for sigma = f''/6 at the knots:
        # rows 1..n-2: h_{i-1} s_{i-1} + 2 (h_{i-1} + h_i) s_i + h_i s_{i+1} = Δslope_i.
        A = np.zeros((n, n))
        r = np.zeros(n)
        for i in range(1, n - 1):
            A[i, i - 1], A[i, i], A[i, i + 1] = h[i - 1], 2.0 * (h[i - 1] + h[i]), h[i]
            r[i] = slopes[i] - slopes[i - 1]
        # End conditions: -h0 s0 + h0 s1 = h0² Δ³ at the start (and mirrored at the end),
        # Δ³ the third divided difference of the end four points (zero with three).
        A[0, 0], A[0, 1] = -h[0], h[0]
        A[-1, -2], A[-1, -1] = h[-1], -h[-1]
        if n > 3:
            d3_start = (r[2] / (x[3] - x[1]) - r[1] / (x[2] - x[0])) / (x[3] - x[0])
            d3_end = (r[-2] / (x[-1] - x[-3]) - r[-3] / (x[-2] - x[-4])) / (x[-1] - x[-4])
            r[0] = d3_start * h[0] ** 2
            r[-1] = -d3_end * h[-1] ** 2
        sigma = np.linalg.solve(A, r)
        b = np.empty(n)
        b[:-1] = slopes - h * (sigma[1:] + 2.0 * sigma[:-1])
        b[-1] = slopes[-1] + h[-1] * (sigma[-2] + 2.0 * sigma[-1])
        d = np.append(np.diff(sigma) / h, 0.0)
        c = 3.0 * sigma
        return cls._of(x, y, b, c, d)

    def derivative(self, x: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
        """``f'(x)`` (the end slopes outside the knots)."""
        x = jnp.asarray(x)
        k, t = self._piece(x)
        inside = self.b[k] + t * (2.0 * self.c[k] + 3.0 * t * self.d[k])
        return jnp.where(x < self.knots[0], self.b[0], jnp.where(x > self.knots[-1], self.b[-1], inside))

    def scaled(self, factor: float) -> PiecewiseCubic:
        """``factor * f`` (OpenSim's ``MultiplierFunction``)."""
        return PiecewiseCubic(self.knots, factor * self.y, factor * self.b, factor * self.c, factor * self.d)


class Polynomial(eqx.Module):
    """``f(x) = a_0 x^(n-1) + ... + a_(n-2) x + a_(n-1)``: coefficients from the highest
    order to the lowest (OpenSim's ``PolynomialFunction`` and `numpy.polyval`), valid
    for every ``x`` (no extension beyond a range). Build with `Polynomial.of`."""

    coefficients: Float[Array, " n"]

    @classmethod
    def of(cls, coefficients) -> Polynomial:
        a = np.asarray(coefficients, dtype=float)
        if a.ndim != 1 or len(a) == 0:
            raise ValueError(f"Polynomial: needs a 1-D list of at least one coefficient, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"Polynomial: coefficients must be finite, got {a.tolist()}")
        return cls(jnp.asarray(a, dtype=jnp.result_type(float)))

    def __call__(self, x: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
        x = jnp.asarray(x)
        value = jnp.zeros_like(x, dtype=jnp.result_type(x, self.coefficients))
        for k in range(self.coefficients.shape[0]):  # Horner; the degree is static
            value = value * x + self.coefficients[k]
        return value

    def derivative(self, x: Float[ArrayLike, "..."]) -> Float[Array, "..."]:
        """``f'(x)``."""
        n = self.coefficients.shape[0]
        if n == 1:
            return jnp.zeros_like(jnp.asarray(x), dtype=jnp.result_type(x, self.coefficients))
        powers = jnp.arange(n - 1, 0, -1, dtype=self.coefficients.dtype)
        return Polynomial(self.coefficients[:-1] * powers)(x)

    def scaled(self, factor: float) -> Polynomial:
        """``factor * f`` (OpenSim's ``MultiplierFunction``)."""
        return Polynomial(factor * self.coefficients)


#: What a coupled joint or a moving point moves by: a function of one coordinate.
CoordinateFunction = PiecewiseCubic | Polynomial


def _points(x, y, minimum: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape or len(x) < minimum:
        raise ValueError(f"{what}: needs matching 1-D x and y with at least {minimum} points, got {x.shape}, {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError(f"{what}: points must be finite")
    if np.any(np.diff(x) <= 0):
        raise ValueError(f"{what}: x must increase strictly, got {x.tolist()}")
    return x, y
