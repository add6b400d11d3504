"""Placement solving: project configurations onto a stack of constraints.

Given differentiable functions ``f_k`` of one `RobotModel`'s configuration and their
right-hand sides ``rhs_k``, `project` solves ``f_k(q) = rhs_k`` for all k from a start
``q0`` by Levenberg-Marquardt on the configuration Lie group: at the current ``q`` it
solves ``(J^T J + lambda I) dv = -J^T r`` with ``J`` the Jacobian along ``integrate``
(selections held fixed) and moves ``q <- model.integrate(q, dv)``; a step is kept only if
it lowers ``|r|`` or crosses a switch of a piecewise constraint (a pair or inside/outside
change, where the residual jumps and costs cannot be compared), and ``lambda`` shrinks
(x 1/10) on success and grows (x 10) on failure.
With ``lambda`` small this is Gauss-Newton with the minimum-norm step, what hpp's
``HierarchicalIterative`` does with its pseudo-inverse, so underdetermined placements
(the object may slide on the table) move as little as needed.

A custom `lax.while_loop` is used rather than `optimistix.least_squares` because the
iteration has to retract through ``integrate`` at every step (optimistix's solvers work in
a fixed vector chart), and because optimistix's implicit adjoint solves the normal
equations ``J^T J``, singular here. The loop is never differentiated: derivatives of the
solution come from the implicit function theorem at the converged point (see
`project`).
"""

from __future__ import annotations

from typing import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
from jaxtyping import Array, ArrayLike, Bool, Float, Int

from ._function import AbstractDifferentiableFunction


class ProjectionSolution(eqx.Module):
    """Result of `project` for one start configuration (batched under `jax.vmap`).

    - `q`: the projected configuration (nq,).
    - `success`: whether ``max |f(q) - rhs| <= tolerance``.
    - `residual`: ``max |f(q) - rhs|`` at `q`.
    - `num_steps`: iterations taken.
    """

    q: Float[Array, " nq"]
    success: Bool[Array, ""]
    residual: Float[Array, ""]
    num_steps: Int[Array, ""]


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


def _levenberg_marquardt(constraints, q0, rhs, tolerance, max_steps) -> ProjectionSolution:
    model = constraints[0].model
    nv = model.nv
    dtype = q0.dtype
    eye = jnp.eye(nv, dtype=dtype)

    def cost_of(r):
        c = jnp.sum(r * r)
        return jnp.where(jnp.isfinite(c), c, jnp.inf)

    r0 = _residual(constraints, q0, rhs)
    init = (q0, r0, cost_of(r0), jnp.asarray(1e-3, dtype), jnp.asarray(0, jnp.int32))

    def not_done(state):
        _, r, _, _, step = state
        return (jnp.max(jnp.abs(r)) > tolerance) & (step < max_steps)

    def body(state):
        q, r, cost, damping, step = state
        _, J = _residual_and_jacobian(constraints, q, rhs)
        JT = J.T
        dv = jnp.linalg.solve(JT @ J + damping * eye, -JT @ r)
        q_new = model.integrate(q, dv)
        r_new = _residual(constraints, q_new, rhs)
        cost_new = cost_of(r_new)
        # Across a switch (pair, inside/outside) the residual jumps, so comparing costs
        # says nothing: take the step (hpp's solvers always do) unless it is not finite.
        better = (cost_new < cost) | (_switched(constraints, q, q_new) & jnp.isfinite(cost_new))
        return (
            jnp.where(better, q_new, q),
            jnp.where(better, r_new, r),
            jnp.where(better, cost_new, cost),
            jnp.clip(jnp.where(better, damping / 10, damping * 10), 1e-15, 1e15),
            step + 1,
        )

    q, r, _, _, steps = jax.lax.while_loop(not_done, body, init)
    residual = jnp.max(jnp.abs(r))
    return ProjectionSolution(q, residual <= tolerance, residual, steps)


def _implicit_q(static, q_star, dynamic, rhs):
    return q_star


_implicit_q = jax.custom_jvp(_implicit_q, nondiff_argnums=(0,))


@_implicit_q.defjvp
def _implicit_q_jvp(static, primals, tangents):
    # At a solution r(q*, theta) = 0; a change d(theta) moves it by the minimum-norm
    # correction dv = -J^+ (dr/dtheta d(theta)) along integrate (J: the Jacobian at q*).
    q_star, dynamic, rhs = primals
    _, d_dynamic, d_rhs = tangents
    q_star = jax.lax.stop_gradient(q_star)

    def residual(dyn, r):
        return _residual(eqx.combine(dyn, static), q_star, r)

    _, dr = jax.jvp(residual, (dynamic, rhs), (d_dynamic, d_rhs))
    constraints = eqx.combine(jax.lax.stop_gradient(dynamic), static)
    _, J = _residual_and_jacobian(constraints, q_star, jax.lax.stop_gradient(rhs))
    dv = lx.linear_solve(lx.MatrixLinearOperator(J), -dr, solver=lx.SVD()).value
    model = constraints[0].model
    _, dq = jax.jvp(lambda v: model.integrate(q_star, v), (jnp.zeros_like(dv),), (dv,))
    return q_star, dq


@eqx.filter_jit
def project(
    constraints: AbstractDifferentiableFunction | Sequence[AbstractDifferentiableFunction],
    q0: ArrayLike,
    rhs: ArrayLike | Sequence[ArrayLike | None] | None = None,
    *,
    tolerance: float | None = None,
    max_steps: int = 60,
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
    - `tolerance`: success threshold on ``max |f(q) - rhs|``; default ``1e-12`` in
      float64, ``1e-5`` in float32.
    - `max_steps`: iteration budget.
    - `throw`: raise (through `equinox.error_if`, also under `jit`) when a projection
      fails instead of only reporting it in `success`.

    **Returns:** a `ProjectionSolution`.

    **Derivatives:** the projected ``q`` is differentiable with respect to every array
    leaf of the constraints (shape points, margins, ...) and to `rhs` by implicit
    differentiation at the solution: the tangent is the minimum-norm correction
    ``dv = -J^+ (d r / d theta) d theta`` mapped through ``integrate`` (solved by lineax
    SVD), i.e. the first-order motion of re-projecting from the solution. The loop is not
    unrolled; `q0` only picks the solution and carries no derivative.
    """
    constraints = _as_tuple(constraints)
    q0 = constraints[0].model._check_q(q0)
    rhs = _stack_rhs(constraints, rhs, q0.dtype)
    if tolerance is None:
        tolerance = 1e-12 if q0.dtype == jnp.float64 else 1e-5
    dynamic, static = eqx.partition(constraints, eqx.is_inexact_array)
    solution = _levenberg_marquardt(
        eqx.combine(jax.lax.stop_gradient(dynamic), static),
        jax.lax.stop_gradient(q0),
        jax.lax.stop_gradient(rhs),
        tolerance,
        max_steps,
    )
    q = _implicit_q(static, solution.q, dynamic, rhs)
    if throw:
        q = eqx.error_if(q, ~solution.success, "project: the constraints were not satisfied")
    return eqx.tree_at(lambda s: s.q, solution, q)
