"""`Torus`: torus about local z; geodesics are integrated numerically."""

from typing import ClassVar

import diffrax
import equinox as eqx
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
