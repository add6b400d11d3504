"""The solver's data: the ground-frame scene of one solve and the per-obstacle curve state.

Curves are stored in their surface frames S, so a state (a warm start) survives body
motion. See docs/cable.md#solver-loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from .._spatial import Transform
from .._surfaces import Geodesic
from ._definition import AbstractCableSpan

# Wrapping status of an obstacle (Simbody's names).
LIFTED, IN_CONTACT, INITIAL_GUESS = 0, 1, 2


class CurveState(eqx.Module):
    """What the solver carries per obstacle, in the surface frame S: the current
    geodesic, the wrapping status, and the tracking point (the point of the straight
    line nearest the surface) of a lifted curve, or the raw contact hint of a curve still
    in its InitialGuess status."""

    geodesics: tuple[Geodesic, ...]
    status: Int[Array, " n"]
    tracking: Float[Array, "n 3"]


class Scene(eqx.Module):
    """Ground-frame data that stays fixed during a solve: surface frames, the end and via
    points, and the start and end point of every leg."""

    X_GS: Transform  # (n,) surface frames
    leg_start: Float[Array, "legs 3"]
    leg_end: Float[Array, "legs 3"]
    origin: Float[Array, "3"]
    termination: Float[Array, "3"]
    via: Float[Array, "m 3"]


def build_scene(cable: AbstractCableSpan, body_poses: Transform) -> Scene:
    X = body_poses
    dtype = X.translation.dtype
    if cable.obstacles:
        X_GS = Transform.stack([X[o.body] @ o.X_BS for o in cable.obstacles])
    else:
        X_GS = Transform.identity((0,), dtype)
    origin = X[cable.origin_body].apply(cable.origin_station)
    termination = X[cable.termination_body].apply(cable.termination_station)
    via = [X[v.body].apply(v.station) for v in cable.via_points]
    points = [origin, *via, termination]
    via_array = jnp.stack(via) if via else jnp.zeros((0, 3), dtype)
    return Scene(X_GS, jnp.stack(points[:-1]), jnp.stack(points[1:]), origin, termination, via_array)


def initial_state(
    cable: AbstractCableSpan, scene: Scene, hints: Sequence[Float[Array, "3"] | None] | None = None
) -> CurveState:
    """Hinted obstacles start as a zero-length geodesic at the hint's orthogonal foot point
    on the surface (Simbody's `projectDownhillToNearestPoint`; status InitialGuess, shot at
    the raw hint in the first status update); the others start lifted.
    `hints` (one per obstacle, in S, None for lifted) replaces the cable's own."""
    dtype = scene.origin.dtype
    hints = [o.contact_hint for o in cable.obstacles] if hints is None else list(hints)
    geodesics, status = [], []
    for i, obstacle in enumerate(cable.obstacles):
        hint = hints[i]
        # The start direction of the cable is a reasonable placeholder tangent.
        X_SG = scene.X_GS[i].inverse()
        d = X_SG.rotate(scene.termination - scene.origin)
        # Simbody starts a hinted curve at projectDownhillToNearestPoint(hint), the
        # orthogonal foot point; its neighbours see that point until it is first shot.
        anchor = X_SG.apply(scene.origin) if hint is None else obstacle.surface.project_downhill(hint.astype(dtype))
        geodesics.append(obstacle.surface.zero_length_geodesic(anchor, d))
        status.append(INITIAL_GUESS if hint is not None else LIFTED)
    n = len(cable.obstacles)
    tracking = [jnp.zeros(3, dtype) if h is None else jnp.asarray(h, dtype) for h in hints]
    tracking = jnp.stack(tracking) if n else jnp.zeros((0, 3), dtype)
    return CurveState(tuple(geodesics), jnp.asarray(status, dtype=jnp.int32).reshape(n), tracking)
