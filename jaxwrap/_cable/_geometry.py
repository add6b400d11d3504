"""Path geometry in ground: natural geodesic variations, straight lines, path error, its
Jacobian, and the length gradient and Hessian (Scholz et al. 2015;
docs/cable.md#boundary-frame-variations to #length-gradient-and-hessian).

Everything works on fixed-size arrays over all obstacles of the cable. Inactive (lifted)
obstacles and the legs between via points enter through masks and through the indices of
each obstacle's previous and next *active* neighbour, so the code is branch-free and
batches under `vmap`.
"""

from __future__ import annotations

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from .._misc import skew, unit_and_length
from .._spatial import Transform
from .._surfaces import Geodesic
from ._definition import AbstractCableSpan
from ._state import LIFTED, CurveState, Scene


class GroundCurves(eqx.Module):
    """Per-obstacle curve data in ground, stacked over obstacles (leading axis n)."""

    P: Float[Array, "n 3"]
    Q: Float[Array, "n 3"]
    R_GP: Float[Array, "n 3 3"]  # columns (t, n, b) at P
    R_GQ: Float[Array, "n 3 3"]
    kappa_P: Float[Array, "n 2"]  # (along t, along b), CableSpan sign
    kappa_Q: Float[Array, "n 2"]
    tau_P: Float[Array, " n"]
    tau_Q: Float[Array, " n"]
    jacobi: Float[Array, "n 2"]  # (a, r) at Q
    jacobi_dot: Float[Array, "n 2"]  # (a', r') at Q
    arc_length: Float[Array, " n"]


def curves_in_ground(geodesics: tuple[Geodesic, ...], X_GS: Transform) -> GroundCurves:
    """Express every obstacle's geodesic (stored in its surface frame S) in ground."""
    stack = lambda name: jnp.stack([getattr(g, name) for g in geodesics])  # noqa: E731
    R_GS = X_GS.rotation
    return GroundCurves(
        P=X_GS.apply(stack("p_SP")),
        Q=X_GS.apply(stack("p_SQ")),
        R_GP=R_GS @ stack("R_SP"),
        R_GQ=R_GS @ stack("R_SQ"),
        kappa_P=stack("curvatures_P"),
        kappa_Q=stack("curvatures_Q"),
        tau_P=stack("torsion_P"),
        tau_Q=stack("torsion_Q"),
        jacobi=stack("jacobi_Q"),
        jacobi_dot=stack("jacobi_dot_Q"),
        arc_length=stack("arc_length"),
    )


class Neighbours(eqx.Module):
    """Topology of the active curves: for each obstacle, its previous/next active obstacle
    in the same leg (index, and whether there is one)."""

    active: Bool[Array, " n"]
    prev: Int[Array, " n"]
    has_prev: Bool[Array, " n"]
    next: Int[Array, " n"]
    has_next: Bool[Array, " n"]


def neighbours(active: Bool[Array, " n"], legs: tuple[tuple[int, ...], ...]) -> Neighbours:
    n = active.shape[0]
    prev = [jnp.array(0)] * n
    has_prev = [jnp.array(False)] * n
    nxt = [jnp.array(0)] * n
    has_next = [jnp.array(False)] * n
    for obstacles in legs:
        idx, found = jnp.array(0), jnp.array(False)
        for i in obstacles:
            prev[i], has_prev[i] = idx, found
            idx, found = jnp.where(active[i], i, idx), found | active[i]
        idx, found = jnp.array(0), jnp.array(False)
        for i in reversed(obstacles):
            nxt[i], has_next[i] = idx, found
            idx, found = jnp.where(active[i], i, idx), found | active[i]
    if n == 0:
        empty_i, empty_b = jnp.zeros(0, int), jnp.zeros(0, bool)
        return Neighbours(active, empty_i, empty_b, empty_i, empty_b)
    return Neighbours(active, jnp.stack(prev), jnp.stack(has_prev), jnp.stack(nxt), jnp.stack(has_next))


