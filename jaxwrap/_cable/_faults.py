"""What makes a path that looks converged a wrong one (docs/cable.md#results).

The smoothness measure sees only the sideways components of the straight lines at each
curve's ends. A path can be smooth in that sense and still not be the taut cable: a
contact point can slide away along an unbounded surface, a curve can overshoot so that a
line comes back along it, a curve can bend away from its surface, or hold on to an
obstacle the straight line would not even touch. These checks turn such paths into
failures (`RESULTS.diverged`, `RESULTS.not_taut`) instead of answers. An obstacle with a
wrap `side` adds one more: a path passing it on the other side (`RESULTS.wrong_side`).
"""

from __future__ import annotations

import jax.numpy as jnp
from jaxtyping import Array, Bool, Float

from .._misc import safe_normalize, segment_nearest_to_origin
from ._definition import AbstractCableSpan
from ._geometry import Evaluation, evaluate
from ._solver import SolverCarry
from ._state import Scene


def _on_side(x: Float[Array, "3"], y: Float[Array, "3"]) -> Bool[Array, ""]:
    """``x·y >= 0`` up to rounding (a path passing straight over the side's boundary is on
    both sides)."""
    scale = jnp.linalg.norm(x) * jnp.linalg.norm(y)
    return jnp.dot(x, y) >= -jnp.sqrt(jnp.finfo(x.dtype).eps) * scale


def side_faults(
    cable: AbstractCableSpan, scene: Scene, evaluation: Evaluation
) -> tuple[Bool[Array, " n"], Bool[Array, " n"]]:
    """(wrong_side, line_wrong) per obstacle (docs/cable.md#wrap-side): whether the path
    passes the obstacle on the side away from its `side` point, and whether the straight
    line between the obstacle's neighbours would. Both are False for an obstacle without
    a side.

    In S (with `AbstractSurface.across` applied), with ``a`` and ``b`` the obstacle's
    previous and next path points and ``s`` the side point: the straight segment from
    ``a`` to ``b`` passes on the side of ``s`` when its point nearest the origin does,
    ``nearest·s >= 0`` (MuJoCo's test; a segment that ends before the foot of the
    perpendicular is judged by its end, docs/cable.md#wrap-side); a curve in contact
    when its angular momentum about the origin agrees with that of a line along
    ``u = (b - a)/|b - a|`` through ``s``: ``(P × t_P + Q × t_Q)·(s × u) >= 0``, which
    keeps its sign for wraps of more than half a turn where the contact points
    themselves swing past the centre."""
    c, lines, active = evaluation.curves, evaluation.lines, evaluation.neighbours.active
    wrong, line_wrong = [], []
    for i, obstacle in enumerate(cable.obstacles):
        if obstacle.side is None:
            wrong.append(jnp.zeros((), bool))
            line_wrong.append(jnp.zeros((), bool))
            continue
        X_SG, across = scene.X_GS[i].inverse(), obstacle.surface.across
        a, b = across(X_SG.apply(lines.prev_point[i])), across(X_SG.apply(lines.next_point[i]))
        u = safe_normalize(b - a, jnp.zeros_like(a))
        s = across(obstacle.side.astype(a.dtype))
        w = jnp.cross(s, u)
        P, Q = across(X_SG.apply(c.P[i])), across(X_SG.apply(c.Q[i]))
        t_P, t_Q = across(X_SG.rotate(c.R_GP[i, :, 0])), across(X_SG.rotate(c.R_GQ[i, :, 0]))
        line_ok = _on_side(segment_nearest_to_origin(a, b), s)
        curve_ok = _on_side(jnp.cross(P, t_P) + jnp.cross(Q, t_Q), w)
        wrong.append(~jnp.where(active[i], curve_ok, line_ok))
        line_wrong.append(~line_ok)
    return jnp.stack(wrong), jnp.stack(line_wrong)


