"""The CableSpan solver loop: one `lax.while_loop` shared by both algorithms.

Each iteration (docs/cable.md#solver-loop), for every leg not yet finished:

1. re-evaluate touchdown and liftoff of each obstacle in path order
   (docs/cable.md#touchdown-and-liftoff);
2. build the straight lines, the path error and its Jacobian, and for
   ``minimum_length`` the length gradient and Hessian;
3. stop the leg if its smoothness (max path error) is within tolerance or its iteration
   budget is spent; otherwise compute the correction of the chosen algorithm
   (docs/cable.md#algorithms), limit it, and reshoot the corrected geodesics
   (docs/cable.md#natural-geodesic-corrections).

All obstacles and legs live in fixed-shape arrays with activity masks, so the loop
batches under `vmap`; a batched loop iterates a buffer of lanes refilled as lanes
finish, so the slowest few do not keep the whole batch iterating
(docs/performance.md#lane-compaction). Legs are independent: their blocks never couple,
and a finished leg's state is frozen.

The step limiter is reproduced bug-for-bug by default (docs/cable.md#step-limiter):
Simbody multiplies each correction's rotation rate by the *signed* correction, starting
from 0, so negative corrections never trigger the limit. With it, iteration counts match
OpenSim/Simbody exactly on the golden scenarios (tests/cable/test_opensim.py); the
setting ``step_limit_by_magnitude=True`` uses ``|c|`` instead, which is what the limiter
was meant to do. Legs are solved in parallel in one loop rather than one after the
other; per-leg results and iteration counts are the same.
"""

from __future__ import annotations

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
from jaxtyping import Array, Bool, Float, Int, PyTree

from .._misc import concretely, fold_batch_levels, fold_into_lanes, lane_cond, map_by_kind
from .._results import RESULTS
from .._surfaces import AbstractSurface, Geodesic, GeodesicIntegrator
from .._surfaces._geodesic import zero_length_geodesic_at
from .._surfaces._geodesic_ode import floored_accuracy, length_scale, shoot_numerically
from .._surfaces._touchdown import NearestPointOnLine, nearest_point_on_line
from ._definition import AbstractCableSpan
from ._geometry import (
    Evaluation,
    evaluate,
    length_gradient_and_hessian,
    path_error_jacobian,
    variations,
)
from ._state import IN_CONTACT, INITIAL_GUESS, LIFTED, STALE, CurveState, Scene


def select(mask: Bool[Array, ""], a: PyTree, b: PyTree) -> PyTree:
    """``a`` where ``mask`` else ``b``, leaf by leaf (two pytrees of one structure)."""
    return jax.tree.map(lambda x, y: jnp.where(mask, x, y), a, b)


# ---------------------------------------------------------------------------- status update
def _touchdown_search(surface: AbstractSurface, a, b, guess, cable: AbstractCableSpan, lifted) -> NearestPointOnLine:
    """The touchdown search of a curve, iterated only where it is `lifted` (the only
    place its result is used) unless the surface brings its own search."""
    if type(surface).nearest_point_on_line is AbstractSurface.nearest_point_on_line:
        return nearest_point_on_line(surface, a, b, guess, cable.settings.touchdown, active=lifted)
    return surface.nearest_point_on_line(a, b, guess, cable.settings.touchdown)


