"""`ConvexShapeContact`: hpp-constraints' contact function between two sets of convex shapes.

Value (R^5) of the selected pair (docs/contact.md#contact-value), with
``(x, y, z, rx, ry, rz)`` the pair's `v6` and ``m`` the normal margin:

=============== ======================= =======================
type             inside (dp < 0)         outside
=============== ======================= =======================
POINT_ON_PLANE   (x+m, 0, 0, 0, 0)       (x+m, y, z, 0, 0)
LINE_ON_PLANE    (x+m, 0, 0, ry, rz)     (x+m, y, z, ry, rz)
PLANE_ON_PLANE   (x+m, 0, 0, ry, rz)     (x+m, y, z, ry, rz)
=============== ======================= =======================

``x + m = 0`` puts the object surface at height ``m`` above the floor; ``ry = rz = 0``
makes the surfaces face each other; outside the floor, ``y = z = 0`` pulls the object
centre to the floor centre.

Beyond hpp:

- **LINE_ON_PLANE Jacobian.** hpp computes the value above but throws in ``jacobian``.
  Here the Jacobian is the exact derivative of that value. That value (hpp's) pins the
  segment's arbitrary normal ``N = (-U_y, U_x, 0)/|.|`` to the floor normal, so it also
  fixes the rotation about the line and reads ``rz = pi/2`` for a segment lying flat
  along x. ``line_on_plane="free_rotation"`` replaces rows 3-4 for segments by
  ``(0, elevation)``, the angle between the segment and the floor plane: zero for any
  segment lying in the plane, the rotation about the line left free.
- **Smoothing.** ``smoothing = s > 0`` (a length, in metres) replaces the hard choices by
  soft weights: pair weights ``softmax(-dist / s^2)`` and inside weight
  ``sigmoid(-dp / s)``, so the value is continuous across pair switches and floor edges
  and its Jacobian includes the weights' derivatives. ``smoothing = 0`` (default) is
  exactly hpp.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Float, Int

from .._kinematics import RobotModel
from .._misc import as_scalar, check_non_negative, safe_norm
from ._function import AbstractDifferentiableFunction
from ._pairs import PairGeometry, pair_geometry
from ._shape import ConvexShape


class ContactType(enum.IntEnum):
    """hpp's ``ConvexShapeContact::ContactType`` (the object's shape against a polygon floor)."""

    POINT_ON_PLANE = 0
    LINE_ON_PLANE = 1
    PLANE_ON_PLANE = 2


LINE_ON_PLANE_MODES = ("hpp", "free_rotation")


class Selection(eqx.Module):
    """The active piece at a configuration: hpp's ``selectConvexShapes`` result."""

    floor: Int[Array, ""]
    object: Int[Array, ""]
    inside: Bool[Array, ""]
    type: Int[Array, ""]  # a `ContactType` value


class ForceData(eqx.Module):
    """One record of `ConvexShapeContact.compute_contact_points` (hpp ``ForceData``).

    - `body`: the object's body.
    - `points`: all the object shape's vertices, in the object body frame.
    - `normal`: the reversed floor normal (pointing into the support), floor body frame.
    - `support_body`: the floor's body.
    """

    body: int = eqx.field(static=True)
    points: Float[Array, "n 3"]
    normal: Float[Array, "3"]
    support_body: int = eqx.field(static=True)


def _resolve(model: RobotModel, shapes: Sequence[ConvexShape], role: str) -> tuple[ConvexShape, ...]:
    if isinstance(shapes, ConvexShape):
        shapes = [shapes]
    shapes = tuple(shapes)
    if not shapes:
        raise ValueError(f"ConvexShapeContact needs at least one {role} shape")
    resolved = []
    for k, shape in enumerate(shapes):
        if not isinstance(shape, ConvexShape):
            raise ValueError(f"{role} {k}: expected a ConvexShape, got {type(shape).__name__}")
        resolved.append(shape.with_body(model.resolve_body(shape.body)))
    return tuple(resolved)


def _concrete_scalar(x, what: str) -> Array:
    x = as_scalar(x, what)
    check_non_negative(what, x)
    return x


