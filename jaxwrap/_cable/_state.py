"""The solver's data: the ground-frame scene of one solve and the per-obstacle curve state.

Curves are stored in their surface frames S, so a state (a warm start) survives body
motion. See docs/cable.md#solver-loop.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from .._misc import map_by_kind
from .._spatial import Transform
from .._surfaces import Cylinder, Geodesic
from ._definition import AbstractCableSpan

# Wrapping status of an obstacle (Simbody's names).
LIFTED, IN_CONTACT, INITIAL_GUESS = 0, 1, 2
# In contact on a curve shot coarsely (the candidates' screen): the solver reshoots it at
# the cable's accuracy before evaluating its leg (docs/cable.md#screen-and-finish).
STALE = 3


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


def leg_ends_in_frame(cable: AbstractCableSpan, scene: Scene, i: int) -> tuple[Float[Array, "3"], Float[Array, "3"]]:
    """The start and end point of obstacle ``i``'s leg, in that obstacle's surface frame S."""
    leg = cable.leg_of_obstacle()[i]
    X_SG = scene.X_GS[i].inverse()
    return X_SG.apply(scene.leg_start[leg]), X_SG.apply(scene.leg_end[leg])


def initial_state(
    cable: AbstractCableSpan, scene: Scene, hints: Sequence[Float[Array, "3"] | None] | None = None
) -> CurveState:
    """Hinted obstacles start as a zero-length geodesic at the hint's orthogonal foot point
    on the surface (Simbody's `projectDownhillToNearestPoint`; status InitialGuess, shot at
    the raw hint in the first status update); the others start lifted.
    `hints` (one per obstacle, in S, None for lifted) replaces the cable's own."""
    hints = [o.contact_hint for o in cable.obstacles] if hints is None else list(hints)
    lifted = np.array([[h is None for h in hints]], bool).reshape(1, len(hints))
    states = initial_states(cable, scene, [lifted_placeholder(h)[None] for h in hints], lifted)
    return jax.tree.map(lambda x: x[0], states)


def _plain_starts(
    surface,
    X_GS: Transform,
    feet: Float[Array, "S 3"],
    unhinted: Bool[Array, " S"],
    origin: Float[Array, "3"],
    direction: Float[Array, "3"],
) -> Geodesic:
    """One obstacle's ``S`` hinted or lifted starts: zero-length geodesics at the hints'
    orthogonal foot points `feet` (Simbody's `projectDownhillToNearestPoint`; its
    neighbours see that point until it is first shot), or where `unhinted`, at the
    projection of the cable's origin; all heading along the cable's start direction, a
    placeholder tangent."""
    X_SG = X_GS.inverse()
    anchor = jnp.where(unhinted[:, None], X_SG.apply(origin), feet)
    return jax.vmap(surface.zero_length_geodesic, in_axes=(0, None))(anchor, X_SG.rotate(direction))


def _hinted_feet(
    surfaces: Sequence, hints: Sequence[Float[Array, "S 3"]], unhinted: np.ndarray
) -> list[Float[Array, "S 3"]]:
    """Per obstacle, the foot points (`project_downhill`) of its hints, shape (S, 3): only
    the starts that use their hint are projected (the static mask `unhinted` (S, n)
    drops the rest, zeros in the result), since the projection is an iteration that
    runs as long as its slowest point; obstacles of one kind with as many hinted starts
    share one `vmap`."""
    num, n = unhinted.shape
    used = [np.flatnonzero(~unhinted[:, i]) for i in range(n)]
    projected = [i for i in range(n) if len(used[i])]
    feet = map_by_kind(
        lambda surface, h, _count: jax.vmap(surface.project_downhill)(h),
        [surfaces[i] for i in projected],
        [hints[i][used[i]] for i in projected],
        static=[len(used[i]) for i in projected],
    )
    out = [jnp.zeros((num, 3), h.dtype) for h in hints]
    for i, foot in zip(projected, feet):
        out[i] = out[i].at[used[i]].set(foot)
    return out


def lifted_placeholder(hint: Float[Array, "3"] | None) -> Float[Array, "3"]:
    """`hint`, or where it is None (a lifted start) a stand-in that `initial_states` ignores."""
    return jnp.zeros(3) if hint is None else jnp.asarray(hint)


def _nearest_to_centre(surface, a: Float[Array, "3"], b: Float[Array, "3"]) -> Float[Array, "3"]:
    """The point of segment [a, b] nearest a sphere's centre or a cylinder's axis, the
    deepest towards the surface: where the touchdown search of a lifted curve ends
    (docs/surfaces.md#touchdown-line-search)."""
    across = jnp.array([1.0, 1.0, 0.0 if isinstance(surface, Cylinder) else 1.0], a.dtype)
    d = b - a
    dd = jnp.dot(d * across, d)
    t = jnp.clip(-jnp.dot(a * across, d) / jnp.where(dd > 0, dd, 1.0), 0.0, 1.0)
    return a + t * d


