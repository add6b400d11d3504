"""`solve_cable`: the entry point, and the derivatives of a converged path.

The loop (`_solver.run_solver`) runs on stop-gradient inputs. The converged curves then
get their derivatives from the implicit function theorem (`jaxwrap._implicit`,
docs/cable.md#implicit-differentiation): writing each curve as a natural geodesic
correction ``c`` of the converged one, reshot on its surface with parameters ``p``,
``geo(c, p)``, the path error stays zero,

    ε(geo(c, p), X_GS, end points) = 0
    ⇒  dc = -J⁻¹ (∂ε/∂geo · ∂geo/∂p dp + ∂ε/∂(X_GS, ends) d(X_GS, ends)),

with ``J = ∂ε/∂c`` the analytic path-error Jacobian of Scholz et al. (equal to autodiff's
to 1e-13), solved by SVD (a curve of zero length makes ``J`` rank deficient; the
minimum-norm answer is taken). The curves' tangent is ``∂geo/∂c dc + ∂geo/∂p dp``.
On closed-form surfaces ``geo`` is differentiated by one forward-mode Jacobian per
obstacle over exactly the 4 + k directions (c, surface parameters) that matter. On
numerically shot ones ``∂geo/∂c`` comes from the curve's Jacobi fields (Scholz's
boundary-frame variations) and only ``∂geo/∂p``, where the surface parameters carry
tangents, from forward mode through the integrator, so a pose gradient integrates no
geodesic (`_jacobi_reshoot`). Forward-only solves pay nothing. Lifted obstacles get
no derivative (their status is piecewise constant). The derivative is exact at an
exactly converged path; with the default tolerance it is accurate to about the
smoothness tolerance.
"""

from __future__ import annotations

import dataclasses

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
from jaxtyping import Array, Bool, Float

from .._implicit import implicit_jvp
from .._misc import all_finite
from .._results import RESULTS, first_failure
from .._spatial import Transform
from .._surfaces import AbstractSurface, Geodesic, GeodesicIntegrator
from .._surfaces._geodesic import frame_curvatures
from ._candidates import solve_candidates, solve_warm
from ._definition import AbstractCableSpan
from ._faults import path_faults
from ._geometry import curves_in_ground, evaluate, path_error_jacobian, total_length, variations
from ._path import CablePath
from ._solver import apply_correction, map_by_kind, run_solver, select, shot_numerically
from ._state import LIFTED, CurveState, Scene, build_scene, initial_state


def _corrected(_, inputs):
    surface, geodesic, c, accuracy, integrator = inputs
    # Plain forward mode through the integrator: the implicit rule below asks for exactly
    # the directions it needs (the geodesic's own rule would propagate every input direction).
    forward = dataclasses.replace(integrator, adjoint=diffrax.ForwardMode())
    return (), apply_correction(surface, geodesic, c, accuracy, forward)


def _reshoot(
    surface: AbstractSurface, geodesic: Geodesic, c: Float[Array, "4"], accuracy, integrator: GeodesicIntegrator
) -> Geodesic:
    """``geo(c, p)``, differentiable in (c, surface parameters): by the Jacobi fields where
    the curve is shot numerically (`_jacobi_reshoot`), else by a dense forward-mode
    derivative of the closed form."""
    if shot_numerically(surface):
        return _jacobi_reshoot((surface, geodesic, c, accuracy, integrator))
    return _materialized_reshoot(surface, geodesic, c, accuracy, integrator)


def _materialized_reshoot(surface, geodesic, c, accuracy, integrator) -> Geodesic:
    """``geo(c, p)`` with a dense forward-mode derivative in exactly the inputs that carry
    tangents (of c and the surface parameters)."""
    _, reshot = implicit_jvp(
        lambda x: _corrected((), x), _corrected, (surface, geodesic, c, accuracy, integrator), materialize=True
    )
    return reshot


