"""`ConvexShapeContactComplement` and `ConvexShapeContactHold`, and the right-hand-side decoder.

The complement (R^3) completes the contact to a full relative pose (docs/contact.md#complement):
with the contact's selection ``(j, i)`` and radius ``M``,

    inside : (y + 2 j M,  z + 2 i M,  rx)
    outside: (    2 j M,      2 i M,  rx)

Inside, ``|y|, |z| <= M - 1 < M``, so the offsets make the map from a right-hand side to
(pair, pose) injective: a planner keeps the complement's right-hand side constant to keep
an object resting at one place. The hold (R^8) is ``[contact(5); complement(3)]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Int

from .._kinematics import RobotModel, forward_kinematics
from .._spatial import Transform, axis_angle_to_rotation
from ._contact import ConvexShapeContact, Selection
from ._function import AbstractDifferentiableFunction
from ._shape import ConvexShape


class ConvexShapeContactComplement(AbstractDifferentiableFunction):
    """hpp ``ConvexShapeContactComplement``: value (3,), Jacobian (3, nv).

    **Arguments:** as `ConvexShapeContact` (it builds its sibling contact); or use
    `ConvexShapeContactComplement.create_pair` to get both. Its active parameters are all
    true, as hpp leaves them.
    """

    contact: ConvexShapeContact

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
        self.contact = ConvexShapeContact(model, floors, objects, normal_margin, smoothing, line_on_plane, name)

    @classmethod
    def create_pair(cls, *args, **kwargs) -> tuple[ConvexShapeContact, ConvexShapeContactComplement]:
        """hpp ``createPair``: ``(contact, complement)`` over the same shapes."""
        complement = cls(*args, **kwargs)
        return complement.contact, complement

    @property
    def model(self) -> RobotModel:
        return self.contact.model

    @property
    def name(self) -> str:
        return self.contact.name + "/complement"

    @property
    def output_size(self) -> int:
        return 3

    def select(self, q: ArrayLike | Sequence) -> Selection:
        return self.contact.select(q)

    def value_with_selection(self, q: Float[Array, " nq"], selection: Selection) -> Float[Array, "3"]:
        contact = self.contact
        geometry = contact.pairs(q)
        pair_weights, inside = contact.pair_weights(geometry, selection)
        inside = jnp.where(contact.smoothing > 0, inside, selection.inside.astype(inside.dtype))
        F, O = contact.num_floors, contact.num_objects
        offsets_f = 2 * contact.radius * jnp.arange(F, dtype=geometry.v6.dtype)[:, None]
        offsets_o = 2 * contact.radius * jnp.arange(O, dtype=geometry.v6.dtype)[None, :]
        v6 = geometry.v6
        per_pair = jnp.stack([inside * v6[..., 1] + offsets_f, inside * v6[..., 2] + offsets_o, v6[..., 3]], axis=-1)
        return contact.combine_pairs(per_pair, pair_weights, selection)

    def decode_rhs(self, rhs: Float[Array, "8"]) -> tuple[Int[Array, ""], Int[Array, ""], Transform]:
        """hpp ``computeRelativePoseRightHandSide``: from a hold right-hand side (8,),
        the floor index, the object index and the relative pose ``X_FO`` of the object
        shape frame in the floor shape frame.

        ``j = floor(Y / 2M + 1/2)``, ``i = floor(Z / 2M + 1/2)`` with ``(Y, Z) = rhs[5:7]``;
        inside (``rhs[1] == rhs[2] == 0``) the in-plane offsets are ``Y - 2jM, Z - 2iM``,
        outside ``rhs[1], rhs[2]``; the rotation is ``exp3(rhs[7], rhs[3], rhs[4])`` and
        the normal offset ``rhs[0]``.
        """
        rhs = jnp.asarray(rhs)
        if rhs.shape != (8,):
            raise ValueError(f"decode_rhs expects a hold right-hand side of shape (8,), got {rhs.shape}")
        M = self.contact.radius
        Y, Z = rhs[5], rhs[6]
        floor = jnp.floor(Y / (2 * M) + 0.5)
        obj = jnp.floor(Z / (2 * M) + 0.5)
        inside = (rhs[1] == 0) & (rhs[2] == 0)
        y = jnp.where(inside, Y - 2 * floor * M, rhs[1])
        z = jnp.where(inside, Z - 2 * obj * M, rhs[2])
        translation = jnp.stack([rhs[0], y, z])
        rotation = axis_angle_to_rotation(jnp.stack([rhs[7], rhs[3], rhs[4]]))
        return floor.astype(jnp.int32), obj.astype(jnp.int32), Transform(rotation, translation)


class ConvexShapeContactHold(AbstractDifferentiableFunction):
    """hpp ``ConvexShapeContactHold``: ``[contact(5); complement(3)]``, value (8,),
    Jacobian (8, nv). Arguments as `ConvexShapeContact`."""

    complement: ConvexShapeContactComplement

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
        self.complement = ConvexShapeContactComplement(
            model, floors, objects, normal_margin, smoothing, line_on_plane, name
        )

    @property
    def contact(self) -> ConvexShapeContact:
        """hpp ``contactConstraint()``."""
        return self.complement.contact

    @property
    def model(self) -> RobotModel:
        return self.contact.model

    @property
    def name(self) -> str:
        return self.contact.name + "/hold"

    @property
    def output_size(self) -> int:
        return 8

    def select(self, q: ArrayLike | Sequence) -> Selection:
        return self.contact.select(q)

    def value_with_selection(self, q: Float[Array, " nq"], selection: Selection) -> Float[Array, "8"]:
        return jnp.concatenate(
            [
                self.contact.value_with_selection(q, selection),
                self.complement.value_with_selection(q, selection),
            ]
        )

    def decode_rhs(self, rhs: Float[Array, "8"]) -> tuple[Int[Array, ""], Int[Array, ""], Transform]:
        """See `ConvexShapeContactComplement.decode_rhs`."""
        return self.complement.decode_rhs(rhs)

    def object_pose(self, q: ArrayLike | Sequence, rhs: Float[Array, "8"]) -> Transform:
        """The explicit hold's output (hpp ``explicit_::ConvexShapeContact``): the pose
        ``X_GB`` of the selected object's body that realizes the right-hand side `rhs`,
        given the floor bodies' poses at `q`. The floor frame is first moved out of the
        floor by the normal margin, as hpp does."""
        contact = self.contact
        floor, obj, X_FO = self.decode_rhs(rhs)
        X_GB = forward_kinematics(contact.model, q)
        floor_frames = Transform.stack([X_GB[f.body] @ f.frame for f in contact.floors])
        object_frames = Transform.stack([o.frame for o in contact.objects])
        X_GF = floor_frames[floor]
        shifted = Transform(X_GF.rotation, X_GF.translation - contact.normal_margin * X_GF.rotation[:, 0])
        return shifted @ X_FO @ object_frames[obj].inverse()
