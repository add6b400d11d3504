"""`ConvexShape`: a point, segment or convex planar polygon fixed on a body.

Everything here follows hpp-constraints' ``ConvexShape`` (its convex-shape.hh;
docs/contact.md#convex-shapes) so that contact values agree with hpp to rounding:

- ``C`` (`centre`) is the vertex barycentre, not the area centroid.
- ``N`` (`normal`) is ``(P1 - P0) x (P2 - P1)`` normalized: it points out of the body
  when the vertices turn counter-clockwise seen from outside (the SRDF rule).
- Edge ``i`` runs from ``P_i`` to ``P_{i+1}``: direction ``U_i`` (`edge_directions`),
  length ``L_i`` (`edge_lengths`), in-plane normal ``Ns_i = U_i x N`` (`edge_normals`),
  which points **out of** the polygon (hpp's member comment says "inside"; its code and
  ``isInsideLocal`` use it as outward, and so do we).
- The shape frame ``X_BS`` (`frame`, hpp's ``positionInJoint``) has its origin at ``C`` and
  rotation columns ``[N | Ns0 | U0]``: x is the normal, y the outward normal of edge 0,
  z the direction of edge 0. A point has the identity rotation; a segment gets
  ``N = (-U_y, U_x, 0)/|.|`` (or ``(0, -U_z, U_y)/|.|`` when ``U_x == 0``).

Only ``points`` is an array leaf; everything else is computed from it on the fly, so
contact values are differentiable with respect to the shape's vertices.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Float

from .._misc import as_float_array, concrete_value, safe_norm, unit_and_length
from .._spatial import Transform

# Relative tolerance of the construction checks (repeated, collinear, non-planar and
# non-convex vertices), in units of the shape's size: a vertex may leave the plane, and
# a turn may go the wrong way, by at most ``VALIDATION_TOLERANCE * diameter``.
VALIDATION_TOLERANCE = 1e-6


def _describe(name: str, points) -> str:
    return repr(name) if name else f"ConvexShape with points {np.asarray(points).tolist()}"


class ConvexShape(eqx.Module):
    """A convex contact surface (hpp-constraints ``ConvexShape``) attached to a body.

    **Arguments:**

    - `points`: vertices ``(n, 3)`` in the body frame; one point, a segment, or a convex
      planar polygon given counter-clockwise about its outward normal (SRDF rule: the
      first edge cross the second points out of the body).
    - `body`: the body carrying the shape, an index into ``model.body_names`` or a body
      name; ``0`` (the default) is the world.
    - `name`: used in error messages.

    **Raises:** `ValueError` (naming the shape) for an empty shape, a wrong shape of
    `points`, non-finite values, repeated or collinear first points, or a polygon that is
    not planar and convex within `VALIDATION_TOLERANCE` times its diameter. The checks run
    when `points` is concrete (not under a JAX transformation).
    """

    points: Float[Array, "n 3"]
    body: int | str = eqx.field(static=True)
    name: str = eqx.field(static=True)

    def __init__(self, points: ArrayLike | Sequence, body: int | str = 0, name: str = ""):
        try:
            points = jnp.asarray(points)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{name or 'ConvexShape'}: points must have shape (n, 3) ({error})") from None
        points = as_float_array(points)
        concrete = concrete_value(points)
        label = _describe(name, points) if concrete is not None else repr(name)
        if points.ndim != 2 or points.shape[-1] != 3:
            if points.size == 0:
                raise ValueError(f"{label}: Cannot represent an empty shape.")
            raise ValueError(f"{label}: points must have shape (n, 3), got {points.shape}")
        if points.shape[0] == 0:
            raise ValueError(f"{label}: Cannot represent an empty shape.")
        if not isinstance(body, (int, np.integer, str)):
            raise ValueError(f"{label}: body must be a body index or name, got {body!r}")
        if concrete is not None:
            _validate(concrete.astype(np.float64), label)
        self.points = points
        self.body = body if isinstance(body, str) else int(body)
        self.name = name

    # ------------------------------------------------------------------ structure
    @property
    def num_points(self) -> int:
        return self.points.shape[0]

    @property
    def kind(self) -> str:
        """``"point"``, ``"segment"`` or ``"polygon"``."""
        return ("point", "segment")[self.num_points - 1] if self.num_points < 3 else "polygon"

    def with_body(self, body: int | str) -> ConvexShape:
        """The same shape on another body."""
        return ConvexShape(self.points, body, self.name)

    def reverse(self) -> ConvexShape:
        """The same surface seen from the other side: vertices in reverse order, so the
        normal flips, the centre stays and the new edge 0 runs ``P_{n-1} -> P_{n-2}``."""
        return ConvexShape(self.points[::-1], self.body, self.name)

    # ------------------------------------------------------------------ geometry (body frame)
    @property
    def centre(self) -> Float[Array, "3"]:
        """``C``: the barycentre of the vertices."""
        return jnp.mean(self.points, axis=0)

    @property
    def edge_directions(self) -> Float[Array, "e 3"]:
        """``U_i``: unit edge directions (one for a segment, none for a point)."""
        if self.num_points == 1:
            return jnp.zeros((0, 3), self.points.dtype)
        if self.num_points == 2:
            return unit_and_length(self.points[1:] - self.points[:1])[0]
        return unit_and_length(self._edges())[0]

    @property
    def edge_lengths(self) -> Float[Array, " e"]:
        """``L_i``: edge lengths (one for a segment, none for a point)."""
        if self.num_points == 1:
            return jnp.zeros((0,), self.points.dtype)
        if self.num_points == 2:
            return safe_norm(self.points[1:] - self.points[:1])
        return safe_norm(self._edges())

    def _edges(self) -> Array:
        return jnp.roll(self.points, -1, axis=0) - self.points

    @property
    def normal(self) -> Float[Array, "3"]:
        """``N``: unit normal (x axis of the shape frame)."""
        dtype = self.points.dtype
        if self.num_points == 1:
            return jnp.array([1.0, 0.0, 0.0], dtype)
        if self.num_points == 2:
            u = self.edge_directions[0]
            zero = jnp.zeros((), dtype)
            first = jnp.stack([-u[1], u[0], zero])
            second = jnp.stack([zero, -u[2], u[1]])
            return unit_and_length(jnp.where(u[0] != 0, first, second))[0]
        p0, p1, p2 = self.points[0], self.points[1], self.points[2]
        return unit_and_length(jnp.cross(p1 - p0, p2 - p1))[0]

    @property
    def edge_normals(self) -> Float[Array, "e 3"]:
        """``Ns_i = normalize(U_i x N)``: in-plane normals, outward for a polygon."""
        if self.num_points == 1:
            return jnp.zeros((0, 3), self.points.dtype)
        return unit_and_length(jnp.cross(self.edge_directions, self.normal))[0]

    @property
    def frame(self) -> Transform:
        """``X_BS``: the shape frame in the body frame, rotation ``[N | Ns0 | U0]``, origin ``C``."""
        if self.num_points == 1:
            return Transform(jnp.eye(3, dtype=self.points.dtype), self.points[0])
        rotation = jnp.stack([self.normal, self.edge_normals[0], self.edge_directions[0]], axis=-1)
        return Transform(rotation, self.centre)

    @property
    def radius(self) -> Float[Array, ""]:
        """``max_i |P_i - C|``: radius of the smallest ball about ``C`` holding the shape."""
        return jnp.max(safe_norm(self.points - self.centre))

    # ------------------------------------------------------------------ in-plane queries
    def _require_polygon(self, what: str) -> None:
        if self.num_points < 3:
            raise ValueError(f"{_describe(self.name, self.points)}: {what} needs a polygon (>= 3 points)")

    def is_inside_local(self, a: Float[Array, "3"]) -> Bool[Array, ""]:
        """hpp ``isInsideLocal``: ``Ns_i . (a - P_i) <= 0`` for every edge (boundary inside).

        `a` is in the body frame and assumed to lie in the shape's plane.
        """
        self._require_polygon("is_inside_local")
        return jnp.all(jnp.sum(self.edge_normals * (a - self.points), axis=-1) <= 0)

    def distance_local(self, a: Float[Array, "3"]) -> Float[Array, ""]:
        """hpp ``distanceLocal``: signed in-plane distance of `a` to the polygon boundary.

        Positive outside, minus the distance to the nearest edge inside, zero on the
        boundary (for convex polygons, the exact signed Euclidean distance). `a` is in
        the body frame and assumed to lie in the shape's plane. NaN-free gradients,
        also at the vertices.
        """
        self._require_polygon("distance_local")
        u, ns, lengths = self.edge_directions, self.edge_normals, self.edge_lengths
        w = a - self.points
        c1 = jnp.sum(u * w, axis=-1)
        s = jnp.sum(ns * w, axis=-1)
        sign = jnp.where(s > 0, 1.0, -1.0).astype(w.dtype)
        to_start = safe_norm(w)
        to_end = safe_norm(w - lengths[:, None] * u)
        d = jnp.where(c1 <= 0, sign * to_start, jnp.where(lengths <= c1, sign * to_end, s))
        positive = d > 0
        smallest_positive = jnp.min(jnp.where(positive, d, jnp.inf))
        return jnp.where(jnp.any(positive), smallest_positive, jnp.max(d))


def _validate(points: np.ndarray, label: str) -> None:
    """The construction checks, in NumPy float64 (see `VALIDATION_TOLERANCE`)."""
    if not np.all(np.isfinite(points)):
        raise ValueError(f"{label}: points must be finite")
    n = points.shape[0]
    if n == 1:
        return
    scale = max(np.max(np.linalg.norm(points[:, None] - points[None], axis=-1)), np.finfo(float).tiny)
    tol = VALIDATION_TOLERANCE * scale
    edges = np.roll(points, -1, axis=0) - points if n >= 3 else points[1:] - points[:1]
    lengths = np.linalg.norm(edges, axis=-1)
    if np.max(lengths) == 0 or np.any(lengths <= tol):
        i = int(np.argmin(lengths))
        raise ValueError(f"{label}: points {i} and {(i + 1) % n} are repeated (edge length {lengths[i]:.3g})")
    if n == 2:
        return
    e0, e1 = edges[0], edges[1]
    cross = np.cross(e0, e1)
    if np.linalg.norm(cross) <= VALIDATION_TOLERANCE * lengths[0] * lengths[1]:
        raise ValueError(f"{label}: the first three points are collinear, the normal is undefined")
    normal = cross / np.linalg.norm(cross)
    offsets = (points - points.mean(axis=0)) @ normal
    if np.max(np.abs(offsets)) > tol:
        i = int(np.argmax(np.abs(offsets)))
        raise ValueError(
            f"{label}: polygon is not planar (point {i} is {offsets[i]:.3g} off the plane of the first three)"
        )
    # Convex and counter-clockwise about the normal: every turn goes left (collinear
    # vertices tolerated) and the boundary winds exactly once.
    units = edges / lengths[:, None]
    following = np.roll(units, -1, axis=0)
    turns = np.cross(units, following) @ normal
    if np.min(turns) < -VALIDATION_TOLERANCE:
        i = int(np.argmin(turns))
        raise ValueError(f"{label}: polygon is not convex (turns the wrong way at point {(i + 1) % n})")
    angles = np.arctan2(turns, np.sum(units * following, axis=-1))
    if abs(np.sum(angles) - 2 * np.pi) > 1e-6:
        raise ValueError(
            f"{label}: polygon is not convex (its boundary winds {np.sum(angles) / (2 * np.pi):.3g} times)"
        )