class Lines(eqx.Module):
    """The straight lines before (``in``) and after (``out``) every obstacle's curve, plus,
    per leg, the closing line from the last active point to the leg's end."""

    e_in: Float[Array, "n 3"]
    l_in: Float[Array, " n"]
    e_out: Float[Array, "n 3"]
    l_out: Float[Array, " n"]
    prev_point: Float[Array, "n 3"]
    next_point: Float[Array, "n 3"]
    last_point: Float[Array, "legs 3"]  # start of each leg's closing line
    e_last: Float[Array, "legs 3"]
    l_last: Float[Array, " legs"]
    e_first: Float[Array, "legs 3"]  # first line of each leg (its start tangent)


def straight_lines(
    curves: GroundCurves,
    neighbours: Neighbours,
    legs: tuple[tuple[int, ...], ...],
    leg_start: Float[Array, "legs 3"],
    leg_end: Float[Array, "legs 3"],
) -> Lines:
    n = curves.P.shape[0]
    leg_of = jnp.array([s for s, obs in enumerate(legs) for _ in obs], dtype=int).reshape(n)
    order = [i for obs in legs for i in obs]
    inverse = jnp.argsort(jnp.array(order, dtype=int)) if n else jnp.zeros(0, int)
    leg_of = leg_of[inverse] if n else leg_of
    if n:
        prev_point = jnp.where(neighbours.has_prev[:, None], curves.Q[neighbours.prev], leg_start[leg_of])
        next_point = jnp.where(neighbours.has_next[:, None], curves.P[neighbours.next], leg_end[leg_of])
    else:
        prev_point = next_point = jnp.zeros((0, 3), leg_start.dtype)
    e_in, l_in = unit_and_length(curves.P - prev_point)
    e_out, l_out = unit_and_length(next_point - curves.Q)
    last_points, first_points = [], []
    for s, obstacles in enumerate(legs):
        last, first = leg_start[s], leg_end[s]
        for i in obstacles:
            last = jnp.where(neighbours.active[i], curves.Q[i], last)
        for i in reversed(obstacles):
            first = jnp.where(neighbours.active[i], curves.P[i], first)
        last_points.append(last)
        first_points.append(first)
    last_point = jnp.stack(last_points)
    e_last, l_last = unit_and_length(leg_end - last_point)
    e_first, _ = unit_and_length(jnp.stack(first_points) - leg_start)
    return Lines(e_in, l_in, e_out, l_out, prev_point, next_point, last_point, e_last, l_last, e_first)


def total_length(curves: GroundCurves, neighbours: Neighbours, lines: Lines) -> Array:
    """Σ line lengths + Σ active arc lengths: lines into every active curve plus each
    leg's closing line."""
    active = neighbours.active
    arcs = jnp.where(active, curves.arc_length, 0.0)
    return jnp.sum(jnp.where(active, lines.l_in, 0.0)) + jnp.sum(arcs) + jnp.sum(lines.l_last)


def path_error(curves: GroundCurves, neighbours: Neighbours, lines: Lines) -> Float[Array, "n 4"]:
    """ε = (e_in·n_P, e_in·b_P, e_out·n_Q, e_out·b_Q) per active curve (0 when lifted)."""
    n_P, b_P = curves.R_GP[..., :, 1], curves.R_GP[..., :, 2]
    n_Q, b_Q = curves.R_GQ[..., :, 1], curves.R_GQ[..., :, 2]
    dot = lambda a, b: jnp.sum(a * b, axis=-1)  # noqa: E731
    eps = jnp.stack([dot(lines.e_in, n_P), dot(lines.e_in, b_P), dot(lines.e_out, n_Q), dot(lines.e_out, b_Q)], axis=-1)
    return jnp.where(neighbours.active[:, None], eps, 0.0)


class Variations(eqx.Module):
    """d(position)/dc (v) and rotation-vector d(orientation)/dc (w) of the boundary frames,
    3 x 4 per obstacle (docs/cable.md#boundary-frame-variations)."""

    v_P: Float[Array, "n 3 4"]
    w_P: Float[Array, "n 3 4"]
    v_Q: Float[Array, "n 3 4"]
    w_Q: Float[Array, "n 3 4"]