def update_status(
    cable: AbstractCableSpan, scene: Scene, state: CurveState, frozen: Bool[Array, " legs"]
) -> tuple[CurveState, Bool[Array, " n"], Bool[Array, " legs"]]:
    """Touchdown and liftoff (docs/cable.md#touchdown-and-liftoff), obstacle by obstacle in
    path order, each seeing the already-updated state of the obstacles before it. Returns
    the new state, whether a neighbouring path point (end, via or adjacent contact
    point) lies inside each obstacle, where Simbody throws
    (docs/cable.md#neighbour-point-inside-an-obstacle), and per leg whether that point
    is one of the leg's own ends (its start inside its first obstacle, or its end inside
    its last): the scene alone decides that, so no iteration can undo it."""
    geodesics = list(state.geodesics)
    n = len(geodesics)
    status = [state.status[i] for i in range(n)]
    tracking = [state.tracking[i] for i in range(n)]
    inside = [jnp.array(False)] * n
    stuck = [jnp.array(False)] * len(cable.legs())
    # End points as the obstacles after each see them; a curve (re)started here is a
    # zero-length geodesic at its seed's projection, built after the sweep for every
    # obstacle of one kind at once (`map_by_kind`).
    ends_P, ends_Q = [g.p_SP for g in geodesics], [g.p_SQ for g in geodesics]
    restart, points, directions = [jnp.array(False)] * n, list(ends_P), [None] * n
    X_GS = scene.X_GS
    for leg, obstacles in enumerate(cable.legs()):
        for k, i in enumerate(obstacles):
            surface = cable.obstacles[i].surface
            prev, nxt = scene.leg_start[leg], scene.leg_end[leg]
            for j in obstacles[:k]:
                prev = jnp.where(status[j] != LIFTED, X_GS[j].apply(ends_Q[j]), prev)
            for j in reversed(obstacles[k + 1 :]):
                nxt = jnp.where(status[j] != LIFTED, X_GS[j].apply(ends_P[j]), nxt)
            X_SG = X_GS[i].inverse()
            prev_S, next_S = X_SG.apply(prev), X_SG.apply(nxt)
            prev_inside = surface.is_surface_defined(prev_S) & (surface.implicit(prev_S) > 0)
            next_inside = surface.is_surface_defined(next_S) & (surface.implicit(next_S) > 0)
            inside[i] = prev_inside | next_inside
            # The first obstacle's prev is always the leg's start, the last one's next its end.
            if k == 0:
                stuck[leg] = stuck[leg] | prev_inside
            if k == len(obstacles) - 1:
                stuck[leg] = stuck[leg] | next_inside
            g = geodesics[i]
            p_P, n_P = g.p_SP, g.R_SP[:, 1]

            # Lifted: look for touchdown along the straight line prev -> next.
            search = _touchdown_search(
                surface, prev_S, next_S, tracking[i], cable, (status[i] == LIFTED) & ~frozen[leg]
            )
            touchdown = (status[i] == LIFTED) & search.below
            # InContact with a zero-length curve: lift off if both neighbours are above P.
            liftoff = (
                (status[i] == IN_CONTACT)
                & (g.arc_length <= 0)
                & (jnp.dot(prev_S - p_P, n_P) > 0)
                & (jnp.dot(next_S - p_P, n_P) > 0)
            )
            start_here = (status[i] == INITIAL_GUESS) | touchdown
            # An InitialGuess curve is shot at its raw hint, which its tracking point holds.
            seed = jnp.where(status[i] == INITIAL_GUESS, tracking[i], search.point)
            points[i], directions[i] = surface.project(seed), next_S - prev_S

            new_status = jnp.where(start_here, IN_CONTACT, jnp.where(liftoff, LIFTED, status[i]))
            # Still lifted: track the search's end point; when the search ran out of
            # iterations Simbody leaves its output (the old tracking point) unchanged.
            lifted_point = jnp.where(search.converged, search.point, tracking[i])
            still_lifted = (status[i] == LIFTED) & ~search.below
            new_tracking = jnp.where(liftoff, p_P, jnp.where(still_lifted, lifted_point, tracking[i]))
            keep = frozen[leg]
            restart[i] = start_here & ~keep
            ends_P[i] = jnp.where(restart[i], points[i], ends_P[i])
            ends_Q[i] = jnp.where(restart[i], points[i], ends_Q[i])
            status[i] = jnp.where(keep, status[i], new_status)
            tracking[i] = jnp.where(keep, tracking[i], new_tracking)
    fresh = map_by_kind(zero_length_geodesic_at, [o.surface for o in cable.obstacles], points, directions)
    geodesics = [select(restart[i], fresh[i], geodesics[i]) for i in range(n)]
    dtype = scene.origin.dtype
    new_state = CurveState(
        tuple(geodesics),
        jnp.stack(status).astype(jnp.int32) if n else jnp.zeros(0, jnp.int32),
        jnp.stack(tracking) if n else jnp.zeros((0, 3), dtype),
    )
    return new_state, (jnp.stack(inside) if n else jnp.zeros(0, bool)), jnp.stack(stuck)


# ---------------------------------------------------------------------------- corrections
#: A reshot curve's first step, in units of its previous shot's mean step (accepted and
#: rejected steps over its length; docs/performance.md#remembered-first-step).
REMEMBERED_STEP = 1.5


#: A first step of `CURVATURE_STEP · accuracy^(1/8) / (|κ_t| + |κ_b|)` in arc length, with
#: the normal curvatures at the curve's start (docs/performance.md#a-first-step-from-the-curvature).
CURVATURE_STEP = 4.0


def _curvature_step(surface: AbstractSurface, g: Geodesic, accuracy) -> Float[Array, ""]:
    """A first step for a curve starting at P, sized by the surface's normal curvatures
    there along t and b (the geodesic's error grows with them): `CURVATURE_STEP`
    accuracy^(1/8) over their magnitudes' sum, that sum taken as at least 1e-3 per extent
    where the surface is flat there; 0 (Hairer's step) where it is not finite
    (docs/performance.md#a-first-step-from-the-curvature)."""
    dtype = g.p_SP.dtype
    kappa = jnp.abs(g.curvatures_P[0]) + jnp.abs(g.curvatures_P[1])
    flattest = 1e-3 / surface.extent().astype(dtype)
    step = CURVATURE_STEP * floored_accuracy(accuracy, dtype) ** (1 / 8) / jnp.maximum(kappa, flattest)
    return jnp.where(jnp.isfinite(step), step, 0.0)


def shot_numerically(surface: AbstractSurface) -> bool:
    """Whether `surface` shoots its geodesics numerically (to an accuracy, with an idle
    mask) rather than in closed form: it keeps `AbstractSurface.shoot_geodesic`."""
    return type(surface).shoot_geodesic is AbstractSurface.shoot_geodesic


