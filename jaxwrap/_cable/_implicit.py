"""Derivatives of a converged cable path by the implicit function theorem.

The solver loop runs on stop-gradient inputs (JAX cannot reverse-differentiate a
`while_loop`, and unrolling it would differentiate the iteration rather than the
solution). The converged curves are then re-expressed as natural geodesic corrections
``c`` around themselves, ``c(θ)`` being defined implicitly by the path error vanishing,

    r(c, θ) = ε(shoot(x* ⊕ c; θ), θ) = 0,   θ = (body poses, cable parameters),

so ``dc/dθ = -(∂r/∂c)⁻¹ ∂r/∂θ`` (a 4n x 4n solve with lineax). Its value is ``c = 0`` (the
path is unchanged); its derivative makes every output of the path differentiable in
forward and reverse mode, at any order of `jvp`/`vjp` composition the surfaces support.
Lifted obstacles take ``r_i = c_i``, so they have no derivative (their status is
piecewise constant). The derivative is exact at an exactly converged path; with the
default tolerance it is accurate to about the smoothness tolerance.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import lineax as lx

from . import _solver


def _corrected_state(cable, state, c):
    active = state.status != _solver.LIFTED
    geodesics = tuple(
        _solver._select(active[i], _solver.apply_correction(cable, i, g, c[i]), g)
        for i, g in enumerate(state.geodesics)
    )
    return state._replace(geodesics=geodesics)


def _residual(c, cable, scene, state):
    active = state.status != _solver.LIFTED
    ev = _solver.evaluate(cable, scene, _corrected_state(cable, state, c))
    return jnp.where(active[:, None], ev.error, c).reshape(-1)


@jax.custom_jvp
def _corrections(cable, scene, state):
    n = len(state.geodesics)
    return jnp.zeros((n, 4), scene.origin.dtype)


@_corrections.defjvp
def _corrections_jvp(primals, tangents):
    cable, scene, state = primals
    d_cable, d_scene, _ = tangents
    c0 = _corrections(cable, scene, state)
    J = jax.jacfwd(lambda c: _residual(c.reshape(c0.shape), cable, scene, state))(c0.reshape(-1))
    _, dr = jax.jvp(lambda cb, sc: _residual(c0, cb, sc, state), (cable, scene), (d_cable, d_scene))
    # SVD: a curve of zero length makes ∂r/∂c rank deficient; take the minimum-norm answer.
    dc = lx.linear_solve(lx.MatrixLinearOperator(J), -dr, solver=lx.SVD()).value
    return c0, dc.reshape(c0.shape)


def differentiable_state(cable, scene, state):
    """The converged state with derivatives attached (value unchanged)."""
    if not state.geodesics:
        return state
    return _corrected_state(cable, state, _corrections(cable, scene, state))