def path_faults(
    cable: AbstractCableSpan, scene: Scene, evaluation: Evaluation
) -> tuple[Bool[Array, " n"], Bool[Array, " n"], Bool[Array, " n"], Bool[Array, " n"]]:
    """(runaway, slack, wrong_side, through) per obstacle: whether a converged-looking path
    is no genuine taut solution there (docs/cable.md#results).

    *Runaway*: a contact point outside the ball that holds every end and via point and
    every obstacle (its frame origin plus its `extent`), where no taut path goes (e.g. a
    contact point sliding off along a cylinder's axis), or a curve winding more than
    ``max_winding``. *Slack*: a curve in contact where lifting it off would shorten the
    path: a line leaves its end backwards (the path doubles back), its tangent bends away
    from the surface (normal curvature of the wrong sign), or the straight line between
    its neighbours misses the obstacle altogether (unless that line passes on the wrong
    side of a wrap `side`: then the wrap is what the side asks for). *Wrong side*:
    `side_faults`. *Through*: a lifted obstacle that the straight line between its
    neighbours passes through (the touchdown search from the line's midpoint falls below
    the surface). The solver's own touchdown search starts from the tracking point
    (Simbody's guess) and can miss a far part of a non-convex surface; such a path is no
    path at all.
    """
    c, lines, active = evaluation.curves, evaluation.lines, evaluation.neighbours.active
    dtype = scene.origin.dtype
    fixed = jnp.concatenate([scene.leg_start, scene.leg_end[-1:]])
    centres = scene.X_GS.translation
    extents = jnp.stack([o.surface.extent().astype(dtype) for o in cable.obstacles])
    centre = jnp.mean(jnp.concatenate([fixed, centres]), axis=0)
    radius = jnp.maximum(
        jnp.max(jnp.linalg.norm(fixed - centre, axis=-1)), jnp.max(jnp.linalg.norm(centres - centre, axis=-1) + extents)
    )
    margin = radius * (1 + 1e3 * jnp.finfo(dtype).eps) + jnp.finfo(dtype).tiny
    outside = (jnp.linalg.norm(c.P - centre, axis=-1) > margin) | (jnp.linalg.norm(c.Q - centre, axis=-1) > margin)
    kappa = jnp.stack([c.kappa_P[:, 0], c.kappa_Q[:, 0]], axis=-1)
    winding = c.arc_length * jnp.max(jnp.abs(kappa), axis=-1)
    runaway = active & (outside | (winding > cable.settings.max_winding))

    t_P, t_Q = c.R_GP[..., :, 0], c.R_GQ[..., :, 0]
    backwards = (jnp.sum(lines.e_in * t_P, -1) < 0) | (jnp.sum(lines.e_out * t_Q, -1) < 0)
    # CableSpan's sign: dt/ds = κ n, so a curve pressing on the surface has κ <= 0.
    bends_away = (c.arc_length > 0) & jnp.any(kappa * radius > jnp.sqrt(jnp.finfo(dtype).eps), axis=-1)
    misses, below = [], []
    for i, obstacle in enumerate(cable.obstacles):
        X_SG = scene.X_GS[i].inverse()
        a, b = X_SG.apply(lines.prev_point[i]), X_SG.apply(lines.next_point[i])
        search = obstacle.surface.nearest_point_on_line(a, b, 0.5 * (a + b), cable.settings.touchdown)
        misses.append(search.converged & ~search.below)
        below.append(search.below)
    wrong_side, line_wrong = side_faults(cable, scene, evaluation)
    slack = active & (backwards | bends_away | (jnp.stack(misses) & ~line_wrong))
    through = ~active & jnp.stack(below)
    return runaway, slack, wrong_side, through


def leg_scores(
    cable: AbstractCableSpan, scene: Scene, carry: SolverCarry
) -> tuple[Float[Array, " legs"], Bool[Array, " legs"]]:
    """Per leg of a solved carry: its length, and whether it is a genuine taut solution
    (smooth, finite, no neighbour point inside, no failed geodesic, no fault above)."""
    lengths, genuine, _ = leg_faults(cable, scene, carry)
    return lengths, genuine


def leg_faults(
    cable: AbstractCableSpan, scene: Scene, carry: SolverCarry
) -> tuple[Float[Array, " legs"], Bool[Array, " legs"], tuple[Bool[Array, " n"], ...]]:
    """`leg_scores` and the `path_faults` it found, per obstacle."""
    ev = evaluate(cable, scene, carry.state)
    faults = path_faults(cable, scene, ev)
    runaway, slack, wrong_side, through = faults
    bad = runaway | slack | wrong_side | through | carry.inside | carry.geodesic_failed
    per_obstacle = jnp.where(ev.neighbours.active, ev.lines.l_in + ev.curves.arc_length, 0.0)
    lengths, faulty = [], []
    for leg, obs in enumerate(cable.legs()):
        idx = jnp.array(obs, int)
        lengths.append(jnp.sum(per_obstacle[idx]) + ev.lines.l_last[leg])
        faulty.append(jnp.any(bad[idx]))
    lengths = jnp.stack(lengths)
    rough = ~(carry.smoothness <= cable.settings.smoothness_tolerance)  # NaN is rough too
    return lengths, ~rough & ~jnp.stack(faulty) & jnp.isfinite(lengths), faults
