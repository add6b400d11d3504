"""Touchdown search: nearest point of a line segment to a surface (cablespan.md §2.10)."""

from typing import TYPE_CHECKING

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

if TYPE_CHECKING:
    from ._base import AbstractSurface


class NearestPointOnLine(eqx.Module):
    """Result of `AbstractSurface.nearest_point_on_line`.

    **Fields:**

    - `point`: the line point A + α(B - A) where the search ended. When `below` it is the
      first iterate found on or inside the surface (where the cable touches down);
      otherwise the point of the segment deepest towards the surface (largest f), which
      CableSpan keeps as the tracking point of a lifted curve.
    - `alpha`: the line parameter α ∈ [0, 1] of `point`.
    - `below`: the line falls below the surface (f(point) > -eps): touchdown.
    - `converged`: `below`, or the α-step fell under the tolerance. False means the
      iteration budget ran out (Simbody's `MaxIterationsExceeded`).
    - `num_iterations`: Newton iterations used.
    """

    point: Float[Array, "3"]
    alpha: Float[Array, ""]
    below: Bool[Array, ""]
    converged: Bool[Array, ""]
    num_iterations: Int[Array, ""]


def nearest_point_on_line(
    surface: "AbstractSurface",
    a: Float[Array, "3"],
    b: Float[Array, "3"],
    guess: Float[Array, "3"],
    *,
    max_iterations: int = 50,
    tolerance: float = 1e-9,
) -> NearestPointOnLine:
    """Simbody's `calcNearestPointOnLineImplicitly`, branch-free.

    With d = B - A and c(α) = -f(A + αd) (distance-like, > 0 outside), start from the
    projection of `guess` onto the line, α = clamp(-d·(A - guess)/|d|², 0, 1), and
    iterate a Newton step on c'(α) = 0 regularised like Simbody,

        step = c'(α) / (|c''(α)| + 0.5),   α ← clamp(α - clamp(step, -0.2, 0.2), 0, 1),

    stopping with `below` as soon as c(α) < eps (the line touches the surface) or with
    `converged` when |Δα| < `tolerance`. A degenerate segment (|d|² < eps) returns A with
    `below = f(A) > 0`. The loop has a static trip count (finished lanes idle), so it
    works under `vmap` and reverse-mode differentiation.

    **Arguments:**

    - `surface`: the surface (in its frame S; A, B, guess in S too).
    - `a`, `b`: segment end points A and B.
    - `guess`: previous tracking point (any point; only its projection on the line is used).
    - `max_iterations`: Newton budget (CableSpan: 50).
    - `tolerance`: α-step tolerance (CableSpan: 1e-9).

    **Returns:**

    A `NearestPointOnLine`.
    """
    dtype = jnp.result_type(a, b, guess, float)
    a, b, guess = (jnp.asarray(v, dtype) for v in (a, b, guess))
    eps = jnp.finfo(dtype).eps
    d = b - a
    dd = jnp.dot(d, d)
    degenerate = dd < eps
    dd_safe = jnp.where(degenerate, 1, dd)
    alpha0 = jnp.clip(-jnp.dot(d, a - guess) / dd_safe, 0, 1)
    alpha0 = jnp.where(degenerate, 0, alpha0)

    def body(_, state):
        alpha, done, below, converged, count = state
        x = a + alpha * d
        c = -surface.implicit(x)
        touches = c < eps
        grad_c = -surface.gradient(x)
        hess_c = -surface.hessian(x)
        step = jnp.dot(grad_c, d) / (jnp.abs(jnp.dot(d, hess_c @ d)) + 0.5)
        alpha_new = jnp.clip(alpha - jnp.clip(step, -0.2, 0.2), 0, 1)
        small = jnp.abs(alpha_new - alpha) < tolerance
        active = ~done
        # `touches` returns the current iterate, otherwise the updated one.
        alpha = jnp.where(active & ~touches, alpha_new, alpha)
        below = below | (active & touches)
        converged = converged | (active & (touches | small))
        count = count + active.astype(count.dtype)
        done = done | touches | small
        return alpha, done, below, converged, count

    false = jnp.zeros((), bool)
    init = (alpha0, degenerate, false, degenerate, jnp.zeros((), jnp.int32))
    alpha, _, below, converged, count = jax.lax.fori_loop(
        0, max_iterations, body, init
    )
    below = jnp.where(degenerate, surface.implicit(a) > 0, below)
    return NearestPointOnLine(
        point=a + alpha * d,
        alpha=alpha,
        below=below,
        converged=converged,
        num_iterations=count,
    )
