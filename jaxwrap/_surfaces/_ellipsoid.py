"""`Ellipsoid`: axis-aligned ellipsoid; geodesics are integrated numerically."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._misc import as_vector, check_positive
from ._base import AbstractSurface


class Ellipsoid(AbstractSurface):
    """Ellipsoid with semi-axes (r₁, r₂, r₃) along the axes of S; f = 1 - Σ xᵢ²/rᵢ².

    Gradient and Hessian are closed form; geodesics are integrated numerically
    (`AbstractSurface.shoot_geodesic`) in the fused loop by default.

    **Arguments:**

    - `radii`: (3,) semi-axes, all > 0.
    """

    # The lean fused geodesic loop (docs/performance.md#fused-geodesic-loop).
    geodesic_loop: ClassVar[str] = "fused"

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
