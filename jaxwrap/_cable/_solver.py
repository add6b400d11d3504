"""The CableSpan solver: one `lax.while_loop` shared by both algorithms.

Each iteration (cablespan.md §2.9), for every cable segment not yet finished:

1. re-evaluate touchdown and liftoff of each obstacle in path order (§2.10);
2. build the straight lines, the path error and its Jacobian (§2.6), and for
   ``minimum_length`` the length gradient and Hessian (§2.7);
3. stop the segment if its smoothness (max path error) is within tolerance or its
   iteration budget is spent; otherwise compute the correction of the chosen algorithm
   (§2.8), limit it, and reshoot the corrected geodesics (§2.4).

All obstacles and segments live in fixed-shape arrays with activity masks, so the loop
batches under `vmap` (lanes run until the slowest one finishes). Cable segments are
independent: their blocks never couple, and a finished segment's state is frozen.

The step limiter (cablespan.md §2.8) is reproduced bug-for-bug by default: Simbody
multiplies each correction's rotation rate by the *signed* correction, starting from 0,
so negative corrections never trigger the 10° limit. With it, iteration counts match
OpenSim/Simbody exactly on the golden scenarios (tests/cable/test_opensim.py); the
setting ``step_limit_by_magnitude=True`` uses ``|c|`` instead, which is what the limiter
was meant to do. Cable segments are solved in parallel in one loop rather than one after
the other; per-segment results and iteration counts are the same.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from .._spatial import Transform
from .._surfaces import Geodesic
from . import _geometry as geo
from ._path import CablePath
from ._span import CableSpan

LIFTED, IN_CONTACT, INITIAL_GUESS = 0, 1, 2


class CurveState(NamedTuple):
    """What the solver carries per obstacle, all in the surface frame S (so a warm start
    survives body motion): the current geodesic, the wrapping status, and the tracking
    point (the point of the straight line nearest the surface) of a lifted curve."""

    geodesics: tuple[Geodesic, ...]
    status: Int[Array, " n"]
    tracking: Float[Array, "n 3"]


def _select(mask, a, b):
    return jax.tree.map(lambda x, y: jnp.where(mask, x, y), a, b)


class Scene(NamedTuple):
    """Ground-frame data that stays fixed during a solve."""

    X_GS: Transform  # (n,) surface frames
    seg_start: Float[Array, "s 3"]
    seg_end: Float[Array, "s 3"]
    origin: Float[Array, "3"]
    termination: Float[Array, "3"]
    via: Float[Array, "m 3"]


def build_scene(cable: CableSpan, body_poses: Transform) -> Scene:
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


# ---------------------------------------------------------------------------- initial state
def initial_state(cable: CableSpan, scene: Scene) -> CurveState:
    """Hinted obstacles start as a zero-length geodesic at the projected hint (status
    InitialGuess, shot properly in the first status update); the others start lifted."""
    dtype = scene.origin.dtype
    geodesics, status = [], []
    for i, obstacle in enumerate(cable.obstacles):
        hint = obstacle.contact_hint
        # The start direction of the cable segment is a reasonable placeholder tangent.
        X_SG = scene.X_GS[i].inverse()
        d = X_SG.rotate(scene.termination - scene.origin)
        anchor = hint.astype(dtype) if hint is not None else X_SG.apply(scene.origin)
        geodesics.append(obstacle.surface.zero_length_geodesic(anchor, d))
        status.append(INITIAL_GUESS if hint is not None else LIFTED)
    n = len(cable.obstacles)
    return CurveState(tuple(geodesics), jnp.asarray(status, dtype=jnp.int32).reshape(n), jnp.zeros((n, 3), dtype))


# ---------------------------------------------------------------------------- status update
def update_status(
    cable: CableSpan, scene: Scene, state: CurveState, frozen: Bool[Array, " s"]
) -> tuple[CurveState, Bool[Array, " n"]]:
    """Touchdown and liftoff (cablespan.md §2.10), obstacle by obstacle in path order, each
    seeing the already-updated state of the obstacles before it. Returns the new state and
    whether a neighbouring path point (end, via or adjacent contact point) lies inside
    each obstacle, where Simbody throws."""
    geodesics = list(state.geodesics)
    status = [state.status[i] for i in range(len(geodesics))]
    tracking = [state.tracking[i] for i in range(len(geodesics))]
    inside = [jnp.array(False)] * len(geodesics)
    X_GS = scene.X_GS
    for s, obstacles in enumerate(cable.segments()):
        for k, i in enumerate(obstacles):
            surface = cable.obstacles[i].surface
            prev, nxt = scene.seg_start[s], scene.seg_end[s]
            for j in obstacles[:k]:
                prev = jnp.where(status[j] != LIFTED, X_GS[j].apply(geodesics[j].p_SQ), prev)
            for j in reversed(obstacles[k + 1 :]):
                nxt = jnp.where(status[j] != LIFTED, X_GS[j].apply(geodesics[j].p_SP), nxt)
            X_SG = X_GS[i].inverse()
            prev_S, next_S = X_SG.apply(prev), X_SG.apply(nxt)
            # Simbody throws when a neighbouring path point (the previous contact point or
            # segment start, the next one or segment end) lies inside the surface.
            inside[i] = (surface.is_surface_defined(prev_S) & (surface.implicit(prev_S) > 0)) | (
                surface.is_surface_defined(next_S) & (surface.implicit(next_S) > 0)
            )
            g = geodesics[i]
            p_P, n_P = g.p_SP, g.R_SP[:, 1]

            # Lifted: look for touchdown along the straight line prev -> next.
            search = surface.nearest_point_on_line(prev_S, next_S, tracking[i])
            touchdown = (status[i] == LIFTED) & search.below
            # InContact with a zero-length curve: lift off if both neighbours are above P.
            liftoff = (
                (status[i] == IN_CONTACT)
                & (g.arc_length <= 0)
                & (jnp.dot(prev_S - p_P, n_P) > 0)
                & (jnp.dot(next_S - p_P, n_P) > 0)
            )
            start_here = (status[i] == INITIAL_GUESS) | touchdown
            hint = cable.obstacles[i].contact_hint
            seed = search.point if hint is None else jnp.where(status[i] == INITIAL_GUESS, hint, search.point)
            fresh = surface.zero_length_geodesic(seed, next_S - prev_S)

            new_status = jnp.where(start_here, IN_CONTACT, jnp.where(liftoff, LIFTED, status[i]))
            new_tracking = jnp.where(liftoff, p_P, jnp.where((status[i] == LIFTED) & ~search.below, search.point, tracking[i]))
            keep = frozen[s]
            geodesics[i] = _select(start_here & ~keep, fresh, g)
            status[i] = jnp.where(keep, status[i], new_status)
            tracking[i] = jnp.where(keep, tracking[i], new_tracking)
    n = len(geodesics)
    dtype = scene.origin.dtype
    new_state = CurveState(
        tuple(geodesics),
        jnp.stack(status).astype(jnp.int32) if n else jnp.zeros(0, jnp.int32),
        jnp.stack(tracking) if n else jnp.zeros((0, 3), dtype),
    )
    return new_state, (jnp.stack(inside) if n else jnp.zeros(0, bool))


# ---------------------------------------------------------------------------- corrections
def apply_correction(
    cable: CableSpan, i: int, g: Geodesic, c: Float[Array, "4"], surface=None, integrator=None
) -> Geodesic:
    """Natural geodesic correction (cablespan.md §2.4): displace P along t and b, turn the
    start tangent about n, change the length; then reshoot (on `surface`, by default the
    obstacle's own, with the surface's default `integrator` unless given)."""
    new_length = g.arc_length + c[3]
    # A negative length is clamped to 0, its excess spread over P and Q.
    c0 = c[0] + jnp.where(new_length < 0, 0.5 * new_length, 0.0)
    t, n, b = g.R_SP[:, 0], g.R_SP[:, 1], g.R_SP[:, 2]
    point = g.p_SP + t * c0 + b * c[1]
    w = (g.curvatures_P[0] * c0 - g.torsion_P * c[1]) * b - c[2] * n
    tangent = t + jnp.cross(w, t)
    surface = cable.obstacles[i].surface if surface is None else surface
    length = jnp.where(new_length > 0, new_length, 0.0)
    return surface.shoot_geodesic(
        point, tangent, length, accuracy=cable.settings.curve_segment_accuracy, integrator=integrator
    )


class Evaluation(NamedTuple):
    curves: geo.CurvesG
    topo: geo.Neighbours
    lines: geo.Lines
    error: Float[Array, "n 4"]
    smoothness: Float[Array, " s"]  # max path error per segment


def evaluate(cable: CableSpan, scene: Scene, state: CurveState) -> Evaluation:
    segments = cable.segments()
    curves = geo.curves_in_ground(state.geodesics, scene.X_GS) if state.geodesics else _empty_curves(scene)
    topo = geo.neighbours(state.status != LIFTED, segments)
    ln = geo.lines(curves, topo, segments, scene.seg_start, scene.seg_end)
    error = geo.path_error(curves, topo, ln)
    per_obstacle = jnp.max(jnp.abs(error), axis=1, initial=0.0)
    smoothness = jnp.stack([jnp.max(per_obstacle[jnp.array(obs, int)], initial=0.0) for obs in segments])
    return Evaluation(curves, topo, ln, error, smoothness)


def _empty_curves(scene: Scene) -> geo.CurvesG:
    z = lambda *shape: jnp.zeros((0, *shape), scene.origin.dtype)  # noqa: E731
    return geo.CurvesG(z(3), z(3), z(3, 3), z(3, 3), z(2), z(2), z(), z(), z(2), z(2), z())


def _pinv_solve(A: Array, b: Array) -> Array:
    # Minimum-norm least squares, like Simbody's FactorQTZ with rcond = max(m, n) eps^(7/8).
    eps = jnp.finfo(A.dtype).eps
    return jnp.linalg.pinv(A, rtol=max(A.shape) * eps ** (7 / 8)) @ b


def solver_step(cable: CableSpan, ev: Evaluation, weight: Float[Array, " n"]) -> Float[Array, "n 4"]:
    """The correction of the configured algorithm (cablespan.md §2.8), before limiting.

    `weight` is each obstacle's segment smoothness (0 for frozen segments, whose rows and
    columns are masked out)."""
    n = ev.error.shape[0]
    var = geo.variations(ev.curves)
    J4 = geo.path_error_jacobian(ev.curves, var, ev.topo, ev.lines)
    live = ev.topo.active & (weight > 0)
    J4 = jnp.where(live[:, None, None, None] & live[None, None, :, None], J4, 0.0)
    error = jnp.where(live[:, None], ev.error, 0.0)
    if cable.settings.algorithm == "scholz2015":
        # Gauss-Newton on the path error with a length-change penalty weighted by the error.
        W = jnp.zeros((n, n, 4), error.dtype).at[jnp.arange(n), jnp.arange(n), 3].set(jnp.where(live, weight, 0.0))
        A = jnp.concatenate([J4.reshape(4 * n, 4 * n), W.reshape(n, 4 * n)])
        rhs = jnp.concatenate([error.reshape(-1), jnp.zeros(n, error.dtype)])
        return -_pinv_solve(A, rhs).reshape(n, 4)

    # minimum_length: SQP on the length subject to zero normal path error.
    g4, H4 = geo.length_gradient_and_hessian(ev.curves, var, ev.topo, ev.lines)
    g = jnp.where(live[:, None], g4, 0.0).reshape(4 * n)
    H = jnp.where(live[:, None, None, None] & live[None, None, :, None], H4, 0.0).reshape(4 * n, 4 * n)
    sym = 0.5 * (H + H.T)
    eigenvalues, V = jnp.linalg.eigh(sym)
    # |sym| (negative curvature flipped) plus each segment's damping; identity where masked.
    damping = jnp.repeat(jnp.where(live, weight, 1.0), 4)
    dead = jnp.repeat(~live, 4)
    Q = (V * jnp.abs(eigenvalues)) @ V.T + jnp.diag(damping)
    Q = jnp.where(dead[:, None] | dead[None, :], jnp.eye(4 * n, dtype=Q.dtype), Q)
    Q_inv = jnp.linalg.inv(Q)
    rows = jnp.array([0, 2])
    J = J4[:, rows].reshape(2 * n, 4 * n)
    e = error[:, rows].reshape(2 * n)
    A = J @ Q_inv @ J.T
    lam = _pinv_solve(A, e - J @ Q_inv @ g)
    q = -0.5 * Q_inv @ (g + J.T @ lam)
    return jnp.where(live[:, None], q.reshape(n, 4), 0.0)


def limit_step(cable: CableSpan, ev: Evaluation, c: Float[Array, "n 4"]) -> Float[Array, "n 4"]:
    """Scale each segment's step so no boundary frame rotates by more than ``max_step``."""
    var = geo.variations(ev.curves)
    rate = jnp.maximum(jnp.max(jnp.abs(var.w_P), axis=1), jnp.max(jnp.abs(var.w_Q), axis=1))  # (n, 4)
    # Simbody multiplies by the signed correction (starting from 0), so negative corrections
    # never limit the step; `step_limit_by_magnitude` uses |c| instead (see module doc).
    m = jnp.max(rate * (jnp.abs(c) if cable.settings.step_limit_by_magnitude else c), axis=1, initial=0.0)
    max_step = cable.settings.max_step
    scale_i = jnp.where(ev.topo.active & (m > max_step), max_step / jnp.where(m > 0, m, 1.0), 1.0)
    scaled = c
    for obstacles in cable.segments():
        if not obstacles:
            continue
        idx = jnp.array(obstacles, int)
        scaled = scaled.at[idx].multiply(jnp.min(scale_i[idx]))
    return scaled


