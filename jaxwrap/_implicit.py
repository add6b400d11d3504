"""Derivatives of iterative solves without differentiating their iterations.

jaxwrap's solvers (the cable path, the placement projector, geodesic integration) run
loops that JAX cannot reverse-differentiate (`lax.while_loop`) or that would
differentiate the iteration rather than the solution. They all get their derivatives
from one rule, `implicit_jvp`, in the shape of `optimistix.implicit_jvp`:

- the solve runs undifferentiated: ``root, out = fn_primal(inputs)``;
- a *rewrite* states what the solution satisfies: ``residual, out = fn_rewrite(root,
  inputs)`` with ``residual == 0`` at the root, and ``out`` recomputed from the root;
- by the implicit function theorem the root moves by
  ``d root = -A⁻¹ (∂residual/∂inputs · d inputs)`` with ``A = ∂residual/∂root`` (autodiff
  of the rewrite by default, or a given operator such as an analytic Jacobian), solved
  by ``A``'s pseudo-inverse (the minimum-norm answer when ``A`` is rank deficient; see
  `_solve_where_finite` for why not `lineax.linear_solve`), and
  ``d out = ∂out/∂root · d root + ∂out/∂inputs · d inputs``.

The rewrite is linearised once (`jax.linearize`) and that linear map serves the residual,
the operator and ``out``, so an expensive ``out`` (a reshot geodesic) is differentiated
once. The tangent map is linear in the input tangents, so JAX transposes it: `jvp`,
`jacfwd`, `grad`, `jacrev` and `vmap` of each all work.

An explicit function is the special case of an empty root (``residual = ()``). With
``materialize=True`` its tangent map is built from a dense forward-mode Jacobian
(`jax.jacfwd`), which turns a forward-only computation, such as a diffrax solve with
`diffrax.ForwardMode`, into one that reverse mode can transpose (geodesic shooting uses
this; see docs/surfaces.md#differentiating-a-geodesic).

Both functions must be pure: everything they differentiate (or that may be traced) is
passed through `inputs`, never captured in a closure, as `jax.custom_jvp` requires.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import jax.tree_util as jtu
import lineax as lx
from jax.flatten_util import ravel_pytree
from jaxtyping import PyTree


def implicit_jvp(
    fn_primal: Callable[[Any], tuple[PyTree, PyTree]],
    fn_rewrite: Callable[[PyTree, Any], tuple[PyTree, PyTree]],
    inputs: PyTree,
    *,
    operator: Callable[[PyTree, Any], lx.AbstractLinearOperator] | None = None,
    materialize: bool = False,
) -> tuple[PyTree, PyTree]:
    """``fn_primal(inputs)``, with derivatives from the implicit function theorem.

    **Arguments:**

    - `fn_primal`: ``inputs -> (root, out)``, the solve; never differentiated.
    - `fn_rewrite`: ``(root, inputs) -> (residual, out)``; ``residual`` vanishes at the
      root and ``out`` equals the primal ``out`` there.
    - `inputs`: a pytree; its floating-point arrays may carry tangents.
    - `operator`: optional ``(root, inputs) -> A``, a lineax operator for
      ``∂residual/∂root`` (default: the linearised rewrite).
    - `materialize`: explicit functions only (empty root): build the tangent map from
      a dense forward-mode Jacobian, for rewrites that JAX cannot transpose.

    **Returns:** ``(root, out)`` as `fn_primal` computes them, with tangents.
    """
    return _implicit(
        inputs,
        fn_primal=fn_primal,
        fn_rewrite=fn_rewrite,
        operator=operator,
        materialize=materialize,
    )


@eqx.filter_custom_jvp
def _implicit(inputs, *, fn_primal, fn_rewrite, operator, materialize):
    del fn_rewrite, operator, materialize
    return fn_primal(inputs)


def _is_none(x) -> bool:
    return x is None


@_implicit.def_jvp
def _implicit_jvp(primals, tangents, *, fn_primal, fn_rewrite, operator, materialize):
    (inputs,), (t_inputs,) = primals, tangents
    no_tangent = jtu.tree_map(_is_none, t_inputs, is_leaf=_is_none)
    nondiff, diff = eqx.partition(inputs, no_tangent, is_leaf=_is_none)

    def rewrite(root, diff_inputs):
        return fn_rewrite(root, eqx.combine(diff_inputs, nondiff))

    if materialize:
        return _materialized_jvp(rewrite, diff, t_inputs)

    # The root through the rule itself, not `fn_primal` (whose loop would pass no
    # derivative on): differentiating this rule again (a moment arm's gradient) then sees
    # how the root moves with the inputs, so higher derivatives are right too.
    root, out = implicit_jvp(fn_primal, fn_rewrite, inputs, operator=operator)
    (_, _), linear = jax.linearize(rewrite, root, diff)
    zero_root = jtu.tree_map(jnp.zeros_like, root)
    zero_diff = jtu.tree_map(jnp.zeros_like, diff)
    d_residual, _ = linear(zero_root, t_inputs)
    if jtu.tree_leaves(root):
        if operator is None:
            A = lx.FunctionLinearOperator(lambda r: linear(r, zero_diff)[0], jax.eval_shape(lambda: root))
        else:
            A = operator(root, inputs)
        t_root = jtu.tree_map(jnp.negative, _solve_where_finite(A, d_residual))
    else:
        t_root = zero_root
    _, t_out = linear(t_root, t_inputs)
    return (root, out), (t_root, t_out)


def _solve_where_finite(A: lx.AbstractLinearOperator, b: PyTree) -> PyTree:
    """``A⁺ b`` (the minimum-norm solution), and NaN where ``A`` is not finite (a failed
    solve: a NaN root, or a root found on NaN inputs), never an exception.

    `lineax.linear_solve` raises on a non-finite solution, and its transposed solve in
    reverse mode always does (with NaN cotangents too, e.g. from a lane whose pose is
    NaN); under `vmap` one failed lane would abort the whole batch's `grad`. So the
    solve is a product with the pseudo-inverse, a plain linear map whose transpose is
    another product: NaN stays in its lane. The pseudo-inverse is SVD-based with
    lineax's SVD cut-off (``eps · max(m, n)`` relative). Where ``A`` is not finite it is
    taken on the identity and the answer replaced by NaN, so failed lanes get NaN
    derivatives in forward and reverse mode and the other lanes their own
    (docs/cable.md#implicit-differentiation)."""
    matrix = A.as_matrix()
    m, n = matrix.shape
    ok = jnp.all(jnp.isfinite(matrix))
    safe = jnp.where(ok, matrix, jnp.eye(m, n, dtype=matrix.dtype))
    inverse = jnp.linalg.pinv(safe, rtol=jnp.finfo(matrix.dtype).eps * max(m, n))
    flat_b, _ = ravel_pytree(b)
    _, unravel = ravel_pytree(jtu.tree_map(lambda s: jnp.zeros(s.shape, s.dtype), A.in_structure()))
    # A product, not a `where`: reverse mode then carries the NaN into the lane's cotangents.
    return unravel(inverse @ flat_b * jnp.where(ok, 1.0, jnp.nan).astype(matrix.dtype))


def _materialized_jvp(rewrite, diff, t_inputs):
    """Tangent map ``J @ d inputs`` with ``J`` from `jax.jacfwd` (explicit functions)."""
    flat_diff, unravel_diff = ravel_pytree(diff)

    def flat_out(flat):
        residual, out = rewrite((), unravel_diff(flat))
        if jtu.tree_leaves(residual):
            raise ValueError("implicit_jvp(materialize=True) needs an empty root and residual")
        return ravel_pytree(eqx.filter(out, eqx.is_inexact_array))[0], out

    J, out = jax.jacfwd(flat_out, has_aux=True)(flat_diff)
    out_diff, out_rest = eqx.partition(out, eqx.is_inexact_array)
    _, unravel_out = ravel_pytree(out_diff)
    t_flat = ravel_pytree(t_inputs)[0].astype(J.dtype)
    t_out = eqx.combine(unravel_out(J @ t_flat), jtu.tree_map(lambda _: None, out_rest))
    return ((), out), ((), t_out)
