"""`Torus`: torus about local z; geodesics are integrated numerically."""

from typing import ClassVar

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._misc import as_scalar, check_positive, concretely, positive_or_one, safe_norm
from ._base import AbstractSurface


class Torus(AbstractSurface):
    """Torus about the z axis of S: ring (centre-circle) radius R, tube radius a < R.

    f = 1 - ((R - ρ)² + z²)/a² with ρ = √(x² + y²) (Simbody's scaling); closed-form
    gradient and Hessian (docs/surfaces.md#implicit-functions). On the z axis (ρ = 0, far inside the
    hole, never on the surface) the derivatives are kept finite rather than exact.

    **Arguments:**

    - `ring_radius`: R > 0.
    - `tube_radius`: 0 < a < R.
    """

    # The lean fused geodesic loop (docs/performance.md#fused-geodesic-loop).
    geodesic_loop: ClassVar[str] = "fused"
    # An eighth-order pair takes a quarter of Tsit5's steps on the tube's tight turns
    # (docs/performance.md#geodesic-solver).
    geodesic_solver: ClassVar[diffrax.AbstractAdaptiveSolver] = diffrax.Dopri8()
    # The fused loop integrates in the torus's own coordinates (docs/surfaces.md#geodesic-charts).
    geodesic_chart: ClassVar[bool] = True

    ring_radius: Float[Array, ""] = eqx.field(converter=lambda r: as_scalar(r, "Torus ring_radius"))
    tube_radius: Float[Array, ""] = eqx.field(converter=lambda r: as_scalar(r, "Torus tube_radius"))

    def __check_init__(self):
        check_positive("Torus ring_radius", self.ring_radius)
        check_positive("Torus tube_radius", self.tube_radius)
        if concretely(lambda R, a: a >= R, self.ring_radius, self.tube_radius):
            raise ValueError(
                f"Torus tube_radius ({self.tube_radius}) must be smaller than ring_radius ({self.ring_radius})"
            )

    def extent(self) -> Float[Array, ""]:
        return self.ring_radius + self.tube_radius

    def implicit(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        rho = safe_norm(x[:2])
        return 1 - ((self.ring_radius - rho) ** 2 + x[2] ** 2) / self.tube_radius**2

    def _rho(self, x):
        return positive_or_one(safe_norm(x[:2]))

    def gradient(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        rho = self._rho(x)
        a2 = self.tube_radius**2
        radial = 2 * (self.ring_radius - rho) / (a2 * rho)
        return jnp.stack([x[0] * radial, x[1] * radial, -2 * x[2] / a2])

    def hessian(self, x: Float[Array, "3"]) -> Float[Array, "3 3"]:
        rho = self._rho(x)
        a2 = self.tube_radius**2
        c = 2 * self.ring_radius / (a2 * rho**3)
        fxx = c * x[1] ** 2 - 2 / a2
        fyy = c * x[0] ** 2 - 2 / a2
        fxy = -c * x[0] * x[1]
        fzz = -2 / a2 * jnp.ones_like(x[2])
        zero = jnp.zeros_like(fxx)
        return jnp.stack(
            [
                jnp.stack([fxx, fxy, zero]),
                jnp.stack([fxy, fyy, zero]),
                jnp.stack([zero, zero, fzz]),
            ]
        )

    # ------------------------------------------------------------------ geodesic chart
    # The fused geodesic loop integrates a torus geodesic in the surface's own
    # coordinates (docs/surfaces.md#geodesic-charts): the tube angle u, the azimuth v and
    # the heading θ from the meridian, each stored as its (cos, sin) pair, beside the
    # four Jacobi states. Clairaut's relation r sin θ = const (r = R + a cos u) gives
    # θ' = sin u sin θ / r; the field is polynomial but for one division by r, and the
    # state is on the surface by construction (no projection, only the pairs' norms).

    def chart_from_state(self, y: Float[Array, "10"]) -> Float[Array, "10"]:
        """Chart state [cos u, sin u, cos v, sin v, cos θ, sin θ, a, a', r, r'] of a
        Cartesian geodesic state [p, t, a, a', r, r'] (p on the surface, t tangent)."""
        p, t = y[0:3], y[3:6]
        R, a = self.ring_radius, self.tube_radius
        rho = self._rho(p)
        cv, sv = p[0] / rho, p[1] / rho
        cu, su = _unit_pair((rho - R) / a, p[2] / a)
        e_u, e_v = _chart_basis(cu, su, cv, sv)
        ct, st = _unit_pair(jnp.dot(t, e_u), jnp.dot(t, e_v))
        return jnp.concatenate([jnp.stack([cu, su, cv, sv, ct, st]), y[6:]])

    def state_from_chart(self, z: Float[Array, "10"]) -> Float[Array, "10"]:
        """The Cartesian state [p, t, a, a', r, r'] of a chart state."""
        cu, su, cv, sv, ct, st = z[0], z[1], z[2], z[3], z[4], z[5]
        a = self.tube_radius
        r = self.ring_radius + a * cu
        p = jnp.stack([r * cv, r * sv, a * su])
        e_u, e_v = _chart_basis(cu, su, cv, sv)
        t = ct * e_u + st * e_v
        return jnp.concatenate([p, t, z[6:]])

    def chart_field(self, z: Float[Array, "10"]) -> Float[Array, "10"]:
        """d/ds of the chart state: u' = cos θ / a, v' = sin θ / r, θ' = sin u sin θ / r,
        and the Jacobi equations with K = cos u / (a r)."""
        cu, su, cv, sv, ct, st = z[0], z[1], z[2], z[3], z[4], z[5]
        a = self.tube_radius
        inv_r = 1 / (self.ring_radius + a * cu)
        du, dv, dth = ct / a, st * inv_r, su * st * inv_r
        K = cu * inv_r / a
        return jnp.stack([-su * du, cu * du, -sv * dv, cv * dv, -st * dth, ct * dth, z[7], -K * z[6], z[9], -K * z[8]])

    def chart_project(self, z: Float[Array, "10"]) -> Float[Array, "10"]:
        """Each (cos, sin) pair back to unit length (the drift of an accepted step)."""
        cu, su = _unit_pair(z[0], z[1])
        cv, sv = _unit_pair(z[2], z[3])
        ct, st = _unit_pair(z[4], z[5])
        return jnp.concatenate([jnp.stack([cu, su, cv, sv, ct, st]), z[6:]])

    def chart_sizes(self, dtype) -> Float[Array, "10"]:
        """Per chart state, the size the step controller's tolerance is relative to:
        lengths over the extent L = R + a, as for the Cartesian state
        (docs/cable.md#scale). A change δ of the u pair moves the point by a·δ, of the v
        pair by at most (R + a)·δ, of the θ pair turns the unit tangent by δ; so those
        pairs take L/a, 1 and 1; the Jacobi states 1, 1/L, L, 1."""
        R, a = jax.lax.stop_gradient((jnp.asarray(self.ring_radius, dtype), jnp.asarray(self.tube_radius, dtype)))
        L, one = R + a, jnp.ones((), dtype)
        return jnp.stack([L / a, L / a, one, one, one, one, one, 1 / L, L, one])


def _chart_basis(cu, su, cv, sv):
    """The unit tangents along the meridian (e_u) and the parallel (e_v) at (u, v)."""
    return jnp.stack([-su * cv, -su * sv, cu]), jnp.stack([-sv, cv, jnp.zeros_like(cv)])


def _unit_pair(c, s):
    """(c, s) / |(c, s)|, finite where both vanish (never on a valid state)."""
    n2 = c * c + s * s
    inv = jax.lax.rsqrt(jnp.where(n2 > 0, n2, 1.0))
    return c * inv, s * inv