class ConvexShapeContact(AbstractDifferentiableFunction):
    """Contact between object shapes and floor shapes (hpp ``ConvexShapeContact``).

    **Arguments:**

    - `model`: the `RobotModel` whose configuration moves the shapes' bodies.
    - `floors`: supporting polygons, each given with the outward normal of its body;
      they are reversed here (hpp's ``addFloor``) so that their normal points into the
      support.
    - `objects`: object shapes (points, segments or polygons), outward normals.
    - `normal_margin`: the height ``m >= 0`` of the object surface above the floor.
    - `smoothing`: soft selection length (metres); 0 is hpp's hard selection.
    - `line_on_plane`: ``"hpp"`` or ``"free_rotation"`` (see the module docstring).
    - `name`: the function's name.

    **Raises:** `ValueError` for no floors or objects, a floor with fewer than three
    points (hpp: "Contact on points/lines is currently unimplemented"), an unknown body,
    or a negative margin or smoothing.
    """

    model: RobotModel
    floors: tuple[ConvexShape, ...]
    objects: tuple[ConvexShape, ...]
    normal_margin: Float[Array, ""]
    smoothing: Float[Array, ""]
    line_on_plane: str = eqx.field(static=True)
    name: str = eqx.field(static=True)

    def __init__(
        self,
        model: RobotModel,
        floors: Sequence[ConvexShape],
        objects: Sequence[ConvexShape],
        normal_margin: ArrayLike | Sequence = 0.0,
        smoothing: ArrayLike | Sequence = 0.0,
        line_on_plane: str = "hpp",
        name: str = "ConvexShapeContact",
    ):
        floors = _resolve(model, floors, "floor")
        for k, floor in enumerate(floors):
            if floor.num_points == 1:
                raise ValueError(f"floor {k} ({floor.name or 'unnamed'}): Contact on points is currently unimplemented")
            if floor.num_points == 2:
                raise ValueError(f"floor {k} ({floor.name or 'unnamed'}): Contact on lines is currently unimplemented")
        if line_on_plane not in LINE_ON_PLANE_MODES:
            raise ValueError(f"line_on_plane must be one of {LINE_ON_PLANE_MODES}, got {line_on_plane!r}")
        self.model = model
        self.floors = tuple(floor.reverse() for floor in floors)
        self.objects = _resolve(model, objects, "object")
        self.normal_margin = _concrete_scalar(normal_margin, "normal_margin")
        self.smoothing = _concrete_scalar(smoothing, "smoothing")
        self.line_on_plane = line_on_plane
        self.name = name

    # ------------------------------------------------------------------ structure
    @property
    def output_size(self) -> int:
        return 5

    @property
    def num_floors(self) -> int:
        return len(self.floors)

    @property
    def num_objects(self) -> int:
        return len(self.objects)

    @property
    def contact_types(self) -> tuple[ContactType, ...]:
        """Type of each object shape (against any floor, all floors being polygons)."""
        kinds = {1: ContactType.POINT_ON_PLANE, 2: ContactType.LINE_ON_PLANE}
        return tuple(kinds.get(o.num_points, ContactType.PLANE_ON_PLANE) for o in self.objects)

    @property
    def radius(self) -> Float[Array, ""]:
        """``M = 1 + max`` over floor vertices of the distance to their floor's centre."""
        return 1 + jnp.max(jnp.stack([floor.radius for floor in self.floors]))

    def with_normal_margin(self, normal_margin: ArrayLike | Sequence) -> ConvexShapeContact:
        """A copy with another margin (hpp ``setNormalMargin``)."""
        return eqx.tree_at(lambda c: c.normal_margin, self, _concrete_scalar(normal_margin, "normal_margin"))

    def _path_bodies(self) -> set[int]:
        # Bodies whose joints lie between a floor body and an object body, up to (and
        # excluding) their common ancestor: hpp's setActiveParameters.
        bodies: set[int] = set()
        for floor in self.floors:
            for obj in self.objects:
                a, b = set(self.model.ancestors(floor.body)), set(self.model.ancestors(obj.body))
                bodies |= a ^ b
        return bodies

    @property
    def active_parameters(self) -> np.ndarray:
        active = np.zeros(self.model.nq, dtype=bool)
        for b in self._path_bodies():
            active[self.model.joint_coordinates(b)[0]] = True
        return active

    @property
    def active_derivative_parameters(self) -> np.ndarray:
        active = np.zeros(self.model.nv, dtype=bool)
        for b in self._path_bodies():
            active[self.model.joint_coordinates(b)[1]] = True
        return active

    # ------------------------------------------------------------------ evaluation
    def pairs(self, q: ArrayLike | Sequence) -> PairGeometry:
        """Geometry of every (floor, object) pair at `q` (arrays ``(F, O, ...)``)."""
        return pair_geometry(self.model, self.model.check_q(q), self.floors, self.objects)

    def _selection_from(self, geometry: PairGeometry) -> Selection:
        flat = jnp.argmin(geometry.selection_distance.reshape(-1))  # first minimum: hpp's strict <
        floor, obj = jnp.divmod(flat, self.num_objects)
        inside = geometry.in_plane_distance.reshape(-1)[flat] < 0
        types = jnp.asarray(np.array([int(t) for t in self.contact_types]), dtype=jnp.int32)
        return Selection(floor.astype(jnp.int32), obj.astype(jnp.int32), inside, types[obj])

    @eqx.filter_jit
    def select(self, q: ArrayLike | Sequence) -> Selection:
        """hpp ``selectConvexShapes``: the closest pair (floor-major, first wins ties),
        whether the object centre projects strictly inside the floor, and the contact type."""
        return self._selection_from(jax.lax.stop_gradient(self.pairs(q)))

    def _rotation_rows(self, geometry: PairGeometry) -> Float[Array, "F O 2"]:
        """Rows 3-4 of every pair by object type (zero for points)."""
        rows = []
        for i, kind in enumerate(self.contact_types):
            r = geometry.v6[:, i, 4:6]
            if kind == ContactType.POINT_ON_PLANE:
                r = jnp.zeros_like(r)
            elif kind == ContactType.LINE_ON_PLANE and self.line_on_plane == "free_rotation":
                # The segment direction is the object frame's z axis; in the floor frame
                # its x component is the height gained per unit length along the line.
                u = geometry.X_FO.rotation[:, i, :, 2]
                elevation = jnp.arctan2(u[:, 0], safe_norm(u[:, 1:]))
                r = jnp.stack([jnp.zeros_like(elevation), elevation], axis=-1)
            rows.append(r)
        return jnp.stack(rows, axis=1)

    def pair_weights(self, geometry: PairGeometry, selection: Selection) -> tuple[Array, Array]:
        """Pair weights (F, O) and inside weights (F, O) of the pairs' `geometry`: one-hot
        (the `selection`) and 0/1 when hard, soft weights with smoothing."""
        F, O = self.num_floors, self.num_objects
        hard_pair = jax.nn.one_hot(selection.floor * O + selection.object, F * O, dtype=geometry.v6.dtype)
        hard_inside = (geometry.in_plane_distance < 0).astype(geometry.v6.dtype)
        soft = self.smoothing > 0
        s = jnp.where(soft, self.smoothing, 1.0)
        soft_pair = jax.nn.softmax(-geometry.selection_distance.reshape(-1) / (s * s))
        soft_inside = jax.nn.sigmoid(-geometry.in_plane_distance / s)
        pair = jnp.where(soft, soft_pair, hard_pair).reshape(F, O)
        inside = jnp.where(soft, soft_inside, hard_inside)
        return pair, inside

    def _pair_values(self, geometry: PairGeometry, inside: Array) -> Float[Array, "F O 5"]:
        x, y, z = geometry.v6[..., 0], geometry.v6[..., 1], geometry.v6[..., 2]
        outside = 1 - inside
        rotation = self._rotation_rows(geometry)
        return jnp.concatenate(
            [jnp.stack([x + self.normal_margin, outside * y, outside * z], axis=-1), rotation], axis=-1
        )

    def combine_pairs(self, per_pair: Array, pair_weights: Array, selection: Selection) -> Array:
        """The selected pair's row (exactly, when hard) or the weighted sum (soft)."""
        hard = per_pair[selection.floor, selection.object]
        soft = jnp.einsum("fo,fo...->...", pair_weights, per_pair)
        return jnp.where(self.smoothing > 0, soft, hard)

    def value_with_selection(self, q: Float[Array, " nq"], selection: Selection) -> Float[Array, "5"]:
        geometry = self.pairs(q)
        pair_weights, inside = self.pair_weights(geometry, selection)
        # The hard inside flag is the selection's (held fixed under differentiation).
        inside = jnp.where(self.smoothing > 0, inside, selection.inside.astype(inside.dtype))
        return self.combine_pairs(self._pair_values(geometry, inside), pair_weights, selection)

    # ------------------------------------------------------------------ contact points
    @eqx.filter_jit
    def contact_point_mask(self, q: ArrayLike | Sequence, normal_margin: ArrayLike | Sequence) -> Bool[Array, "O F"]:
        """hpp ``computeContactPoints``' test for every (object, floor): the object centre
        projects inside the floor (boundary included) and ``dn < normal_margin``."""
        q = self.model.check_q(q)
        geometry = self.pairs(q)
        X_GB = self.model.forward_kinematics(q)
        masks = []
        for j, floor in enumerate(self.floors):
            centre_f = X_GB[floor.body].apply(floor.centre)
            normal_f = X_GB[floor.body].rotate(floor.normal)
            centre_o = jnp.stack([X_GB[o.body].apply(o.centre) for o in self.objects])
            # hpp's ConvexShapeData::intersection(Co, nf)
            hit = centre_o + normal_f * ((centre_f - centre_o) @ normal_f / jnp.dot(normal_f, normal_f))[:, None]
            local = X_GB[floor.body].inverse().apply(hit)
            inside = jax.vmap(floor.is_inside_local)(local)
            masks.append(inside & (geometry.normal_distance[j] < normal_margin))
        return jnp.stack(masks, axis=1)

    def compute_contact_points(self, q: ArrayLike | Sequence, normal_margin: ArrayLike | Sequence) -> list[ForceData]:
        """hpp ``computeContactPoints``: a `ForceData` for every (object, floor) pair,
        objects outer and floors inner, whose object centre projects inside the floor and
        lies less than `normal_margin` along the floor normal (``dn < normal_margin``).

        All object vertices are returned (hpp does not clip them). This builds a Python
        list, so it runs outside `jit`; `contact_point_mask` is the jittable test.
        """
        mask = np.asarray(self.contact_point_mask(q, normal_margin))
        records = []
        for i, obj in enumerate(self.objects):
            for j, floor in enumerate(self.floors):
                if mask[i, j]:
                    records.append(ForceData(obj.body, obj.points, floor.normal, floor.body))
        return records
