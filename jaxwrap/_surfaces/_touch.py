"""The inside wrap (MuJoCo's side site inside the geom): the shortest path between two
points that *touches* a solid sphere or cylinder (docs/surfaces.md#inside-wrap).

Where the straight segment already reaches the solid (an end point inside it, or the
segment crossing it) the path is that segment. Otherwise it runs straight to one point
``t`` of the surface and straight on: ``t`` minimises ``|a - t| + |t - b|``, the reflection
point (equal angles with the normal). Both surfaces reduce to a circle in a plane, as for
the shortest wrap: the sphere's great circle through both points, the cylinder's
cross-section, the height then following the developed straight line
(``z_t = z_a + (z_b - z_a) L_a / (L_a + L_b)``, total ``sqrt((L_a + L_b)² + Δz²)``).

On the circle ``t = r (cos φ, sin φ)`` and ``g(φ) = |a - t| + |b - t|`` is minimised by
Newton's method safeguarded by bisection, inside the arc between the polar angles of
``a`` and ``b`` that brackets the minimiser. The iterations run without derivatives;
one last Newton step is taken with them, which at a converged ``φ`` carries the exact
implicit derivative ``dφ = -∂g'/g''`` (and length, stationary in φ, needs none).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from .._misc import safe_norm, safe_normalize

_STEPS = 24  # safeguarded Newton: quadratic once close; bisection alone gains 2^-24


def _distance_terms(px, py, tx, ty, sx, sy):
    """For one end point ``p`` and ``t = (tx, ty)`` on the circle, ``t' = (sx, sy)`` (so
    ``t'' = -t`` and ``|t'|² = r²``): ``(d, u·t', u·t)`` with ``u = p - t``, ``d = |u|``,
    guarded where ``p = t`` (double `where`: no NaN in any derivative)."""
    ux, uy = px - tx, py - ty
    d2 = ux * ux + uy * uy
    positive = d2 > 0
    d = jnp.where(positive, jnp.sqrt(jnp.where(positive, d2, 1.0)), 1.0)
    return d, ux * sx + uy * sy, ux * tx + uy * ty


def _slopes(phi, a2, b2, radius):
    """``g'(φ)`` and ``g''(φ)`` of ``g = |a - t| + |b - t|``, ``t = r (cos φ, sin φ)``, in
    closed form: per end point ``d/dφ |u| = -u·t'/|u|`` and
    ``d²/dφ² |u| = (r² + u·t)/|u| - (u·t')²/|u|³`` (docs/surfaces.md#inside-wrap)."""
    c, s = jnp.cos(phi), jnp.sin(phi)
    tx, ty, sx, sy = radius * c, radius * s, -radius * s, radius * c
    first, second = 0.0, 0.0
    for p in (a2, b2):
        d, ut1, ut = _distance_terms(p[0], p[1], tx, ty, sx, sy)
        first = first - ut1 / d
        second = second + (radius * radius + ut) / d - ut1 * ut1 / (d * d * d)
    return first, second


def _newton_step(phi, a2, b2, radius):
    slope, curvature = _slopes(phi, a2, b2, radius)
    return phi - slope / jnp.where(curvature > 0, curvature, 1.0)


def circle_touch(
    a2: Float[Array, "2"], b2: Float[Array, "2"], radius: Float[Array, ""]
) -> tuple[Bool[Array, ""], Float[Array, "2"]]:
    """``(touches, t)``: whether the shortest path from `a2` to `b2` that reaches the disc
    ``|x| <= radius`` has to bend to a boundary point, and that point ``t``.

    The minimiser lies on the arc between the polar angles of `a2` and `b2` (the shorter
    one): ``g' < 0`` where the arc starts (t nearest a, moving towards b) and ``> 0`` where
    it ends. Newton's method runs inside that bracket, bisecting whenever a step would
    leave it (docs/surfaces.md#inside-wrap)."""
    d = b2 - a2
    dd = jnp.dot(d, d)
    s = jnp.clip(-jnp.dot(a2, d) / jnp.where(dd > 0, dd, 1.0), 0.0, 1.0)
    nearest = a2 + s * d
    touches = (safe_norm(a2) > radius) & (safe_norm(b2) > radius) & (safe_norm(nearest) > radius)
    x = jax.lax.stop_gradient((a2, b2, radius))
    angle_a = jnp.arctan2(x[0][1], x[0][0])
    turn = jnp.arctan2(x[0][0] * x[1][1] - x[0][1] * x[1][0], jnp.dot(x[0], x[1]))  # signed, (-pi, pi]
    lo, hi = angle_a, angle_a + turn  # g'(lo) <= 0 <= g'(hi) along the direction of turn
    direction = jnp.where(turn >= 0, 1.0, -1.0)

    def step(_, carry):
        lo, hi, phi = carry
        slope, curvature = _slopes(phi, *x)
        lo, hi = jnp.where(slope * direction < 0, phi, lo), jnp.where(slope * direction < 0, hi, phi)
        trial = phi - slope / jnp.where(curvature > 0, curvature, 1.0)
        inside = (trial - lo) * (trial - hi) < 0
        return lo, hi, jnp.where(inside, trial, 0.5 * (lo + hi))

    # Unrolled: the steps are a few dozen scalar operations each, which XLA fuses into one
    # kernel; a loop would pay a kernel launch per step and per operation
    # (docs/performance.md#closed-form-legs).
    _, _, phi = jax.lax.fori_loop(0, _STEPS, step, (lo, hi, 0.5 * (lo + hi)), unroll=True)
    phi = _newton_step(jax.lax.stop_gradient(phi), a2, b2, radius)
    return touches, radius * jnp.stack([jnp.cos(phi), jnp.sin(phi)])


def sphere_touch(
    radius: Float[Array, ""], a: Float[Array, "3"], b: Float[Array, "3"]
) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, ""]]:
    """``(touches, t, length)`` for the sphere of `radius` at the origin (``t`` = `a`'s
    nearest surface point when not touching; it is not on the path then)."""
    e0 = safe_normalize(a, jnp.array([1.0, 0.0, 0.0], a.dtype))
    # Any plane through a ray holds the path when b lies on a's ray: a fixed fallback.
    fallback = safe_normalize(jnp.cross(e0, jnp.array([0.0, 0.0, 1.0], a.dtype)), jnp.array([0.0, 1.0, 0.0], a.dtype))
    n = safe_normalize(jnp.cross(a, b), safe_normalize(jnp.cross(e0, fallback), jnp.array([0.0, 0.0, 1.0], a.dtype)))
    e1 = jnp.cross(n, e0)
    a2 = jnp.stack([jnp.dot(a, e0), jnp.dot(a, e1)])
    b2 = jnp.stack([jnp.dot(b, e0), jnp.dot(b, e1)])
    touches, t2 = circle_touch(a2, b2, radius)
    t = t2[0] * e0 + t2[1] * e1
    length = jnp.where(touches, safe_norm(a - t) + safe_norm(b - t), safe_norm(b - a))
    return touches, t, length


def cylinder_touch(
    radius: Float[Array, ""], a: Float[Array, "3"], b: Float[Array, "3"]
) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, ""]]:
    """``(touches, t, length)`` for the infinite cylinder of `radius` about z."""
    touches, t2 = circle_touch(a[:2], b[:2], radius)
    la, lb = safe_norm(a[:2] - t2), safe_norm(b[:2] - t2)
    total = la + lb
    z = a[2] + (b[2] - a[2]) * la / jnp.where(total > 0, total, 1.0)
    t = jnp.concatenate([t2, z[None]])
    length = jnp.where(touches, jnp.sqrt(total**2 + (b[2] - a[2]) ** 2), safe_norm(b - a))
    return touches, t, length