def _c_columns(surface: AbstractSurface, g: Geodesic) -> Geodesic:
    """∂geo/∂c of the natural corrections at c = 0 from the curve's Jacobi fields (Scholz's
    boundary-frame variations, `variations`): every float field with a trailing axis of 4,
    one column per correction; the Jacobi scalars' columns are zero
    (docs/cable.md#implicit-differentiation). As `apply_correction`, a curve of zero length
    does not move with the length correction."""
    identity = Transform.identity((1,), g.p_SP.dtype)
    var = jax.tree.map(lambda x: x[0], variations(curves_in_ground((g,), identity)))
    live = jnp.where(g.arc_length > 0, 1.0, 0.0).astype(g.p_SP.dtype)
    scale = jnp.ones(4, live.dtype).at[3].set(live)
    v_P, w_P, v_Q, w_Q = (x * scale for x in (var.v_P, var.w_P, var.v_Q, var.w_Q))

    def turned(w, R):  # d R = [w]x R, per column of w: (3, 3, 4)
        return jnp.cross(w.T[:, None, :], R.T[None, :, :]).transpose(2, 1, 0)

    dR_P, dR_Q = turned(w_P, g.R_SP), turned(w_Q, g.R_SQ)

    def curvature_columns(p, R, dp, dR):
        per_column = jax.vmap(lambda dp, dR: jax.jvp(lambda p, R: frame_curvatures(surface, p, R), (p, R), (dp, dR))[1])
        dkappa, dtau = per_column(dp.T, jnp.moveaxis(dR, -1, 0))
        return dkappa.T, dtau

    dkappa_P, dtau_P = curvature_columns(g.p_SP, g.R_SP, v_P, dR_P)
    dkappa_Q, dtau_Q = curvature_columns(g.p_SQ, g.R_SQ, v_Q, dR_Q)
    zero2 = jnp.zeros((2, 4), g.p_SP.dtype)
    fields = lambda x: (  # noqa: E731
        x.R_SP, x.p_SP, x.R_SQ, x.p_SQ, x.arc_length, x.curvatures_P, x.curvatures_Q,
        x.torsion_P, x.torsion_Q, x.jacobi_Q, x.jacobi_dot_Q,
    )  # fmt: skip
    length = jnp.zeros(4, g.p_SP.dtype).at[3].set(live)
    # `eqx.tree_at`, not `dataclasses.replace`: the columns do not have the fields' shapes.
    return eqx.tree_at(fields, g, (dR_P, v_P, dR_Q, v_Q, length, dkappa_P, dkappa_Q, dtau_P, dtau_Q, zero2, zero2))


def _float_fields(g: Geodesic) -> Geodesic:
    return eqx.filter(g, eqx.is_inexact_array)


@eqx.filter_custom_jvp
def _c_jacobian(inputs):
    """∂geo/∂c at ``c = 0`` (`inputs` as `_jacobi_reshoot`'s): the Jacobi-field columns of
    `_c_columns`, whose own derivative (a second derivative of the curve) is that of the
    forward-mode Jacobian through the integrator."""
    surface, geodesic, _, _, _ = inputs
    return _float_fields(_c_columns(surface, geodesic))


def _exact_c_jacobian(inputs):
    surface, geodesic, c, accuracy, integrator = inputs
    return jax.jacfwd(lambda c: _float_fields(_materialized_reshoot(surface, geodesic, c, accuracy, integrator)))(c)


@_c_jacobian.def_jvp
def _c_jacobian_jvp(primals, tangents):
    return eqx.filter_jvp(_exact_c_jacobian, primals, tangents)


def _add(a, b):
    """Sum of two tangent trees of one structure, None (a symbolic zero) counting as 0."""
    return jax.tree.map(lambda x, y: y if x is None else x if y is None else x + y, a, b, is_leaf=lambda x: x is None)


def _has_tangent(tangent) -> bool:
    return any(x is not None for x in jax.tree.leaves(tangent, is_leaf=lambda x: x is None))