def apply_correction(
    surface: AbstractSurface,
    geodesic: Geodesic,
    c: Float[Array, "4"],
    accuracy: float | Float[Array, ""],
    integrator: GeodesicIntegrator | None = None,
    moves: Bool[Array, ""] | None = None,
) -> Geodesic:
    """Natural geodesic correction (docs/cable.md#natural-geodesic-corrections): displace P
    along t and b, turn the start tangent about n, change the length; then reshoot on
    `surface` (with `integrator`, the surface's default if None). With `moves` given, a
    numerically shot geodesic is only integrated where it is True (elsewhere the result
    is meant to be discarded; docs/performance.md#idle-curves)."""
    g = geodesic
    new_length = g.arc_length + c[3]
    # A negative length is clamped to 0, its excess spread over P and Q.
    c0 = c[0] + jnp.where(new_length < 0, 0.5 * new_length, 0.0)
    t, n, b = g.R_SP[:, 0], g.R_SP[:, 1], g.R_SP[:, 2]
    point = g.p_SP + t * c0 + b * c[1]
    w = (g.curvatures_P[0] * c0 - g.torsion_P * c[1]) * b - c[2] * n
    tangent = t + jnp.cross(w, t)
    length = jnp.where(new_length > 0, new_length, 0.0)
    if moves is not None and shot_numerically(surface):
        # The curve's previous shot took `num_steps` steps over its length: the reshot
        # starts at `REMEMBERED_STEP` times their mean, or at a step sized by the
        # surface's curvature at P, whichever is longer; a curve never shot before (a
        # start's zero-length curve) at the latter (docs/performance.md#remembered-first-step).
        remembered = jnp.where(g.num_steps > 0, REMEMBERED_STEP * g.arc_length / jnp.maximum(g.num_steps, 1), 0.0)
        first_step = jnp.maximum(remembered, _curvature_step(surface, g, accuracy))
        return shoot_numerically(
            surface,
            point,
            tangent,
            length,
            accuracy=accuracy,
            integrator=integrator,
            integrate=moves,
            first_step=first_step,
        )
    return surface.shoot_geodesic(point, tangent, length, accuracy=accuracy, integrator=integrator)


def _pinv_solve(A: Float[Array, "m n"], b: Float[Array, " m"]) -> Float[Array, " n"]:
    """Minimum-norm least squares with Simbody's `FactorQTZ` cut-off (rcond = max(m, n)
    eps^(7/8)), by the factorisation that is fastest where the program runs
    (docs/performance.md#small-dense-algebra): on CPU a complete orthogonal factorisation
    (`_qr_solve`, LAPACK), elsewhere the SVD pseudo-inverse (`_svd_solve`). JAX runs a
    column-pivoted QR on a GPU as a host LAPACK call (its "hybrid" kernel) and applies Q
    one matrix at a time, while the SVD of a batch of small matrices is one batched
    Jacobi SVD there. Both agree to rounding."""
    return jax.lax.platform_dependent(A, b, cpu=_qr_solve, default=_svd_solve)


def _svd_solve(A: Float[Array, "m n"], b: Float[Array, " m"]) -> Float[Array, " n"]:
    """`_pinv_solve` by the SVD: singular values below rcond times the largest dropped. A
    system with a non-finite entry gives NaN without reaching the SVD (LAPACK's `gesdd`
    can loop forever on NaN)."""
    m, n = A.shape
    finite = jnp.all(jnp.isfinite(A)) & jnp.all(jnp.isfinite(b))
    x = jnp.linalg.pinv(jnp.where(finite, A, 0.0), rtol=_rcond(m, n, A.dtype)) @ jnp.where(finite, b, 0.0)
    return jnp.where(finite, x, jnp.nan)


def _qr_solve(A: Float[Array, "m n"], b: Float[Array, " m"]) -> Float[Array, " n"]:
    """`_pinv_solve` as Simbody's `FactorQTZ` solves it: a complete orthogonal
    factorisation, not an SVD.

    Column-pivoted QR, ``A P = Q R``; the rank r counts the leading diagonal entries of R
    above rcond times the first (pivoting orders them by size). At full rank (nearly every
    lane) the answer is ``P R⁻¹ Qᵀ b``. Below it, R's trailing rows are dropped and the
    minimum-norm solution of the remaining ``r × n`` system comes from a QR of its
    transpose; that branch runs only when some lane of the batch needs it (`lane_cond`).
    A system with a non-finite entry gives NaN, as the SVD does. Wider than tall
    matrices (which the solver never builds) take the SVD."""
    m, n = A.shape
    rcond = _rcond(m, n, A.dtype)
    if m < n:
        return _svd_solve(A, b)
    # Qᵀ b from the Householder reflectors (LAPACK's ormqr), never forming Q (orgqr):
    # 1.7-2.6 µs less per 20×16 or 15×12 system (docs/performance.md#small-dense-algebra).
    # For a real A, `conjugate=True` makes it apply Qᵀ from the left to b as a column.
    c, r, perm = jax.scipy.linalg.qr_multiply(A, b[None, :], mode="right", pivoting=True, conjugate=True)
    c = c[0]
    diagonal = jnp.abs(jnp.diagonal(r))
    keep = jnp.cumprod(diagonal > rcond * diagonal[0]).astype(bool)
    full_rank = keep[-1]
    safe = jnp.where(jnp.eye(n, dtype=bool) & ~full_rank, 1.0, r)
    y = jax.lax.linalg.triangular_solve(safe, c[:, None], left_side=True, lower=False)[:, 0]
    y = jnp.where(full_rank, y, lane_cond(~full_rank, _minimum_norm_trapezoid, r, c, keep))
    # A non-finite system has no answer (the SVD's NaN), never the rank-0 answer zero.
    finite = jnp.all(jnp.isfinite(A)) & jnp.all(jnp.isfinite(b))
    return jnp.where(finite, jnp.zeros_like(y).at[perm].set(y), jnp.nan)


def _rcond(m: int, n: int, dtype) -> float:
    """Simbody's `FactorQTZ` cut-off for an m × n system, relative to its largest
    singular value (or diagonal entry of the pivoted R): max(m, n) eps^(7/8)."""
    return max(m, n) * float(jnp.finfo(dtype).eps) ** (7 / 8)


