"""Placement solving: project configurations onto a stack of constraints.

Given differentiable functions ``f_k`` of one `RobotModel`'s configuration and their
right-hand sides ``rhs_k``, `project` solves ``f_k(q) = rhs_k`` for all k from a start
``q0`` by Levenberg-Marquardt on the configuration Lie group: at the current ``q`` it
solves ``(J^T J + lambda I) dv = -J^T r`` with ``J`` the Jacobian along ``integrate``
(selections held fixed) and moves ``q <- model.integrate(q, dv)``; a step is kept only if
it lowers ``|r|`` or crosses a switch of a piecewise constraint (a pair or inside/outside
change, where the residual jumps and costs cannot be compared), and ``lambda`` shrinks on
success and grows on failure (`LevenbergMarquardt` holds the schedule).
With ``lambda`` small this is Gauss-Newton with the minimum-norm step, what hpp's
``HierarchicalIterative`` does with its pseudo-inverse, so underdetermined placements
(the object may slide on the table) move as little as needed.

A custom `lax.while_loop` is used rather than `optimistix.least_squares` because the
iteration has to retract through ``integrate`` at every step (optimistix's solvers work in
a fixed vector chart), and because optimistix's implicit adjoint solves the normal
equations ``J^T J``, singular here. The loop is never differentiated: derivatives of the
solution come from the implicit function theorem at the converged point (see
`project`; the rule is `jaxwrap._implicit.implicit_jvp`). docs/contact.md#projector.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Int, Real

from .._implicit import implicit_jvp
from .._kinematics import integrate
from .._misc import all_finite, as_scalar, batched_like, check_count, check_positive, scalar_setting
from .._results import RESULTS, first_failure
from ._function import AbstractDifferentiableFunction


class LevenbergMarquardt(eqx.Module):
    """The damping schedule of `project`'s Levenberg-Marquardt iteration.

    **Fields:** `initial_damping` (λ at the start, 1e-3), `decrease` (factor on λ after
    an accepted step, 0.1), `increase` (after a rejected one, 10), and the bounds
    `min_damping` (1e-15) and `max_damping` (1e15). Pytree leaves: new values do not
    recompile under `jax.jit`.
    """

    initial_damping: float | Float[Array, ""] = eqx.field(
        default=1e-3, converter=lambda x: scalar_setting(x, "initial_damping")
    )
    decrease: float | Float[Array, ""] = eqx.field(default=0.1, converter=lambda x: scalar_setting(x, "decrease"))
    increase: float | Float[Array, ""] = eqx.field(default=10.0, converter=lambda x: scalar_setting(x, "increase"))
    min_damping: float | Float[Array, ""] = eqx.field(
        default=1e-15, converter=lambda x: scalar_setting(x, "min_damping")
    )
    max_damping: float | Float[Array, ""] = eqx.field(
        default=1e15, converter=lambda x: scalar_setting(x, "max_damping")
    )

    def __check_init__(self):
        for name in ("initial_damping", "decrease", "increase", "min_damping", "max_damping"):
            check_positive(f"LevenbergMarquardt.{name}", getattr(self, name))


class ProjectionSolution(eqx.Module):
    """Result of `project` for one start configuration (batched under `jax.vmap`).

    - `q`: the projected configuration (nq,).
    - `result`: a `jaxwrap.RESULTS` item; `success` is its boolean summary
      (``max |f(q) - rhs| <= tolerance``).
    - `residual`: ``max |f(q) - rhs|`` at `q`.
    - `num_steps`: iterations taken.
    """

    q: Float[Array, " nq"]
    result: RESULTS
    residual: Float[Array, ""]
    num_steps: Int[Array, ""]

    @property
    def success(self) -> Bool[Array, ...]:
        """``result == RESULTS.successful`` (keeps batch axes)."""
        return jnp.asarray(self.result == RESULTS.successful)


def _as_tuple(constraints) -> tuple[AbstractDifferentiableFunction, ...]:
    if isinstance(constraints, AbstractDifferentiableFunction):
        constraints = (constraints,)
    constraints = tuple(constraints)
    if not constraints:
        raise ValueError("project needs at least one constraint")
    for k, c in enumerate(constraints):
        if not isinstance(c, AbstractDifferentiableFunction):
            raise ValueError(f"constraint {k} is not a differentiable function: {type(c).__name__}")
        if (c.model.nq, c.model.nv, c.model.body_names) != (
            constraints[0].model.nq,
            constraints[0].model.nv,
            constraints[0].model.body_names,
        ):
            raise ValueError(f"constraint {k} is defined on another model than constraint 0")
    return constraints


def _stack_rhs(constraints, rhs, dtype) -> Array:
    size = sum(c.output_size for c in constraints)
    if rhs is None:
        return jnp.zeros(size, dtype)
    if isinstance(rhs, (list, tuple)):
        if len(rhs) != len(constraints):
            raise ValueError(f"got {len(rhs)} right-hand sides for {len(constraints)} constraints")
        parts = []
        for k, (c, r) in enumerate(zip(constraints, rhs)):
            r = jnp.zeros(c.output_size, dtype) if r is None else jnp.asarray(r, dtype)
            if r.shape != (c.output_size,):
                raise ValueError(f"right-hand side {k} must have shape ({c.output_size},), got {r.shape}")
            parts.append(r)
        return jnp.concatenate(parts)
    rhs = jnp.asarray(rhs, dtype)
    if rhs.shape != (size,):
        raise ValueError(f"the stacked right-hand side must have shape ({size},), got {rhs.shape}")
    return rhs


def _residual_and_jacobian(constraints, q, rhs):
    values, jacobians = zip(*(c.value_and_jacobian(q) for c in constraints))
    return jnp.concatenate(values) - rhs, jnp.concatenate(jacobians)


def _residual(constraints, q, rhs):
    return jnp.concatenate([c.value(q) for c in constraints]) - rhs


def _switched(constraints, q, q_new) -> Array:
    """Whether any constraint's discrete selection differs between `q` and `q_new`."""
    changed = jnp.asarray(False)
    for c in constraints:
        before, after = jax.tree.leaves(c.select(q)), jax.tree.leaves(c.select(q_new))
        for a, b in zip(before, after):
            changed = changed | jnp.any(a != b)
    return changed


