"""Geometry of every (floor, object) pair at one configuration, hpp's formulas verbatim.

For floor ``j`` (already reversed: its normal ``n_f`` points into the supporting body) and
object ``i`` (docs/contact.md#pair-selection), in world coordinates:

- ``p = C_o + n_f (n_f . (C_f - C_o)) / (n_f . n_f)``: the object centre projected on the
  floor plane; ``dp`` its signed in-plane distance to the floor polygon (< 0 inside);
- ``dn = n_f . (C_o - C_f)``: negative when the object is on the outer side (above a table);
- ``dist = dn^2`` inside, ``dp^2 + dn^2`` outside: the selection criterion;
- ``v6 = (translation, log3(rotation))`` of ``X_FO = X_GF^-1 X_GO``, the object shape
  frame in the floor shape frame (hpp's RelativeTransformation as an R^6 vector).

Arrays are laid out ``(num_floors, num_objects, ...)``, floor-major as hpp's loops, so a
flattened ``argmin`` returns hpp's pair (strict ``<``: the first minimum wins ties).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._kinematics import RobotModel
from .._spatial import Transform
from ._log3 import log3
from ._shape import ConvexShape


class PairGeometry(eqx.Module):
    """Per-pair quantities, shape ``(num_floors, num_objects, ...)``."""

    v6: Float[Array, "F O 6"]
    in_plane_distance: Float[Array, "F O"]  # dp
    normal_distance: Float[Array, "F O"]  # dn
    selection_distance: Float[Array, "F O"]  # dist (squared)
    X_FO: Transform  # batch (F, O)


def shape_frames(X_GB: Transform, shapes: tuple[ConvexShape, ...]) -> Transform:
    """``X_GS = X_GB[body] X_BS`` for every shape, stacked on a leading axis."""
    return Transform.stack([X_GB[shape.body] @ shape.frame for shape in shapes])


def pair_geometry(
    model: RobotModel,
    q: Float[Array, " nq"],
    floors: tuple[ConvexShape, ...],
    objects: tuple[ConvexShape, ...],
) -> PairGeometry:
    X_GB = model.forward_kinematics(q)
    X_GF = shape_frames(X_GB, floors)  # (F,)
    X_GO = shape_frames(X_GB, objects)  # (O,)
    centre_f = X_GF.translation[:, None, :]  # (F, 1, 3)
    normal_f = X_GF.rotation[:, None, :, 0]  # (F, 1, 3): x axis of the floor frame
    centre_o = X_GO.translation[None, :, :]  # (1, O, 3)

    def dot(a, b):
        return jnp.sum(a * b, axis=-1)

    projected = (
        centre_o + normal_f * (dot(normal_f, centre_f - centre_o) / dot(normal_f, normal_f))[..., None]
    )  # (F, O, 3)
    normal_distance = dot(normal_f, centre_o - centre_f)  # (F, O)
    in_plane = []
    for j, floor in enumerate(floors):
        # hpp measures the distance in the floor body's frame, on the reversed shape.
        local = X_GB[floor.body].inverse().apply(projected[j])
        in_plane.append(jax.vmap(floor.distance_local)(local))
    in_plane_distance = jnp.stack(in_plane)
    selection_distance = jnp.where(
        in_plane_distance < 0,
        normal_distance * normal_distance,
        in_plane_distance * in_plane_distance + normal_distance * normal_distance,
    )

    X_FO = X_GF[:, None].inverse() @ X_GO[None, :]
    rotation_log = jax.vmap(jax.vmap(log3))(X_FO.rotation)
    v6 = jnp.concatenate([X_FO.translation, rotation_log], axis=-1)
    return PairGeometry(v6, in_plane_distance, normal_distance, selection_distance, X_FO)