def _minimum_norm_trapezoid(
    r: Float[Array, "n n"], c: Float[Array, " n"], keep: Bool[Array, " n"]
) -> Float[Array, " n"]:
    """The minimum-norm y with ``R[:k] y = c[:k]``, k the number of True in the prefix
    `keep`: ``R[:k]ᵀ = Z L`` (QR), then ``y = Z L⁻ᵀ c[:k]``, all at the full static size
    with the dropped rows zero (their columns of L are zero and get a unit diagonal)."""
    n = r.shape[0]
    trapezoid = jnp.where(keep[:, None], r, 0.0)
    z, l_t = jax.lax.linalg.qr(trapezoid.T, full_matrices=False)
    lower = jnp.where(jnp.eye(n, dtype=bool), jnp.where(keep, jnp.diagonal(l_t), 1.0), l_t.T)
    w = jax.lax.linalg.triangular_solve(lower, jnp.where(keep, c, 0.0)[:, None], left_side=True, lower=True)[:, 0]
    return z @ jnp.where(keep, w, 0.0)


def _symmetric_pinv_solve_2x2(A: Float[Array, "2 2"], b: Float[Array, " 2"]) -> Float[Array, " 2"]:
    """`_pinv_solve` for a symmetric 2×2 matrix, from its eigendecomposition by one Jacobi
    rotation (Golub and Van Loan's `sym.schur2`, exact up to rounding) instead of a LAPACK
    SVD: the same cut-off, relative to the largest |eigenvalue| (= singular value). A
    LAPACK call on a matrix this small costs about 1.2 µs, mostly its own set-up
    (docs/performance.md#small-dense-algebra)."""
    app, aqq, apq = A[0, 0], A[1, 1], 0.5 * (A[0, 1] + A[1, 0])
    coupled = apq != 0
    tau = (aqq - app) / (2 * jnp.where(coupled, apq, 1.0))
    t = jnp.where(tau >= 0, 1.0, -1.0) / (jnp.abs(tau) + jnp.hypot(1.0, tau))
    t = jnp.where(coupled, t, 0.0)
    c = 1 / jnp.sqrt(1 + t * t)
    s = t * c
    eigenvalues = jnp.stack([app - t * apq, aqq + t * apq])
    V = jnp.stack([jnp.stack([c, s]), jnp.stack([-s, c])])  # columns: the eigenvectors
    magnitude = jnp.abs(eigenvalues)
    keep = magnitude > _rcond(2, 2, A.dtype) * jnp.max(magnitude)
    inverse = jnp.where(keep, 1 / jnp.where(keep, eigenvalues, 1.0), 0.0)
    return V @ (inverse * (V.T @ b))


def _gauss_newton(J4, error, weight, live, size):
    """Gauss-Newton on the path error with a length-change penalty weighted by the error,
    in corrections x = c / size (Simbody's Scholz2015 step for size 1)."""
    n = error.shape[0]
    W = jnp.zeros((n, n, 4), error.dtype).at[jnp.arange(n), jnp.arange(n), 3].set(jnp.where(live, weight, 0.0))
    A = jnp.concatenate([J4.reshape(4 * n, 4 * n) * size[None, :], W.reshape(n, 4 * n)])
    rhs = jnp.concatenate([error.reshape(-1), jnp.zeros(n, error.dtype)])
    return (-_pinv_solve(A, rhs) * size).reshape(n, 4)


def _minimum_length(J4, error, weight, live, size, curves, var, neighbours, lines):
    """The SQP step on the length subject to zero normal path error, in corrections
    x = c / size (docs/cable.md#algorithms)."""
    n = error.shape[0]
    g4, H4 = length_gradient_and_hessian(curves, var, neighbours, lines)
    g = jnp.where(live[:, None], g4, 0.0).reshape(4 * n) * size
    H = jnp.where(live[:, None, None, None] & live[None, None, :, None], H4, 0.0).reshape(4 * n, 4 * n)
    H = size[:, None] * H * size[None, :]
    sym = 0.5 * (H + H.T)
    eigenvalues, V = jnp.linalg.eigh(sym)
    # |sym| (negative curvature flipped) plus each leg's damping, in metres like the
    # length (μ ℓ per curve); identity where masked.
    damping = jnp.repeat(jnp.where(live, weight * size[0::4], 1.0), 4)
    if n == 1:
        # One curve: the damping is one number (1 where the curve is masked, where `sym`
        # is 0), so Q = V (|Λ| + d) Vᵀ and its inverse needs no further factorisation
        # (docs/performance.md#small-dense-algebra).
        Q_inv = (V / (jnp.abs(eigenvalues) + damping)) @ V.T
    else:
        dead = jnp.repeat(~live, 4)
        Q = (V * jnp.abs(eigenvalues)) @ V.T + jnp.diag(damping)
        Q = jnp.where(dead[:, None] | dead[None, :], jnp.eye(4 * n, dtype=Q.dtype), Q)
        Q_inv = jnp.linalg.inv(Q)
    rows = jnp.array([0, 2])
    J = J4[:, rows].reshape(2 * n, 4 * n) * size[None, :]
    e = error[:, rows].reshape(2 * n)
    A = J @ Q_inv @ J.T
    lam = (_symmetric_pinv_solve_2x2 if n == 1 else _pinv_solve)(A, e - J @ Q_inv @ g)
    q = -0.5 * Q_inv @ (g + J.T @ lam)
    return jnp.where(live[:, None], (q * size).reshape(n, 4), 0.0)


