"""What a cable is, before anything is solved: settings, path elements, and the abstract
cable every solver layer works on.

A cable runs from an origin station on one body, over obstacles and through via points
in the order they were added, to a termination station. Via points split it into
*legs* (origin or via point to the next via point or termination), which are solved
independently; an obstacle's geodesic is its *curve segment* (Simbody's name).
Structure (body indices, surface kinds, the order of path elements) is static; stations,
obstacle placements ``X_BS``, surface parameters, contact hints and the numeric solver
settings are pytree leaves, so every output is differentiable with respect to them and
new values never recompile.

`AbstractCableSpan` declares the fields and the structural queries; the concrete
`jaxwrap.CableSpan` (in `_span.py`, above the solver) adds construction and `solve`.
"""

from __future__ import annotations

import math

import equinox as eqx
import numpy as np
from jaxtyping import Array, Float

from .._misc import check_count, concrete_value, scalar_setting
from .._spatial import Transform
from .._surfaces import AbstractSurface, GeodesicIntegrator, TouchdownSearch

ALGORITHMS = ("minimum_length", "scholz2015")
WRAPS = ("shortest", "inside", "mujoco")
COLD_STARTS = ("candidates", "hints")


def _check_positive_setting(name: str, value, unit: str = "") -> None:
    concrete = concrete_value(value)
    if concrete is not None and not (np.isfinite(concrete) and concrete > 0):
        raise ValueError(f"{name} must be a positive number{unit}, got {value!r}")


