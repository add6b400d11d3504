"""Numerical geodesic shooting with Jacobi fields (diffrax), for any implicit surface.

State (10 numbers, arc length s as time), docs/surfaces.md#geodesic-ode / Simbody's
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
- **Differentiation (default, `adjoint=None`):** forward sensitivities. The solve runs
  with `diffrax.ForwardMode` inside `jaxwrap._implicit.implicit_jvp(materialize=True)`:
  the tangent rule is the dense Jacobian of the end state with respect to every input
  (`jax.jacfwd`, ~(1 + #inputs) vector-field evaluations per step) applied to the
  incoming tangent. That map is linear, so JAX transposes it: `jvp`, `jacfwd`, `grad`,
  `jacrev` and `vmap` of each all work, and the loop stays a plain `lax.while_loop`
  that stops when the slowest lane finishes. Alternatives rejected:
  `RecursiveCheckpointAdjoint` has no forward mode, `ForwardMode` alone no reverse mode,
  and `DirectAdjoint` runs its bounded loop to `max_steps` under `vmap`. The step sizes
  are not differentiated (diffrax stops their gradient): derivatives are those of the
  discrete solution on its step grid. Any diffrax adjoint can be passed instead.
- **Failures never raise here:** a solve that runs out of steps or goes non-finite
  returns NaN end values and `RESULTS.geodesic_failed` (`throw=True` on
  `jaxwrap.shoot_geodesic` raises instead), so one bad lane of a `vmap` batch marks
  that lane only.
- **Batching:** under `vmap` the adaptive loop runs every lane until the slowest lane
  has finished (lanes that are done idle), so a batch costs as much as its longest /
  most curved member times the batch size; lanes shot with `integrate=False` take no
  step (docs/performance.md#idle-curves).
- **Two loops:** `diffrax.diffeqsolve`, or `_fused_solve`, a lean `lax.while_loop` over
  the same tableau and controller (docs/performance.md#fused-geodesic-loop), the
  default for `Ellipsoid` and `Torus` (`GeodesicIntegrator.loop`). On a surface with
  `geodesic_chart` (both of these) the fused loop integrates the same geodesic in the
  surface's own coordinates, whose states are on the surface by construction
  (docs/surfaces.md#geodesic-charts); the state, the tolerances' sizes and the
  projection are the chart's, start and end states are Cartesian.
"""

import functools
from collections.abc import Sequence

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx
from jaxtyping import Array, ArrayLike, Bool, Float, Int, Real

from .._implicit import implicit_jvp
from .._misc import batched_like, positive_or_one
from .._results import RESULTS
from ._darboux import darboux_frame, gaussian_curvature_from, geodesic_inputs
from ._geodesic import Geodesic, make_geodesic


