"""Moment arms of a cable on a `RobotModel`: ``r = -dL/dv`` along ``model.integrate``."""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Real

from .._kinematics import RobotModel, forward_kinematics, integrate
from ._definition import AbstractCableSpan
from ._path import CablePath
from ._set import CableSet, cable_set_moment_arms
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
    shortening the cable turns the joint positively). Computed by reverse-mode
    differentiation of the solved length through ``forward_kinematics(model, integrate(model, q, v))``
    at ``v = 0``, i.e. implicit differentiation of the converged path; the cable's body
    indices are the model's (0 = world).

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

    def length(v):
        return solve_cable(cable, forward_kinematics(model, integrate(model, q, v)), warm_start=warm_start).length

    return -jax.grad(length)(jnp.zeros(model.nv, dtype=jnp.result_type(q, float)))
