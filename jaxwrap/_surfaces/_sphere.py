"""`Sphere`: closed-form geodesics (great circles), docs/surfaces.md#sphere."""

from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Real

from .._misc import as_scalar, check_positive, safe_normalize
from .._results import RESULTS
from ._base import AbstractSurface
from ._darboux import darboux_frame, geodesic_inputs
from ._geodesic import Geodesic, make_geodesic
from ._geodesic_ode import GeodesicIntegrator
from ._shortest_wrap import sphere_shortest_wrap, sphere_wrap_turning
from ._touch import sphere_touch

_X = (1.0, 0.0, 0.0)


class Sphere(AbstractSurface):
    """Sphere of radius r centred at the origin of S; f(x) = r² - x·x (Simbody's scaling).

    Geodesics are great circles, shot in closed form: the Darboux frame rotates by
    θ = ℓ/r about -b, t(θ) = t cos θ - n sin θ, n(θ) = n cos θ + t sin θ, and the Jacobi
    scalars are a = cos θ, a' = -sin θ / r, r_J = r sin θ, r_J' = cos θ.

    **Arguments:**

    - `radius`: r > 0 (scalar array; may be batched with `vmap`).
    """

    radius: Float[Array, ""] = eqx.field(converter=lambda r: as_scalar(r, "radius"))

    def __check_init__(self):
        check_positive("Sphere radius", self.radius)

    def extent(self) -> Float[Array, ""]:
        return self.radius

    def implicit(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        return self.radius**2 - jnp.dot(x, x)

    def gradient(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        return -2 * x

    def hessian(self, x: Float[Array, "3"]) -> Float[Array, "3 3"]:
        return -2 * jnp.eye(3, dtype=x.dtype)

    def project(self, x: Float[Array, "3"], num_iterations: int = 10) -> Float[Array, "3"]:
        """Radial projection (the limit of the Newton iteration along the gradient)."""
        del num_iterations
        return self.radius * safe_normalize(x, jnp.asarray(_X, x.dtype))

    def project_downhill(self, q: Float[Array, "3"]) -> Float[Array, "3"]:
        """The orthogonal foot point: on a sphere the radial projection (`project`)."""
        return self.project(q)

    def _start(self, point, tangent):
        n = safe_normalize(point, jnp.asarray(_X, point.dtype))
        return n, darboux_frame(n, tangent)[:, 0]

    def shoot_geodesic(
        self,
        point: Real[ArrayLike, "3"] | Sequence,
        tangent: Real[ArrayLike, "3"] | Sequence,
        length: Real[ArrayLike, ""] | Sequence,
        *,
        accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
        integrator: GeodesicIntegrator | None = None,
    ) -> Geodesic:
        """Closed-form great circle; see `AbstractSurface.shoot_geodesic` (`accuracy`
        and `integrator` are accepted for a uniform interface and ignored)."""
        del accuracy, integrator
        point, tangent, length = geodesic_inputs(point, tangent, length)
        n, t = self._start(point, tangent)
        r = self.radius
        theta = length / r
        c, s = jnp.cos(theta), jnp.sin(theta)
        return make_geodesic(
            self,
            p_SP=r * n,
            t_P=t,
            p_SQ=r * (n * c + t * s),
            t_Q=t * c - n * s,
            arc_length=length,
            jacobi_Q=jnp.stack([c, r * s]),
            jacobi_dot_Q=jnp.stack([-s / r, c]),
            result=RESULTS.successful,
            num_steps=jnp.array(0, jnp.int32),
        )

    def shortest_wrap(
        self, a: Float[Array, "3"], b: Float[Array, "3"], hint: Float[Array, "3"], side: Float[Array, "3"] | None = None
    ) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
        """The shortest path from `a` to `b` (in S, both outside) in closed form
        (docs/surfaces.md#shortest-wrap): ``(touches, P, t_P, ℓ)``, whether it touches the
        surface, and if so its first contact point, its direction there and the arc length
        of its geodesic. `hint` picks the plane where every plane is shortest. With a wrap
        `side` (a point in S) the path keeps to that side, wrapping round where the
        straight line passes on the other (docs/cable.md#wrap-side)."""
        return sphere_shortest_wrap(self.radius, a, b, hint, side)

    def shortest_wrap_turning(
        self, a: Float[Array, "3"], b: Float[Array, "3"], hint: Float[Array, "3"], momentum: Float[Array, "3"]
    ) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
        """Like `shortest_wrap`, but round the way of a path whose angular momentum about
        the surface origin is `momentum` (in S; the shorter way where it says nothing),
        touching only where the straight segment meets the surface: a warm start's
        continuation of that path (docs/cable.md#warm-starts-in-closed-form)."""
        return sphere_wrap_turning(self.radius, a, b, hint, momentum)

    def shortest_touch(
        self, a: Float[Array, "3"], b: Float[Array, "3"]
    ) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, ""]]:
        """The inside wrap (MuJoCo's side site inside the geom): the shortest path from `a`
        to `b` (in S) that reaches the solid, ``(touches, t, length)``; where it bends, it
        touches the surface at ``t`` (docs/surfaces.md#inside-wrap)."""
        return sphere_touch(self.radius, a, b)

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
        """Closed-form samples at equal arc length; see `AbstractSurface.geodesic_points`."""
        del accuracy, integrator
        point, tangent, length = geodesic_inputs(point, tangent, length)
        n, t = self._start(point, tangent)
        theta = jnp.linspace(0, 1, num_samples, dtype=point.dtype) * (length / self.radius)
        return self.radius * (jnp.cos(theta)[:, None] * n + jnp.sin(theta)[:, None] * t)