# ---------------------------------------------------------------------------- the loop
class _Carry(NamedTuple):
    state: CurveState
    iterations: Int[Array, " s"]
    done: Bool[Array, " s"]
    smoothness: Float[Array, " s"]
    inside: Bool[Array, " n"]


def run_solver(cable: CableSpan, scene: Scene, state0: CurveState) -> _Carry:
    segments = cable.segments()
    num_segments = len(segments)
    n = cable.num_obstacles
    seg_of = [0] * n
    for s, obstacles in enumerate(segments):
        for i in obstacles:
            seg_of[i] = s
    seg_of = jnp.array(seg_of, int).reshape(n)
    tol = cable.settings.smoothness_tolerance
    max_iterations = cable.settings.max_iterations
    dtype = scene.origin.dtype

    def body(carry: _Carry) -> _Carry:
        state, inside = update_status_masked(carry)
        ev = evaluate(cable, scene, state)
        smoothness = jnp.where(carry.done, carry.smoothness, ev.smoothness)
        finished = carry.done | (ev.smoothness <= tol) | (carry.iterations >= max_iterations)
        stepping = ~finished  # segments that take a correction this iteration
        weight = jnp.where(stepping[seg_of], ev.smoothness[seg_of], 0.0) if n else jnp.zeros(0, dtype)
        c = limit_step(cable, ev, solver_step(cable, ev, weight)) if n else jnp.zeros((0, 4), dtype)
        geodesics = list(state.geodesics)
        for i in range(n):
            corrected = apply_correction(cable, i, geodesics[i], c[i])
            geodesics[i] = _select(stepping[seg_of[i]] & ev.topo.active[i], corrected, geodesics[i])
        state = state._replace(geodesics=tuple(geodesics))
        return _Carry(state, carry.iterations + stepping.astype(jnp.int32), finished, smoothness, inside)

    def update_status_masked(carry: _Carry):
        state, inside = update_status(cable, scene, carry.state, carry.done)
        return state, jnp.where(carry.done[seg_of], carry.inside, inside) if n else inside

    carry0 = _Carry(
        state0,
        jnp.zeros(num_segments, jnp.int32),
        jnp.zeros(num_segments, bool),
        jnp.zeros(num_segments, dtype),
        jnp.zeros(n, bool),
    )
    return jax.lax.while_loop(lambda c: ~jnp.all(c.done), body, carry0)