class CableSettings(eqx.Module):
    """Solver settings; the defaults are Simbody's but for the cold start and the
    Gauss-Newton polish (docs/cable.md#default-settings).

    **Fields:**

    - `algorithm`: ``"minimum_length"`` (default) or ``"scholz2015"`` (static).
    - `smoothness_tolerance`: largest angle (rad) between a straight line and the curve
      it meets for the path to count as converged (default 0.1°).
    - `max_iterations`: correction budget per leg (static, default 50).
    - `curve_segment_accuracy`: accuracy of integrated geodesics relative to each
      surface's extent (default 1e-9; for an extent of 1 m, Simbody's absolute accuracy;
      docs/cable.md#scale).
    - `use_warm_start`: start from a previous path when one is given (static).
    - `max_step`: step limiter, the largest rotation (rad) of a curve's boundary frames
      per correction (default 10°).
    - `step_limit_by_magnitude`: limit with ``|c|`` instead of Simbody's signed
      correction (static; docs/cable.md#step-limiter).
    - `scale_free_step`: take the minimum-length step in units of each surface's extent,
      so that a scene and the same scene scaled give the same iterates (static, default
      False: Simbody's step, in metres and radians; docs/cable.md#scale).
    - `touchdown`: the `TouchdownSearch` settings.
    - `cold_start`: without a warm start, ``"candidates"`` (default) solves a few starts in
      parallel (the lifted path, starts beside each obstacle) and keeps the shortest
      genuine path
      (docs/cable.md#cold-start-candidates; the candidates are screened with coarser
      curves and the kept one finished at `curve_segment_accuracy`,
      docs/cable.md#screen-and-finish); ``"hints"`` starts from the contact hints only,
      as Simbody does (static). With ``"candidates"`` a warm start over a sphere or
      cylinder alone in its leg is also solved in closed form, keeping the previous
      path's way round (docs/cable.md#warm-starts-in-closed-form), and a leg whose
      warm-started path is no genuine one (the line has left the obstacle, the solver
      ran out of iterations) is solved again from lifted (docs/cable.md#warm-start-fallback);
      with ``"hints"`` every warm start iterates from the previous path, as Simbody's
      does, and reports its failures.
    - `max_winding`: the largest turn (rad) of a curve's tangent, estimated as
      ``arc length × max |normal curvature|`` at its ends; a path that winds more is
      reported as diverged (default 2π, one full turn).
    - `geodesic_integrator`: the `GeodesicIntegrator` of every numerically shot curve
      (surfaces without a closed form: ellipsoid, torus, implicit, height map); None
      (default) takes `GeodesicIntegrator()`'s defaults (the surface's solver and loop).
      Its `adjoint` is not used: the derivatives of a path reshoot each curve in forward
      mode (docs/cable.md#implicit-differentiation).
    - `gauss_newton_below`: with ``"minimum_length"``, a leg whose smoothness (rad) is
      below this takes the Gauss-Newton step of ``"scholz2015"`` instead, which
      converges quadratically where the minimum-length step, halved, converges linearly;
      so does a leg below 4x this whose minimum-length step has stalled
      (docs/cable.md#where-the-minimum-length-step-stalls). Default 5e-2; 0 is
      Simbody's `MinimumLength` exactly (docs/cable.md#gauss-newton-polish).

    The numeric fields are pytree leaves: under `jax.jit`, new values do not recompile.
    """

    algorithm: str = eqx.field(static=True, default="minimum_length")
    smoothness_tolerance: float | Float[Array, ""] = eqx.field(
        default=0.1 * math.pi / 180, converter=lambda x: scalar_setting(x, "smoothness_tolerance")
    )
    max_iterations: int = eqx.field(static=True, default=50)
    curve_segment_accuracy: float | Float[Array, ""] = eqx.field(
        default=1e-9, converter=lambda x: scalar_setting(x, "curve_segment_accuracy")
    )
    use_warm_start: bool = eqx.field(static=True, default=True)
    max_step: float | Float[Array, ""] = eqx.field(
        default=10 * math.pi / 180, converter=lambda x: scalar_setting(x, "max_step")
    )
    step_limit_by_magnitude: bool = eqx.field(static=True, default=False)
    scale_free_step: bool = eqx.field(static=True, default=False)
    touchdown: TouchdownSearch = TouchdownSearch()
    cold_start: str = eqx.field(static=True, default="candidates")
    max_winding: float | Float[Array, ""] = eqx.field(
        default=2 * math.pi, converter=lambda x: scalar_setting(x, "max_winding")
    )
    geodesic_integrator: GeodesicIntegrator | None = None
    gauss_newton_below: float | Float[Array, ""] = eqx.field(
        default=5e-2, converter=lambda x: scalar_setting(x, "gauss_newton_below")
    )

    def __check_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        _check_positive_setting("smoothness_tolerance", self.smoothness_tolerance)
        polish = concrete_value(self.gauss_newton_below)
        if polish is not None and not (np.isfinite(polish) and polish >= 0):
            raise ValueError(
                f"gauss_newton_below must be a non-negative angle in radians, got {self.gauss_newton_below!r}"
            )
        try:
            check_count("max_iterations", self.max_iterations)
        except ValueError:
            raise ValueError(f"max_iterations must be a non-negative integer, got {self.max_iterations!r}") from None
        _check_positive_setting("curve_segment_accuracy", self.curve_segment_accuracy)
        if not isinstance(self.use_warm_start, (bool, np.bool_)):
            raise ValueError(f"use_warm_start must be a bool, got {self.use_warm_start!r}")
        _check_positive_setting("max_step", self.max_step, " (an angle in radians)")
        if not isinstance(self.step_limit_by_magnitude, (bool, np.bool_)):
            raise ValueError(f"step_limit_by_magnitude must be a bool, got {self.step_limit_by_magnitude!r}")
        if not isinstance(self.scale_free_step, (bool, np.bool_)):
            raise ValueError(f"scale_free_step must be a bool, got {self.scale_free_step!r}")
        if self.cold_start not in COLD_STARTS:
            raise ValueError(f"cold_start must be one of {COLD_STARTS}, got {self.cold_start!r}")
        _check_positive_setting("max_winding", self.max_winding, " (an angle in radians)")
        if not isinstance(self.touchdown, TouchdownSearch):
            raise ValueError(f"touchdown must be a jaxwrap.TouchdownSearch, got {type(self.touchdown).__name__}")
        if self.geodesic_integrator is not None and not isinstance(self.geodesic_integrator, GeodesicIntegrator):
            raise ValueError(
                "geodesic_integrator must be a jaxwrap.GeodesicIntegrator or None, got "
                f"{type(self.geodesic_integrator).__name__}"
            )

    def integrator(self) -> GeodesicIntegrator:
        """The `GeodesicIntegrator` the solver shoots curves with."""
        return GeodesicIntegrator() if self.geodesic_integrator is None else self.geodesic_integrator