def _levenberg_marquardt(constraints, q0, rhs, tolerance, max_steps, solver: LevenbergMarquardt):
    model = constraints[0].model
    nv = model.nv
    dtype = q0.dtype
    eye = jnp.eye(nv, dtype=dtype)

    def cost_of(r):
        c = jnp.sum(r * r)
        return jnp.where(jnp.isfinite(c), c, jnp.inf)

    r0 = _residual(constraints, q0, rhs)
    init = (q0, r0, cost_of(r0), jnp.asarray(solver.initial_damping, dtype), jnp.asarray(0, jnp.int32))

    def not_done(state):
        _, r, _, _, step = state
        return (jnp.max(jnp.abs(r)) > tolerance) & (step < max_steps)

    def body(state):
        q, r, cost, damping, step = state
        _, J = _residual_and_jacobian(constraints, q, rhs)
        JT = J.T
        dv = jnp.linalg.solve(JT @ J + damping * eye, -JT @ r)
        q_new = integrate(model, q, dv)
        r_new = _residual(constraints, q_new, rhs)
        cost_new = cost_of(r_new)
        # Across a switch (pair, inside/outside) the residual jumps, so comparing costs
        # says nothing: take the step (hpp's solvers always do) unless it is not finite.
        better = (cost_new < cost) | (_switched(constraints, q, q_new) & jnp.isfinite(cost_new))
        damping = jnp.where(better, damping * solver.decrease, damping * solver.increase)
        return (
            jnp.where(better, q_new, q),
            jnp.where(better, r_new, r),
            jnp.where(better, cost_new, cost),
            jnp.clip(damping, solver.min_damping, solver.max_damping),
            step + 1,
        )

    # A per-lane stop: every carry batched from the start under `vmap`, so the body is
    # batched once (docs/performance.md#loops-batched-in-one-pass).
    q, r, _, _, steps = jax.lax.while_loop(not_done, body, batched_like(init, init))
    return q, jnp.max(jnp.abs(r)), steps


def _solved(inputs):
    constraints, _, q_star = inputs
    return jnp.zeros(constraints[0].model.nv, q_star.dtype), q_star