def closed_form_curve(
    cable: AbstractCableSpan,
    scene: Scene,
    i: int,
    plane_hint: Float[Array, "3"],
    momentum: Float[Array, "3"] | None = None,
) -> tuple[Bool[Array, ""], Geodesic, Float[Array, "3"]]:
    """Obstacle ``i``, a sphere or cylinder, on its closed-form path between the leg's end
    points (docs/surfaces.md#shortest-wrap), as if alone in its leg: ``(touches, geodesic,
    tracking)``, whether the path wraps it, the wrap's geodesic, and the tracking point
    of the lifted curve where it does not (the line's point nearest the centre or axis,
    where the touchdown search ends, so the solver's first status update confirms it in
    one search iteration). The shortest wrap, on the obstacle's wrap `side` if it has
    one; else, given the `momentum` of a previous path, the wrap going round its way
    (docs/cable.md#warm-starts-in-closed-form). `plane_hint` picks a sphere wrap's plane
    where every plane is one."""
    obstacle = cable.obstacles[i]
    surface, dtype = obstacle.surface, scene.origin.dtype
    a, b = leg_ends_in_frame(cable, scene, i)
    if obstacle.side is not None or momentum is None:
        side = None if obstacle.side is None else obstacle.side.astype(dtype)
        touches, point, tangent, length = surface.shortest_wrap(a, b, plane_hint, side)
    else:
        touches, point, tangent, length = surface.shortest_wrap_turning(a, b, plane_hint, momentum)
    wrap = surface.shoot_geodesic(point, tangent, length, integrator=cable.settings.integrator())
    return touches, wrap, _nearest_to_centre(surface, a, b)


def initial_states(
    cable: AbstractCableSpan,
    scene: Scene,
    hints: Sequence[Float[Array, "S 3"]],
    lifted: np.ndarray,
    exact: np.ndarray | None = None,
) -> CurveState:
    """`initial_state` for ``S`` starts at once (leading axis ``S``): ``hints[i]`` holds
    obstacle ``i``'s hint of every start, ignored where the static mask ``lifted`` (S, n)
    is set. Each obstacle's foot points and zero-length geodesics are computed by one
    `vmap` over the starts, so the compiled program holds them once, not once per start.

    Where the static mask `exact` (S, n) is set, obstacle ``i`` (a sphere or cylinder;
    the leg's other obstacles lifted) starts on its closed-form shortest wrap between the
    leg's end points (`shortest_wrap`, docs/surfaces.md#shortest-wrap): in contact on that
    geodesic, or lifted where the straight line misses it (on the obstacle's wrap `side`
    if it has one); its hint only picks the plane of a sphere wrap that every plane
    solves."""
    dtype = scene.origin.dtype
    num = lifted.shape[0]
    exact = np.zeros_like(lifted) if exact is None else exact
    unhinted = lifted | exact  # starts that ignore the hint's foot point
    status = jnp.asarray(np.where(lifted, LIFTED, INITIAL_GUESS), dtype=jnp.int32).reshape(lifted.shape)
    # The hinted and lifted starts of obstacles of one surface kind are built by one `vmap`
    # over those obstacles, and so are their foot points (`_hinted_feet`): each kind's
    # foot-point Newton loop is traced and compiled once
    # (docs/performance.md#obstacles-of-one-kind).
    direction = scene.termination - scene.origin
    n = len(cable.obstacles)
    surfaces = [o.surface for o in cable.obstacles]
    feet = _hinted_feet(surfaces, [h.astype(dtype) for h in hints], unhinted)
    geodesics = map_by_kind(
        lambda surface, X_GS, foot, mask: _plain_starts(surface, X_GS, foot, mask, scene.origin, direction),
        surfaces,
        [scene.X_GS[i] for i in range(n)],
        feet,
        [jnp.asarray(unhinted[:, i]) for i in range(n)],
    )
    exact_tracking = {}
    for i in range(n):
        if exact[:, i].any():
            plane_hint = hints[i][int(np.argmax(exact[:, i]))].astype(dtype)
            touches, wrap, exact_tracking[i] = closed_form_curve(cable, scene, i, plane_hint)
            on_wrap = jnp.asarray(exact[:, i]) & touches
            geodesics[i] = jax.tree.map(
                lambda x, w, m=on_wrap: jnp.where(m.reshape(-1, *[1] * w.ndim), w, x), geodesics[i], wrap
            )
            exact_status = jnp.where(touches, IN_CONTACT, LIFTED).astype(jnp.int32)
            status = status.at[:, i].set(jnp.where(jnp.asarray(exact[:, i]), exact_status, status[:, i]))
    if cable.obstacles:
        stacked = jnp.stack([h.astype(dtype) for h in hints], axis=1)
        tracking = jnp.where(jnp.asarray(unhinted)[..., None], jnp.zeros((), dtype), stacked)
        for i, point in exact_tracking.items():
            tracking = tracking.at[:, i].set(jnp.where(jnp.asarray(exact[:, i])[:, None], point, tracking[:, i]))
    else:
        tracking = jnp.zeros((num, 0, 3), dtype)
    # Built under vmap: a CurveState's annotated shapes are those of one start.
    return jax.vmap(CurveState)(tuple(geodesics), status, tracking)