#: The polish also takes over where the minimum-length step stalls: below STALL_WINDOW
#: times `gauss_newton_below`, a leg that has taken STALL_AFTER corrections and whose
#: smoothness fell, but by less than a factor STALL_RATIO, in the last one
#: (docs/cable.md#where-the-minimum-length-step-stalls).
STALL_WINDOW = 4.0
STALL_RATIO = 0.8
STALL_AFTER = 10


def solver_step(
    cable: AbstractCableSpan,
    evaluation: Evaluation,
    weight: Float[Array, " n"],
    stalled: Bool[Array, " n"] | None = None,
) -> Float[Array, "n 4"]:
    """The correction of the configured algorithm (docs/cable.md#algorithms), before
    limiting. `weight` is each obstacle's leg smoothness (0 for frozen legs, whose rows
    and columns are masked out); `stalled` marks the obstacles of legs whose
    minimum-length step has stalled (`stalled_legs`), which take the polish's step too."""
    ev = evaluation
    var = variations(ev.curves)
    J4 = path_error_jacobian(ev.curves, var, ev.neighbours, ev.lines)
    live = ev.neighbours.active & (weight > 0)
    J4 = jnp.where(live[:, None, None, None] & live[None, None, :, None], J4, 0.0)
    error = jnp.where(live[:, None], ev.error, 0.0)
    ones = jnp.ones(4 * error.shape[0], error.dtype)
    if cable.settings.algorithm == "scholz2015":
        return _gauss_newton(J4, error, weight, live, ones)

    # minimum_length: with `scale_free_step`, in corrections x = c / (ℓ, ℓ, 1, ℓ) per
    # curve, ℓ its surface's extent, with the damping μ ℓ: every term of the step then
    # scales with the scene, so its iterates are the same at any size
    # (docs/cable.md#scale); for ℓ = 1 (and without it) this is Simbody's step.
    size = _correction_scale(cable, error.dtype) if cable.settings.scale_free_step else ones
    sqp_operands = (J4, error, weight, live, size, ev.curves, var, ev.neighbours, ev.lines)
    polish = cable.settings.gauss_newton_below
    if concretely(lambda x: x == 0, polish):
        return _minimum_length(*sqp_operands)
    # Near the path, the Gauss-Newton step: the halved SQP step converges only linearly
    # there (docs/cable.md#gauss-newton-polish). Each step is computed only where some
    # curve takes it: under `vmap`, only when some lane of the batch does
    # (docs/performance.md#where-a-warm-steps-time-goes-and-a-larger-polish-threshold).
    near = live & (weight < polish)
    if stalled is not None:
        near = near | (live & stalled & (weight < STALL_WINDOW * polish))
    gauss_newton = lane_cond(jnp.any(near), _gauss_newton, J4, error, weight, live, size)
    minimum_length = lane_cond(jnp.any(live & ~near), _minimum_length, *sqp_operands)
    return jnp.where(near[:, None], gauss_newton, minimum_length)


def stalled_legs(
    iterations: Int[Array, " legs"], previous: Float[Array, " legs"], smoothness: Float[Array, " legs"]
) -> Bool[Array, " legs"]:
    """Legs that have taken STALL_AFTER corrections and whose last one cut their
    smoothness (from `previous` to `smoothness`), but by less than a factor STALL_RATIO.
    Simbody's minimum-length step converges linearly, and on small obstacles in a scene
    measured in metres its damping can make that rate so slow that it runs out of
    iterations a few degrees from the path. A leg whose smoothness grew is heading away
    from the stationary path nearest it (off a saddle of the length, say): the
    minimum-length step keeps it, since the Gauss-Newton step would stop on whatever
    stationary path is nearest. Legs that converge within STALL_AFTER corrections are
    left as they were (docs/cable.md#where-the-minimum-length-step-stalls)."""
    return (
        (iterations >= STALL_AFTER) & (previous > 0) & (smoothness > STALL_RATIO * previous) & (smoothness < previous)
    )


def _correction_scale(cable: AbstractCableSpan, dtype) -> Float[Array, " four_n"]:
    """Per correction component (along t, along b, turn, length) of every obstacle, its
    unit: the surface's extent for the three lengths, 1 for the angle (1 where the extent
    is unbounded)."""
    if not cable.obstacles:
        return jnp.zeros(0, dtype)
    extent = jnp.stack([length_scale(o.surface, dtype) for o in cable.obstacles])
    one = jnp.ones_like(extent)
    return jnp.stack([extent, extent, one, extent], axis=-1).reshape(-1)


def limit_step(cable: AbstractCableSpan, evaluation: Evaluation, c: Float[Array, "n 4"]) -> Float[Array, "n 4"]:
    """Scale each leg's step so no boundary frame rotates by more than ``max_step``."""
    var = variations(evaluation.curves)
    rate = jnp.maximum(jnp.max(jnp.abs(var.w_P), axis=1), jnp.max(jnp.abs(var.w_Q), axis=1))  # (n, 4)
    # Simbody multiplies by the signed correction (starting from 0), so negative corrections
    # never limit the step; `step_limit_by_magnitude` uses |c| instead (see module doc).
    m = jnp.max(rate * (jnp.abs(c) if cable.settings.step_limit_by_magnitude else c), axis=1, initial=0.0)
    max_step = cable.settings.max_step
    scale_i = jnp.where(evaluation.neighbours.active & (m > max_step), max_step / jnp.where(m > 0, m, 1.0), 1.0)
    scaled = c
    for obstacles in cable.legs():
        if obstacles:
            idx = jnp.array(obstacles, int)
            scaled = scaled.at[idx].multiply(jnp.min(scale_i[idx]))
    return scaled