class Obstacle(eqx.Module):
    """A wrapping surface fixed to a body: ``X_BS`` places the surface frame S in body B."""

    body: int = eqx.field(static=True)
    X_BS: Transform
    surface: AbstractSurface
    contact_hint: Float[Array, "3"] | None  # in S; None: the obstacle starts lifted
    # A point in S the path keeps to (docs/cable.md#wrap-side); None: either side.
    side: Float[Array, "3"] | None = None
    # How the path passes it: "shortest" (the solver's geodesic), or in closed form over
    # one sphere or cylinder alone between two path points: "inside" (MuJoCo's inside
    # wrap, docs/cable.md#inside-wrap) or "mujoco" (MuJoCo's rule, docs/cable-sets.md).
    wrap: str = eqx.field(static=True, default="shortest")

    @property
    def closed_form(self) -> bool:
        return self.wrap != "shortest"


class ViaPoint(eqx.Module):
    """A point fixed in a body that the cable passes through."""

    body: int = eqx.field(static=True)
    station: Float[Array, "3"]


class AbstractCableSpan(eqx.Module):
    """The fields and structural queries of a cable (see `jaxwrap.CableSpan`)."""

    origin_body: eqx.AbstractVar[int]
    origin_station: eqx.AbstractVar[Float[Array, "3"]]
    termination_body: eqx.AbstractVar[int]
    termination_station: eqx.AbstractVar[Float[Array, "3"]]
    obstacles: eqx.AbstractVar[tuple[Obstacle, ...]]
    via_points: eqx.AbstractVar[tuple[ViaPoint, ...]]
    # Path order: ("obstacle", i) and ("via", j) in call order.
    elements: eqx.AbstractVar[tuple[tuple[str, int], ...]]
    settings: eqx.AbstractVar[CableSettings]

    @property
    def num_obstacles(self) -> int:
        return len(self.obstacles)

    @property
    def num_via_points(self) -> int:
        return len(self.via_points)

    @property
    def algorithm(self) -> str:
        return self.settings.algorithm

    @property
    def smoothness_tolerance(self) -> float | Float[Array, ""]:
        return self.settings.smoothness_tolerance

    @property
    def max_iterations(self) -> int:
        return self.settings.max_iterations

    @property
    def curve_segment_accuracy(self) -> float | Float[Array, ""]:
        return self.settings.curve_segment_accuracy

    @property
    def use_warm_start(self) -> bool:
        return self.settings.use_warm_start

    @property
    def bodies(self) -> tuple[int, ...]:
        """Every body index the cable refers to."""
        return (
            self.origin_body,
            self.termination_body,
            *(o.body for o in self.obstacles),
            *(v.body for v in self.via_points),
        )

    def legs(self) -> tuple[tuple[int, ...], ...]:
        """Obstacle indices of each leg (the stretches between end and via points)."""
        legs, current = [], []
        for kind, index in self.elements:
            if kind == "via":
                legs.append(tuple(current))
                current = []
            else:
                current.append(index)
        legs.append(tuple(current))
        return tuple(legs)

    def leg_of_obstacle(self) -> tuple[int, ...]:
        """The leg each obstacle belongs to."""
        leg_of = [0] * self.num_obstacles
        for leg, obstacles in enumerate(self.legs()):
            for i in obstacles:
                leg_of[i] = leg
        return tuple(leg_of)

    def check_bodies(self, num_bodies: int) -> None:
        """Raise `ValueError` if a body index is out of range for ``num_bodies`` poses."""
        named = [("origin_body", self.origin_body), ("termination_body", self.termination_body)]
        named += [(f"obstacle {i} body", o.body) for i, o in enumerate(self.obstacles)]
        named += [(f"via point {j} body", v.body) for j, v in enumerate(self.via_points)]
        for what, body in named:
            if body >= num_bodies:
                raise ValueError(f"{what} = {body} is out of range: body_poses holds {num_bodies} bodies")
