"""`Cylinder`: infinite circular cylinder about local z; closed-form helix geodesics."""

from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Real

from .._misc import as_scalar, axis_rotation, check_positive, safe_normalize
from .._results import RESULTS
from ._base import AbstractSurface
from ._darboux import darboux_frame, geodesic_inputs
from ._geodesic import Geodesic, make_geodesic
from ._geodesic_ode import GeodesicIntegrator
from ._shortest_wrap import cylinder_shortest_wrap, cylinder_wrap_turning
from ._touch import cylinder_touch

_X = (1.0, 0.0, 0.0)


class Cylinder(AbstractSurface):
    """Infinite circular cylinder of radius r about the z axis of S; f = r² - x² - y².

    Geodesics are helices, shot in closed form (docs/surfaces.md#cylinder): the Darboux frame
    turns about z by -ℓ b_z / r while the point rises by ℓ t_z; K = 0, so the Jacobi
    scalars are a = 1, a' = 0, r_J = ℓ, r_J' = 1.

    **Arguments:**

    - `radius`: r > 0.
    """

    radius: Float[Array, ""] = eqx.field(converter=lambda r: as_scalar(r, "radius"))

    def __check_init__(self):
        check_positive("Cylinder radius", self.radius)

    def extent(self) -> Float[Array, ""]:
        return self.radius

    def across(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        return x.at[2].set(0.0)

    def implicit(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        return self.radius**2 - x[0] ** 2 - x[1] ** 2

    def gradient(self, x: Float[Array, "3"]) -> Float[Array, "3"]:
        return jnp.stack([-2 * x[0], -2 * x[1], jnp.zeros_like(x[2])])

    def hessian(self, x: Float[Array, "3"]) -> Float[Array, "3 3"]:
        return jnp.diag(jnp.array([-2.0, -2.0, 0.0], x.dtype))

    def project(self, x: Float[Array, "3"], num_iterations: int = 10) -> Float[Array, "3"]:
        """Radial projection in the xy plane (the limit of the Newton iteration)."""
        del num_iterations
        return self._radial(x) * self.radius + x[2] * jnp.array([0, 0, 1], x.dtype)

    def project_downhill(self, q: Float[Array, "3"]) -> Float[Array, "3"]:
        """The orthogonal foot point: on a cylinder the radial projection (`project`)."""
        return self.project(q)

    def _radial(self, x):
        return safe_normalize(x * jnp.array([1, 1, 0], x.dtype), jnp.asarray(_X, x.dtype))

    def _helix(self, point, tangent, s):
        """Point, tangent and normal at arc lengths `s` (any shape) along the helix."""
        n = self._radial(point)
        t = darboux_frame(n, tangent)[:, 0]
        b_z = t[0] * n[1] - t[1] * n[0]
        R = axis_rotation(-s * b_z / self.radius, 2)
        n_s = R @ n
        p = self.radius * n_s + (point[2] + s * t[2])[..., None] * jnp.array([0, 0, 1], point.dtype)
        return p, R @ t, n, t

    def shoot_geodesic(
        self,
        point: Real[ArrayLike, "3"] | Sequence,
        tangent: Real[ArrayLike, "3"] | Sequence,
        length: Real[ArrayLike, ""] | Sequence,
        *,
        accuracy: Real[ArrayLike, ""] | Sequence = 1e-9,
        integrator: GeodesicIntegrator | None = None,
    ) -> Geodesic:
        """Closed-form helix; see `AbstractSurface.shoot_geodesic` (`accuracy` and
        `integrator` are accepted for a uniform interface and ignored)."""
        del accuracy, integrator
        point, tangent, length = geodesic_inputs(point, tangent, length)
        p_Q, t_Q, n, t = self._helix(point, tangent, length)
        p_P = self.radius * n + point[2] * jnp.array([0, 0, 1], point.dtype)
        one, zero = jnp.ones_like(length), jnp.zeros_like(length)
        return make_geodesic(
            self,
            p_SP=p_P,
            t_P=t,
            p_SQ=p_Q,
            t_Q=t_Q,
            arc_length=length,
            jacobi_Q=jnp.stack([one, length]),
            jacobi_dot_Q=jnp.stack([zero, one]),
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
        del hint  # every shortest wrap of a cylinder is unique but for mirror ties
        return cylinder_shortest_wrap(self.radius, a, b, side)

    def shortest_wrap_turning(
        self, a: Float[Array, "3"], b: Float[Array, "3"], hint: Float[Array, "3"], momentum: Float[Array, "3"]
    ) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, "3"], Float[Array, ""]]:
        """Like `shortest_wrap`, but round the way of a path whose angular momentum about
        the surface origin is `momentum` (in S; the shorter way where it says nothing),
        touching only where the straight segment meets the surface: a warm start's
        continuation of that path (docs/cable.md#warm-starts-in-closed-form)."""
        del hint  # the cross-section fixes the wrap
        return cylinder_wrap_turning(self.radius, a, b, momentum)

    def shortest_touch(
        self, a: Float[Array, "3"], b: Float[Array, "3"]
    ) -> tuple[Bool[Array, ""], Float[Array, "3"], Float[Array, ""]]:
        """The inside wrap (MuJoCo's side site inside the geom): the shortest path from `a`
        to `b` (in S) that reaches the solid, ``(touches, t, length)``; where it bends, it
        touches the surface at ``t`` (docs/surfaces.md#inside-wrap)."""
        return cylinder_touch(self.radius, a, b)

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
        s = jnp.linspace(0, 1, num_samples, dtype=point.dtype) * length
        return self._helix(point, tangent, s)[0]
