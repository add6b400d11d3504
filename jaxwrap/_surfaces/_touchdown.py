"""Touchdown search: nearest point of a line segment to a surface
(docs/surfaces.md#touchdown-line-search)."""

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Int, Real

from .._misc import batched_like, check_count, check_positive, scalar_setting


class TouchdownSearch(eqx.Module):
    """Settings of the touchdown line search, Simbody's values by default.

    **Fields:**

    - `max_iterations`: Newton budget (static; Simbody: 50).
    - `tolerance`: stop when the line-parameter step falls below it (Simbody: 1e-9).
    - `regularization`: added to |c''(α)| in the Newton denominator (Simbody: 0.5), which
      damps the step where the line barely curves towards the surface.
    - `max_step`: largest change of the line parameter α ∈ [0, 1] per iteration
      (Simbody: 0.2).

    The three numbers are pytree leaves: under `jax.jit` a new value does not recompile.
    """

    max_iterations: int = eqx.field(static=True, default=50)
    tolerance: float | Float[Array, ""] = eqx.field(default=1e-9, converter=lambda x: scalar_setting(x, "tolerance"))
    regularization: float | Float[Array, ""] = eqx.field(
        default=0.5, converter=lambda x: scalar_setting(x, "regularization")
    )
    max_step: float | Float[Array, ""] = eqx.field(default=0.2, converter=lambda x: scalar_setting(x, "max_step"))

    def __check_init__(self):
        check_count("TouchdownSearch.max_iterations", self.max_iterations)
        check_positive("TouchdownSearch.tolerance", self.tolerance)
        check_positive("TouchdownSearch.regularization", self.regularization)
        check_positive("TouchdownSearch.max_step", self.max_step)


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
    surface,
    a: Real[ArrayLike, "3"] | Sequence,
    b: Real[ArrayLike, "3"] | Sequence,
    guess: Real[ArrayLike, "3"] | Sequence,
    search: TouchdownSearch = TouchdownSearch(),
    *,
    active: Bool[Array, ""] | None = None,
) -> NearestPointOnLine:
    """Simbody's `calcNearestPointOnLineImplicitly`, branch-free.

    With d = B - A and c(α) = -f(A + αd) (distance-like, > 0 outside), start from the
    projection of `guess` onto the line, α = clamp(-d·(A - guess)/|d|², 0, 1), and
    iterate a Newton step on c'(α) = 0 regularised like Simbody,

        step = c'(α) / (|c''(α)| + regularization),
        α ← clamp(α - clamp(step, -max_step, max_step), 0, 1),

    stopping with `below` as soon as c(α) < eps (the line touches the surface) or with
    `converged` when |Δα| < tolerance. A degenerate segment (|d|² < eps) returns A with
    `below = f(A) > 0`. The loop stops when every lane has finished (under `vmap`,
    finished lanes idle), at most `max_iterations` iterations. It runs without
    derivatives: `alpha`, `below` and `converged` are piecewise constant in practice,
    and `point` moves with the segment at the found α (``A + α(B - A)`` with α fixed),
    so `jax.grad` of anything built on the result works.

    **Arguments:**

    - `surface`: a `jaxwrap.AbstractSurface` (in its frame S; A, B, guess in S too).
    - `a`, `b`: segment end points A and B.
    - `guess`: previous tracking point (any point; only its projection on the line is used).
    - `search`: a `TouchdownSearch` (Simbody's constants by default).
    - `active`: where False, no iteration is taken (the result, at the guess's
      projection, is meant to be discarded): the cable solver searches only its lifted
      curves, and a batched loop would otherwise run to the slowest search of any curve.

    **Returns:**

    A `NearestPointOnLine`.
    """
    dtype = jnp.result_type(a, b, guess, float)
    a_diff, b_diff = (jnp.asarray(v, dtype) for v in (a, b))
    surface, search, a, b, guess = jax.tree.map(
        lambda x: jax.lax.stop_gradient(x) if eqx.is_array(x) else x,
        (surface, search, a_diff, b_diff, jnp.asarray(guess, dtype)),
    )
    eps = jnp.finfo(dtype).eps
    d = b - a
    dd = jnp.dot(d, d)
    degenerate = dd < eps
    dd_safe = jnp.where(degenerate, 1, dd)
    alpha0 = jnp.clip(-jnp.dot(d, a - guess) / dd_safe, 0, 1)
    alpha0 = jnp.where(degenerate, 0, alpha0)

    def body(state):
        alpha, done, below, converged, count = state
        x = a + alpha * d
        c = -surface.implicit(x)
        touches = c < eps
        grad_c = -surface.gradient(x)
        hess_c = -surface.hessian(x)
        step = jnp.dot(grad_c, d) / (jnp.abs(jnp.dot(d, hess_c @ d)) + search.regularization)
        alpha_new = jnp.clip(alpha - jnp.clip(step, -search.max_step, search.max_step), 0, 1)
        small = jnp.abs(alpha_new - alpha) < search.tolerance
        active = ~done
        # `touches` returns the current iterate, otherwise the updated one.
        alpha = jnp.where(active & ~touches, alpha_new, alpha)
        below = below | (active & touches)
        converged = converged | (active & (touches | small))
        count = count + active.astype(count.dtype)
        done = done | touches | small
        return alpha, done, below, converged, count

    false = jnp.zeros((), bool)
    skip = degenerate if active is None else degenerate | ~jax.lax.stop_gradient(active)
    init = (alpha0, skip, false, degenerate, jnp.zeros((), jnp.int32))
    # A per-lane stop: every carry batched from the start under `vmap`, so the body is
    # batched once (docs/performance.md#loops-batched-in-one-pass).
    init = batched_like(init, (init, a, b, eqx.filter(surface, eqx.is_array)))
    alpha, _, below, converged, count = jax.lax.while_loop(
        lambda state: ~state[1] & (state[4] < search.max_iterations), body, init
    )
    below = jnp.where(degenerate, surface.implicit(a) > 0, below)
    return NearestPointOnLine(
        point=a_diff + alpha * (b_diff - a_diff),
        alpha=alpha,
        below=below,
        converged=converged,
        num_iterations=count,
    )
