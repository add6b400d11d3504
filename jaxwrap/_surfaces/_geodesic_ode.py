"""Numerical geodesic shooting with Jacobi fields (diffrax), for any implicit surface.

State (10 numbers, arc length s as time), cablespan.md §2.3 / Simbody's
`GeodesicOnImplicitSurface`:

    p' = v,   v' = -λ ∇f,   λ = vᵀHv / |∇f|²        (unit-speed particle on f = 0)
    a'' = -K a,  a(0) = 1, a'(0) = 0                  (translational Jacobi field)
    r'' = -K r,  r(0) = 0, r'(0) = 1                  (rotational Jacobi field)

stored as y = [p(3), v(3), a, a', r, r'].

Design decisions:

- **Normalised time.** diffrax integrates σ ∈ [0, 1] with s = σℓ (the vector field is
  multiplied by ℓ). The integration interval is static, so ℓ = 0 needs no special case
  (the field vanishes; values and derivatives stay finite) and samples at equal arc
  length are the static times `linspace(0, 1, n)`.
- **Error control as Simbody's:** absolute tolerance `accuracy` in the max-norm over all
  ten states (Jacobi fields included), no relative tolerance.
- **No drift:** coordinate projection after every step (`_OnSurface` wraps the solver):
  a few Newton steps put p back on f = 0, v is made tangent and unit (Jacobi states are
  not projected), like Simbody's `projectIfNeeded`. The constrained ODE alone drifts
  by the accumulated local error; with projection |f(p_Q)| stays at round-off.
- **Differentiation (default, `adjoint=None`):** a `jax.custom_jvp` whose rule runs the
  solve forward-mode (`diffrax.ForwardMode`) for *all* input directions at once
  (forward sensitivities, `jax.jacfwd`), then applies that Jacobian to the incoming
  tangent. The tangent map is linear in the tangents, so JAX can transpose it: `jvp`,
  `jacfwd`, `grad`, `jacrev` and `vmap` of each all work, and the loop stays a plain
  `lax.while_loop` that stops when the slowest lane finishes. Alternatives rejected:
  `RecursiveCheckpointAdjoint` has no forward mode, `ForwardMode` no reverse mode, and
  `DirectAdjoint` (both modes) runs its bounded loop to `max_steps` under `vmap`. The
  inputs are few (point, tangent, length and a handful of surface parameters), so
  forward sensitivities cost ~(1 + #inputs) vector-field evaluations per step. The step
  sizes are not differentiated (diffrax stops their gradient): derivatives are those of
  the discrete solution on its step grid. Any diffrax adjoint can be passed instead.
- **Batching:** under `vmap` the adaptive loop runs every lane until the slowest lane
  has finished (lanes that are done idle), so a batch costs as much as its longest /
  most curved member times the batch size.
"""

from typing import TYPE_CHECKING

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from jax.flatten_util import ravel_pytree
from jaxtyping import Array, ArrayLike, Float

from ._geodesic import Geodesic, make_geodesic
from ._misc import darboux_frame, gaussian_curvature_from, geodesic_inputs

if TYPE_CHECKING:
    from ._base import AbstractSurface


class GeodesicIntegrator(eqx.Module):
    """Settings for numerical geodesic shooting (the accuracy is passed separately).

    **Fields:**

    - `solver`: an adaptive explicit diffrax solver (default `diffrax.Tsit5()`).
    - `max_steps`: step budget per geodesic (Simbody: 10 000).
    - `adjoint`: `None` for the forward-sensitivity rule described in this module (both
      differentiation modes, vmap-friendly), or any `diffrax.AbstractAdjoint`, used as is.
    - `throw`: raise (also under `jit`) when the solve fails, e.g. runs out of steps.
      With `throw=False` check `Geodesic.converged` instead.
    - `projection_iterations`: Newton steps of the coordinate projection after each step.
    """

    solver: diffrax.AbstractAdaptiveSolver = diffrax.Tsit5()
    max_steps: int = eqx.field(static=True, default=4096)
    adjoint: diffrax.AbstractAdjoint | None = None
    throw: bool = eqx.field(static=True, default=True)
    projection_iterations: int = eqx.field(static=True, default=2)


def geodesic_vector_field(sigma, y: Float[Array, "10"], args) -> Float[Array, "10"]:
    """dy/dσ for normalised time σ = s/ℓ; `args = (surface, ℓ)`."""
    del sigma
    surface, length = args
    p, v = y[0:3], y[3:6]
    a, a_dot, r, r_dot = y[6], y[7], y[8], y[9]
    g = surface.gradient(p)
    H = surface.hessian(p)
    g2 = jnp.dot(g, g)
    lam = jnp.dot(v, H @ v) / jnp.where(g2 > 0, g2, 1)
    K = gaussian_curvature_from(g, H)
    dy = jnp.concatenate([v, -lam * g, jnp.stack([a_dot, -K * a, r_dot, -K * r])])
    return length * dy


