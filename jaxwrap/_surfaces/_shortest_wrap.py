"""The shortest wrap of a straight segment over a sphere or a cylinder, in closed form
(docs/surfaces.md#shortest-wrap).

Between two fixed points outside a sphere the shortest path lies in the plane through
both points and the centre; around a cylinder it is straight once the cylinder is
developed onto a plane, so its projection across the axis is the shortest path around
the cross-section circle. Both reduce to the planar problem: from ``a`` to ``b`` outside
the circle ``|x| = r``, the path is a tangent line, an arc and a tangent line, going
round either way (``σ = +1`` counter-clockwise, ``-1`` clockwise), unless the segment
misses the circle. With ``α = arccos(r / |a|)`` the tangent point from ``a`` lies at polar
angle ``θ_a + σ α_a`` and the one towards ``b`` at ``θ_b - σ α_b``; the arc between them
turns through ``φ ∈ [0, 2π)`` in the sense σ.

With a wrap side ``s`` (docs/cable.md#wrap-side) the side is chosen instead of the
shorter one: counter-clockwise turns the path's angular momentum about the centre to
``+z``, which is the side of ``s`` when ``s × u`` (``u`` the unit direction from ``a`` to
``b``) points along ``+z``; where the straight segment passes on the other side (its
point nearest the centre does) it is wrapped round (MuJoCo's side site), where ``s × u``
vanishes the shorter side is taken.

Its uses: a cold start on a single sphere or cylinder that is already the answer
(jaxwrap/_cable/_candidates.py), so no start has to be guessed and the solver finishes
in one evaluation; and a warm start there, which keeps the previous path's way round
(``*_wrap_turning``: the side whose angular momentum agrees with the previous path's),
touching only where the straight segment meets the obstacle
(docs/cable.md#warm-starts-in-closed-form).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from .._misc import positive_or_one, safe_normalize, segment_nearest_to_origin


class _Arc(NamedTuple):
    """One side of the planar wrap."""

    angle_P: Float[Array, ""]  # polar angle of the first tangent point
    sense: Float[Array, ""]  # +1 counter-clockwise, -1 clockwise
    turn: Float[Array, ""]  # φ, the arc's turning angle
    tangent_a: Float[Array, ""]  # length of the line from a to the arc
    length: Float[Array, ""]  # line + arc + line

    def point_and_direction(self, radius) -> tuple[Float[Array, "2"], Float[Array, "2"]]:
        c, s = jnp.cos(self.angle_P), jnp.sin(self.angle_P)
        return radius * jnp.stack([c, s]), self.sense * jnp.stack([-s, c])


def _arc(a2: Float[Array, "2"], b2: Float[Array, "2"], radius: Float[Array, ""], sense: float) -> _Arc:
    da, db = jnp.linalg.norm(a2), jnp.linalg.norm(b2)
    # An end point inside the circle has no tangent line; the solver reports that
    # (RESULTS.endpoint_inside_obstacle), the clip only keeps the numbers finite.
    alpha_a = jnp.arccos(jnp.clip(radius / positive_or_one(da), -1.0, 1.0))
    alpha_b = jnp.arccos(jnp.clip(radius / positive_or_one(db), -1.0, 1.0))
    angle_P = jnp.arctan2(a2[1], a2[0]) + sense * alpha_a
    angle_Q = jnp.arctan2(b2[1], b2[0]) - sense * alpha_b
    turn = jnp.mod(sense * (angle_Q - angle_P), 2 * jnp.pi)
    tangent_a = jnp.sqrt(jnp.maximum(da**2 - radius**2, 0.0))
    length = tangent_a + radius * turn + jnp.sqrt(jnp.maximum(db**2 - radius**2, 0.0))
    return _Arc(angle_P, jnp.asarray(sense, a2.dtype), turn, tangent_a, length)


def _segment_meets_disk(a2: Float[Array, "2"], b2: Float[Array, "2"], radius: Float[Array, ""]) -> Bool[Array, ""]:
    return jnp.linalg.norm(segment_nearest_to_origin(a2, b2)) < radius


def _shorter(a2, b2, radius) -> _Arc:
    """The shorter of the two sides (counter-clockwise on a tie)."""
    ccw, cw = _arc(a2, b2, radius, 1.0), _arc(a2, b2, radius, -1.0)
    return _Arc(*(jnp.where(ccw.length <= cw.length, x, y) for x, y in zip(ccw, cw)))


def _cross2(x: Float[Array, "2"], y: Float[Array, "2"]) -> Float[Array, ""]:
    return x[0] * y[1] - x[1] * y[0]


def _turning(ccw: _Arc, cw: _Arc, shorter: _Arc, sense: Float[Array, ""]) -> _Arc:
    """The arc going round in `sense` (+1 counter-clockwise, -1 clockwise, 0 the shorter)."""
    return _Arc(*(jnp.where(sense > 0, x, jnp.where(sense < 0, y, z)) for x, y, z in zip(ccw, cw, shorter)))


def _sense(w: Float[Array, ""], tol: Float[Array, ""]) -> Float[Array, ""]:
    """+1, -1 or 0 (within `tol` of zero, or not a number)."""
    return jnp.where(w > tol, 1.0, jnp.where(w < -tol, -1.0, 0.0))


def _wrap(a2, b2, radius, side2) -> tuple[_Arc, Bool[Array, ""]]:
    """The arc to take and whether the path touches: the shorter side where the segment
    meets the disk, or on the side of `side2` (None: no side), wrapping round where the
    segment passes on the other side."""
    # The segment's point nearest the centre: inside the disk it meets it; on the other
    # side of the centre from `side2` the path is wrapped round (MuJoCo's test).
    nearest = segment_nearest_to_origin(a2, b2)
    meets = jnp.linalg.norm(nearest) < radius
    if side2 is None:
        return _shorter(a2, b2, radius), meets
    u = safe_normalize(b2 - a2, jnp.zeros_like(a2))
    w = _cross2(side2, u)
    tol = jnp.sqrt(jnp.finfo(a2.dtype).eps) * jnp.linalg.norm(side2)
    ccw, cw, shorter = _arc(a2, b2, radius, 1.0), _arc(a2, b2, radius, -1.0), _shorter(a2, b2, radius)
    arc = _turning(ccw, cw, shorter, _sense(w, tol))
    line_wrong = jnp.dot(nearest, side2) < -tol * jnp.linalg.norm(nearest)
    return arc, meets | line_wrong


def _wrap_turning(a2, b2, radius, spin: Float[Array, ""], scale: Float[Array, ""]) -> tuple[_Arc, Bool[Array, ""]]:
    """The arc going round the way of the signed angular momentum `spin` (counter-clockwise
    where it is positive; the shorter side where it is within `sqrt(eps) * scale` of zero
    or not a number) and whether the segment meets the disk, where alone the path
    touches: a segment that misses the disk is the path, on either side."""
    tol = jnp.sqrt(jnp.finfo(a2.dtype).eps) * scale
    ccw, cw, shorter = _arc(a2, b2, radius, 1.0), _arc(a2, b2, radius, -1.0), _shorter(a2, b2, radius)
    return _turning(ccw, cw, shorter, _sense(spin, tol)), _segment_meets_disk(a2, b2, radius)


def _sphere_plane(a, b, hint) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """An orthonormal basis of the plane through `a`, `b` and the centre (``e1`` along
    `a`); through `hint` as well where the three are collinear."""
    dtype = a.dtype
    e1 = safe_normalize(a, jnp.array([1.0, 0.0, 0.0], dtype))
    fallback = safe_normalize(jnp.cross(e1, jnp.array([0.0, 0.0, 1.0], dtype)), jnp.array([0.0, 1.0, 0.0], dtype))
    towards_hint = safe_normalize(hint - jnp.dot(hint, e1) * e1, fallback)
    e2 = safe_normalize(b - jnp.dot(b, e1) * e1, towards_hint)
    return e1, e2


def _in_plane(x, e1, e2) -> Float[Array, "2"]:
    return jnp.stack([jnp.dot(x, e1), jnp.dot(x, e2)])


def _on_sphere(arc: _Arc, touches, radius, e1, e2):
    p2, t2 = arc.point_and_direction(radius)
    return touches, p2[0] * e1 + p2[1] * e2, t2[0] * e1 + t2[1] * e2, radius * arc.turn


def sphere_shortest_wrap(
    radius: Float[Array, ""],
    a: Float[Array, "3"],
    b: Float[Array, "3"],
    hint: Float[Array, "3"],
    side: Float[Array, "3"] | None = None,
) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
    """``(touches, P, t_P, ℓ)``: whether the shortest path from `a` to `b` (on the side of
    `side` if given) touches the sphere, and if so where it lands (``P``), its direction
    there and the great-circle arc length. When `a`, `b` and the centre are collinear
    every plane through them is a shortest path; the one through `hint` is taken."""
    e1, e2 = _sphere_plane(a, b, hint)
    side2 = None if side is None else _in_plane(side, e1, e2)
    arc, touches = _wrap(_in_plane(a, e1, e2), _in_plane(b, e1, e2), radius, side2)
    return _on_sphere(arc, touches, radius, e1, e2)


def sphere_wrap_turning(
    radius: Float[Array, ""],
    a: Float[Array, "3"],
    b: Float[Array, "3"],
    hint: Float[Array, "3"],
    momentum: Float[Array, "3"],
) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
    """``(touches, P, t_P, ℓ)`` of the shortest path from `a` to `b` that goes round the
    sphere the way a path of angular momentum `momentum` (about the centre) does: the
    wrap whose own angular momentum points to the same side of the wrap plane, the
    shorter where `momentum` lies in that plane or is zero. It touches only where the
    segment meets the sphere (docs/cable.md#warm-starts-in-closed-form)."""
    e1, e2 = _sphere_plane(a, b, hint)
    # A counter-clockwise wrap in (e1, e2) has its angular momentum along e1 × e2.
    spin = jnp.dot(momentum, jnp.cross(e1, e2))
    arc, touches = _wrap_turning(_in_plane(a, e1, e2), _in_plane(b, e1, e2), radius, spin, jnp.linalg.norm(momentum))
    return _on_sphere(arc, touches, radius, e1, e2)


def _on_cylinder(arc: _Arc, touches, radius, a, b):
    """The helix over the planar `arc`, climbing at the slope of the developed line."""
    p2, t2 = arc.point_and_direction(radius)
    across = positive_or_one(arc.length)  # > 0 for end points outside the cylinder
    rise = b[2] - a[2]
    total = jnp.sqrt(across**2 + rise**2)
    z_P = a[2] + rise * arc.tangent_a / across
    point = jnp.stack([p2[0], p2[1], z_P])
    tangent = jnp.stack([t2[0] * across / total, t2[1] * across / total, rise / total])
    return touches, point, tangent, radius * arc.turn * total / across


def cylinder_shortest_wrap(
    radius: Float[Array, ""], a: Float[Array, "3"], b: Float[Array, "3"], side: Float[Array, "3"] | None = None
) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
    """``(touches, P, t_P, ℓ)`` of the shortest path from `a` to `b` (on the side of
    `side` if given) around the cylinder of radius `radius` about z: the planar wrap of
    the cross-section, climbing at the constant slope of the developed straight line (a
    helix on the surface)."""
    arc, touches = _wrap(a[:2], b[:2], radius, None if side is None else side[:2])
    return _on_cylinder(arc, touches, radius, a, b)


def cylinder_wrap_turning(
    radius: Float[Array, ""], a: Float[Array, "3"], b: Float[Array, "3"], momentum: Float[Array, "3"]
) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
    """``(touches, P, t_P, ℓ)`` of the shortest path from `a` to `b` around the cylinder
    that turns about its axis the way a path of angular momentum `momentum` does
    (counter-clockwise where its z component is positive; the shorter side where that is
    zero). It touches only where the cross-section's segment meets the circle
    (docs/cable.md#warm-starts-in-closed-form)."""
    arc, touches = _wrap_turning(a[:2], b[:2], radius, momentum[2], jnp.linalg.norm(momentum))
    return _on_cylinder(arc, touches, radius, a, b)


def _planar_shortest_length(a2: Float[Array, "2"], b2: Float[Array, "2"], radius: Float[Array, ""]) -> Float[Array, ""]:
    """The length of the shortest planar path from `a2` to `b2` that keeps out of the open
    disk ``|x| < radius``: the segment where it misses the disk, else the shorter tangent-
    arc-tangent path. An end inside the disk has no such path; there the segment's length
    is returned, which bounds nothing from below that the segment does not."""
    straight = jnp.linalg.norm(b2 - a2)
    inside = (jnp.linalg.norm(a2) <= radius) | (jnp.linalg.norm(b2) <= radius)
    wraps = _segment_meets_disk(a2, b2, radius) & ~inside
    return jnp.where(wraps, _shorter(a2, b2, radius).length, straight)


def sphere_shortest_length(radius: Float[Array, ""], a: Float[Array, "3"], b: Float[Array, "3"]) -> Float[Array, ""]:
    """The length of the shortest path from `a` to `b` (in S) that does not enter the ball
    of radius `radius`: no path between them that keeps out of the ball is shorter
    (docs/cable.md#lower-bounds-from-closed-form-wraps). It lies in a plane through the
    centre, so it is the planar one there (any such plane where the three are collinear)."""
    e1, e2 = _sphere_plane(a, b, jnp.zeros_like(a))
    return _planar_shortest_length(_in_plane(a, e1, e2), _in_plane(b, e1, e2), radius)


def cylinder_shortest_length(radius: Float[Array, ""], a: Float[Array, "3"], b: Float[Array, "3"]) -> Float[Array, ""]:
    """The length of the shortest path from `a` to `b` (in S) that does not enter the
    infinite solid cylinder of radius `radius` about z: developed onto a plane it is
    straight, so it is the planar shortest path of the cross-section climbing at a
    constant slope."""
    across = _planar_shortest_length(a[:2], b[:2], radius)
    return jnp.sqrt(across**2 + (b[2] - a[2]) ** 2)