# ---------------------------------------------------------------------------- the loop
class SolverCarry(eqx.Module):
    """The loop state: curves, per-leg iteration counts, finished flags and smoothness,
    and the per-obstacle inside and geodesic-failure flags; per leg, the correction
    count at which it pauses (`patience`) and whether it has (`paused`: finished for the
    loop, not solved; docs/cable.md#paused-starts)."""

    state: CurveState
    iterations: Int[Array, " legs"]
    done: Bool[Array, " legs"]
    smoothness: Float[Array, " legs"]
    inside: Bool[Array, " n"]
    geodesic_failed: Bool[Array, " n"]
    patience: Int[Array, " legs"]
    paused: Bool[Array, " legs"]


#: A `patience` that never pauses a leg.
NO_PAUSE = np.iinfo(np.int32).max


def _solver_body(cable: AbstractCableSpan, scene: Scene, carry: SolverCarry) -> SolverCarry:
    """One iteration of the loop (module docstring) for one lane; the identity on a lane
    whose legs are all finished."""
    n = cable.num_obstacles
    leg_of = jnp.array(cable.leg_of_obstacle(), int).reshape(n)
    num_legs = len(cable.legs())
    dtype = scene.origin.dtype
    # Curves shot coarsely (`STALE`, the candidates' finish) are in contact; this
    # iteration reshoots them unchanged at full accuracy instead of correcting their leg,
    # which is not finished before the next evaluation (docs/cable.md#screen-and-finish).
    stale = carry.state.status == STALE
    stale_leg = jnp.zeros(num_legs, bool).at[leg_of].max(stale) if n else jnp.zeros(num_legs, bool)
    # A leg that has taken its `patience` of corrections pauses before this iteration: it
    # is left exactly as it is, so that resumed (`resume`) it goes on as if never paused
    # (docs/cable.md#paused-starts).
    pause = ~carry.done & (carry.iterations >= carry.patience)
    done = carry.done | pause
    before = dataclasses.replace(carry.state, status=jnp.where(stale, IN_CONTACT, carry.state.status))
    state, inside, stuck = update_status(cable, scene, before, done)
    if n:
        on = pause[leg_of]
        state = dataclasses.replace(
            state,
            status=jnp.where(on, carry.state.status, state.status),
            tracking=jnp.where(on[:, None], carry.state.tracking, state.tracking),
        )
    inside = jnp.where(done[leg_of], carry.inside, inside) if n else inside
    ev = evaluate(cable, scene, state)
    smoothness = jnp.where(done, carry.smoothness, ev.smoothness)
    # A curve that lifted off in this update was not searched for touchdown on its new
    # straight line: its leg is not finished before the next update has done that
    # (docs/cable.md#touchdown-and-liftoff). Simbody stops here; the extra update
    # applies no correction and is not counted.
    lifted_off = (before.status == IN_CONTACT) & (state.status == LIFTED)
    recheck = jnp.zeros(num_legs, bool).at[leg_of].max(lifted_off) if n else jnp.zeros(num_legs, bool)
    recheck = recheck | stale_leg
    smooth = ev.smoothness <= cable.settings.smoothness_tolerance
    out_of_iterations = (carry.iterations >= cable.settings.max_iterations) & ~stale_leg
    # A leg with an end inside its first or last obstacle fails whatever the solver does
    # (that point is fixed): it stops at its first update, as Simbody throws there
    # (docs/cable.md#neighbour-point-inside-an-obstacle), instead of spending its budget.
    finished = done | (smooth & ~recheck) | out_of_iterations | stuck
    stepping = ~finished  # legs that take a correction this iteration
    weight = jnp.where(stepping[leg_of], ev.smoothness[leg_of], 0.0) if n else jnp.zeros(0, dtype)
    stalled = stalled_legs(carry.iterations, carry.smoothness, ev.smoothness)[leg_of] if n else None
    c = limit_step(cable, ev, solver_step(cable, ev, weight, stalled)) if n else jnp.zeros((0, 4), dtype)
    c = jnp.where(stale_leg[leg_of][:, None], 0.0, c) if n else c
    geodesics = list(state.geodesics)
    failed = list(carry.geodesic_failed[i] for i in range(n))
    accuracy, integrator = cable.settings.curve_segment_accuracy, cable.settings.integrator()
    moves = stepping[leg_of] & ev.neighbours.active & (stale | ~stale_leg[leg_of]) if n else jnp.zeros(0, bool)
    corrected = map_by_kind(
        lambda surface, g, c_i, m: apply_correction(surface, g, c_i, accuracy, integrator, moves=m),
        [o.surface for o in cable.obstacles],
        geodesics,
        c,
        moves,
    )
    for i in range(n):
        geodesics[i] = select(moves[i], corrected[i], geodesics[i])
        failed[i] = failed[i] | (moves[i] & (corrected[i].result != RESULTS.successful))
    state = dataclasses.replace(state, geodesics=tuple(geodesics))
    failed = jnp.stack(failed) if n else carry.geodesic_failed
    # A leg whose geodesic failed stops: its state holds NaN from here on.
    finished = finished | jnp.zeros(num_legs, bool).at[leg_of].max(failed) if n else finished
    counted = stepping & ~smooth & ~stale_leg
    iterations = carry.iterations + counted.astype(jnp.int32)
    return SolverCarry(state, iterations, finished, smoothness, inside, failed, carry.patience, carry.paused | pause)