class GeodesicIntegrator(eqx.Module):
    """Settings for numerical geodesic shooting (the accuracy is passed separately).

    **Fields:**

    - `solver`: an adaptive explicit diffrax solver; None (default): the surface's
      `geodesic_solver`, `diffrax.Tsit5()` on every surface but the ellipsoid and the
      torus, which take `diffrax.Dopri8()` (docs/performance.md#geodesic-solver).
    - `max_steps`: step budget per geodesic (Simbody: 10 000).
    - `adjoint`: `None` for the forward-sensitivity rule described in this module (both
      differentiation modes, vmap-friendly), or any `diffrax.AbstractAdjoint`, used as is.
    - `projection_iterations`: Newton steps of the coordinate projection after each step
      (not used by the fused loop on a surface with a geodesic chart, whose projection
      is the chart's own, docs/surfaces.md#geodesic-charts).
    - `loop`: which loop steps the solver. ``"diffrax"``: `diffrax.diffeqsolve` (any
      adaptive solver and adjoint); ``"fused"``: jaxwrap's lean loop over the solver's
      Butcher tableau, same numerics, several times faster under `vmap`
      (docs/performance.md#fused-geodesic-loop; explicit Runge-Kutta solvers only, no
      `adjoint` but `diffrax.ForwardMode`); ``None`` (default): the surface's choice, "fused" for `Ellipsoid` and
      `Torus`, "diffrax" for every other surface.
    """

    solver: diffrax.AbstractAdaptiveSolver | None = None
    max_steps: int = eqx.field(static=True, default=4096)
    adjoint: diffrax.AbstractAdjoint | None = None
    projection_iterations: int = eqx.field(static=True, default=2)
    loop: str | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        if self.loop not in (None, "fused", "diffrax"):
            raise ValueError(f"GeodesicIntegrator.loop must be None, 'fused' or 'diffrax', got {self.loop!r}")
        if self.loop == "fused":
            if self.adjoint is not None and not isinstance(self.adjoint, diffrax.ForwardMode):
                raise ValueError(
                    "GeodesicIntegrator(loop='fused') takes no adjoint but diffrax.ForwardMode (plain forward "
                    "mode through the loop); use loop='diffrax' for another"
                )
            if self.solver is not None and not isinstance(self.solver, diffrax.AbstractERK):
                raise ValueError(
                    f"GeodesicIntegrator(loop='fused') needs an explicit Runge-Kutta solver with an error "
                    f"estimate (e.g. diffrax.Tsit5, Dopri5, Dopri8), got {type(self.solver).__name__}"
                )


_DEFAULT_SOLVER = diffrax.Tsit5()
# An error estimate sizes the next step only where it is this far above its own
# rounding and above NEGLIGIBLE (scaled); below, it counts as zero (`_fused_solve`,
# docs/performance.md#rounding-level-error-estimates).
NOISE_RATIO = 1e4
NEGLIGIBLE = 1e-3


def solver_for(surface, integrator: GeodesicIntegrator) -> diffrax.AbstractAdaptiveSolver:
    """The integrator's solver, or the surface's `geodesic_solver` where it names none."""
    if integrator.solver is not None:
        return integrator.solver
    return getattr(surface, "geodesic_solver", _DEFAULT_SOLVER)


def geodesic_vector_field(sigma, y: Float[Array, "10"], args) -> Float[Array, "10"]:
    """dy/dσ for normalised time σ = s/ℓ; `args = (surface, ℓ)`."""
    del sigma
    surface, length = args
    p, v = y[0:3], y[3:6]
    a, a_dot, r, r_dot = y[6], y[7], y[8], y[9]
    g = surface.gradient(p)
    H = surface.hessian(p)
    g2 = jnp.dot(g, g)
    lam = jnp.dot(v, H @ v) / positive_or_one(g2)
    K = gaussian_curvature_from(g, H)
    dy = jnp.concatenate([v, -lam * g, jnp.stack([a_dot, -K * a, r_dot, -K * r])])
    return length * dy


def _project_state(surface, y: Float[Array, "10"], iterations: int) -> Float[Array, "10"]:
    """Coordinate projection: p onto f = 0 (Newton), v tangent and unit; Jacobi untouched."""
    p = surface.project(y[0:3], iterations)
    g = surface.gradient(p)
    g2 = jnp.dot(g, g)
    v = y[3:6] - g * (jnp.dot(g, y[3:6]) / positive_or_one(g2))
    v = v / jnp.sqrt(positive_or_one(jnp.dot(v, v)))
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


def length_scale(surface, dtype) -> Float[Array, ""]:
    """The surface's `extent` as its unit of length (1 where it is unbounded), without a
    derivative: the size the solver's tolerances and step units follow
    (docs/cable.md#scale)."""
    extent = jnp.asarray(surface.extent(), dtype)
    return jax.lax.stop_gradient(jnp.where(jnp.isfinite(extent) & (extent > 0), extent, 1.0))


