"""Derivatives of a converged cable path by the implicit function theorem.

The solver loop runs on stop-gradient inputs (JAX cannot reverse-differentiate a
`while_loop`, and unrolling it would differentiate the iteration rather than the
solution). The converged curves ``x*`` are then given derivatives by a `jax.custom_jvp`
whose value is ``x*`` itself. Writing each curve as a natural geodesic correction ``c``
around ``x*`` (cablespan.md §2.4) reshot on its surface with parameters ``p``,
``geo(c, p)``, the path error must stay zero:

    ε(geo(c, p), X_GS, end points) = 0   ⇒   dc = -J⁻¹ (∂ε/∂geo · ∂geo/∂p dp + ∂ε/∂(X_GS, ends) d(X_GS, ends)),

with ``J = ∂ε/∂c`` the path-error Jacobian of Scholz et al. (the analytic one of
`_geometry.path_error_jacobian`, equal to autodiff's to 1e-13), solved with lineax (SVD:
a curve of zero length makes J rank deficient; the minimum-norm answer is taken). The
curves' tangent is then ``∂geo/∂c dc + ∂geo/∂p dp``. Both partials of ``geo`` come from one
forward-mode Jacobian of the geodesic shooter per obstacle (diffrax `ForwardMode`, 4 + k
directions), so a derivative costs one sensitivity solve per obstacle, and forward-only
solves pay nothing. The tangent map is
linear, so reverse mode (`grad`, `jacrev`) works by transposition.

Lifted obstacles get no derivative (their status is piecewise constant). The derivative
is exact at an exactly converged path; with the default tolerance it is accurate to about
the smoothness tolerance.
"""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
from jax.flatten_util import ravel_pytree

from .._surfaces import GeodesicIntegrator
from . import _geometry as geo
from . import _solver


def _float_part(tree):
    return eqx.partition(tree, eqx.is_inexact_array)


def _geodesic_jacobian(cable, i, geodesic):
    """d(geodesic float leaves)/d(c, surface parameters) at c = 0, (m, 4 + k)."""
    surface = cable.obstacles[i].surface
    params, static = _float_part(surface)
    flat_params, unravel = ravel_pytree(params)
    _, geo_static = _float_part(geodesic)

    # Plain forward mode through the integrator: only the 4 + k directions asked for are
    # propagated (the shooter's own JVP rule would propagate every input direction).
    integrator = GeodesicIntegrator(adjoint=diffrax.ForwardMode())

    def shoot(z):
        g = _solver.apply_correction(
            cable, i, geodesic, z[:4], surface=eqx.combine(unravel(z[4:]), static), integrator=integrator
        )
        return ravel_pytree(_float_part(g)[0])[0]

    z0 = jnp.concatenate([jnp.zeros(4, flat_params.dtype), flat_params])
    return jax.jacfwd(shoot)(z0), flat_params.size


def _error(cable, scene, state, geodesic_floats):
    geodesics = tuple(
        eqx.combine(f, _float_part(g)[1]) for f, g in zip(geodesic_floats, state.geodesics)
    )
    ev = _solver.evaluate(cable, scene, state._replace(geodesics=geodesics))
    return jnp.where((state.status != _solver.LIFTED)[:, None], ev.error, 0.0).reshape(-1)


@jax.custom_jvp
def _with_derivatives(cable, scene, state):
    return state


@_with_derivatives.defjvp
def _with_derivatives_jvp(primals, tangents):
    cable, scene, state = primals
    d_cable, d_scene, _ = tangents
    n = len(state.geodesics)
    active = state.status != _solver.LIFTED
    floats = [_float_part(g)[0] for g in state.geodesics]
    unravels = [ravel_pytree(f)[1] for f in floats]

    # One forward-mode Jacobian of the shooter per obstacle: columns (c, surface params).
    jacobians, d_geo_params = [], []
    for i, g in enumerate(state.geodesics):
        G, k = _geodesic_jacobian(cable, i, g)
        d_params = ravel_pytree(_float_part(d_cable.obstacles[i].surface)[0])[0] if k else jnp.zeros(0)
        jacobians.append(G)
        d_geo_params.append(G[:, 4:] @ d_params if k else jnp.zeros(G.shape[0], G.dtype))

    # Path-error change at fixed corrections: moved frames and end points, reshaped surfaces.
    _, d_error = jax.jvp(
        lambda sc, gf: _error(cable, sc, state, gf),
        (scene, floats),
        (d_scene, [u(d) for u, d in zip(unravels, d_geo_params)]),
    )

    ev = _solver.evaluate(cable, scene, state)
    J4 = geo.path_error_jacobian(ev.curves, geo.variations(ev.curves), ev.topo, ev.lines)
    J = J4.reshape(4 * n, 4 * n) + jnp.diag(jnp.repeat(~active, 4).astype(J4.dtype))  # lifted: dc = 0
    dc = lx.linear_solve(lx.MatrixLinearOperator(J), -d_error, solver=lx.SVD()).value.reshape(n, 4)
    dc = jnp.where(active[:, None], dc, 0.0)

    d_geodesics = []
    for i, g in enumerate(state.geodesics):
        d_flat = jnp.where(active[i], jacobians[i][:, :4] @ dc[i] + d_geo_params[i], 0.0)
        others = jax.tree.map(lambda leaf: np.zeros(np.shape(leaf), jax.dtypes.float0), _float_part(g)[1])
        d_geodesics.append(eqx.combine(unravels[i](d_flat), others))
    d_state = state._replace(
        geodesics=tuple(d_geodesics),
        status=np.zeros(state.status.shape, jax.dtypes.float0),
        tracking=jnp.zeros_like(state.tracking),
    )
    return state, d_state


def differentiable_state(cable, scene, state):
    """The converged state with derivatives attached (its value is unchanged)."""
    if not state.geodesics:
        return state
    return _with_derivatives(cable, scene, state)