def _traced_body(static, dyn, scene: Scene, carry: SolverCarry):
    """`_solver_body` of one lane, traced once into a jaxpr (from the per-lane shapes of
    `dyn`, `scene` and `carry`) and returned as a function that evaluates it. A
    `custom_vmap` traces its unbatched function and then its batched rule; both loops
    take their body from here, so the Python code of an iteration is traced once, not
    twice (docs/performance.md#compile-time)."""
    avals = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), (dyn, scene, carry))
    flat, tree = jax.tree.flatten(avals)

    def body(*leaves):
        d, sc, c = jax.tree.unflatten(tree, leaves)
        return _solver_body(eqx.combine(d, static), sc, c)

    closed, out = jax.make_jaxpr(body, return_shape=True)(*flat)
    out_tree = jax.tree.structure(out)

    def run(d, sc, c):
        return jax.tree.unflatten(
            out_tree, jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *jax.tree.leaves((d, sc, c)))
        )

    return run


def initial_carry(
    cable: AbstractCableSpan,
    scene: Scene,
    state0: CurveState,
    frozen: Bool[Array, " legs"],
    patience: Int[Array, " legs"] | None = None,
) -> SolverCarry:
    """The carry a solve from `state0` starts with: legs `frozen` finished, each leg
    pausing after `patience` corrections (never by default)."""
    n, num_legs = cable.num_obstacles, len(cable.legs())
    patience = jnp.full(num_legs, NO_PAUSE, jnp.int32) if patience is None else jnp.asarray(patience, jnp.int32)
    return SolverCarry(
        state0,
        jnp.zeros(num_legs, jnp.int32),
        jnp.asarray(frozen, bool),
        jnp.zeros(num_legs, scene.origin.dtype),
        jnp.zeros(n, bool),
        jnp.zeros(n, bool),
        jnp.broadcast_to(patience, (num_legs,)),
        jnp.zeros(num_legs, bool),
    )


def resume(carry: SolverCarry, legs: Bool[Array, " legs"]) -> SolverCarry:
    """`carry` with its paused `legs` unpaused and never pausing again (they go on from
    where they paused), and every other leg finished (docs/cable.md#paused-starts)."""
    go = carry.paused & legs
    return dataclasses.replace(
        carry,
        done=~go,
        patience=jnp.where(go, NO_PAUSE, carry.patience),
        paused=carry.paused & ~go,
    )


def _unfinished(carry: SolverCarry) -> Int[Array, ""]:
    """The number of lanes (leading axis) with a leg not yet finished."""
    return jnp.sum(~jnp.all(carry.done, axis=-1))


#: Lane compaction (docs/performance.md#lane-compaction): a batch of at least
#: COMPACT_FROM lanes is solved in a buffer of 1/BUFFER_FRACTION of its lanes (at least
#: COMPACT_FROM / 2, at most MAX_BUFFER), refilled as lanes finish.
COMPACT_FROM = 128
BUFFER_FRACTION = 4
MAX_BUFFER = 128