def _effective_accuracy(accuracy: float | Float[Array, ""], dtype, surface=None) -> Float[Array, "10"]:
    """Per state component, the absolute tolerance the step controller works to:
    `accuracy` (at least 100 ulp) times the component's size (docs/cable.md#scale).

    The sizes scale with the surface's `extent` ℓ: positions and the Jacobi field r are
    lengths (~ℓ), the unit tangent and a are ~1, and a' is a curvature (~1/ℓ). So the
    accuracy is relative to the scene's size, and the same scene at any size is
    integrated alike; and never asking for less than 100 ulp of a component keeps the
    error estimates above round-off, where the step size would collapse (float32 on a
    millimetre-sized surface)."""
    L = jnp.ones((), dtype) if surface is None else length_scale(surface, dtype)
    one = jnp.ones((), dtype)
    size = jnp.stack([L, L, L, one, one, one, one, 1 / L, L, one])
    return floored_accuracy(accuracy, dtype) * size


def floored_accuracy(accuracy, dtype) -> Float[Array, ""]:
    """`accuracy`, at least 100 ulp of `dtype`."""
    return jnp.maximum(jnp.asarray(accuracy, dtype), 100 * jnp.finfo(dtype).eps)


def _for_adjoint(solver, adjoint):
    """Pick the Runge-Kutta stage loop each diffrax adjoint needs (as diffrax itself does
    for unwrapped solvers): a plain `lax` scan for forward mode, `bounded` for
    `DirectAdjoint`."""
    if isinstance(solver, diffrax.AbstractRungeKutta) and solver.scan_kind is None:
        if isinstance(adjoint, diffrax.ForwardMode):
            return eqx.tree_at(lambda s: s.scan_kind, solver, "lax", is_leaf=lambda x: x is None)
        if isinstance(adjoint, diffrax.DirectAdjoint):
            return eqx.tree_at(lambda s: s.scan_kind, solver, "bounded", is_leaf=lambda x: x is None)
    return solver


class _Solved(eqx.Module):
    ys: Float[Array, "k 10"]
    num_steps: Int[Array, ""]
    result: RESULTS


def _solve(surface, y0, length, accuracy, ts, integrator, adjoint, integrate=None) -> _Solved:
    """The diffrax solve; failures become NaN states and `RESULTS.geodesic_failed`.
    Where `integrate` is False the interval is empty: no step is taken and the start
    state is returned (the solver loop's curves that do not move this iteration)."""
    dtype = y0.dtype
    saveat = diffrax.SaveAt(t1=True) if ts is None else diffrax.SaveAt(ts=ts)
    t1 = jnp.ones((), dtype) if integrate is None else jnp.where(integrate, 1.0, 0.0).astype(dtype)
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(geodesic_vector_field),
        _OnSurface(_for_adjoint(solver_for(surface, integrator), adjoint), integrator.projection_iterations),
        t0=jnp.zeros((), dtype),
        t1=t1,
        dt0=None,
        y0=y0,
        args=(surface, length),
        saveat=saveat,
        stepsize_controller=diffrax.PIDController(
            rtol=0.0, atol=_effective_accuracy(accuracy, dtype, surface), norm=optx.max_norm
        ),
        max_steps=integrator.max_steps,
        adjoint=adjoint,
        throw=False,
    )
    ok = (sol.result == diffrax.RESULTS.successful) & jnp.all(jnp.isfinite(sol.ys))
    return _Solved(
        ys=jnp.where(ok, sol.ys, jnp.nan),
        num_steps=jax.lax.stop_gradient(sol.stats["num_steps"]).astype(jnp.int32),
        result=RESULTS.where(ok, RESULTS.successful, RESULTS.geodesic_failed),
    )


