"""`Ellipsoid`: axis-aligned ellipsoid; geodesics are integrated numerically."""

from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._misc import as_vector, check_positive, positive_or_one
from ._base import AbstractSurface


class Ellipsoid(AbstractSurface):
    """Ellipsoid with semi-axes (r₁, r₂, r₃) along the axes of S; f = 1 - Σ xᵢ²/rᵢ².

    Gradient and Hessian are closed form; geodesics are integrated numerically
    (`AbstractSurface.shoot_geodesic`) in the fused loop by default.

    **Arguments:**

    - `radii`: (3,) semi-axes, all > 0.
    """

    # The lean fused geodesic loop (docs/performance.md#fused-geodesic-loop), in the
    # ellipsoid's own coordinates (docs/surfaces.md#geodesic-charts).
    geodesic_loop: ClassVar[str] = "fused"
    geodesic_chart: ClassVar[bool] = True
    # In the chart a stage is cheap, so the eighth-order pair's fewer steps pay
    # (docs/performance.md#geodesic-solver).
    geodesic_solver: ClassVar[diffrax.AbstractAdaptiveSolver] = diffrax.Dopri8()

    radii: Float[Array, "3"] = eqx.field(converter=lambda r: as_vector(r, 3, "Ellipsoid radii"))

    def __check_init__(self):
        check_positive("Ellipsoid radii", self.radii)

    def extent(self) -> Float[Array, ""]:
        return jnp.max(self.radii)

    def implicit(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        return 1 - jnp.sum((x / self.radii) ** 2)

    def gradient(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        return -2 * x / self.radii**2

    def hessian(self, x: Float[Array, "3"]) -> Float[Array, "3 3"]:
        return jnp.diag(-2 / self.radii**2).astype(jnp.result_type(x, self.radii))

    # ------------------------------------------------------------------ geodesic chart
    # The fused loop integrates an ellipsoid geodesic with the point written as
    # p = D s, D = diag(radii), s on the unit sphere (docs/surfaces.md#geodesic-charts):
    # the projection after a step is a normalisation of s, and the field is written
    # out for the diagonal Hessian.

    def chart_from_state(self, y: Float[Array, "10"]) -> Float[Array, "10"]:
        """Chart state [s, t, a, a', r, r'] of a Cartesian state [p, t, a, a', r, r']."""
        return jnp.concatenate([y[0:3] / self.radii, y[3:]])

    def state_from_chart(self, z: Float[Array, "10"]) -> Float[Array, "10"]:
        """The Cartesian state [p, t, a, a', r, r'] of a chart state."""
        return jnp.concatenate([z[0:3] * self.radii, z[3:]])

    def chart_field(self, z: Float[Array, "10"]) -> Float[Array, "10"]:
        """d/ds of the chart state: s' = D⁻¹t, t' = -(|D⁻¹t|²/|m|²) m with the normal
        direction m = D⁻¹s (= ∇f/-2), and the Jacobi equations with
        K = 1/((r₁r₂r₃)² |m|⁴)."""
        s, t = z[0:3], z[3:6]
        w, m = t / self.radii, s / self.radii
        m2 = positive_or_one(jnp.dot(m, m))
        K = 1 / (jnp.prod(self.radii) ** 2 * m2 * m2)
        return jnp.concatenate([w, -(jnp.dot(w, w) / m2) * m, jnp.stack([z[7], -K * z[6], z[9], -K * z[8]])])

    def chart_project(self, z: Float[Array, "10"]) -> Float[Array, "10"]:
        """s back to unit length, t tangent (normal to m = D⁻¹s) and unit."""
        s, t = z[0:3], z[3:6]
        s = s * jax.lax.rsqrt(positive_or_one(jnp.dot(s, s)))
        m = s / self.radii
        t = t - m * (jnp.dot(t, m) / positive_or_one(jnp.dot(m, m)))
        t = t * jax.lax.rsqrt(positive_or_one(jnp.dot(t, t)))
        return jnp.concatenate([s, t, z[6:]])

    def chart_sizes(self, dtype) -> Float[Array, "10"]:
        """Per chart state, the size the step controller's tolerance is relative to
        (docs/cable.md#scale): a change δ of sᵢ moves the point by rᵢδ, so sᵢ takes
        L/rᵢ with the extent L = max rᵢ; the unit tangent 1, the Jacobi states 1, 1/L,
        L, 1, as in the Cartesian state."""
        radii = jax.lax.stop_gradient(jnp.asarray(self.radii, dtype))
        L, one = jnp.max(radii), jnp.ones((), dtype)
        return jnp.concatenate([L / radii, jnp.stack([one, one, one, one, 1 / L, L, one])])
