"""MuJoCo's wrap of one sphere or cylinder between two sites, in closed form
(docs/cable-sets.md#mujoco-rule).

This is MuJoCo's published construction (its ``mju_wrap``/``wrap_circle``, identical in
every 3.x release we checked against, 3.3.7 and 3.17.0), written for `jit`, `vmap` and
autodiff: every branch is computed and selected with `jnp.where`, and the selection is
piecewise constant, so derivatives are those of the chosen closed form (MuJoCo's
``ten_J`` is the same derivative, by the envelope argument). The rule:

1. The end points in the geom frame are projected onto a plane: a cylinder's
   cross-section, or for a sphere the plane through its centre and both points (axis 0
   along the first point; where the points and the centre are collinear, a plane picked
   by the largest component of that axis).
2. No wrap (the straight line) if an end point is inside the circle, the points
   coincide, or the segment misses the circle and there is no side site or the side
   site is on the segment's side (``side · nearest >= 0``).
3. Otherwise the two tangent solutions are scored: with a side site, by how well the
   middle of their tangent points points at it; without, by the shorter chord. A
   solution whose two tangent lines cross is scored -10000, and if the chosen one's lines
   cross there is no wrap.
4. The arc turns through the angle between the tangent points, the long way when the
   solution's orientation says so; on a cylinder the heights of the tangent points
   follow the developed straight line and the arc becomes a helix.
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from .._misc import safe_norm, safe_normalize

_MINVAL = 1e-15  # MuJoCo's mjMINVAL


def _cross2(u, v):
    return u[0] * v[1] - u[1] * v[0]


def _segments_cross(p1, p2, p3, p4) -> Bool[Array, ""]:
    """Whether segment p1-p2 crosses segment p3-p4 (MuJoCo's ``is_intersect``)."""
    det = (p4[1] - p3[1]) * (p2[0] - p1[0]) - (p4[0] - p3[0]) * (p2[1] - p1[1])
    ok = jnp.abs(det) >= _MINVAL
    safe = jnp.where(ok, det, 1.0)
    a = ((p4[0] - p3[0]) * (p1[1] - p3[1]) - (p4[1] - p3[1]) * (p1[0] - p3[0])) / safe
    b = ((p2[0] - p1[0]) * (p1[1] - p3[1]) - (p2[1] - p1[1]) * (p1[0] - p3[0])) / safe
    return ok & (a >= 0) & (a <= 1) & (b >= 0) & (b <= 1)


def _sqrt_positive(x):
    """sqrt(max(x, 0)) with a zero (not NaN) derivative where x <= 0."""
    positive = x > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1.0)), 0.0)


def _arc_angle(p, q):
    """The unsigned angle between p and q in [0, π] (MuJoCo's ``length_circle`` before
    its orientation test), with a zero derivative where either vector is zero."""
    y, x = jnp.abs(_cross2(p, q)), jnp.dot(p, q)
    degenerate = (y == 0) & (x == 0)  # a zero vector: atan2's derivative is 0/0 there
    return jnp.where(degenerate, 0.0, jnp.arctan2(jnp.where(degenerate, 0.0, y), jnp.where(degenerate, 1.0, x)))