def _surface_derivative(surface, geodesic, c, accuracy, integrator, t_surface) -> Geodesic:
    """∂geo/∂p · `t_surface` (float fields): forward mode through the integrator in the k
    surface directions alone (`_materialized_reshoot`; the shooter's own rule would also
    propagate the start state's 10)."""
    _, t_p = eqx.filter_jvp(
        lambda s: _float_fields(_materialized_reshoot(s, geodesic, c, accuracy, integrator)), (surface,), (t_surface,)
    )
    return t_p


@eqx.filter_custom_jvp
def _surface_shift(inputs):
    """Zero, with derivative ∂geo/∂p in the surface parameters: the surface's share of
    `_jacobi_reshoot`'s value when that is differentiated again."""
    _, geodesic, _, _, _ = inputs
    return jax.tree.map(jnp.zeros_like, _float_fields(geodesic))


@_surface_shift.def_jvp
def _surface_shift_jvp(primals, tangents):
    (inputs,), (t_inputs,) = primals, tangents
    zero = _surface_shift(inputs)
    if not _has_tangent(t_inputs[0]):
        return zero, zero
    return zero, _surface_derivative(*inputs, t_inputs[0])


@eqx.filter_custom_jvp
def _jacobi_reshoot(inputs):
    """``geo(c, p)`` on a numerically shot surface at the root ``c = 0``, where it is the
    converged curve itself (the rule is only ever evaluated there, `_converged`). Its
    derivative in ``c`` comes from the Jacobi fields (`_c_jacobian`) rather than from
    forward mode through the integrator, and in the surface parameters, where they have
    tangents, from forward mode through it in those directions alone
    (`_surface_derivative`; docs/cable.md#implicit-differentiation)."""
    _, geodesic, _, _, _ = inputs
    return geodesic


@_jacobi_reshoot.def_jvp
def _jacobi_reshoot_jvp(primals, tangents):
    (inputs,), (t_inputs,) = primals, tangents
    surface, geodesic, c, accuracy, integrator = inputs
    t_surface, t_c = t_inputs[0], t_inputs[2]
    columns = _c_jacobian(inputs)
    # The value is the converged curve (c is zero), written so that differentiating this
    # rule again (second derivatives) moves it as geo(c, p) moves: columns · c, and the
    # surface's share.
    moved = jax.tree.map(lambda x, J: x + J @ c.astype(J.dtype), _float_fields(geodesic), columns)
    moved = _add(moved, _surface_shift(inputs))
    value = eqx.combine(moved, geodesic)
    t_out = jax.tree.map(jnp.zeros_like, _float_fields(geodesic))
    if t_c is not None:
        t_out = jax.tree.map(lambda J: J @ t_c.astype(J.dtype), columns)
    if _has_tangent(t_surface):
        t_out = _add(t_out, _surface_derivative(*inputs, t_surface))
    return value, t_out


def _converged(inputs):
    _, _, state = inputs
    dtype = state.tracking.dtype
    return jnp.zeros(4 * len(state.geodesics), dtype), state.geodesics


def _path_error(c_flat, inputs):
    cable, scene, state = inputs
    c = c_flat.reshape(-1, 4)
    active = state.status != LIFTED
    accuracy = cable.settings.curve_segment_accuracy
    integrator = cable.settings.integrator()
    reshot = map_by_kind(
        lambda surface, g, c_i: _reshoot(surface, g, c_i, accuracy, integrator),
        [o.surface for o in cable.obstacles],
        state.geodesics,
        c,
    )
    geodesics = tuple(select(active[i], reshot[i], g) for i, g in enumerate(state.geodesics))
    ev = evaluate(cable, scene, dataclasses.replace(state, geodesics=geodesics))
    return jnp.where(active[:, None], ev.error, 0.0).reshape(-1), geodesics


