"""Moment arms of a cable on a `RobotModel`: ``r = -dL/dv`` along ``model.integrate``."""

from __future__ import annotations

from collections.abc import Sequence

from jaxtyping import Array, ArrayLike, Float, Real

from .._kinematics import RobotModel, forward_kinematics
from ._definition import AbstractCableSpan
from ._path import CablePath
from ._set import CableSet, cable_set_moment_arms, path_moment_arms
from ._solve import solve_cable
from ._state import CurveState


def moment_arms(
    model: RobotModel,
    cable: AbstractCableSpan | CableSet,
    q: Real[ArrayLike, " nq"] | Sequence,
    warm_start: CablePath | CurveState | None = None,
) -> Float[Array, " nv"] | Float[Array, "n nv"]:
    """Moment arms of ``cable`` about every velocity coordinate of ``model`` at ``q``.

    ``r_k = -dL/dv_k``: the generalized force per unit tension that the cable applies to
    coordinate k (for a revolute joint, the classic muscle moment arm, positive when
    shortening the cable turns the joint positively): the derivative of the solved length
    along ``forward_kinematics(model, integrate(model, q, v))`` at ``v = 0``. It is taken
    from the solved path's forces, the power of a unit tension's wrench on each body
    against each coordinate's twist (docs/cable.md#moment-arms): one solve, no backward
    pass, and differentiable again in any mode through the path's implicit derivatives.
    The cable's body indices are the model's (0 = world).

    **Arguments:**

    - `model`: a `jaxwrap.RobotModel`.
    - `cable`: a `jaxwrap.CableSpan` whose bodies index ``model``'s bodies, or a
      `jaxwrap.CableSet`.
    - `q`: configuration (nq,).
    - `warm_start`: optional previous `CablePath` (see `jaxwrap.solve_cable`).

    **Returns:** (nv,) moment arms (m for revolute, dimensionless for prismatic coordinates);
    for a `jaxwrap.CableSet`, (n_cables, nv), one row per cable (``warm_start`` unused).
    """
    if isinstance(cable, CableSet):
        return cable_set_moment_arms(model, cable, q)
    q = model.check_q(q)
    poses = forward_kinematics(model, q)
    return path_moment_arms(model, q, solve_cable(cable, poses, warm_start=warm_start))
