"""Cold starts that need no lucky hint: several starts solved in parallel, the shortest
genuine path kept (docs/cable.md#cold-start-candidates).

A cold solve from Simbody's contact hints ends on whichever stationary path is nearest
the hints, which for an obstacle on a moving body can be the long way round, a path that
clings to an obstacle it no longer needs, or no path at all. With
``cold_start="candidates"`` (the default) the solver instead runs, under one `vmap`,

- the hints as given (Simbody's start, candidate 0),
- every obstacle lifted (the cable touches down where its straight line crosses), and
- for every obstacle, a start on each side of the straight line between its leg's end
  points (that obstacle hinted there, the others lifted),

that is ``2 + 2 n`` candidates for ``n`` obstacles, and keeps for each leg the shortest
candidate whose leg is a genuine taut solution (`_faults.leg_faults`). The hints'
candidate wins ties (within the length the smoothness tolerance leaves undetermined), and
when no candidate is genuine the hints' one is returned with its failure, so the choice
is deterministic. Warm starts bypass all of this and stay exact.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, Int

from .._misc import safe_normalize
from ._definition import AbstractCableSpan
from ._faults import leg_faults
from ._geometry import evaluate
from ._solver import SolverCarry
from ._state import CurveState, Scene, initial_state


def _side_hints(cable: AbstractCableSpan, scene: Scene, i: int) -> tuple[Array, Array]:
    """Two points in S on either side of the straight line between the ends of obstacle
    ``i``'s leg: towards the line from the surface origin, and away from it."""
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


def num_candidates(cable: AbstractCableSpan) -> int:
    return 2 + 2 * cable.num_obstacles if cable.num_obstacles else 1


def candidate_states(cable: AbstractCableSpan, scene: Scene) -> CurveState:
    """The initial states of every candidate, stacked along a new leading axis."""
    n = cable.num_obstacles
    hints = [o.contact_hint for o in cable.obstacles]
    starts = [hints]
    if n:
        starts.append([None] * n)
        for i in range(n):
            for side in _side_hints(cable, scene, i):
                starts.append([side if j == i else None for j in range(n)])
    states = [initial_state(cable, scene, h) for h in starts]
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def _leg_lengths(cable: AbstractCableSpan, scene: Scene, state: CurveState) -> Float[Array, " legs"]:
    ev = evaluate(cable, scene, state)
    active = ev.neighbours.active
    per_obstacle = jnp.where(active, ev.lines.l_in + ev.curves.arc_length, 0.0)
    return jnp.stack(
        [jnp.sum(per_obstacle[jnp.array(obs, int)]) + ev.lines.l_last[leg] for leg, obs in enumerate(cable.legs())]
    )


def choose(cable: AbstractCableSpan, scene: Scene, carries: SolverCarry) -> SolverCarry:
    """Per leg, the shortest genuine candidate (the hints' one on ties or when none is)."""
    legs = cable.legs()
    leg_of = jnp.array(cable.leg_of_obstacle(), int)
    lengths = jax.vmap(lambda s: _leg_lengths(cable, scene, s))(carries.state)  # (K, legs)
    faulty = jax.vmap(lambda c: leg_faults(cable, scene, c))(carries)  # (K, legs)
    genuine = ~faulty & jnp.isfinite(lengths)
    score = jnp.where(genuine, lengths, jnp.inf)
    best = jnp.argmin(score, axis=0)  # first minimum: deterministic
    # Keep the hints' path when it is as short as the best within what the tolerance
    # leaves undetermined, so that sweeps do not hop between equal paths.
    slack = cable.settings.smoothness_tolerance**2 * jnp.abs(score[0])
    keep_hints = genuine[0] & (score[0] <= jnp.min(score, axis=0) + slack)
    pick: Int[Array, " legs"] = jnp.where(keep_hints | ~jnp.any(genuine, axis=0), 0, best)

    def per_leg(x: Array) -> Array:  # (K, legs, ...) -> (legs, ...)
        return x[pick, jnp.arange(len(legs))]

    def per_obstacle(x: Array) -> Array:  # (K, n, ...) -> (n, ...)
        return x[pick[leg_of], jnp.arange(cable.num_obstacles)]

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
