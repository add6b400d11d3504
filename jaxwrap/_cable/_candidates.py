"""Cold starts that need no lucky hint: a few starts per leg, the shortest genuine path
kept (docs/cable.md#cold-start-candidates).

A cold solve from Simbody's contact hints ends on whichever stationary path is nearest
the hints, which for an obstacle on a moving body can be the long way round, a path that
clings to an obstacle it no longer needs, or no path at all. With
``cold_start="candidates"`` (the default) each leg has a list of *first* starts, all
solved, and a list of *further* starts, solved only while the leg is not *settled*:

- one sphere or cylinder: first its closed-form shortest wrap (`EXACT`, on the wrap
  side if it has one); further, the obstacle lifted (where the line only grazes it);
  settled by any genuine path;
- one obstacle of any other kind (ellipsoid, torus, implicit, height map): lifted, the
  near side of the straight line (its point nearest the surface origin, pushed out beyond
  the surface), both quarter turns from there about the line (an ellipsoid: one; its
  three-quarter turn is its first further start), and a start on the wrap side if it
  has one; further, the contact hint (where it has one) and the far side;
- ``m >= 2`` obstacles: every obstacle lifted, the hints as given (Simbody's start; not
  where no obstacle of the leg has a hint, which makes it the lifted start again), and
  for every obstacle three starts around the straight line (near side and quarter turns:
  that obstacle hinted there, the others lifted; a sphere its near side only, an
  ellipsoid its near side first and its quarter turns further), plus starts on the wrap
  sides of sided obstacles, and every sphere or cylinder on its exact wrap between the
  leg's ends with the others lifted; further, each obstacle's far side.

A leg over numerically shot or several obstacles is settled when two genuine candidates
end on its shortest length (within what the tolerance leaves undetermined, `_slack`):
where they do not agree, the stationary paths are nearly equal and the costly starts
run too. It is also settled by a shortest genuine candidate as long as the leg's lower
bound (`lower_bounds`): the straight line between its ends, and the closed-form shortest
path round each of its spheres and cylinders alone, which no path that keeps out of
them can beat. Such a leg's lifted start and its exact starts run alone in an opening
round, and where one of them attains the bound no other start runs
(docs/cable.md#the-straight-line-certificate,
docs/cable.md#lower-bounds-from-closed-form-wraps).

In a leg of several obstacles every start but the first pauses after
`CANDIDATE_PATIENCE` corrections and counts as no candidate; after the rounds of starts,
the paused ones are resumed from where they paused on the legs still not settled
(docs/cable.md#paused-starts).

Starts run in rounds of ``K`` slots (``K`` the longest first round), batched within a
round (`run_solver_stack`: under an outer `vmap` the slots of the whole batch are
compacted together, docs/performance.md#lane-compaction) and one `lax.scan` over rounds
(the solver loop is compiled once). Legs are
independent, so slot ``k`` of a round holds the ``k``-th start of every leg; a slot a leg
does not use, and every slot of a leg already settled, is frozen, and a `while_loop`
whose lanes are all frozen runs no iteration: a batch where no lane needs a further
start pays one solve per sphere or cylinder leg. Which starts are needed, and in which
order, was measured (docs/cable.md#cold-start-candidates). For each leg the shortest
candidate whose leg is a genuine taut solution (`_faults.leg_scores`) is kept; the first
slot wins ties (within the length the smoothness tolerance leaves undetermined) and is
returned with its failure when no candidate is genuine, so the choice is deterministic.
Where a leg has numerically shot curves, the rounds are a screen with coarser curves,
and one more round finishes the kept candidate at the cable's own accuracy
(`_screen_and_finish`, docs/cable.md#screen-and-finish).
Warm starts bypass all of this: they continue the previous path, in closed form over a
sphere or cylinder alone in its leg (`closed_form_warm_state`), and a leg where that ends
on no genuine path is solved again from the leg lifted (`solve_warm`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from .._misc import any_lane, batched_like, safe_normalize, segment_nearest_to_origin, stack_where
from .._surfaces import Cylinder, Ellipsoid, Sphere
from .._surfaces._shortest_wrap import cylinder_shortest_length, sphere_shortest_length
from ._definition import AbstractCableSpan
from ._faults import leg_faults, leg_scores
from ._solver import (
    NO_PAUSE,
    SolverCarry,
    initial_carry,
    resume,
    run_solver,
    run_solver_stack,
    select,
    shot_numerically,
)
from ._state import (
    IN_CONTACT,
    LIFTED,
    STALE,
    CurveState,
    Scene,
    closed_form_curve,
    initial_states,
    leg_ends_in_frame,
    lifted_placeholder,
)


def side_hints(cable: AbstractCableSpan, scene: Scene, i: int, num: int = 2) -> list[Array]:
    """`num` points in S around the straight line between the ends of obstacle ``i``'s leg,
    at equal angles about the line: first the near side (towards the line from the surface
    origin, the line's nearest point pushed out beyond the surface), then turning about the
    line; with ``num = 2`` the near and far sides, with 4 also the two quarter turns."""
    a, b = leg_ends_in_frame(cable, scene, i)
    d = b - a
    nearest = segment_nearest_to_origin(a, b)
    x = jnp.array([1.0, 0.0, 0.0], d.dtype)
    # Where the line passes through the origin, any direction across it will do.
    across = jnp.cross(d, jnp.array([0.0, 0.0, 1.0], d.dtype))
    across = jnp.where(jnp.dot(across, across) > 0, across, x)
    near = safe_normalize(nearest, safe_normalize(across, x))
    axis = safe_normalize(d, jnp.cross(near, safe_normalize(across, x)))
    turned = jnp.cross(axis, near)
    reach = jnp.linalg.norm(nearest) + cable.obstacles[i].surface.extent().astype(d.dtype)
    reach = jnp.where(jnp.isfinite(reach), reach, jnp.linalg.norm(nearest) + 1.0)
    angles = 2 * np.pi * np.arange(num) / num
    return [(np.cos(angle) * near + np.sin(angle) * turned) * reach for angle in angles]


def wrap_side_hint(cable: AbstractCableSpan, scene: Scene, i: int) -> Array:
    """A start on obstacle ``i``'s wrap `side` (docs/cable.md#wrap-side): the side point's
    direction across the straight line of its leg, out beyond the surface."""
    a, b = leg_ends_in_frame(cable, scene, i)
    side = cable.obstacles[i].side.astype(a.dtype)
    d = safe_normalize(b - a, jnp.zeros_like(a))
    direction = safe_normalize(side - jnp.dot(side, d) * d, safe_normalize(side, side))
    nearest = a + jnp.clip(-jnp.dot(a, d), 0.0, jnp.linalg.norm(b - a)) * d
    reach = jnp.linalg.norm(nearest) + cable.obstacles[i].surface.extent().astype(a.dtype)
    reach = jnp.where(jnp.isfinite(reach), reach, jnp.linalg.norm(nearest) + 1.0)
    return direction * reach


# Surfaces with a closed-form shortest wrap (`shortest_wrap`): a one-obstacle leg over
# one of them starts on the answer.
_CLOSED_FORM = (Sphere, Cylinder)

# A start: obstacle index -> its hint in S, None for lifted, or EXACT for the closed-form
# shortest wrap between the leg's end points.
Start = dict
EXACT = "exact"


# Which side starts of an obstacle are solved in a leg's first round and which are further
# starts (solved, in order, only while the leg is not settled; the far side is always the
# last of them), per surface kind (docs/cable.md#cold-start-candidates). Measured with
# `benchmarks/cable_starts.py` on random SO(3) configurations:
# - an ellipsoid alone in its leg: where lifted, near side and quarter turn agree, the
#   three-quarter turn alone found a shorter path once in 16,384; on a torus 7 times in
#   12,288, so the torus keeps both quarter turns first;
# - in a leg of several obstacles a sphere's quarter sides never alone reached a shortest
#   path that its exact start and near side miss, an ellipsoid's never did where the first
#   starts agree (6,144), while each of a cylinder's sides at times did.
_EVERY_SIDE_FIRST = (("near", "quarter", "three_quarter"), ())
_LONE_FIRST_SIDES = {Ellipsoid: (("near", "quarter"), ("three_quarter",))}
_CHAIN_FIRST_SIDES = {Sphere: (("near",), ()), Ellipsoid: (("near",), ("quarter", "three_quarter"))}


def _leg_starts(cable: AbstractCableSpan, scene: Scene, leg: int) -> tuple[list[Start], list[Start], bool]:
    """The first starts (all solved unless the first of them settles the leg alone) and
    the further starts (in order, only while the leg is not settled) of one leg, and
    whether the leg settles by agreement (two genuine candidates on its shortest length,
    or one as long as its lower bound) rather than by any genuine path. Where it does,
    the first start is the leg lifted off every obstacle, solved in the opening round
    with the exact starts (`_schedule`). Earlier starts are kept on ties."""
    obstacles = cable.legs()[leg]
    if not obstacles:
        return [{}], [], False
    if len(obstacles) == 1:
        (i,) = obstacles
        if isinstance(cable.obstacles[i].surface, _CLOSED_FORM):
            # The exact start is the shortest path; lifted is the fallback where it is not
            # genuine because the line only grazes the surface (docs/cable.md#cold-start-candidates).
            return [{i: EXACT}], [{i: None}], False
        surface = cable.obstacles[i].surface
        sides = dict(zip(("near", "quarter", "far", "three_quarter"), side_hints(cable, scene, i, 4)))
        # The hint and the far side are the costliest starts and rarely the only ones to
        # reach the shortest path; they are solved where the first starts do not agree.
        # So, on an ellipsoid, is the three-quarter turn (`_LONE_FIRST_SIDES`).
        first, later = _LONE_FIRST_SIDES.get(type(surface), _EVERY_SIDE_FIRST)
        starts = [{i: None}, *({i: sides[name]} for name in first)]
        if cable.obstacles[i].side is not None:
            starts.append({i: wrap_side_hint(cable, scene, i)})
        # Without a hint (OpenSim's wraps) the hint start is the lifted one again.
        hint = [] if cable.obstacles[i].contact_hint is None else [{i: cable.obstacles[i].contact_hint}]
        further = [{i: sides[name]} for name in later]
        return starts, [*further, *hint, {i: sides["far"]}], True
    starts: list[Start] = [dict.fromkeys(obstacles)]
    if any(cable.obstacles[i].contact_hint is not None for i in obstacles):
        # Without any hint (OpenSim's wraps) Simbody's start is the lifted one again: solved
        # twice, it would settle the leg by agreeing with itself.
        starts.append({i: cable.obstacles[i].contact_hint for i in obstacles})
    further: list[Start] = []
    for i in obstacles:
        sides = dict(zip(("near", "quarter", "far", "three_quarter"), side_hints(cable, scene, i, 4)))
        first, later = _CHAIN_FIRST_SIDES.get(type(cable.obstacles[i].surface), _EVERY_SIDE_FIRST)
        for name in first:
            starts.append({j: sides[name] if j == i else None for j in obstacles})
        for name in (*later, "far"):
            further.append({j: sides[name] if j == i else None for j in obstacles})
    sided = [i for i in obstacles if cable.obstacles[i].side is not None]
    if sided:
        # Every sided obstacle on its side at once (a line on the wrong side of one of
        # them only touches down when started there), and each alone.
        starts.append({i: wrap_side_hint(cable, scene, i) if i in sided else None for i in obstacles})
        if len(sided) > 1:
            for i in sided:
                starts.append({j: wrap_side_hint(cable, scene, j) if j == i else None for j in obstacles})
    # A sphere or cylinder on its closed-form shortest wrap between the leg's ends, the
    # others lifted: the leg's path wherever it touches that obstacle alone, which the
    # sides can miss where a cylinder has two taut wraps of nearly equal length
    # (docs/cable.md#cold-start-candidates).
    for i in obstacles:
        if isinstance(cable.obstacles[i].surface, _CLOSED_FORM):
            starts.append({j: EXACT if j == i else None for j in obstacles})
    return starts, further, True


def lone_closed_form(cable: AbstractCableSpan) -> list[int]:
    """The obstacles that are a sphere or cylinder alone in their leg: their locally
    shortest paths are in closed form (`shortest_wrap`)."""
    legs = cable.legs()
    return [leg[0] for leg in legs if len(leg) == 1 and isinstance(cable.obstacles[leg[0]].surface, _CLOSED_FORM)]


def closed_form_warm_state(cable: AbstractCableSpan, scene: Scene, state: CurveState) -> CurveState:
    """A warm start with every sphere or cylinder alone in its leg moved onto its closed-form
    path between the leg's new end points (docs/cable.md#warm-starts-in-closed-form): the
    straight line where that misses the obstacle; otherwise the wrap that goes round the
    way the previous path did (the side its angular momentum about the surface origin
    points to; the shorter side where the previous path was lifted), or on the obstacle's
    wrap `side` if it has one, as the cold start takes it. The solver then stops at its
    first evaluation. Other obstacles keep their previous curves."""
    lone = lone_closed_form(cable)
    if not lone:
        return state
    geodesics, status, tracking = list(state.geodesics), state.status, state.tracking
    dtype = scene.origin.dtype
    for i in lone:
        g = geodesics[i]
        in_contact = status[i] == IN_CONTACT
        # Where a, b and a sphere's centre are collinear every plane is a wrap: the
        # previous contact point's (or the hint's) is kept.
        plane_hint = jnp.where(in_contact, g.p_SP, lifted_placeholder(cable.obstacles[i].contact_hint).astype(dtype))
        momentum = jnp.cross(g.p_SP, g.R_SP[:, 0]) + jnp.cross(g.p_SQ, g.R_SQ[:, 0])
        momentum = jnp.where(in_contact, momentum, jnp.zeros((), dtype))
        touches, wrap, lifted_tracking = closed_form_curve(cable, scene, i, plane_hint, momentum)
        geodesics[i] = jax.tree.map(lambda w, old, m=touches: jnp.where(m, w, old), wrap, g)
        tracking = tracking.at[i].set(jnp.where(touches, tracking[i], lifted_tracking))
        status = status.at[i].set(jnp.where(touches, IN_CONTACT, LIFTED).astype(status.dtype))
    return CurveState(tuple(geodesics), status, tracking)


def start_states(cable: AbstractCableSpan, scene: Scene, slots: list[Start]) -> CurveState:
    """The initial states of a list of starts (leading axis: one per slot); an obstacle a
    slot does not name starts from its contact hint."""
    n = cable.num_obstacles
    hints: list[list[Array]] = [[] for _ in range(n)]  # per obstacle, one hint per slot
    lifted = np.zeros((len(slots), n), bool)
    exact = np.zeros((len(slots), n), bool)
    for k, slot in enumerate(slots):
        for i, obstacle in enumerate(cable.obstacles):
            hint = slot.get(i, obstacle.contact_hint)
            exact[k, i] = is_exact = isinstance(hint, str)
            lifted[k, i] = hint is None
            # An exact start's hint only picks a sphere wrap's plane where any will do.
            hints[i].append(lifted_placeholder(obstacle.contact_hint if is_exact else hint))
    return initial_states(cable, scene, [jnp.stack(h) for h in hints], lifted, exact)


def _schedule(cable: AbstractCableSpan, scene: Scene) -> tuple[CurveState, np.ndarray, np.ndarray]:
    """Every start laid out in rounds of ``K`` slots: the states, shape ``(R, K, ...)``, the
    static mask ``(R, K, legs)`` of slots a leg does not use, and the static per-leg flag
    of legs that settle by agreement."""
    plans = [_leg_starts(cable, scene, leg) for leg in range(len(cable.legs()))]
    for leg, (first, _, agree) in enumerate(plans):  # the opening below relies on it
        assert not agree or first[0] == dict.fromkeys(cable.legs()[leg]), "a settling-by-agreement leg opens lifted"

    # Where a leg settles by agreement, its lifted start opens, with its exact starts (a
    # sphere or cylinder on its closed-form wrap, the others lifted), in a round of their
    # own. Where the straight line between the leg's ends clears every obstacle, or the
    # path touches one sphere or cylinder alone, one of them is as long as the leg's lower
    # bound, no path is shorter, and the leg is settled (`settled`) before its other
    # first starts run in the next round (docs/cable.md#the-straight-line-certificate,
    # docs/cable.md#lower-bounds-from-closed-form-wraps). Only the bound settles a leg
    # there: after the opening, two agreeing candidates do not (`settled`'s
    # `agreement`), so that the next round is always the rest of the first starts.
    def opening(first):
        exact = [s for s in first[1:] if EXACT in s.values()]
        return [[first[0], *exact], [s for s in first[1:] if EXACT not in s.values()]]

    openings = [opening(first) if agree and len(first) > 1 else [first] for first, _, agree in plans]
    K = max(len(chunk) for opening in openings for chunk in opening)
    per_leg = [
        opening + [further[j : j + K] for j in range(0, len(further), K)]
        for opening, (_, further, _) in zip(openings, plans)
    ]
    R = max(len(rounds) for rounds in per_leg)
    unused = np.ones((R, K, len(plans)), bool)
    slots: list[Start] = []  # one start of every obstacle per slot, round by round
    for r in range(R):
        for k in range(K):
            slot: Start = {}
            for leg, rounds in enumerate(per_leg):
                used = r < len(rounds) and k < len(rounds[r])
                unused[r, k, leg] = not used
                # An unused slot still needs some state; it is frozen, never solved.
                slot.update(rounds[r][k] if used else plans[leg][0][0])
            slots.append(slot)
    states = start_states(cable, scene, slots)
    stacked = jax.tree.map(lambda x: x.reshape(R, K, *x.shape[1:]), states)
    return stacked, unused, np.array([agree for _, _, agree in plans], bool)


#: The round after the opening round (`_schedule`): the rest of the first starts, which run
#: unless the opening settled their leg by its lower bound (`settled`'s `agreement`).
_AFTER_OPENING = 1


def _slack(cable: AbstractCableSpan, best: Float[Array, " legs"], accuracy=0.0) -> Float[Array, " legs"]:
    """Two lengths within this of each other are the same for the tolerance: the length
    the smoothness tolerance leaves undetermined (second order in it), the curves'
    relative `accuracy` where they were shot coarsely (the screen), and round-off."""
    eps = jnp.finfo(best.dtype).eps
    return (cable.settings.smoothness_tolerance**2 + accuracy + 64 * eps) * jnp.abs(best)


def _on_shortest(cable: AbstractCableSpan, scores: Float[Array, "S legs"], accuracy=0.0) -> Bool[Array, "S legs"]:
    """Per slot and leg, whether the candidate (`scores`: lengths, inf where not genuine or
    not solved) is genuine and as short as the leg's shortest within `_slack`."""
    shortest = jnp.min(scores, axis=0)
    slack = _slack(cable, jnp.where(jnp.isfinite(shortest), shortest, 0.0), accuracy)
    return jnp.isfinite(scores) & (scores <= shortest + slack)


def settled(
    cable: AbstractCableSpan,
    scores: Float[Array, "S legs"],
    by_agreement: np.ndarray,
    accuracy=0.0,
    bound: Float[Array, " legs"] | None = None,
    agreement=True,
) -> Bool[Array, " legs"]:
    """Per leg, whether the candidates solved so far (`scores`: lengths, inf where not
    genuine or not solved) settle it: a genuine path, and where `by_agreement`, at least
    two genuine candidates on the shortest length or a shortest one as long as the leg's
    lower `bound` (`lower_bounds`: no path that keeps out of the obstacles is shorter, so
    a genuine one of that length is the shortest; docs/cable.md#the-straight-line-certificate).
    Without `agreement` (after the opening round, `_schedule`) only the bound settles a
    leg that settles by agreement: its first starts are all solved unless it does."""
    agreeing = jnp.sum(_on_shortest(cable, scores, accuracy), axis=0)
    certified = jnp.zeros(agreeing.shape, bool)
    if bound is not None:
        # Two-sided: a genuine path can be shorter than a closed-form wrap's bound where it
        # passes through that obstacle on a segment the obstacle does not neighbour; such a
        # shortest candidate certifies nothing, and the leg's other starts run.
        shortest = jnp.min(scores, axis=0)
        certified = jnp.isfinite(shortest) & (jnp.abs(shortest - bound) <= _slack(cable, bound, accuracy))
    return jnp.where(jnp.asarray(by_agreement), ((agreeing >= 2) & agreement) | certified, agreeing >= 1)


def straight_lengths(scene: Scene) -> Float[Array, " legs"]:
    """Per leg, the distance between its ends: a lower bound on its length."""
    return jnp.linalg.norm(scene.leg_end - scene.leg_start, axis=-1)


def lower_bounds(cable: AbstractCableSpan, scene: Scene) -> Float[Array, " legs"]:
    """Per leg, a length no path of the leg that keeps out of its obstacles is shorter
    than: the distance between its ends and, in a leg of several obstacles, for each
    sphere or cylinder the length of the shortest path between the ends that keeps out
    of that obstacle alone, in closed form (docs/cable.md#lower-bounds-from-closed-form-wraps)."""
    bounds = straight_lengths(scene)
    dtype = scene.origin.dtype
    for leg, obstacles in enumerate(cable.legs()):
        if len(obstacles) < 2:
            continue
        for i in obstacles:
            surface = cable.obstacles[i].surface
            if not isinstance(surface, _CLOSED_FORM):
                continue
            a, b = leg_ends_in_frame(cable, scene, i)
            shortest = sphere_shortest_length if isinstance(surface, Sphere) else cylinder_shortest_length
            bounds = bounds.at[leg].max(shortest(surface.radius.astype(dtype), a, b))
    return jax.lax.stop_gradient(bounds)


#: The screen (docs/cable.md#screen-and-finish) shoots curves to a hundredth of the
#: smoothness tolerance, at most SCREEN_ACCURACY and never finer than the setting itself.
SCREEN_ACCURACY = 1e-6


def _numeric(cable: AbstractCableSpan) -> np.ndarray:
    """Per obstacle (static), whether its curves are shot numerically, i.e. to an accuracy."""
    return np.array([shot_numerically(o.surface) for o in cable.obstacles], bool)


def screen_accuracy(cable: AbstractCableSpan) -> Float[Array, ""]:
    """The curve accuracy the candidates are screened at: ``min(tolerance / 100,
    SCREEN_ACCURACY)``, never finer than `curve_segment_accuracy`."""
    settings = cable.settings
    coarse = jnp.minimum(0.01 * jnp.asarray(settings.smoothness_tolerance), SCREEN_ACCURACY)
    return jnp.maximum(coarse, jnp.asarray(settings.curve_segment_accuracy))


def _with_accuracy(cable: AbstractCableSpan, accuracy) -> AbstractCableSpan:
    """`cable` with a (traced) `curve_segment_accuracy`."""
    return eqx.tree_at(lambda c: c.settings.curve_segment_accuracy, cable, accuracy)


def score_slots(
    cable: AbstractCableSpan, scene: Scene, carries: SolverCarry, frozen: Bool[Array, "K legs"]
) -> tuple[Float[Array, "K legs"], Bool[Array, "K legs"]]:
    """`leg_scores` of a round's stack of carries (leading axis: slots), genuine only on
    the legs that were solved (not `frozen`). Only the slots with a leg solved are
    scored (`stack_where`; under `vmap` the batch's slots are gathered): the others'
    lengths are 0 and never genuine (docs/performance.md#scoring-the-slots-that-ran)."""
    dyn, static = eqx.partition(cable, eqx.is_array)

    def score(carry, shared):
        d, sc = shared
        return leg_scores(eqx.combine(d, static), sc, carry)

    lengths, genuine = stack_where(score, ~jnp.all(frozen, axis=-1), carries, (dyn, scene))
    return lengths, genuine & ~frozen & ~carries.paused


#: A start of a leg of several obstacles pauses after this many corrections, except the
#: leg's first start (lifted); paused starts are resumed, from where they paused, only on
#: legs the other starts leave unsettled (docs/cable.md#paused-starts).
CANDIDATE_PATIENCE = 20


def _patience(cable: AbstractCableSpan, r, K: int) -> Int[Array, "K legs"]:
    """Per slot of round `r` (fresh starts) and leg, the corrections after which it pauses:
    `CANDIDATE_PATIENCE` in legs of several obstacles, never in the first slot of the
    first round (each leg's first start, which also reports the leg's failure where no
    start is genuine) nor in a leg of one obstacle (docs/cable.md#paused-starts)."""
    several = np.array([len(obs) > 1 for obs in cable.legs()], bool)
    patience = np.where(several[None, :], CANDIDATE_PATIENCE, NO_PAUSE) * np.ones((K, 1), np.int64)
    first = np.zeros((K, len(several)), bool)
    first[0] = True
    return jnp.where(jnp.asarray(first) & (r == 0), NO_PAUSE, jnp.asarray(patience, jnp.int32))


def _resume_rounds(cable: AbstractCableSpan, R: int) -> int:
    """The rounds that resume paused starts: one per round of starts where some leg has
    several obstacles (the only starts that pause), else none."""
    return R if any(len(obs) > 1 for obs in cable.legs()) else 0


def _round_carries(
    cable: AbstractCableSpan,
    scene: Scene,
    r,
    R: int,
    states: CurveState,
    frozen: Bool[Array, "K legs"],
    store: PackedCarries,
    settled_legs: Bool[Array, " legs"],
) -> tuple[SolverCarry, Bool[Array, "K legs"]]:
    """The carries round `r` starts from, and the slots it does not solve: in the first
    `R` rounds, round ``r``'s starts (`states`, not solving `frozen`), pausing as
    `_patience` says; in the next `R`, the starts of round ``r - R`` (`store`, packed)
    that paused, resumed on the legs not `settled_legs`."""
    K = frozen.shape[0]
    fresh = jax.vmap(lambda st, fr, pa: initial_carry(cable, scene, st, fr, pa))(states, frozen, _patience(cable, r, K))
    stored = store.map(lambda x: x[jnp.maximum(r - R, 0)]).unpack()
    resumed = jax.vmap(lambda c: resume(c, ~settled_legs))(stored)
    carries = jax.tree.map(lambda f, s: jnp.where(r < R, f, s), fresh, resumed)
    return carries, carries.done


def solve_candidates(cable: AbstractCableSpan, scene: Scene) -> SolverCarry:
    """The candidate cold start: the rounds of `_schedule` in turn, each leg frozen once it
    is `settled`, the starts of legs of several obstacles pausing (`_patience`), then
    the paused starts resumed where their leg is not settled, then per leg the best
    (`choose`). Where a leg has numerically shot curves, the rounds are a screen at
    `screen_accuracy` and the kept candidate is finished at the cable's accuracy
    (`_screen_and_finish`)."""
    states, unused, by_agreement = _schedule(cable, scene)
    numeric = _numeric(cable)
    numeric_legs = np.array([bool(numeric[list(obs)].any()) for obs in cable.legs()], bool)
    if numeric_legs.any():
        return _screen_and_finish(cable, scene, states, unused, by_agreement, numeric_legs)
    R, K, num_legs = unused.shape
    bound = lower_bounds(cable, scene)
    dtype = scene.origin.dtype

    if R == 1:  # no obstacles: one straight start per leg, nothing to pause
        state = jax.tree.map(lambda x: x[0], states)
        carries = jax.vmap(lambda st, fr: initial_carry(cable, scene, st, fr))(state, jnp.asarray(unused[0]))
        carries = run_solver_stack(cable, scene, carries)
        lengths, genuine = score_slots(cable, scene, carries, jnp.asarray(unused[0]))
        return choose(cable, carries, lengths, genuine)

    def solve_round(loop, r):
        scores, store = loop
        legs_settled = settled(cable, scores, by_agreement, bound=bound, agreement=r != _AFTER_OPENING)
        fr = legs_settled[None, :] | jnp.asarray(unused)[jnp.minimum(r, R - 1)]
        start, frozen = _round_carries(
            cable, scene, r, R, jax.tree.map(lambda x: x[jnp.minimum(r, R - 1)], states), fr, store, legs_settled
        )
        carries = run_solver_stack(cable, scene, start)
        lengths, genuine = score_slots(cable, scene, carries, frozen)
        # A round writes its slots' scores; a resume round only those it solved.
        at = jnp.where(r < R, r, r - R)
        old = jax.lax.dynamic_slice(scores, (at * K, 0), (K, num_legs))
        new = jnp.where(genuine, lengths, jnp.inf)
        scores = jax.lax.dynamic_update_slice(scores, jnp.where(frozen & (r >= R), old, new), (at * K, 0))
        store = store.map(lambda full, c: full.at[at].set(c), store.pack(carries, 1))
        return (scores, store), None

    scores = jnp.full((R * K, num_legs), jnp.inf, dtype)
    store = jax.vmap(jax.vmap(lambda st: initial_carry(cable, scene, st, jnp.ones(num_legs, bool))))(states)
    store = PackedCarries.of(store, 2)
    # One trace of the rounds (the loop batched from the start, as below).
    scores, store = batched_like((scores, store), (states, bound))
    (scores, store), _ = jax.lax.scan(solve_round, (scores, store), jnp.arange(R + _resume_rounds(cable, R)))
    slots = store.map(lambda x: x.reshape(-1, *x.shape[2:]))
    return _take_packed(cable, slots, _pick(cable, scores, jnp.isfinite(scores))).unpack()


def _screen_and_finish(
    cable: AbstractCableSpan,
    scene: Scene,
    states: CurveState,
    unused: np.ndarray,
    by_agreement: np.ndarray,
    numeric_legs: np.ndarray,
) -> SolverCarry:
    """The rounds of `_schedule` with every curve shot at `screen_accuracy` (the screen),
    the starts of legs of several obstacles pausing (`_patience`) and resumed where
    their leg is not settled after them (docs/cable.md#paused-starts), the best candidate of each
    leg kept as they come (`choose` over the best so far and the round, ties to the
    earlier), then one more round, the finish: each leg whose kept candidate is genuine
    and has numerically shot curves in contact solved again from it at the cable's
    accuracy, those curves marked `STALE` so that the solver's first iteration reshoots
    them before evaluating them (docs/cable.md#screen-and-finish). All rounds run in
    one `lax.scan`, so the solver loop and its geodesic integrators are traced and
    compiled once."""
    R, K, num_legs = unused.shape
    dtype = scene.origin.dtype
    full = jnp.asarray(cable.settings.curve_segment_accuracy, dtype)
    coarse = jnp.asarray(screen_accuracy(cable), dtype)
    numeric = _numeric(cable)
    leg_of = np.array(cable.leg_of_obstacle(), int)
    bound = lower_bounds(cable, scene)
    # The finish solves slot 0 of each leg with numerically shot curves; the rest idle.
    finish_unused = np.ones((K, num_legs), bool)
    finish_unused[0] = ~numeric_legs
    FINISH = R + _resume_rounds(cable, R)

    def solve_round(loop, r):
        scores, store, best_packed, best_length, best_genuine = loop
        best = best_packed.unpack()
        finishing = r == FINISH
        c = _with_accuracy(cable, jnp.where(finishing, full, coarse))
        legs_settled = settled(c, scores, by_agreement, coarse, bound, agreement=r != _AFTER_OPENING)
        state = jax.tree.map(lambda x: x[jnp.minimum(r, R - 1)], states)
        screened = legs_settled[None, :] | jnp.asarray(unused)[jnp.minimum(r, R - 1)]
        start, frozen = _round_carries(c, scene, r, R, state, screened, store, legs_settled)
        # A leg whose kept candidate is no genuine path is returned as it is, with its
        # failure (as without the screen); only genuine ones are finished, and only
        # where a numerically shot curve is in contact (the screen's accuracy touched
        # nothing else: a straight leg is exact as it is).
        shot = jnp.asarray(numeric) & (best.state.status == IN_CONTACT)
        curved = jnp.zeros(num_legs, bool).at[jnp.asarray(leg_of)].max(shot)
        finish = jnp.asarray(numeric_legs) & best_genuine & curved
        # The kept candidate's numerically shot curves in contact are marked for the
        # solver to reshoot at full accuracy before it evaluates them.
        stale = finish[leg_of] & shot
        kept = dataclasses.replace(best.state, status=jnp.where(stale, STALE, best.state.status))
        finish_frozen = jnp.asarray(finish_unused) | ~finish[None, :]
        finish_state = jax.tree.map(lambda x, k: x.at[0].set(k), state, kept)
        finishing_start = jax.vmap(lambda st, fr: initial_carry(c, scene, st, fr))(finish_state, finish_frozen)
        start = jax.tree.map(lambda f, s: jnp.where(finishing, f, s), finishing_start, start)
        frozen = jnp.where(finishing, finish_frozen, frozen)
        carries = run_solver_stack(c, scene, start)
        lengths, genuine = score_slots(c, scene, carries, frozen)
        # The finish replaces the kept candidate of the legs it solved, whatever its
        # outcome; their corrections are those of the screen and the finish together
        # (added to every slot of the finish round: only slot 0 is kept).
        extra = jnp.where(finishing & finish, best.iterations, 0)
        carries = jax.vmap(lambda c: dataclasses.replace(c, iterations=c.iterations + extra))(carries)
        # Everything below moves whole carries; it does so on their packed arrays, a few
        # per carry instead of one per leaf (docs/performance.md#packed-candidate-bookkeeping).
        packed = store.pack(carries, 1)
        # A round writes its slots' scores and carries; a resume round only those it solved.
        at = jnp.where(r < R, r, jnp.minimum(r - R, R - 1))
        old = jax.lax.dynamic_slice(scores, (at * K, 0), (K, num_legs))
        new = jnp.where(frozen & (r >= R), old, jnp.where(genuine, lengths, jnp.inf))
        scores = jnp.where(finishing, scores, jax.lax.dynamic_update_slice(scores, new, (at * K, 0)))
        store = store.map(lambda s, x: jnp.where(finishing, s, s.at[at].set(x)), packed)
        # The best so far first, so that it wins ties with this round; before the first
        # round that is the first slot's candidate, kept where none is genuine (with its
        # failure, as `choose` does; it never pauses).
        first = r == 0
        prev = best_packed.map(lambda b, x: jnp.where(first, x[0], b), packed)
        pool = prev.map(lambda b, x: jnp.concatenate([b[None], x]), packed)
        pool_lengths = jnp.concatenate([jnp.where(first, jnp.inf, best_length)[None], lengths])
        pool_genuine = jnp.concatenate([(best_genuine & ~first)[None], genuine])
        pick = _pick(c, pool_lengths, pool_genuine, coarse)
        chosen = _take_packed(cable, pool, pick)
        legs = jnp.arange(num_legs)
        # The finish replaces the kept candidate of the legs it solved (slot 0 of the
        # round, pool slot 1), the others keep theirs (pool slot 0).
        finished = _take_packed(cable, pool, jnp.where(finish, 1, 0))
        new_best = finished.map(lambda f, s: jnp.where(finishing, f, s), chosen)
        new_length = jnp.where(finishing, best_length, pool_lengths[pick, legs])
        new_genuine = jnp.where(finishing, best_genuine, pool_genuine[pick, legs])
        return (scores, store, new_best, new_length, new_genuine), None

    # Placeholders of the right shapes; the first round replaces them.
    store = jax.vmap(jax.vmap(lambda st: initial_carry(cable, scene, st, jnp.ones(num_legs, bool))))(states)
    store = PackedCarries.of(store, 2)
    best0 = store.map(lambda x: x[0, 0])
    loop = (
        jnp.full((R * K, num_legs), jnp.inf, dtype),
        store,
        best0,
        jnp.full(num_legs, jnp.inf, dtype),
        jnp.zeros(num_legs, bool),
    )
    # The rounds batch every carry under `vmap`; batched from the start, the scan traces
    # its body once instead of twice (docs/performance.md#loops-batched-in-one-pass).
    loop = batched_like(loop, (states, bound))
    (_, _, best, _, _), _ = jax.lax.scan(solve_round, loop, jnp.arange(FINISH + 1))
    return best.unpack()


def _pick(
    cable: AbstractCableSpan, lengths: Float[Array, "K legs"], genuine: Bool[Array, "K legs"], accuracy=0.0
) -> Int[Array, " legs"]:
    """Per leg, the first slot as short as the shortest genuine candidate within what the
    tolerance (and a screen's `accuracy`) leaves undetermined; slot 0 when none is genuine."""
    # Candidates that end on one path differ in length by rounding only; taking the exact
    # minimum among them would let the last bits (which differ between a batched and an
    # unbatched program) decide which is returned. The first slot within the slack of
    # the shortest is kept instead, so that the choice is deterministic and sweeps do not
    # hop between equal paths.
    tied = _on_shortest(cable, jnp.where(genuine, lengths, jnp.inf), accuracy)
    return jnp.argmax(tied, axis=0)  # the first True; 0 when none is


class _Layout(NamedTuple):
    """Where each leaf of a `SolverCarry` lies in its packed arrays (static): per
    obstacle, the leaves of its geodesic then `status`, `tracking`, `inside` and
    `geodesic_failed`; per leg, `iterations`, `done`, `smoothness`, `patience` and
    `paused`. Each entry is (array, first column, columns, shape of one item)."""

    geodesic: Any  # the treedef of one obstacle's geodesic (None without obstacles)
    per_obstacle: tuple[tuple[int, int, int, tuple[int, ...]], ...]
    per_leg: tuple[tuple[int, int, int, tuple[int, ...]], ...]
    obstacle_dtypes: tuple[str, ...]
    leg_dtypes: tuple[str, ...]


def _obstacle_leaves(carry: SolverCarry, lead: int) -> list:
    """The per-obstacle leaves of `carry` (`lead` leading slot axes), obstacle axis after
    the slot axes; every geodesic has the same structure, so each of its leaves is one
    stack over the obstacles."""
    geodesics = [jax.tree.leaves(g) for g in carry.state.geodesics]
    stacked = [jnp.stack(leaf, axis=lead) for leaf in zip(*geodesics)]
    state = carry.state
    return [*stacked, state.status, state.tracking, carry.inside, carry.geodesic_failed]


def _leg_leaves(carry: SolverCarry) -> list:
    return [carry.iterations, carry.done, carry.smoothness, carry.patience, carry.paused]


def _columns(leaves: list, lead: int) -> tuple[tuple, tuple[str, ...]]:
    """Layout entries (array, first column, columns, item shape) of leaves of shape
    ``(*slots, count, *item)``, one array per dtype in order of first appearance."""
    dtypes: list[str] = []
    widths: list[int] = []
    entries = []
    for leaf in leaves:
        item = tuple(leaf.shape[lead + 1 :])
        dtype = str(leaf.dtype)
        if dtype not in dtypes:
            dtypes.append(dtype)
            widths.append(0)
        g = dtypes.index(dtype)
        size = int(np.prod(item, dtype=int))
        entries.append((g, widths[g], size, item))
        widths[g] += size
    return tuple(entries), tuple(dtypes)


def _pack(leaves: list, entries: tuple, num_arrays: int, lead: int) -> tuple[Array, ...]:
    groups: list[list[Array]] = [[] for _ in range(num_arrays)]
    for leaf, (g, _, size, _) in zip(leaves, entries):
        groups[g].append(leaf.reshape(*leaf.shape[: lead + 1], size))
    return tuple(jnp.concatenate(group, axis=-1) for group in groups)


class PackedCarries(eqx.Module):
    """Solver carries (any leading slot axes) as a few arrays: per dtype, one array
    ``(*slots, n, columns)`` of everything per obstacle and one ``(*slots, legs,
    columns)`` of everything per leg. Moving whole carries around (selecting, storing,
    taking a slot per leg) then costs one operation per array instead of one per leaf
    (docs/performance.md#packed-candidate-bookkeeping)."""

    per_obstacle: tuple[Array, ...]
    per_leg: tuple[Array, ...]
    layout: _Layout = eqx.field(static=True)

    @staticmethod
    def of(carries: SolverCarry, lead: int) -> PackedCarries:
        """`carries` with `lead` leading slot axes, packed."""
        geodesics = carries.state.geodesics
        treedef = jax.tree.structure(geodesics[0]) if geodesics else None
        if any(jax.tree.structure(g) != treedef for g in geodesics):
            raise AssertionError("every geodesic of a carry has one structure")
        obstacle_leaves, leg_leaves = _obstacle_leaves(carries, lead), _leg_leaves(carries)
        per_obstacle, obstacle_dtypes = _columns(obstacle_leaves, lead)
        per_leg, leg_dtypes = _columns(leg_leaves, lead)
        layout = _Layout(treedef, per_obstacle, per_leg, obstacle_dtypes, leg_dtypes)
        return PackedCarries(
            _pack(obstacle_leaves, per_obstacle, len(obstacle_dtypes), lead),
            _pack(leg_leaves, per_leg, len(leg_dtypes), lead),
            layout,
        )

    def pack(self, carries: SolverCarry, lead: int) -> PackedCarries:
        """`carries` (`lead` leading slot axes) packed in this layout."""
        packed = PackedCarries.of(carries, lead)
        if packed.layout != self.layout:
            raise AssertionError("carries of another layout")
        return packed

    def map(self, fn, *others: PackedCarries) -> PackedCarries:
        """`fn` applied array by array (to this and `others`, of the same layout)."""
        per_obstacle = tuple(fn(*xs) for xs in zip(self.per_obstacle, *(o.per_obstacle for o in others)))
        per_leg = tuple(fn(*xs) for xs in zip(self.per_leg, *(o.per_leg for o in others)))
        return PackedCarries(per_obstacle, per_leg, self.layout)

    def unpack(self) -> SolverCarry:
        """The carries (with the arrays' leading slot axes)."""
        if self.per_leg[0].ndim > 2:  # a carry is built per slot (its annotations are a slot's)
            return jax.vmap(PackedCarries.unpack)(self)

        def leaves(arrays, entries):
            out = []
            for g, start, size, item in entries:
                x = arrays[g][..., start : start + size]
                out.append(x.reshape(*x.shape[:-1], *item))
            return out

        obstacle = leaves(self.per_obstacle, self.layout.per_obstacle)
        iterations, done, smoothness, patience, paused = leaves(self.per_leg, self.layout.per_leg)
        num_fields = len(obstacle) - 4
        status, tracking, inside, failed = obstacle[num_fields:]
        n = status.shape[-1]
        fields = [(x, len(item)) for x, (_, _, _, item) in zip(obstacle[:num_fields], self.layout.per_obstacle)]
        geodesics = tuple(
            jax.tree.unflatten(self.layout.geodesic, [x[(..., i) + (slice(None),) * rank] for x, rank in fields])
            for i in range(n)
        )
        state = CurveState(geodesics, status, tracking)
        return SolverCarry(state, iterations, done, smoothness, inside, failed, patience, paused)


def _take_packed(cable: AbstractCableSpan, carries: PackedCarries, pick: Int[Array, " legs"]) -> PackedCarries:
    """Per leg, slot ``pick[leg]`` of a stack of packed carries (leading axis: slots)."""
    num_legs, n = len(cable.legs()), cable.num_obstacles
    leg_of = jnp.array(cable.leg_of_obstacle(), int)
    per_obstacle = tuple(x[pick[leg_of], jnp.arange(n)] for x in carries.per_obstacle)
    per_leg = tuple(x[pick, jnp.arange(num_legs)] for x in carries.per_leg)
    return PackedCarries(per_obstacle, per_leg, carries.layout)


def _take(cable: AbstractCableSpan, carries: SolverCarry, pick: Int[Array, " legs"]) -> SolverCarry:
    """Per leg, slot ``pick[leg]`` of a stack of carries (leading axis: slots)."""
    return _take_packed(cable, PackedCarries.of(carries, 1), pick).unpack()


def choose(
    cable: AbstractCableSpan, carries: SolverCarry, lengths: Float[Array, "K legs"], genuine: Bool[Array, "K legs"]
) -> SolverCarry:
    """Per leg, the shortest genuine candidate: the first slot as short as the shortest
    within what the tolerance leaves undetermined (slot 0 when none is genuine)."""
    return _take(cable, carries, _pick(cable, lengths, genuine))


def _where_legs(
    cable: AbstractCableSpan, take: Bool[Array, " legs"], new: SolverCarry, old: SolverCarry
) -> SolverCarry:
    """Per leg, `new` where `take` holds, else `old` (per-obstacle fields by their leg)."""
    on = take[jnp.asarray(cable.leg_of_obstacle(), int)]
    state = CurveState(
        tuple(select(on[i], g, k) for i, (g, k) in enumerate(zip(new.state.geodesics, old.state.geodesics))),
        jnp.where(on, new.state.status, old.state.status),
        jnp.where(on[:, None], new.state.tracking, old.state.tracking),
    )
    return SolverCarry(
        state,
        jnp.where(take, new.iterations, old.iterations),
        jnp.where(take, new.done, old.done),
        jnp.where(take, new.smoothness, old.smoothness),
        jnp.where(on, new.inside, old.inside),
        jnp.where(on, new.geodesic_failed, old.geodesic_failed),
        jnp.where(take, new.patience, old.patience),
        jnp.where(take, new.paused, old.paused),
    )


#: A warm start's continuation of a leg of several obstacles pauses after this many
#: corrections; the leg then restarts from lifted, and the continuation is resumed, from
#: where it paused, only where the restart is no genuine path either
#: (docs/cable.md#warm-start-fallback).
WARM_PATIENCE = CANDIDATE_PATIENCE


def solve_warm(
    cable: AbstractCableSpan, scene: Scene, state: CurveState
) -> tuple[SolverCarry, tuple[Bool[Array, " n"], ...] | None]:
    """A warm-started solve (docs/cable.md#warm-start-fallback): the previous path
    continued (`closed_form_warm_state`, then the solver; on a leg of several obstacles
    pausing after `WARM_PATIENCE` corrections), and every leg where that ends on no
    genuine path, or paused, solved again from the leg lifted, as the cold start opens;
    such a leg returns the restart's path where that is genuine, with the corrections of
    both rounds. Where it is not, a paused continuation is resumed from where it paused
    (its path and corrections are those of an unpaused continuation), and the
    continuation is returned with its failure. The three rounds run in one `lax.scan`, so
    the solver loop is compiled once; a leg a round does not solve is frozen, which costs
    its lanes no iteration.

    Returns the carry and, where the rounds ran, the `path_faults` of the path returned
    (found on the way; None where no leg can restart)."""
    state = closed_form_warm_state(cable, scene, state)
    legs = cable.legs()
    lone = set(lone_closed_form(cable))
    # A lone sphere or cylinder is put on its closed-form path: nothing to restart.
    retry = np.array([bool(obs) and not (len(obs) == 1 and obs[0] in lone) for obs in legs], bool)
    if not retry.any():
        return run_solver(cable, scene, state), None
    leg_of = jnp.asarray(cable.leg_of_obstacle(), int)
    n, num_legs, dtype = cable.num_obstacles, len(legs), scene.origin.dtype
    # Every obstacle lifted, tracking nothing (the cold start's lifted start): a lifted
    # curve's geodesic is never read, and one that touches down is shot afresh.
    lifted = CurveState(state.geodesics, jnp.full_like(state.status, LIFTED), jnp.zeros_like(state.tracking))
    # Rounds: the continuation, the restart, the continuation resumed (its start state
    # unused: it goes on from the carry it paused with).
    states = jax.tree.map(lambda w, s: jnp.stack([w, s, w]), state, lifted)
    unused = np.stack([np.zeros(len(legs), bool), ~retry, ~retry])
    several = np.array([len(obs) > 1 for obs in legs], bool)
    patience = np.full((3, num_legs), NO_PAUSE, np.int64)
    patience[0] = np.where(retry & several, WARM_PATIENCE, NO_PAUSE)

    def solve_round(loop, inputs):
        r, start, unused, patience = inputs
        legs_on, kept, kept_faults = loop
        fresh = initial_carry(cable, scene, start, unused | ~legs_on, patience)
        carry = jax.tree.map(lambda a, b: jnp.where(r == 2, a, b), resume(kept, legs_on), fresh)
        carry = jax.tree.map(lambda x: x[0], run_solver_stack(cable, scene, jax.tree.map(lambda x: x[None], carry)))
        # The later rounds' check runs only where some lane of the batch solves a leg:
        # `any_lane` is never batched, so under `vmap` this stays a branch. (Their solve
        # needs no branch: a loop whose lanes are all frozen runs no iteration.)
        _, genuine, faults = jax.lax.cond(
            (r == 0) | any_lane(jnp.any(legs_on)),
            lambda: leg_faults(cable, scene, carry),
            lambda: (jnp.zeros(num_legs, dtype), jnp.zeros(num_legs, bool), (jnp.zeros(n, bool),) * 4),
        )
        genuine = genuine & ~carry.paused  # a paused leg is not solved yet
        # The continuation; on the legs that restart, the restart's path where it is
        # genuine; on the legs resumed, the resumed continuation, whatever its outcome.
        take = (r == 0) | (legs_on & (genuine | (r == 2)))
        carry = dataclasses.replace(carry, iterations=carry.iterations + jnp.where(r == 1, kept.iterations, 0))
        on = take[leg_of]
        kept_faults = tuple(jnp.where(on, f, k) for f, k in zip(faults, kept_faults))
        kept = _where_legs(cable, take, carry, kept)
        # Round 1 solves the legs the continuation left on no genuine path (or paused);
        # round 2 those whose continuation paused and whose restart is not genuine.
        legs_on = jnp.where(r == 0, ~genuine & jnp.asarray(retry), kept.paused)
        return legs_on, kept, kept_faults

    # Placeholders of the carry's shapes; the first round replaces them.
    kept = initial_carry(cable, scene, state, jnp.ones(num_legs, bool))
    loop = batched_like((jnp.ones(num_legs, bool), kept, (jnp.zeros(n, bool),) * 4), (states, scene))
    rounds = (jnp.arange(3), states, jnp.asarray(unused), jnp.asarray(patience, jnp.int32))
    (_, kept, faults), _ = jax.lax.scan(lambda loop, inputs: (solve_round(loop, inputs), None), loop, rounds)
    return kept, faults
