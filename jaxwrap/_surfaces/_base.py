"""`AbstractSurface`: the interface every obstacle surface implements (frame S).

Sign conventions follow Simbody (docs/surfaces.md#sign-conventions), which the cable
solver relies on:

- `implicit(x)` is f(x) > 0 inside, 0 on and < 0 outside the surface, scaled exactly as
  Simbody's ContactGeometry scales it (tolerances on |f| depend on it).
- The gradient points inward; the outward unit normal is n = -∇f/|∇f|.
- `curvature(x, d)` is ContactGeometry's sign, k = -dᵀHd/|∇f|, positive on convex surfaces
  (sphere: +1/r). `normal_curvature(x, d)` is **CableSpan's** sign κ = -k, so that
  dt/ds = κ n along a geodesic (sphere: -1/r). Use `normal_curvature` for cables.
- `geodesic_torsion(x, d)` is ContactGeometry's τ = -((H d)·(∇f × d))/|∇f|², which
  CableSpan uses unflipped; with it the Darboux frame (t, n, b) obeys
  t' = κ n, n' = -κ t + τ b, b' = -τ n.
"""

import abc
from collections.abc import Sequence
from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Real

from .._misc import batched_like, positive_or_one, safe_norm, safe_normalize, solve_3x3
from .._results import RESULTS
from ._darboux import gaussian_curvature_from
from ._geodesic import Geodesic, zero_length_geodesic_at
from ._geodesic_ode import GeodesicIntegrator, sample_numerically, shoot_numerically
from ._touchdown import NearestPointOnLine, TouchdownSearch, nearest_point_on_line

# Simbody's last-resort normal where the gradient vanishes.
_FALLBACK_NORMAL = (1.0, 1.1, 1.2)