def variations(curves: GroundCurves) -> Variations:
    t_P, b_P = curves.R_GP[..., :, 0], curves.R_GP[..., :, 2]
    t_Q, b_Q = curves.R_GQ[..., :, 0], curves.R_GQ[..., :, 2]
    a, r = curves.jacobi[:, 0], curves.jacobi[:, 1]
    a_dot, r_dot = curves.jacobi_dot[:, 0], curves.jacobi_dot[:, 1]
    zero = jnp.zeros_like(a)
    kn_P, kb_P, tau_P = curves.kappa_P[:, 0], curves.kappa_P[:, 1], curves.tau_P
    kn_Q, kb_Q, tau_Q = curves.kappa_Q[:, 0], curves.kappa_Q[:, 1], curves.tau_Q

    def local(R, x, y, z):  # R (t, n, b) applied to local coordinates
        return jnp.einsum("nij,nj->ni", R, jnp.stack([x, y, z], axis=-1))

    zero3 = jnp.zeros_like(t_P)
    v_P = jnp.stack([t_P, b_P, zero3, zero3], axis=-1)
    w_P = jnp.stack(
        [
            local(curves.R_GP, tau_P, zero, kn_P),
            local(curves.R_GP, -kb_P, zero, -tau_P),
            local(curves.R_GP, zero, -jnp.ones_like(a), zero),
            zero3,
        ],
        axis=-1,
    )
    v_Q = jnp.stack([t_Q, a[:, None] * b_Q, r[:, None] * b_Q, t_Q], axis=-1)
    w_Q = jnp.stack(
        [
            local(curves.R_GQ, tau_Q, zero, kn_Q),
            local(curves.R_GQ, -a * kb_Q, -a_dot, -a * tau_Q),
            local(curves.R_GQ, -r * kb_Q, -r_dot, -r * tau_Q),
            local(curves.R_GQ, tau_Q, zero, kn_Q),
        ],
        axis=-1,
    )
    return Variations(v_P, w_P, v_Q, w_Q)


def _place(diag: Array, prev_block: Array, next_block: Array, neighbours: Neighbours) -> Array:
    """Assemble (n, k, n, 4) from per-obstacle diagonal and neighbour blocks (n, k, 4)."""
    n = diag.shape[0]
    eye = jnp.eye(n, dtype=diag.dtype)
    onehot_prev = jnp.where(neighbours.has_prev[:, None], jnp.eye(n, dtype=diag.dtype)[neighbours.prev], 0.0)
    onehot_next = jnp.where(neighbours.has_next[:, None], jnp.eye(n, dtype=diag.dtype)[neighbours.next], 0.0)
    out = (
        jnp.einsum("ij,ikm->ikjm", eye, diag)
        + jnp.einsum("ij,ikm->ikjm", onehot_prev, prev_block)
        + jnp.einsum("ij,ikm->ikjm", onehot_next, next_block)
    )
    return jnp.where(neighbours.active[:, None, None, None], out, 0.0)


def path_error_jacobian(
    curves: GroundCurves, var: Variations, neighbours: Neighbours, lines: Lines
) -> Float[Array, "n 4 n 4"]:
    """dε/dc (Scholz et al. 2015, eq. 53; docs/cable.md#path-error-jacobian), rows in the order of `path_error`."""
    n_P, b_P = curves.R_GP[..., :, 1], curves.R_GP[..., :, 2]
    n_Q, b_Q = curves.R_GQ[..., :, 1], curves.R_GQ[..., :, 2]
    l_in = jnp.where(lines.l_in > 0, lines.l_in, 1.0)[:, None]
    l_out = jnp.where(lines.l_out > 0, lines.l_out, 1.0)[:, None]
    v_Q_prev, v_P_next = var.v_Q[neighbours.prev], var.v_P[neighbours.next]

    diag, prev_blocks, next_blocks = [], [], []
    zeros = jnp.zeros(var.v_P.shape[0:1] + (4,), var.v_P.dtype)
    for axis in (n_P, b_P):  # P side: the line into the curve
        e = lines.e_in
        dv = (axis - e * jnp.sum(e * axis, -1, keepdims=True)) / l_in
        dw = jnp.cross(axis, e)
        diag.append(jnp.einsum("nim,ni->nm", var.v_P, dv) + jnp.einsum("nim,ni->nm", var.w_P, dw))
        prev_blocks.append(jnp.einsum("nim,ni->nm", v_Q_prev, -dv))
        next_blocks.append(zeros)
    for axis in (n_Q, b_Q):  # Q side: the line out of the curve
        e = lines.e_out
        dv = -(axis - e * jnp.sum(e * axis, -1, keepdims=True)) / l_out
        dw = jnp.cross(axis, e)
        diag.append(jnp.einsum("nim,ni->nm", var.v_Q, dv) + jnp.einsum("nim,ni->nm", var.w_Q, dw))
        prev_blocks.append(zeros)
        next_blocks.append(jnp.einsum("nim,ni->nm", v_P_next, -dv))
    stack = lambda blocks: jnp.stack(blocks, axis=1)  # noqa: E731
    return _place(stack(diag), stack(prev_blocks), stack(next_blocks), neighbours)