def _path_error_jacobian(c_flat, inputs):
    cable, scene, state = inputs
    n = len(state.geodesics)
    ev = evaluate(cable, scene, state)
    J4 = path_error_jacobian(ev.curves, variations(ev.curves), ev.neighbours, ev.lines)
    lifted = jnp.repeat(state.status == LIFTED, 4).astype(J4.dtype)  # lifted: dc = 0
    return lx.MatrixLinearOperator(J4.reshape(4 * n, 4 * n) + jnp.diag(lifted))


def differentiable_state(cable: AbstractCableSpan, scene: Scene, state: CurveState) -> CurveState:
    """The converged `state` (stop-gradient), with derivatives attached by the implicit
    function theorem; its value is unchanged."""
    if not state.geodesics:
        return state
    _, geodesics = implicit_jvp(_converged, _path_error, (cable, scene, state), operator=_path_error_jacobian)
    # The Jacobi scalars are the solver's data, not outputs: they carry no derivative
    # (on numerically shot surfaces the rule does not compute theirs).
    geodesics = tuple(
        dataclasses.replace(
            g, jacobi_Q=jax.lax.stop_gradient(g.jacobi_Q), jacobi_dot_Q=jax.lax.stop_gradient(g.jacobi_dot_Q)
        )
        for g in geodesics
    )
    return dataclasses.replace(state, geodesics=geodesics)


def _warm_state(cable: AbstractCableSpan, warm_start) -> CurveState:
    warm = warm_start.state if isinstance(warm_start, CablePath) else warm_start
    if not isinstance(warm, CurveState) or len(warm.geodesics) != cable.num_obstacles:
        raise ValueError("warm_start must be a CablePath (or its .state) of a cable with the same obstacles")
    return jax.lax.stop_gradient(warm)


def pose_validity(body_poses: Transform) -> Bool[Array, " n"]:
    """Per pose: finite, and a rotation matrix that is a rotation (to 1e-3: loose enough
    for finite-difference perturbations and float32 round-off, tight enough for any
    matrix that is not meant as a rotation)."""
    R, t = body_poses.rotation, body_poses.translation
    gram = jnp.swapaxes(R, -1, -2) @ R - jnp.eye(3, dtype=R.dtype)
    # det = R0 · (R1 × R2) by columns: jnp.linalg.det runs a batched LU, far slower.
    det = jnp.sum(R[..., :, 0] * jnp.cross(R[..., :, 1], R[..., :, 2]), axis=-1)
    finite = jnp.all(jnp.isfinite(R), axis=(-1, -2)) & jnp.all(jnp.isfinite(t), axis=-1)
    return finite & jnp.all(jnp.abs(gram) <= 1e-3, axis=(-1, -2)) & (det > 0)


def _valid_input(cable: AbstractCableSpan, body_poses: Transform) -> Bool[Array, ""]:
    """Finite numbers everywhere, and every pose valid (`pose_validity`)."""
    return all_finite(eqx.filter(cable, eqx.is_inexact_array)) & jnp.all(pose_validity(body_poses))


def _nan_where(mask: Bool[Array, ""], tree):
    """NaN where `mask`, with NaN derivatives there too (a product with a NaN constant, not
    a `where`, whose derivative in the masked lane would be a plausible 0)."""
    nan_or_one = jnp.where(mask, jnp.nan, 1.0)
    return jax.tree.map(lambda x: x * nan_or_one.astype(x.dtype) if eqx.is_inexact_array(x) else x, tree)