def _fused_solve(surface, y0, length, accuracy, integrator, integrate=None, first_step=None) -> _Solved:
    """The geodesic ODE on [0, 1] with the integrator's explicit Runge-Kutta tableau,
    stepped by a plain `lax.while_loop` whose carry is only (σ, dσ, y, f(y), steps)
    (docs/performance.md#fused-geodesic-loop).

    The same numerics as the diffrax solve: the tableau, error estimate, first-same-as-
    last stage, Hairer's initial step, the integral controller (safety 0.9, factors 0.2
    and 10, no growth after a rejection), `_effective_accuracy` in the max norm,
    projection after every accepted step; one difference: an error estimate at its own
    rounding level counts as zero (docs/performance.md#rounding-level-error-estimates).
    What it saves is diffrax's general loop state (dense output, save buffers, event and
    progress machinery), which under `vmap` is copied through a `select` at every step of
    every lane.

    Step sizes carry no derivative (as in diffrax); forward mode through the loop gives
    the derivatives of the discrete solution."""
    solver = solver_for(surface, integrator)
    tableau = solver.tableau
    a_rows = [np.asarray(a, float) for a in tableau.a_lower]
    b_sol, b_err = np.asarray(tableau.b_sol, float), np.asarray(tableau.b_error, float)
    error_order = solver.error_order(diffrax.ODETerm(geodesic_vector_field))
    dtype = y0.dtype
    eps = float(jnp.finfo(dtype).eps)
    t_end = jnp.ones((), dtype) if integrate is None else jnp.where(integrate, 1.0, 0.0).astype(dtype)
    if surface.geodesic_chart:  # the surface's own coordinates (docs/surfaces.md#geodesic-charts)
        atol = floored_accuracy(accuracy, dtype) * surface.chart_sizes(dtype)
        y_start = y0
        y0 = surface.chart_from_state(y0)

        def field(z):
            return length * surface.chart_field(z)

        def project(z):
            return surface.chart_project(z)
    else:
        atol = _effective_accuracy(accuracy, dtype, surface)

        def field(y):
            return geodesic_vector_field(None, y, (surface, length))

        def project(y):
            return _project_state(surface, y, integrator.projection_iterations)

    def norm(x):
        return jnp.max(jnp.abs(x) / jax.lax.stop_gradient(atol))

    # Hairer's initial step (as diffrax's `PIDController` chooses it, rtol = 0).
    f0 = field(y0)
    d0, d1 = jax.lax.stop_gradient((norm(y0), norm(f0)))
    small = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = jnp.where(small, 1e-6, 0.01 * d0 / jnp.where(small, 1.0, d1))
    d2 = jax.lax.stop_gradient(norm(field(y0 + h0 * f0) - f0) / h0)
    max_d = jnp.maximum(d1, d2)
    h1 = jnp.where(
        max_d <= 1e-15, jnp.maximum(1e-6, h0 * 1e-3), (0.01 / jnp.where(max_d > 0, max_d, 1.0)) ** (1 / error_order)
    )
    dt0 = jnp.minimum(100 * h0, h1).astype(dtype)
    if first_step is not None:
        # The caller's first step, in arc length (the cable solver: remembered from the
        # curve's previous shot or sized by the curvature at its start): it skips the ramp
        # from Hairer's cautious first step (docs/performance.md#remembered-first-step).
        remembered = first_step / jnp.where(length > 0, length, 1.0)
        dt0 = jnp.where((first_step > 0) & (length > 0), jnp.minimum(remembered, 1.0), dt0).astype(dtype)

    def step(carry):
        t, dt, y, f, steps, ok = carry
        last = dt >= t_end - t
        h = jnp.where(last, t_end - t, dt)
        ks = [f]
        for row in a_rows:
            ks.append(field(y + h * sum(float(a) * k for a, k in zip(row, ks) if a != 0)))
        y1 = y + h * sum(float(b) * k for b, k in zip(b_sol, ks) if b != 0)
        error = h * sum(float(e) * k for e, k in zip(b_err, ks) if e != 0)
        finite = jnp.all(jnp.isfinite(y1)) & jnp.all(jnp.isfinite(error))
        scaled = jax.lax.stop_gradient(norm(error))
        accept = finite & (scaled < 1)
        # An estimate too near its own rounding to size a step reliably counts as zero:
        # the step grows by the largest factor, so that rounding (which differs between
        # a batched and a single program) never sizes the next step
        # (docs/performance.md#rounding-level-error-estimates).
        rounding = eps * jnp.abs(h) * sum(abs(float(e)) * jnp.abs(k) for e, k in zip(b_err, ks) if e != 0)
        negligible = scaled <= jnp.minimum(NOISE_RATIO * jax.lax.stop_gradient(norm(rounding)), NEGLIGIBLE)
        inverse = jnp.where((scaled > 0) & ~negligible, 1 / jnp.where(scaled > 0, scaled, 1.0), jnp.inf)
        factor = jnp.clip(0.9 * inverse ** (1 / error_order), 0.2, jnp.where(accept, 10.0, 0.9))
        f1 = ks[-1] if tableau.fsal else field(y1)
        projected = project(y1)
        return (
            jnp.where(accept, jnp.where(last, t_end, t + h), t),
            jax.lax.stop_gradient(h * factor),
            jnp.where(accept, projected, y),
            jnp.where(accept, f1, f),
            steps + 1,
            ok & finite,
        )

    def unfinished(carry):
        t, _, _, _, steps, ok = carry
        return (t < t_end) & (steps < integrator.max_steps) & ok

    zero = jnp.zeros((), dtype)
    # Every lane stops on its own, so under `vmap` every carry is batched from the start
    # and the step is batched once, not three times
    # (docs/performance.md#loops-batched-in-one-pass).
    init = (zero, dt0, y0, f0, jnp.zeros((), jnp.int32), jnp.ones((), bool))
    t, _, y1, _, steps, ok = jax.lax.while_loop(
        unfinished, step, batched_like(init, (init, eqx.filter(surface, eqx.is_array)))
    )
    if surface.geodesic_chart:
        # An unmoved curve keeps its start state exactly (not its round trip through the chart).
        y1 = jnp.where(t > 0, surface.state_from_chart(y1), y_start)
    ok = ok & (t >= t_end) & jnp.all(jnp.isfinite(y1))
    return _Solved(
        ys=jnp.where(ok, y1, jnp.nan)[None],
        num_steps=jax.lax.stop_gradient(steps),
        result=RESULTS.where(ok, RESULTS.successful, RESULTS.geodesic_failed),
    )