# ---------------------------------------------------------------------------- entry point
def solve(cable: CableSpan, body_poses: Transform, warm_start: CablePath | None = None) -> CablePath:
    if not isinstance(body_poses, Transform) or len(body_poses.batch_shape) != 1:
        raise ValueError(
            "body_poses must be a Transform with one leading axis (n_bodies,), e.g. "
            "RobotModel.forward_kinematics(q); batch several with jax.vmap"
        )
    cable.check_bodies(body_poses.batch_shape[0])
    from ._implicit import differentiable_state

    scene_nodiff = build_scene(jax.lax.stop_gradient(cable), jax.lax.stop_gradient(body_poses))
    if warm_start is not None and cable.settings.use_warm_start:
        warm = warm_start.state if isinstance(warm_start, CablePath) else warm_start
        if not isinstance(warm, CurveState) or len(warm.geodesics) != cable.num_obstacles:
            raise ValueError("warm_start must be a CablePath (or its .state) of a cable with the same obstacles")
        state0 = jax.lax.stop_gradient(warm)
    else:
        state0 = initial_state(jax.lax.stop_gradient(cable), scene_nodiff)
    result = run_solver(jax.lax.stop_gradient(cable), scene_nodiff, state0)

    # Re-attach the derivatives with respect to poses and cable parameters (implicit function theorem).
    scene = build_scene(cable, body_poses)
    state = differentiable_state(cable, scene, jax.lax.stop_gradient(result.state))
    ev = evaluate(cable, scene, state)
    converged = jnp.all(result.smoothness <= cable.settings.smoothness_tolerance) & ~jnp.any(result.inside)
    return CablePath(
        cable=cable,
        body_poses=body_poses,
        scene=scene,
        state=state,
        evaluation=ev,
        smoothness=jnp.max(result.smoothness, initial=0.0),
        num_iterations=jnp.sum(result.iterations),
        converged=converged,
        endpoint_inside=result.inside,
    )

