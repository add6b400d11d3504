"""Cold starts that need no lucky hint: a few starts solved in parallel, the shortest
genuine path kept per leg (docs/cable.md#cold-start-candidates).

A cold solve from Simbody's contact hints ends on whichever stationary path is nearest
the hints, which for an obstacle on a moving body can be the long way round, a path that
clings to an obstacle it no longer needs, or no path at all. With
``cold_start="candidates"`` (the default) the solver instead runs, under `vmap`, a few
starts per leg in slots shared by all legs (legs are independent, so slot ``k`` holds
the ``k``-th start of every leg; a leg with fewer starts repeats its first):

- a leg with one obstacle: the obstacle lifted (the cable touches down where its straight
  line crosses, or stays straight) and a start on the near side of the straight line
  (the line's point nearest the surface origin, pushed out to the surface); only where
  neither is genuine, a fallback round solves the hint and the far side (the mirror
  image of the near start);
- a leg with ``m >= 2`` obstacles: the hints as given (Simbody's start), every obstacle
  lifted, and for every obstacle a start on each side of the straight line (that
  obstacle hinted there, the others lifted).

So a cable whose legs hold one obstacle each costs two solves, plus two more only in a
batch where some lane needs the fallback (a `while_loop` whose lanes are all finished
runs no iteration). Which starts are needed was measured (docs/cable.md#cold-start-
candidates). For each leg the shortest candidate whose leg is a genuine taut solution
(`_faults.leg_scores`) is kept; the first slot wins ties (within the length the
smoothness tolerance leaves undetermined) and is returned with its failure when no
candidate is genuine, so the choice is deterministic. Warm starts bypass all of this and
stay exact.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from .._misc import safe_normalize
from ._definition import AbstractCableSpan
from ._faults import leg_scores
from ._solver import SolverCarry, run_solver
from ._state import CurveState, Scene, initial_state


def _side_hints(cable: AbstractCableSpan, scene: Scene, i: int) -> tuple[Array, Array]:
    """Two points in S on either side of the straight line between the ends of obstacle
    ``i``'s leg: towards the line from the surface origin (the near side), and away from
    it (the far side)."""
    leg = cable.leg_of_obstacle()[i]
    X_SG = scene.X_GS[i].inverse()
    a, b = X_SG.apply(scene.leg_start[leg]), X_SG.apply(scene.leg_end[leg])
    d = b - a
    t = jnp.clip(-jnp.dot(a, d) / jnp.where(jnp.dot(d, d) > 0, jnp.dot(d, d), 1.0), 0.0, 1.0)
    nearest = a + t * d
    # Where the line passes through the origin, any direction across it will do.
    across = jnp.cross(d, jnp.array([0.0, 0.0, 1.0], d.dtype))
    across = jnp.where(jnp.dot(across, across) > 0, across, jnp.array([1.0, 0.0, 0.0], d.dtype))
    direction = safe_normalize(nearest, safe_normalize(across, jnp.array([1.0, 0.0, 0.0], d.dtype)))
    reach = jnp.linalg.norm(nearest) + cable.obstacles[i].surface.extent().astype(d.dtype)
    reach = jnp.where(jnp.isfinite(reach), reach, jnp.linalg.norm(nearest) + 1.0)
    return direction * reach, -direction * reach


def _leg_starts(cable: AbstractCableSpan, scene: Scene, leg: int) -> tuple[list[dict], list[dict]]:
    """The first-round and fallback starts of one leg (obstacle index -> hint in S, None
    for lifted); the first start of the first round is the one kept on ties."""
    obstacles = cable.legs()[leg]
    if len(obstacles) == 1:
        (i,) = obstacles
        near, far = _side_hints(cable, scene, i)
        return [{i: None}, {i: near}], [{i: cable.obstacles[i].contact_hint}, {i: far}]
    if not obstacles:
        return [{}], []
    starts: list[dict[int, Array | None]] = [{i: cable.obstacles[i].contact_hint for i in obstacles}]
    starts.append(dict.fromkeys(obstacles))
    for i in obstacles:
        for side in _side_hints(cable, scene, i):
            starts.append({j: side if j == i else None for j in obstacles})
    return starts, []


def _stack_slots(cable: AbstractCableSpan, scene: Scene, per_leg: list[list[dict]]) -> CurveState:
    """Slot ``k`` holds the ``k``-th start of every leg (a leg with fewer repeats its first)."""
    slots = []
    for k in range(max(len(starts) for starts in per_leg)):
        hints: list[Array | None] = [None] * cable.num_obstacles
        for starts in per_leg:
            for i, hint in (starts[k] if k < len(starts) else starts[0]).items():
                hints[i] = hint
        slots.append(initial_state(cable, scene, hints))
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *slots)


def solve_candidates(cable: AbstractCableSpan, scene: Scene) -> SolverCarry:
    """The candidate cold start: the first round in parallel, the fallback round only on
    legs the first left without a genuine path, then per leg the best (`choose`)."""
    starts = [_leg_starts(cable, scene, leg) for leg in range(len(cable.legs()))]
    first = _stack_slots(cable, scene, [s for s, _ in starts])
    fallbacks = [bool(f) for _, f in starts]
    has_fallback = jnp.array(fallbacks)
    score = jax.vmap(lambda c: leg_scores(cable, scene, c))

    def solve_round(frozen, states):
        carries = jax.vmap(run_solver, in_axes=(None, None, 0, None))(cable, scene, states, frozen)
        lengths, genuine = score(carries)
        genuine = genuine & ~frozen
        # Legs with a genuine path so far, and legs without fallback starts, stay frozen
        # in the next round: when no lane of a batch needs it, its loop runs no iteration.
        return frozen | jnp.any(genuine, axis=0) | ~has_fallback, (carries, lengths, genuine)

    frozen = jnp.zeros(len(starts), bool)
    if not any(fallbacks):
        _, (carries, lengths, genuine) = solve_round(frozen, first)
    else:
        # Both rounds in one `scan`, so the solver loop is compiled once.
        second = _stack_slots(cable, scene, [f or s for s, f in starts])
        rounds = jax.tree.map(lambda a, b: jnp.stack([a, b]), first, second)
        _, per_round = jax.lax.scan(solve_round, frozen, rounds)
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