def _wrap_circle(end, side2, radius, has_side: bool):
    """``(wrapped, p, q, arc)`` of MuJoCo's 2-D circle wrap (step 2 and 3 above)."""
    a, b = end[:2], end[2:]
    sq_a, sq_b, sq_r = jnp.dot(a, a), jnp.dot(b, b), radius**2
    dif = b - a
    dd = jnp.dot(dif, dif)
    t = jnp.clip(-jnp.dot(dif, a) / jnp.where(dd < _MINVAL, 1.0, dd), 0.0, 1.0)
    nearest = a + t * dif
    misses = jnp.dot(nearest, nearest) > sq_r
    if has_side:
        misses = misses & (jnp.dot(side2, nearest) >= 0)
    no_wrap = (sq_a < sq_r) | (sq_b < sq_r) | (radius < _MINVAL) | (dd < _MINVAL) | misses

    root_a = _sqrt_positive(sq_a - sq_r)
    root_b = _sqrt_positive(sq_b - sq_r)
    safe_a, safe_b = jnp.where(sq_a > 0, sq_a, 1.0), jnp.where(sq_b > 0, sq_b, 1.0)
    sols, goods, crossings = [], [], []
    for sign in (1.0, -1.0):
        p = (
            jnp.stack([a[0] * sq_r + sign * radius * a[1] * root_a, a[1] * sq_r - sign * radius * a[0] * root_a])
            / safe_a
        )
        q = (
            jnp.stack([b[0] * sq_r - sign * radius * b[1] * root_b, b[1] * sq_r + sign * radius * b[0] * root_b])
            / safe_b
        )
        if has_side:
            good = jnp.dot(safe_normalize(p + q, jnp.array([1.0, 0.0], p.dtype)), side2)
        else:
            good = -jnp.dot(p - q, p - q)
        crosses = _segments_cross(a, p, b, q)
        sols.append((p, q))
        goods.append(jnp.where(crosses, -10000.0, good))
        crossings.append(crosses)
    first = goods[0] > goods[1]
    p = jnp.where(first, sols[0][0], sols[1][0])
    q = jnp.where(first, sols[0][1], sols[1][1])
    crosses = jnp.where(first, crossings[0], crossings[1])
    # The arc of the chosen solution only (one atan2): the long way when the first
    # solution turns clockwise or the second counter-clockwise (MuJoCo's ``ind``).
    angle = _arc_angle(p, q)
    cross = p[1] * q[0] - p[0] * q[1]
    flip = jnp.where(first, cross < 0, cross > 0)
    arc = jnp.where(flip, 2 * jnp.pi - angle, angle)
    return ~no_wrap & ~crosses, p, q, radius * arc


def _sphere_plane(p0, p1):
    """MuJoCo's 2-D frame for a sphere wrap: axis 0 along p0, normal p0 × p1."""
    axis0 = safe_normalize(p0, jnp.array([1.0, 0.0, 0.0], p0.dtype))
    normal = jnp.cross(p0, p1)
    collinear = safe_norm(normal) < _MINVAL
    # Collinear: the second axis starts as ones with a zero at axis 0's largest component.
    absx = jnp.abs(axis0)
    i = jnp.where((absx[1] > absx[0]) & (absx[1] > absx[2]), 1, 0)
    i = jnp.where((absx[2] > absx[0]) & (absx[2] > absx[1]), 2, i)
    other = jnp.ones(3, p0.dtype).at[i].set(0.0)
    fallback = safe_normalize(jnp.cross(axis0, other), jnp.array([0.0, 0.0, 1.0], p0.dtype))
    normal = jnp.where(collinear, fallback, safe_normalize(normal, fallback))
    axis1 = safe_normalize(jnp.cross(normal, axis0), jnp.array([0.0, 1.0, 0.0], p0.dtype))
    return axis0, axis1


def mujoco_wrap(
    p0: Float[Array, "3"],
    p1: Float[Array, "3"],
    radius: Float[Array, ""],
    cylinder: bool,
    side: Float[Array, "3"] | None,
) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
    """MuJoCo's wrap between `p0` and `p1` (in the geom frame): ``(wrapped, P, Q, arc)``,
    the tangent points and the arc (helix) length where it wraps."""
    if cylinder:
        axis0 = jnp.array([1.0, 0.0, 0.0], p0.dtype)
        axis1 = jnp.array([0.0, 1.0, 0.0], p0.dtype)
    else:
        axis0, axis1 = _sphere_plane(p0, p1)
    end = jnp.stack([jnp.dot(p0, axis0), jnp.dot(p0, axis1), jnp.dot(p1, axis0), jnp.dot(p1, axis1)])
    side2 = None
    if side is not None:
        side2 = radius * safe_normalize(
            jnp.stack([jnp.dot(side, axis0), jnp.dot(side, axis1)]), jnp.array([1.0, 0.0], p0.dtype)
        )
    wrapped, p, q, arc = _wrap_circle(end, side2, radius, side is not None)
    wrapped = wrapped & (safe_norm(p0) >= _MINVAL) & (safe_norm(p1) >= _MINVAL)
    P = p[0] * axis0 + p[1] * axis1
    Q = q[0] * axis0 + q[1] * axis1
    if cylinder:
        L0 = safe_norm(p0[:2] - P[:2])
        L1 = safe_norm(p1[:2] - Q[:2])
        total = L0 + arc + L1
        total = jnp.where(total > 0, total, 1.0)
        z0 = p0[2] + (p1[2] - p0[2]) * L0 / total
        z1 = p0[2] + (p1[2] - p0[2]) * (L0 + arc) / total
        P = P.at[2].set(z0)
        Q = Q.at[2].set(z1)
        arc = safe_norm(jnp.stack([arc, z1 - z0]))
    return wrapped, P, Q, arc