def _uses_fused_loop(surface, integrator, ts) -> bool:
    """Whether a shot takes `_fused_solve`: no samples asked, no adjoint but plain
    forward mode (which the fused loop is, under `jax.jvp`), and the integrator's
    `loop` (or the surface's `geodesic_loop` when it is None) is "fused". A surface's
    choice gives way to diffrax for a solver that is no explicit Runge-Kutta pair."""
    loop = integrator.loop if integrator.loop is not None else getattr(surface, "geodesic_loop", "diffrax")
    adjoint_ok = integrator.adjoint is None or isinstance(integrator.adjoint, diffrax.ForwardMode)
    explicit = isinstance(solver_for(surface, integrator), diffrax.AbstractERK)
    return ts is None and adjoint_ok and loop == "fused" and explicit


def _forward_sensitivity_solve(_, inputs, *, integrator):
    surface, y0, length, accuracy, ts, integrate, first_step = inputs
    if _uses_fused_loop(surface, integrator, ts):
        return (), _fused_solve(surface, y0, length, accuracy, integrator, integrate, first_step)
    return (), _solve(surface, y0, length, accuracy, ts, integrator, diffrax.ForwardMode(), integrate)


def _differentiable_solve(surface, y0, length, *, accuracy, integrator, ts, integrate=None, first_step=None) -> _Solved:
    """`_solve`, differentiated by forward sensitivities (module docstring) unless the
    integrator names its own diffrax adjoint. `first_step` (arc length, no derivative)
    only reaches the fused loop; diffrax chooses its own."""
    if integrator.adjoint is not None:
        if _uses_fused_loop(surface, integrator, ts):  # plain forward mode through the loop
            return _fused_solve(surface, y0, length, accuracy, integrator, integrate, first_step)
        return _solve(surface, y0, length, accuracy, ts, integrator, integrator.adjoint, integrate)
    rule = functools.partial(_forward_sensitivity_solve, integrator=integrator)
    inputs = (surface, y0, length, jnp.asarray(accuracy, y0.dtype), ts, integrate, first_step)
    _, solved = implicit_jvp(lambda x: rule((), x), rule, inputs, materialize=True)
    return solved