def solve_cable(
    cable: AbstractCableSpan,
    body_poses: Transform,
    *,
    warm_start: CablePath | CurveState | None = None,
    throw: bool = False,
) -> CablePath:
    """Solve for the locally shortest path of `cable` (docs/cable.md).

    The cable is an argument, so ``jax.jit(jw.solve_cable)(cable, body_poses)`` compiles
    once per cable *structure*: new stations, radii, placements or tolerances reuse it.

    **Arguments:**

    - `cable`: a `jaxwrap.CableSpan`.
    - `body_poses`: ``X_GB`` of every body, a `Transform` with leading axis ``n_bodies``
      (`jaxwrap.forward_kinematics` returns one). Batch several with `jax.vmap`.
    - `warm_start`: a previous `CablePath` of this cable (or its ``.state``); its curves,
      stored in the surface frames, seed the solver when the ``use_warm_start`` setting is
      on. Without it the solver starts from the contact hints.
    - `throw`: raise (through `equinox`'s runtime errors, also under `jit`) with the
      result's message when the solve is not successful, instead of only reporting it.

    **Returns:** a `CablePath`; its `result` says how the solve ended, `converged` is the
    boolean summary. Every output is differentiable with respect to `body_poses` and to
    every array leaf of `cable`.
    """
    if not isinstance(body_poses, Transform) or len(body_poses.batch_shape) != 1:
        raise ValueError(
            "body_poses must be a Transform with one leading axis (n_bodies,), e.g. "
            "jw.forward_kinematics(model, q); batch several with jax.vmap"
        )
    cable.check_bodies(body_poses.batch_shape[0])
    closed = [i for i, o in enumerate(cable.obstacles) if o.closed_form]
    if closed:
        raise ValueError(
            f"obstacle(s) {closed} use a closed-form wrap ('inside' or 'mujoco'), which solve_cable does not "
            "handle; put the cable in a jw.CableSet and use jw.solve_cables (docs/cable-sets.md)"
        )
    fixed_cable, fixed_poses = jax.lax.stop_gradient((cable, body_poses))
    scene_nodiff = build_scene(fixed_cable, fixed_poses)
    faults = None  # the path's faults, where the solve found them already
    if warm_start is not None and cable.settings.use_warm_start:
        warm = _warm_state(cable, warm_start)
        if cable.settings.cold_start == "candidates":
            carry, faults = solve_warm(fixed_cable, scene_nodiff, warm)
        else:
            carry = run_solver(fixed_cable, scene_nodiff, warm)
    elif cable.settings.cold_start == "candidates" and cable.obstacles:
        carry = solve_candidates(fixed_cable, scene_nodiff)
    else:
        carry = run_solver(fixed_cable, scene_nodiff, initial_state(fixed_cable, scene_nodiff))

    # Re-attach the derivatives with respect to poses and cable parameters.
    scene = build_scene(cable, body_poses)
    state = differentiable_state(cable, scene, jax.lax.stop_gradient(carry.state))
    ev = evaluate(cable, scene, state)
    smoothness = jnp.max(carry.smoothness, initial=0.0)
    invalid = ~_valid_input(cable, body_poses)
    length = total_length(ev.curves, ev.neighbours, ev.lines)
    none = jnp.zeros(0, bool)
    if faults is None:
        faults = path_faults(cable, scene, ev) if cable.obstacles else (none,) * 4
    runaway, slack, wrong_side, through = faults
    result = first_failure(
        (invalid, RESULTS.invalid_input),
        (jnp.any(carry.inside), RESULTS.endpoint_inside_obstacle),
        (jnp.any(carry.geodesic_failed), RESULTS.geodesic_failed),
        (~jnp.isfinite(smoothness) | ~jnp.isfinite(length) | jnp.any(runaway), RESULTS.diverged),
        (jnp.any(carry.smoothness > cable.settings.smoothness_tolerance), RESULTS.max_iterations_reached),
        (jnp.any(through), RESULTS.passes_through),
        (jnp.any(slack), RESULTS.not_taut),
        (jnp.any(wrong_side), RESULTS.wrong_side),
    )
    # Invalid input gives NaN outputs, never a plausible number.
    scene, state, ev, smoothness = _nan_where(invalid, (scene, state, ev, smoothness))
    path = CablePath(
        cable=cable,
        body_poses=body_poses,
        scene=scene,
        state=state,
        evaluation=ev,
        result=result,
        smoothness=smoothness,
        num_iterations=jnp.sum(carry.iterations),
        endpoint_inside=carry.inside,
    )
    if throw:
        path = result.error_if(path, result != RESULTS.successful)
    return path