def buffer_size(size: int) -> int:
    """The number of lanes the solver loop iterates at once for a batch of `size`."""
    if size < COMPACT_FROM:
        return size
    return min(MAX_BUFFER, max(COMPACT_FROM // 2, size // BUFFER_FRACTION))


def _compacted_loop(static, body, dyn, scene, carry: SolverCarry, batched, size: int) -> SolverCarry:
    """The solver loop over `size` lanes from `carry` (batched along axis 0; `dyn` and
    `scene` batched along axis 0 where `batched` says True), with lane compaction.

    The loop iterates a buffer of `buffer_size` slots, each holding one lane. After every
    iteration the slots are written back to the batch, and each slot whose lane has
    finished takes the next lane not yet started. The loop ends when every lane has
    been started and every slot is finished. A batch of ``B`` lanes needing ``n_b``
    iterations each costs about ``Σ n_b / M`` buffer iterations plus the tail of the
    slowest lanes, instead of ``B · max n_b`` lane iterations; and the loop body is
    compiled once, at the buffer's size."""
    axes = jax.tree.map(lambda b: 0 if b else None, batched)

    def step(d, sc, carry):
        return jax.vmap(body, in_axes=(axes[0], axes[1], 0))(d, sc, carry)

    slots = buffer_size(size)
    if slots == size:
        return jax.lax.while_loop(lambda c: _unfinished(c) > 0, lambda c: step(dyn, scene, c), carry)

    def inputs(ids):
        def take(x, is_batched):
            return x[ids] if is_batched else x

        return jax.tree.map(take, dyn, batched[0]), jax.tree.map(take, scene, batched[1])

    def gather(full, ids):
        return jax.tree.map(lambda x: x[ids], full)

    def scatter(full, ids, part):
        return jax.tree.map(lambda x, y: x.at[ids].set(y), full, part)

    # Lanes that start finished (frozen: the candidate start's further rounds, where most
    # legs are already settled) are never loaded: the buffer takes the unfinished lanes
    # first, in order, and stops refilling after the last of them, so a batch of frozen
    # lanes costs no step.
    order = jnp.argsort(jnp.all(carry.done, axis=-1), stable=True)
    pending = _unfinished(carry)

    def unfinished(loop):
        _, _, started, buffer = loop
        return (started < pending) | (_unfinished(buffer) > 0)

    def iterate(loop):
        full, ids, started, buffer = loop
        buffer = step(*inputs(ids), buffer)
        full = scatter(full, ids, buffer)
        # Finished slots take the next lanes in order (ids stay distinct: a position in
        # `order` is never taken twice); a slot with no lane left keeps its finished one,
        # which the loop body leaves as it is.
        finished = jnp.all(buffer.done, axis=-1)
        position = started + jnp.cumsum(finished) - 1
        refill = finished & (position < pending)
        ids = jnp.where(refill, order[jnp.minimum(position, size - 1)], ids)
        return full, ids, started + jnp.sum(refill), gather(full, ids)

    ids = order[:slots]
    loop = (carry, ids, jnp.asarray(slots), gather(carry, ids))
    full, _, _, _ = jax.lax.while_loop(unfinished, iterate, loop)
    return full


def _lanes_solve(static, body, dyn, scene, carries: SolverCarry, batched) -> SolverCarry:
    """The solver loop over the lanes of `carries` (axis 0), compacted (`_compacted_loop`;
    `dyn` and `scene` have one row per lane where `batched` says True, else are shared).

    Under an enclosing `jax.vmap` the new batch axis is folded into the lanes: lane
    ``b · size + k`` is lane ``k`` of batch element ``b``. So a solve inside several
    `vmap`s, such as the legs of one structure of a `CableSet` (a `vmap` over legs) inside
    a batch of configurations, compacts all of its lanes as one batch, not only those of
    the innermost `vmap` (docs/performance.md#lanes-of-nested-batches). The devices'
    level of `sharded_vmap` is batched as it comes instead (`folds_this_batch_level`):
    lanes never move between devices."""
    size = carries.done.shape[0]

    def loop(dyn, scene, carries):
        return _compacted_loop(static, body, dyn, scene, carries, batched, size)

    def fold(axis_size, in_batched, dyn, scene, carries):
        dyn_b, scene_b, carries_b = in_batched

        def as_lanes(x, is_batched):
            return fold_into_lanes(x, is_batched, axis_size)

        def as_inputs(x, per_lane, is_batched):
            if per_lane:
                return as_lanes(x, is_batched)
            # One row per batch element, shared by its lanes; or shared by every lane.
            return jnp.repeat(x, size, axis=0) if is_batched else x

        def merged(tree, per_lane, is_batched):
            values = jax.tree.map(as_inputs, tree, per_lane, is_batched)
            return values, jax.tree.map(lambda p, b: p or b, per_lane, is_batched)

        dyn_l, dyn_per_lane = merged(dyn, batched[0], dyn_b)
        scene_l, scene_per_lane = merged(scene, batched[1], scene_b)
        lanes = jax.tree.map(as_lanes, carries, carries_b)
        return _lanes_solve(static, body, dyn_l, scene_l, lanes, (dyn_per_lane, scene_per_lane))

    return fold_batch_levels(loop, fold)(dyn, scene, carries)


def _flags(tree, value: bool):
    return jax.tree.map(lambda _: value, tree)


def run_solver(
    cable: AbstractCableSpan, scene: Scene, state0: CurveState, frozen: Bool[Array, " legs"] | None = None
) -> SolverCarry:
    """Iterate from `state0` until every leg is smooth or out of budget (no derivatives).
    Legs marked `frozen` are left as they are (no iterations; a loop with every leg frozen
    runs no iteration at all, also under `vmap` when every lane is).

    Under `jax.vmap` the batched loop compacts its lanes (`_lanes_solve`,
    docs/performance.md#lane-compaction); the results are those of each lane alone."""
    frozen = jnp.zeros(len(cable.legs()), bool) if frozen is None else frozen
    dyn, static = eqx.partition(cable, eqx.is_array)
    body = _traced_body(static, dyn, scene, jax.eval_shape(initial_carry, cable, scene, state0, frozen))

    @jax.custom_batching.custom_vmap
    def solve(dyn, scene, state0, frozen):
        c = eqx.combine(dyn, static)
        return jax.lax.while_loop(
            lambda carry: ~jnp.all(carry.done),
            lambda carry: body(dyn, scene, carry),
            initial_carry(c, scene, state0, frozen),
        )

    @solve.def_vmap
    def _batched(axis_size, in_batched, dyn, scene, state0, frozen):
        dyn_b, scene_b, state_b, frozen_b = in_batched
        axes = tuple(jax.tree.map(lambda b: 0 if b else None, tree) for tree in in_batched)

        def init(d, sc, s0, fr):
            return initial_carry(eqx.combine(d, static), sc, s0, fr)

        carry = jax.vmap(init, in_axes=axes, axis_size=axis_size)(dyn, scene, state0, frozen)
        carry = _lanes_solve(static, body, dyn, scene, carry, (dyn_b, scene_b))
        return carry, _flags(carry, True)

    return solve(dyn, scene, state0, frozen)


def run_solver_stack(cable: AbstractCableSpan, scene: Scene, carries: SolverCarry) -> SolverCarry:
    """The solver loop for a stack of ``K`` solves of one cable in one scene, each from
    its carry (leading axis of `carries`: `initial_carry` of a start, or a paused solve
    `resume`d). Under enclosing `jax.vmap`s (``B`` scenes, and any further levels) all
    ``B·K`` solves are compacted as one batch (`_lanes_solve`,
    docs/performance.md#lane-compaction), not ``K`` at a time."""
    dyn, static = eqx.partition(cable, eqx.is_array)
    body = _traced_body(static, dyn, scene, jax.tree.map(lambda x: x[0], carries))
    return _lanes_solve(static, body, dyn, scene, carries, (_flags(dyn, False), _flags(scene, False)))