def _project_state(surface, y: Float[Array, "10"], iterations: int) -> Float[Array, "10"]:
    """Coordinate projection: p onto f = 0 (Newton), v tangent and unit; Jacobi untouched."""
    p = surface.project(y[0:3], iterations)
    g = surface.gradient(p)
    g2 = jnp.dot(g, g)
    v = y[3:6] - g * (jnp.dot(g, y[3:6]) / jnp.where(g2 > 0, g2, 1))
    v2 = jnp.dot(v, v)
    v = v / jnp.sqrt(jnp.where(v2 > 0, v2, 1))
    return jnp.concatenate([p, v, y[6:]])


class _OnSurface(diffrax.AbstractAdaptiveSolver):
    """Wraps an adaptive solver and projects the state onto the surface after each step.

    The error estimate is the wrapped solver's (of the unprojected step), as in Simbody.
    `args[0]` must be the surface. (Deliberately not a `diffrax.AbstractWrappedSolver`:
    that would make diffrax's adjoints treat it as a Runge-Kutta solver and edit fields
    it does not have; `_for_adjoint` does that edit on the wrapped solver instead.)
    """

    solver: diffrax.AbstractAdaptiveSolver
    projection_iterations: int = eqx.field(static=True)

    @property
    def term_structure(self):
        return self.solver.term_structure

    @property
    def interpolation_cls(self):  # pyright: ignore
        return self.solver.interpolation_cls

    def order(self, terms):
        return self.solver.order(terms)

    def error_order(self, terms):
        return self.solver.error_order(terms)

    def init(self, terms, t0, t1, y0, args):
        return self.solver.init(terms, t0, t1, y0, args)

    def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
        y1, y_error, dense_info, solver_state, result = self.solver.step(
            terms, t0, t1, y0, args, solver_state, made_jump
        )
        y1 = _project_state(args[0], y1, self.projection_iterations)
        return y1, y_error, dense_info, solver_state, result

    def func(self, terms, t0, y0, args):
        return self.solver.func(terms, t0, y0, args)


def _initial_state(surface, point, tangent) -> Float[Array, "10"]:
    """Project the start onto the surface and its tangent plane; Jacobi initial values."""
    p = surface.project(point)
    t = darboux_frame(surface.normal(p), tangent)[:, 0]
    one, zero = jnp.ones((), p.dtype), jnp.zeros((), p.dtype)
    return jnp.concatenate([p, t, jnp.stack([one, zero, zero, one])])


def _effective_accuracy(accuracy: float, dtype) -> float:
    # An absolute tolerance below ~100 ulp of O(1) states cannot be met: error estimates
    # are round-off there and the step size would collapse (matters in float32).
    return max(float(accuracy), 100 * float(jnp.finfo(dtype).eps))


def _for_adjoint(solver, adjoint):
    """Pick the Runge-Kutta stage loop each diffrax adjoint needs (as diffrax itself does
    for unwrapped solvers): a plain `lax` scan for forward mode, `bounded` for
    `DirectAdjoint`."""
    if isinstance(solver, diffrax.AbstractRungeKutta) and solver.scan_kind is None:
        if isinstance(adjoint, diffrax.ForwardMode):
            return eqx.tree_at(lambda s: s.scan_kind, solver, "lax", is_leaf=lambda x: x is None)
        if isinstance(adjoint, diffrax.DirectAdjoint):
            return eqx.tree_at(
                lambda s: s.scan_kind, solver, "bounded", is_leaf=lambda x: x is None
            )
    return solver


def _solve(surface, y0, length, *, accuracy, integrator, ts):
    """Raw diffrax solve. Returns (ys, stats) with stats = [num_steps, success] as floats."""
    dtype = y0.dtype
    adjoint = diffrax.ForwardMode() if integrator.adjoint is None else integrator.adjoint
    saveat = diffrax.SaveAt(t1=True) if ts is None else diffrax.SaveAt(ts=ts)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(geodesic_vector_field),
        _OnSurface(
            _for_adjoint(integrator.solver, adjoint), integrator.projection_iterations
        ),
        t0=jnp.zeros((), dtype),
        t1=jnp.ones((), dtype),
        dt0=None,
        y0=y0,
        args=(surface, length),
        saveat=saveat,
        stepsize_controller=diffrax.PIDController(
            rtol=0.0, atol=_effective_accuracy(accuracy, dtype), norm=optx.max_norm
        ),
        max_steps=integrator.max_steps,
        adjoint=adjoint,
        throw=integrator.throw,
    )
    stats = jnp.stack(
        [
            sol.stats["num_steps"].astype(dtype),
            (sol.result == diffrax.RESULTS.successful).astype(dtype),
        ]
    )
    return sol.ys, stats