def _prepare(surface, point, tangent, length):
    point, tangent, length = geodesic_inputs(point, tangent, length)
    return _initial_state(surface, point, tangent), length


def shoot_numerically(
    surface,
    point: Real[ArrayLike, "3"] | Sequence,
    tangent: Real[ArrayLike, "3"] | Sequence,
    length: Real[ArrayLike, ""] | Sequence,
    *,
    accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
    integrator: GeodesicIntegrator | None = None,
    integrate: Bool[Array, ""] | None = None,
    first_step: Real[ArrayLike, ""] | None = None,
) -> Geodesic:
    """Shoot a geodesic on any surface by integrating the geodesic ODE (see module doc).

    **Arguments:**

    - `surface`: any `jaxwrap.AbstractSurface`.
    - `point`, `tangent`, `length`: start point (projected onto the surface), start
      direction (projected onto the tangent plane) and arc length ℓ ≥ 0.
    - `accuracy`: error bound per step on every state, relative to its size: the
      surface's `extent()` ℓ for positions (Simbody's absolute
      `curve_segment_accuracy` where ℓ = 1; docs/cable.md#scale), default 1e-9; floored
      at 100 ulp of the working dtype. Traced: a new value does not recompile.
    - `integrator`: `GeodesicIntegrator` settings.
    - `integrate`: where False, no step is taken and the end state is the start's (the
      result is wrong unless it is discarded); for the cable solver, whose batched
      loop would otherwise integrate every curve to the length of the longest one that
      moves (docs/performance.md#idle-curves). No derivative flows through it.
    - `first_step`: the integrator's first step, in arc length, where it is positive
      (elsewhere, or None: Hairer's estimate, as diffrax takes it); for the cable solver,
      which reshoots each curve many times (docs/performance.md#remembered-first-step).
      It moves where the integrator's steps fall, never the accuracy a step is accepted
      at. No derivative flows through it; the fused loop only.

    **Returns:**

    A `Geodesic` (frames, κ, τ at both ends, Jacobi scalars at Q).
    """
    integrator = GeodesicIntegrator() if integrator is None else integrator
    y0, length = _prepare(surface, point, tangent, length)
    if integrate is not None:
        integrate = jax.lax.stop_gradient(jnp.asarray(integrate, bool))
    if first_step is not None:
        first_step = jax.lax.stop_gradient(jnp.asarray(first_step, y0.dtype))
    solved = _differentiable_solve(
        surface,
        y0,
        length,
        accuracy=accuracy,
        integrator=integrator,
        ts=None,
        integrate=integrate,
        first_step=first_step,
    )
    y1 = solved.ys[-1]
    return make_geodesic(
        surface,
        p_SP=y0[0:3],
        t_P=y0[3:6],
        p_SQ=y1[0:3],
        t_Q=y1[3:6],
        arc_length=length,
        jacobi_Q=jnp.stack([y1[6], y1[8]]),
        jacobi_dot_Q=jnp.stack([y1[7], y1[9]]),
        result=solved.result,
        num_steps=solved.num_steps,
    )


def sample_numerically(
    surface,
    point: Real[ArrayLike, "3"] | Sequence,
    tangent: Real[ArrayLike, "3"] | Sequence,
    length: Real[ArrayLike, ""] | Sequence,
    num_samples: int,
    *,
    accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
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
    solved = _differentiable_solve(surface, y0, length, accuracy=accuracy, integrator=integrator, ts=ts)
    return jax.vmap(lambda p: surface.project(p, integrator.projection_iterations))(solved.ys[:, 0:3])