class AbstractSurface(eqx.Module):
    """A smooth surface given implicitly in its local frame S.

    Subclasses implement `implicit`; they may override `gradient`/`hessian` with closed
    forms and `shoot_geodesic`/`geodesic_points`/`project` where the geometry allows.
    Every method works on a single point; use `jax.vmap` for batches (over points and
    over the surface's own array parameters alike).

    The class variables `geodesic_loop` ("diffrax" here) and `geodesic_solver`
    (`diffrax.Tsit5()` here) pick the loop and the solver of numerically shot geodesics
    when the `GeodesicIntegrator` leaves them open. `geodesic_chart` (False here) says
    that the fused loop integrates in the surface's own coordinates, through the
    methods `chart_from_state`, `state_from_chart`, `chart_field`, `chart_project` and
    `chart_sizes` (`Ellipsoid`, `Torus`; docs/surfaces.md#geodesic-charts).
    """

    geodesic_loop: ClassVar[str] = "diffrax"
    geodesic_solver: ClassVar[diffrax.AbstractAdaptiveSolver] = diffrax.Tsit5()
    geodesic_chart: ClassVar[bool] = False

    @abc.abstractmethod
    def implicit(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        """Implicit function f(x): > 0 inside, 0 on, < 0 outside (Simbody's scaling)."""

    def extent(self) -> Float[Array, ""]:
        """A radius about the origin of S within which the part of the surface a cable can
        wrap lies (sphere: r; torus: R + a; an infinite cylinder: its radius, the axis
        direction being bounded by the cable's own end points). The cable solver rejects
        paths whose contact points leave the ball that holds the scene
        (docs/cable.md#results). Infinite (no bound) unless a surface says otherwise."""
        return jnp.asarray(jnp.inf)

    def across(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        """`x` (a vector in S) with the components that do not tell a wrap's sides apart
        removed: itself by default; a cylinder drops its axial component, so that its sides
        are those of the cross-section circle, as in MuJoCo (docs/cable.md#wrap-side)."""
        return x

    def is_surface_defined(self, x: Float[Array, "3"]) -> Bool[Array, ""]:
        """Whether `x` lies in the domain where the surface is defined (Simbody's
        `isSurfaceDefined`): everywhere by default; a height map's grid."""
        return jnp.ones((), dtype=bool)

    def gradient(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        """∇f(x) (points inward)."""
        return jax.grad(self.implicit)(x)

    def hessian(self, x: Float[Array, "3"]) -> Float[Array, "3 3"]:
        """Hessian of f at x."""
        return jax.hessian(self.implicit)(x)

    def normal(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        """Outward unit normal -∇f/|∇f| (Simbody's fixed fallback where ∇f = 0)."""
        fallback = jnp.asarray(_FALLBACK_NORMAL, x.dtype)
        return safe_normalize(-self.gradient(x), fallback / jnp.linalg.norm(fallback))

    def curvature(self, x: Float[Array, "3"], d: Float[Array, "3"]) -> Float[Array, ""]:
        """Normal curvature along unit tangent `d`, **ContactGeometry sign** (convex > 0).

        k = -dᵀHd/|∇f|; Simbody's `calcSurfaceCurvatureInDirection`. Sphere: +1/r.
        """
        return -_quadratic(self.hessian(x), d) / positive_or_one(safe_norm(self.gradient(x)))

    def normal_curvature(self, x: Float[Array, "3"], d: Float[Array, "3"]) -> Float[Array, ""]:
        """Normal curvature along unit tangent `d`, **CableSpan sign** (convex < 0).

        κ = -k = dᵀHd/|∇f|, so that dt/ds = κ n along a geodesic. Sphere: -1/r.
        """
        return -self.curvature(x, d)

    def geodesic_torsion(self, x: Float[Array, "3"], d: Float[Array, "3"]) -> Float[Array, ""]:
        """Geodesic torsion along unit tangent `d`: τ = -((H d)·(∇f × d))/|∇f|²."""
        g = self.gradient(x)
        return -jnp.dot(self.hessian(x) @ d, jnp.cross(g, d)) / positive_or_one(jnp.dot(g, g))

    def gaussian_curvature(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        """Gaussian curvature K = ∇fᵀ adj(H) ∇f / |∇f|⁴ (sphere: 1/r²)."""
        return gaussian_curvature_from(self.gradient(x), self.hessian(x))

    def project(self, x: Float[Array, "3"], num_iterations: int = 10) -> Float[Array, "3"]:
        """Project `x` onto the surface by Newton steps along the gradient.

        x ← x - ∇f f/|∇f|² (Simbody's `projectDownhillToNearestPoint` iteration), run a
        fixed `num_iterations` times so that it is differentiable in both modes (the
        derivative of the iterates converges with them) and has a static cost under
        `vmap`. Near the surface Newton converges quadratically; 10 steps reach machine
        precision from any reasonable start.

        **Arguments:**

        - `x`: point in S.
        - `num_iterations`: number of Newton steps (static).

        **Returns:**

        The projected point.
        """

        def newton(_, y):
            g = self.gradient(y)
            return y - g * (self.implicit(y) / positive_or_one(jnp.dot(g, g)))

        return jax.lax.fori_loop(0, num_iterations, newton, x)

    def project_downhill(self, q: Float[Array, "3"]) -> Float[Array, "3"]:
        """The surface point x whose normal passes through `q` (Q - x ∥ n(x)), found from q
        by Simbody's `projectDownhillToNearestPoint`; CableSpan places a hinted obstacle's
        initial contact point there (docs/cable.md#initial-state).

        Unlike `project` (Newton steps along the gradient, the projection of Simbody's
        geodesic shooter), this is the orthogonal foot point: on an ellipsoid or torus the
        two differ for points off the surface. Damped Newton on (f(x), (q-x)·t, (q-x)·b)
        with t, b fixed tangents at q re-projected at x, a step limit of a quarter of the
        smaller curvature radius at q, halving while the rms residual grows, stopping at
        rms ≤ 2e-14 (SignificantReal), on a stalled step (< 1e-12) or after 31 steps. Not
        meant to be differentiated (loops are `lax.while_loop`).
        """
        dtype = q.dtype
        ftol = jnp.finfo(dtype).eps ** (7 / 8)
        n_q = self.normal(q)
        # UnitVec3::perp(): cross with the coordinate axis least aligned with n.
        a = jnp.abs(n_q)
        axis = jnp.where(a[0] <= a[1], jnp.where(a[0] <= a[2], 0, 2), jnp.where(a[1] <= a[2], 1, 2))
        t_q = safe_normalize(jnp.cross(n_q, jnp.eye(3, dtype=dtype)[axis]), jnp.asarray((1.0, 0, 0), dtype))
        b_q = jnp.cross(t_q, n_q)
        k = jnp.maximum(jnp.abs(self.curvature(q, t_q)), jnp.abs(self.curvature(q, b_q)))
        scale = jnp.minimum(jnp.where(k > 0, 1 / jnp.where(k > 0, k, 1), jnp.inf), 1000.0)

        def residual(x):
            n = self.normal(x)
            r = q - x
            t = t_q - n * jnp.dot(t_q, n)
            b = b_q - n * jnp.dot(b_q, n)
            return jnp.stack([self.implicit(x), jnp.dot(r, t), jnp.dot(r, b)])

        def rms(f):
            return jnp.sqrt(jnp.dot(f, f) / 3)

        def newton(carry):
            x, err, count, _ = carry
            g, H = self.gradient(x), self.hessian(x)
            g_norm = safe_norm(g)
            n = -g / positive_or_one(g_norm)
            r = q - x
            t = t_q - n * jnp.dot(t_q, n)
            b = b_q - n * jnp.dot(b_q, n)
            f = jnp.stack([self.implicit(x), jnp.dot(r, t), jnp.dot(r, b)])
            Nx = -((jnp.eye(3, dtype=dtype) - jnp.outer(n, n)) / positive_or_one(g_norm)) @ H
            Tx = -Nx * jnp.dot(t_q, n) - jnp.outer(n, t_q @ Nx)
            Bx = -Nx * jnp.dot(b_q, n) - jnp.outer(n, b_q @ Nx)
            J = jnp.stack([g, -t + r @ Tx, -b + r @ Bx])
            dx = solve_3x3(J, f)
            dx_rms = rms(dx)
            lam0 = jnp.minimum(1.0, 0.25 * scale / jnp.where(dx_rms > 0, dx_rms, 1))

            def halve(c):
                lam, _, _ = c
                lam = lam / 2
                x_new = x - lam * dx
                return lam, x_new, rms(residual(x_new))

            x0 = x - lam0 * dx
            init = (lam0, x0, rms(residual(x0)))
            lam, x_new, err_new = jax.lax.while_loop(
                lambda c: (c[2] > err) & (c[0] > 1e-9),
                halve,
                batched_like(init, (init, x, err, eqx.filter(self, eqx.is_array))),
            )
            stalled = (err_new > ftol) & (dx_rms * lam < 1e-12)
            count = count + 1
            stop = stalled | (count > 30)
            return x_new, err_new, count, stop

        err0 = jnp.abs(self.implicit(q)) / jnp.sqrt(jnp.asarray(3.0, dtype))
        # Per-lane stopping rules: every carry batched from the start under `vmap`, so each
        # loop body is batched once, not three times
        # (docs/performance.md#loops-batched-in-one-pass).
        init = (q, err0, jnp.zeros((), jnp.int32), jnp.zeros((), bool))
        x, _, _, _ = jax.lax.while_loop(
            lambda c: (c[1] > ftol) & ~c[3], newton, batched_like(init, (init, eqx.filter(self, eqx.is_array)))
        )
        return jnp.where(jnp.abs(self.implicit(q)) <= ftol, q, x)

    def nearest_point_on_line(
        self,
        a: Real[ArrayLike, "3"] | Sequence,
        b: Real[ArrayLike, "3"] | Sequence,
        guess: Real[ArrayLike, "3"] | Sequence,
        search: TouchdownSearch = TouchdownSearch(),
    ) -> NearestPointOnLine:
        """Touchdown search: the point of segment [a, b] deepest towards the surface.

        Simbody's `calcNearestPointOnLineImplicitly` (docs/surfaces.md#touchdown-line-search):
        a clamped, damped Newton search on the line parameter that stops as soon as the
        line point falls below the surface (touchdown). See `NearestPointOnLine` for the
        outputs and `TouchdownSearch` for the settings.
        """
        return nearest_point_on_line(self, a, b, guess, search)

    def shoot_geodesic(
        self,
        point: Real[ArrayLike, "3"] | Sequence,
        tangent: Real[ArrayLike, "3"] | Sequence,
        length: Real[ArrayLike, ""] | Sequence,
        *,
        accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
        integrator: GeodesicIntegrator | None = None,
    ) -> Geodesic:
        """Shoot the geodesic of arc length `length` from `point` in direction `tangent`.

        The start point is projected onto the surface and the tangent onto its tangent
        plane (as Simbody's shooter does), so corrected, slightly-off start data is fine.
        This default integrates the geodesic ODE with Jacobi fields numerically (see
        `GeodesicIntegrator`); Sphere and Cylinder override it with closed forms.
        Zero length returns the start frame (no NaN in values or derivatives). A failed
        integration never raises: it returns NaN end values with `result ==
        RESULTS.geodesic_failed` (`jaxwrap.shoot_geodesic(..., throw=True)` raises).

        **Arguments:**

        - `point`: start point P (in S).
        - `tangent`: start direction.
        - `length`: arc length ℓ ≥ 0.
        - `accuracy`: local error bound per step on every state, relative to the
          surface's `extent()` for positions (Simbody's `curve_segment_accuracy` for an
          extent of 1; docs/cable.md#scale), default 1e-9; traced, so a new value does
          not recompile. Ignored by closed forms.
        - `integrator`: solver settings (`GeodesicIntegrator`); its accuracy is replaced
          by `accuracy`.

        **Returns:**

        A `Geodesic`.
        """
        return shoot_numerically(self, point, tangent, length, accuracy=accuracy, integrator=integrator)

    def zero_length_geodesic(
        self, point: Real[ArrayLike, "3"] | Sequence, tangent: Real[ArrayLike, "3"] | Sequence
    ) -> Geodesic:
        """The geodesic of length 0 at the projection of `point`, heading along `tangent`
        (projected onto the tangent plane): what `shoot_geodesic(point, tangent, 0)` returns,
        without an integrator. Jacobi scalars take their initial values (a, r) = (1, 0),
        (a', r') = (0, 1). Cables use it for contact hints and touchdown (the solver's
        status update projects the point itself and builds the curve with
        `zero_length_geodesic_at`, once per surface kind)."""
        return zero_length_geodesic_at(self, self.project(jnp.asarray(point)), tangent)

    def geodesic_points(
        self,
        point: Real[ArrayLike, "3"] | Sequence,
        tangent: Real[ArrayLike, "3"] | Sequence,
        length: Real[ArrayLike, ""] | Sequence,
        num_samples: int,
        *,
        accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
        integrator: GeodesicIntegrator | None = None,
    ) -> Float[Array, "num_samples 3"]:
        """Points of the geodesic at equal arc-length spacing (both ends included).

        **Arguments:** as `shoot_geodesic`, plus `num_samples` ≥ 2 (static).

        **Returns:**

        A `(num_samples, 3)` array; row k is at arc length k·ℓ/(num_samples - 1).
        """
        return sample_numerically(self, point, tangent, length, num_samples, accuracy=accuracy, integrator=integrator)


def _quadratic(H: Float[Array, "3 3"], d: Float[Array, "3"]) -> Float[Array, ""]:
    return jnp.dot(d, H @ d)


# ---------------------------------------------------------------------------- functional API
def shoot_geodesic(
    surface: AbstractSurface,
    point: Real[ArrayLike, "3"] | Sequence,
    tangent: Real[ArrayLike, "3"] | Sequence,
    length: Real[ArrayLike, ""] | Sequence,
    *,
    accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
    integrator: GeodesicIntegrator | None = None,
    throw: bool = False,
) -> Geodesic:
    """Shoot the geodesic of arc length `length` on `surface` from `point` along `tangent`
    (all in the surface frame S); see `AbstractSurface.shoot_geodesic`.

    The surface is an argument, so ``jax.jit(jw.shoot_geodesic)(surface, p, t, l)`` reuses
    its compilation for new surface parameters, and `vmap`/`grad` apply directly.

    **Arguments:** as `AbstractSurface.shoot_geodesic`, plus `throw`: raise (also under
    `jit`) when the integration fails, instead of only reporting it in `Geodesic.result`.

    **Returns:** a `Geodesic`.
    """
    geodesic = surface.shoot_geodesic(point, tangent, length, accuracy=accuracy, integrator=integrator)
    if throw:
        geodesic = geodesic.result.error_if(geodesic, geodesic.result != RESULTS.successful)
    return geodesic


def geodesic_points(
    surface: AbstractSurface,
    point: Real[ArrayLike, "3"] | Sequence,
    tangent: Real[ArrayLike, "3"] | Sequence,
    length: Real[ArrayLike, ""] | Sequence,
    num_samples: int,
    *,
    accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
    integrator: GeodesicIntegrator | None = None,
) -> Float[Array, "num_samples 3"]:
    """``num_samples`` points of the geodesic at equal arc-length spacing, both ends
    included; see `AbstractSurface.geodesic_points`. NaN where the integration failed."""
    return surface.geodesic_points(point, tangent, length, num_samples, accuracy=accuracy, integrator=integrator)