def _on_solution(v, inputs):
    # At a solution r(q*, theta) = 0; along integrate(q*, v) the residual keeps vanishing
    # to first order for the minimum-norm correction v = -J^+ (dr/dtheta dtheta).
    constraints, rhs, q_star = inputs
    q = integrate(constraints[0].model, q_star, v)
    return _residual(constraints, q, rhs), q


def _project(constraints, q0, rhs, tolerance, max_steps, solver):
    fixed = jax.lax.stop_gradient((constraints, q0, rhs))
    q_star, residual, steps = _levenberg_marquardt(*fixed, tolerance, max_steps, solver)
    _, q = implicit_jvp(_solved, _on_solution, (constraints, rhs, jax.lax.stop_gradient(q_star)))
    result = first_failure(
        (~all_finite(q0, rhs), RESULTS.invalid_input),
        (~jnp.isfinite(residual), RESULTS.diverged),
        (residual > tolerance, RESULTS.max_iterations_reached),
    )
    return ProjectionSolution(q, result, residual, steps)


_project_jit = eqx.filter_jit(_project)


def project(
    constraints: AbstractDifferentiableFunction | Sequence[AbstractDifferentiableFunction],
    q0: ArrayLike | Sequence,
    rhs: ArrayLike | Sequence[ArrayLike | None] | None = None,
    *,
    tolerance: float | Real[ArrayLike, ""] | Sequence | None = None,
    max_steps: int = 60,
    solver: LevenbergMarquardt = LevenbergMarquardt(),
    throw: bool = False,
) -> ProjectionSolution:
    """Move `q0` onto ``f_k(q) = rhs_k`` for every constraint (Levenberg-Marquardt on the
    configuration Lie group; see the module docstring).

    **Arguments:**

    - `constraints`: a function (`ConvexShapeContact`, its complement or hold, or any
      `AbstractDifferentiableFunction`) or a sequence of them on one model, stacked.
    - `q0`: the start configuration (nq,). Batch over starts (and right-hand sides)
      with `jax.vmap`.
    - `rhs`: right-hand sides: None (all zero), one stacked array, or one array (or None)
      per constraint.
    - `tolerance`: success threshold on ``max |f(q) - rhs|`` (> 0); default ``1e-12`` in
      float64, ``1e-5`` in float32. Traced: a new value does not recompile.
    - `max_steps`: iteration budget (an integer >= 0, static).
    - `solver`: the `LevenbergMarquardt` damping schedule.
    - `throw`: raise (through `equinox`'s runtime errors, also under `jit`) with the
      result's message when a projection fails, instead of only reporting it.

    **Returns:** a `ProjectionSolution`.

    **Derivatives:** the projected ``q`` is differentiable with respect to every array
    leaf of the constraints (shape points, margins, ...) and to `rhs` by implicit
    differentiation at the solution: the tangent is the minimum-norm correction
    ``dv = -J^+ (d r / d theta) d theta`` mapped through ``integrate`` (solved by lineax
    SVD), i.e. the first-order motion of re-projecting from the solution. The loop is not
    unrolled; `q0` only picks the solution and carries no derivative.
    """
    constraints = _as_tuple(constraints)
    q0 = constraints[0].model.check_q(q0)
    rhs = _stack_rhs(constraints, rhs, q0.dtype)
    max_steps = check_count("max_steps", max_steps)
    if tolerance is None:
        tolerance = 1e-12 if q0.dtype == jnp.float64 else 1e-5
    tolerance = as_scalar(jnp.asarray(tolerance, q0.dtype), "tolerance")
    check_positive("tolerance", tolerance)
    if not isinstance(solver, LevenbergMarquardt):
        raise ValueError(f"solver must be a jaxwrap.LevenbergMarquardt, got {type(solver).__name__}")
    # Numbers become arrays before the jit boundary, so that new values are traced.
    solver = jax.tree.map(lambda x: jnp.asarray(x, q0.dtype), solver)
    solution = _project_jit(constraints, q0, rhs, tolerance, max_steps, solver)
    if throw:
        solution = solution.result.error_if(solution, ~solution.success)
    return solution