def length_gradient_and_hessian(
    curves: GroundCurves, var: Variations, neighbours: Neighbours, lines: Lines
) -> tuple[Float[Array, "n 4"], Float[Array, "n 4 n 4"]]:
    """dL/dc and the (approximate, non-symmetric) d²L/dc² of docs/cable.md#length-gradient-and-hessian."""
    dtype = var.v_P.dtype
    active = neighbours.active[:, None]
    unit4 = jnp.array([0.0, 0.0, 0.0, 1.0], dtype)
    g = jnp.einsum("nim,ni->nm", var.v_P, lines.e_in) - jnp.einsum("nim,ni->nm", var.v_Q, lines.e_out) + unit4
    g = jnp.where(active, g, 0.0)

    def projector(e, l):
        l = jnp.where(l > 0, l, 1.0)
        return (jnp.eye(3, dtype=dtype) - e[:, :, None] * e[:, None, :]) / l[:, None, None]

    E_in, E_out = projector(lines.e_in, lines.l_in), projector(lines.e_out, lines.l_out)
    S_in, S_out = skew(lines.e_in), skew(lines.e_out)
    quad = lambda A, M, B: jnp.einsum("nik,nij,njm->nkm", A, M, B)  # noqa: E731
    h_P = quad(var.v_P, E_in, var.v_P) + quad(var.v_P, S_in, var.w_P)
    h_Q = quad(var.v_Q, E_out, var.v_Q) - quad(var.v_Q, S_out, var.w_Q)
    # Jacobi-field variation terms; the "unknown" covariance entries are approximated by 0.
    e_dot_b = jnp.sum(lines.e_out * curves.R_GQ[..., :, 2], axis=-1)
    a_dot, r_dot = curves.jacobi_dot[:, 0], curves.jacobi_dot[:, 1]
    z = jnp.zeros_like(a_dot)
    h_Q = h_Q.at[:, 1, :].add(-e_dot_b[:, None] * jnp.stack([a_dot, z, z, a_dot], -1))
    h_Q = h_Q.at[:, 2, :].add(-e_dot_b[:, None] * jnp.stack([r_dot, z, z, r_dot], -1))
    prev_block = -quad(var.v_P, E_in, var.v_Q[neighbours.prev])
    next_block = -quad(var.v_Q, E_out, var.v_P[neighbours.next])
    H = _place(h_P + h_Q, prev_block, next_block, neighbours)
    return g, H


class Evaluation(eqx.Module):
    """Everything the solver derives from a state: the curves in ground, their active
    neighbours, the straight lines, the path error and the smoothness of each leg."""

    curves: GroundCurves
    neighbours: Neighbours
    lines: Lines
    error: Float[Array, "n 4"]
    smoothness: Float[Array, " legs"]  # max |path error| per leg


def evaluate(cable: AbstractCableSpan, scene: Scene, state: CurveState) -> Evaluation:
    legs = cable.legs()
    curves = curves_in_ground(state.geodesics, scene.X_GS) if state.geodesics else _empty_curves(scene)
    topology = neighbours(state.status != LIFTED, legs)
    lines = straight_lines(curves, topology, legs, scene.leg_start, scene.leg_end)
    error = path_error(curves, topology, lines)
    per_obstacle = jnp.max(jnp.abs(error), axis=1, initial=0.0)
    smoothness = jnp.stack([jnp.max(per_obstacle[jnp.array(obs, int)], initial=0.0) for obs in legs])
    return Evaluation(curves, topology, lines, error, smoothness)


def _empty_curves(scene: Scene) -> GroundCurves:
    def z(*shape):
        return jnp.zeros((0, *shape), scene.origin.dtype)

    return GroundCurves(z(3), z(3), z(3, 3), z(3, 3), z(2), z(2), z(), z(), z(2), z(2), z())