def _differentiable_solve(surface, y0, length, *, accuracy, integrator, ts):
    """`_solve` with the forward-sensitivity custom JVP (see module docstring)."""
    if integrator.adjoint is not None:
        return _solve(
            surface, y0, length, accuracy=accuracy, integrator=integrator, ts=ts
        )
    dynamic, static = eqx.partition(surface, eqx.is_inexact_array)

    def solve(theta):
        surface_dynamic, y0_, length_ = theta
        return _solve(
            eqx.combine(surface_dynamic, static),
            y0_,
            length_,
            accuracy=accuracy,
            integrator=integrator,
            ts=ts,
        )

    @jax.custom_jvp
    def solve_with_sensitivities(theta):
        return solve(theta)

    @solve_with_sensitivities.defjvp
    def _jvp(primals, tangents):
        (theta,), (theta_dot,) = primals, tangents
        flat, unravel = ravel_pytree(theta)
        flat_dot, _ = ravel_pytree(theta_dot)

        def flat_solve(x):
            out = solve(unravel(x))
            return out, out

        jacobian, out = jax.jacfwd(flat_solve, has_aux=True)(flat)
        out_dot = jax.tree.map(lambda J: J @ flat_dot.astype(J.dtype), jacobian)
        return out, out_dot

    return solve_with_sensitivities((dynamic, y0, length))


def _prepare(surface, point, tangent, length):
    point, tangent, length = geodesic_inputs(point, tangent, length)
    return _initial_state(surface, point, tangent), length


def shoot_numerically(
    surface: "AbstractSurface",
    point: Float[ArrayLike, "3"],
    tangent: Float[ArrayLike, "3"],
    length: Float[ArrayLike, ""],
    *,
    accuracy: float = 1e-9,
    integrator: GeodesicIntegrator | None = None,
) -> Geodesic:
    """Shoot a geodesic on any surface by integrating the geodesic ODE (see module doc).

    **Arguments:**

    - `surface`: any `AbstractSurface`.
    - `point`, `tangent`, `length`: start point (projected onto the surface), start
      direction (projected onto the tangent plane) and arc length ℓ ≥ 0.
    - `accuracy`: absolute error bound per step on all states (default 1e-9, Simbody's
      `curve_segment_accuracy`); floored at 100 ulp of the working dtype.
    - `integrator`: `GeodesicIntegrator` settings.

    **Returns:**

    A `Geodesic` (frames, κ, τ at both ends, Jacobi scalars at Q).
    """
    integrator = GeodesicIntegrator() if integrator is None else integrator
    y0, length = _prepare(surface, point, tangent, length)
    ys, stats = _differentiable_solve(
        surface, y0, length, accuracy=accuracy, integrator=integrator, ts=None
    )
    y1 = ys[-1]
    return make_geodesic(
        surface,
        p_SP=y0[0:3],
        t_P=y0[3:6],
        p_SQ=y1[0:3],
        t_Q=y1[3:6],
        arc_length=length,
        jacobi_Q=jnp.stack([y1[6], y1[8]]),
        jacobi_dot_Q=jnp.stack([y1[7], y1[9]]),
        converged=stats[1] > 0,
        num_steps=jax.lax.stop_gradient(stats[0]).astype(jnp.int32),
    )


def sample_numerically(
    surface: "AbstractSurface",
    point: Float[ArrayLike, "3"],
    tangent: Float[ArrayLike, "3"],
    length: Float[ArrayLike, ""],
    num_samples: int,
    *,
    accuracy: float = 1e-9,
    integrator: GeodesicIntegrator | None = None,
) -> Float[Array, "num_samples 3"]:
    """Points at equal arc-length spacing along a numerically shot geodesic.

    Dense output of the same solve as `shoot_numerically`, each sample projected onto
    the surface. Arguments as `shoot_numerically`, plus `num_samples` ≥ 2 (static).
    """
    if num_samples < 2:
        raise ValueError(f"`num_samples` must be at least 2, got {num_samples}.")
    integrator = GeodesicIntegrator() if integrator is None else integrator
    y0, length = _prepare(surface, point, tangent, length)
    ts = jnp.asarray(np.linspace(0.0, 1.0, num_samples), y0.dtype)
    ys, _ = _differentiable_solve(
        surface, y0, length, accuracy=accuracy, integrator=integrator, ts=ts
    )
    return jax.vmap(lambda p: surface.project(p, integrator.projection_iterations))(
        ys[:, 0:3]
    )
