"""Cold starts that need no lucky hint: a few starts per leg, the shortest genuine path
kept (docs/cable.md#cold-start-candidates).

A cold solve from Simbody's contact hints ends on whichever stationary path is nearest
the hints, which for an obstacle on a moving body can be the long way round, a path that
clings to an obstacle it no longer needs, or no path at all. With
``cold_start="candidates"`` (the default) each leg has a list of *first* starts, all
solved, and a list of *fallback* starts, solved only while the leg has no genuine path
yet:

- one sphere or cylinder: first its closed-form shortest wrap (`EXACT`, on the wrap
  side if it has one); fallback, the obstacle lifted (where the line only grazes it);
- one obstacle of any other kind (ellipsoid, torus, implicit, height map): lifted, the
  near side of the straight line (its point nearest the surface origin, pushed out beyond
  the surface), the contact hint, the far side, both quarter turns between them, and a
  start on the wrap side if it has one; no fallback;
- ``m >= 2`` obstacles: the hints as given (Simbody's start), every obstacle lifted, and
  for every obstacle four starts around the straight line (that obstacle hinted there,
  the others lifted), plus starts on the wrap sides of sided obstacles; no fallback.

Starts run in rounds of ``K`` slots (``K`` the longest first list), batched within a
round (`run_solver_stack`: under an outer `vmap` the slots of the whole batch are
compacted together, docs/performance.md#lane-compaction) and one `lax.scan` over rounds
(the solver loop is compiled once). Legs are
independent, so slot ``k`` of a round holds the ``k``-th start of every leg; a slot a leg
does not use, and every slot of a leg that already has a genuine path, is frozen, and a
`while_loop` whose lanes are all frozen runs no iteration: a batch where no lane needs a
fallback pays one solve per sphere or cylinder leg. Which starts are needed, and in which
order, was measured (docs/cable.md#cold-start-candidates). For each leg the shortest
candidate whose leg is a genuine taut solution (`_faults.leg_scores`) is kept; the first
slot wins ties (within the length the smoothness tolerance leaves undetermined) and is
returned with its failure when no candidate is genuine, so the choice is deterministic.
Warm starts bypass all of this and stay exact.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, Int

from .._misc import safe_normalize
from .._surfaces import Cylinder, Sphere
from ._definition import AbstractCableSpan
from ._faults import leg_scores
from ._solver import SolverCarry, run_solver_stack
from ._state import CurveState, Scene, initial_states, lifted_placeholder


def side_hints(cable: AbstractCableSpan, scene: Scene, i: int, num: int = 2) -> list[Array]:
    """`num` points in S around the straight line between the ends of obstacle ``i``'s leg,
    at equal angles about the line: first the near side (towards the line from the surface
    origin, the line's nearest point pushed out beyond the surface), then turning about the
    line; with ``num = 2`` the near and far sides, with 4 also the two quarter turns."""
    leg = cable.leg_of_obstacle()[i]
    X_SG = scene.X_GS[i].inverse()
    a, b = X_SG.apply(scene.leg_start[leg]), X_SG.apply(scene.leg_end[leg])
    d = b - a
    t = jnp.clip(-jnp.dot(a, d) / jnp.where(jnp.dot(d, d) > 0, jnp.dot(d, d), 1.0), 0.0, 1.0)
    nearest = a + t * d
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
    leg = cable.leg_of_obstacle()[i]
    X_SG = scene.X_GS[i].inverse()
    a, b = X_SG.apply(scene.leg_start[leg]), X_SG.apply(scene.leg_end[leg])
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


def _leg_starts(cable: AbstractCableSpan, scene: Scene, leg: int) -> tuple[list[Start], list[Start]]:
    """The first starts (all solved) and the fallback starts (in order, only while none has
    given a genuine path) of one leg; the first start is the one kept on ties."""
    obstacles = cable.legs()[leg]
    if not obstacles:
        return [{}], []
    if len(obstacles) == 1:
        (i,) = obstacles
        if isinstance(cable.obstacles[i].surface, _CLOSED_FORM):
            # The exact start is the shortest path; lifted is the fallback where it is not
            # genuine because the line only grazes the surface (docs/cable.md#cold-start-candidates).
            return [{i: EXACT}], [{i: None}]
        near, quarter, far, three_quarter = side_hints(cable, scene, i, 4)
        hint = cable.obstacles[i].contact_hint
        starts = [{i: None}, {i: near}, {i: hint}, {i: far}, {i: quarter}, {i: three_quarter}]
        if cable.obstacles[i].side is not None:
            starts.append({i: wrap_side_hint(cable, scene, i)})
        return starts, []
    starts: list[Start] = [{i: cable.obstacles[i].contact_hint for i in obstacles}]
    starts.append(dict.fromkeys(obstacles))
    for i in obstacles:
        for side in side_hints(cable, scene, i, 4):
            starts.append({j: side if j == i else None for j in obstacles})
    sided = [i for i in obstacles if cable.obstacles[i].side is not None]
    if sided:
        # Every sided obstacle on its side at once (a line on the wrong side of one of
        # them only touches down when started there), and each alone.
        starts.append({i: wrap_side_hint(cable, scene, i) if i in sided else None for i in obstacles})
        if len(sided) > 1:
            for i in sided:
                starts.append({j: wrap_side_hint(cable, scene, j) if j == i else None for j in obstacles})
    return starts, []


def _schedule(cable: AbstractCableSpan, scene: Scene) -> tuple[CurveState, np.ndarray]:
    """Every start laid out in rounds of ``K`` slots: the states, shape ``(R, K, ...)``, and
    the static mask ``(R, K, legs)`` of slots a leg does not use."""
    plans = [_leg_starts(cable, scene, leg) for leg in range(len(cable.legs()))]
    K = max(len(first) for first, _ in plans)
    per_leg = [[first] + [fallback[j : j + K] for j in range(0, len(fallback), K)] for first, fallback in plans]
    R = max(len(rounds) for rounds in per_leg)
    unused = np.ones((R, K, len(plans)), bool)
    n = cable.num_obstacles
    hints: list[list[Array]] = [[] for _ in range(n)]  # per obstacle, one hint per slot
    lifted = np.zeros((R * K, n), bool)
    exact = np.zeros((R * K, n), bool)
    for r in range(R):
        for k in range(K):
            for leg, rounds in enumerate(per_leg):
                used = r < len(rounds) and k < len(rounds[r])
                unused[r, k, leg] = not used
                # An unused slot still needs some state; it is frozen, never solved.
                for i, hint in (rounds[r][k] if used else plans[leg][0][0]).items():
                    exact[r * K + k, i] = is_exact = isinstance(hint, str)
                    lifted[r * K + k, i] = hint is None
                    # An exact start's hint only picks a sphere wrap's plane where any will do.
                    hints[i].append(lifted_placeholder(cable.obstacles[i].contact_hint if is_exact else hint))
    states = initial_states(cable, scene, [jnp.stack(h) for h in hints], lifted, exact)
    stacked = jax.tree.map(lambda x: x.reshape(R, K, *x.shape[1:]), states)
    return stacked, unused


def solve_candidates(cable: AbstractCableSpan, scene: Scene) -> SolverCarry:
    """The candidate cold start: the rounds of `_schedule` in turn, each leg frozen once it
    has a genuine path, then per leg the best (`choose`)."""
    states, unused = _schedule(cable, scene)
    score = jax.vmap(lambda c: leg_scores(cable, scene, c))

    def solve_round(found, inputs):
        states, unused = inputs
        frozen = found[None, :] | unused
        carries = run_solver_stack(cable, scene, states, frozen)
        lengths, genuine = score(carries)
        genuine = genuine & ~frozen
        return found | jnp.any(genuine, axis=0), (carries, lengths, genuine)

    found = jnp.zeros(unused.shape[-1], bool)
    if unused.shape[0] == 1:
        _, (carries, lengths, genuine) = solve_round(found, jax.tree.map(lambda x: x[0], (states, unused)))
    else:
        _, per_round = jax.lax.scan(solve_round, found, (states, jnp.asarray(unused)))
        carries, lengths, genuine = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), per_round)
    return choose(cable, carries, lengths, genuine)


def choose(
    cable: AbstractCableSpan, carries: SolverCarry, lengths: Float[Array, "K legs"], genuine: Bool[Array, "K legs"]
) -> SolverCarry:
    """Per leg, the shortest genuine candidate (slot 0's on ties or when none is)."""
    num_legs, n = len(cable.legs()), cable.num_obstacles
    leg_of = jnp.array(cable.leg_of_obstacle(), int)
    score = jnp.where(genuine, lengths, jnp.inf)
    best = jnp.argmin(score, axis=0)  # first minimum: deterministic
    # Keep slot 0's path when it is as short as the best within what the tolerance leaves
    # undetermined, so that sweeps do not hop between equal paths.
    slack = cable.settings.smoothness_tolerance**2 * jnp.abs(score[0])
    keep_first = genuine[0] & (score[0] <= jnp.min(score, axis=0) + slack)
    pick: Int[Array, " legs"] = jnp.where(keep_first | ~jnp.any(genuine, axis=0), 0, best)

    def per_leg(x: Array) -> Array:  # (K, legs, ...) -> (legs, ...)
        return x[pick, jnp.arange(num_legs)]

    def per_obstacle(x: Array) -> Array:  # (K, n, ...) -> (n, ...)
        return x[pick[leg_of], jnp.arange(n)]

    state = carries.state
    geodesics = tuple(jax.tree.map(lambda x, i=i: x[pick[leg_of[i]]], g) for i, g in enumerate(state.geodesics))
    chosen = CurveState(geodesics, per_obstacle(state.status), per_obstacle(state.tracking))
    return SolverCarry(
        chosen,
        per_leg(carries.iterations),
        per_leg(carries.done),
        per_leg(carries.smoothness),
        per_obstacle(carries.inside),
        per_obstacle(carries.geodesic_failed),
    )
