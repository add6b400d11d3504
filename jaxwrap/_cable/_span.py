"""`CableSpan`: the immutable definition of a cable (after Simbody's ``CableSpan``).

A cable runs from an origin station on one body, over obstacles and through via points in
the order they were added, to a termination station. Structure (body indices, surface
kinds, the order of path elements) is static; stations, obstacle placements ``X_BS``,
surface parameters and contact hints are array leaves, so every output of a solved path
is differentiable with respect to them.
"""

from __future__ import annotations

import math
from typing import Literal

import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from .._spatial import Transform
from .._surfaces import AbstractSurface

Algorithm = Literal["minimum_length", "scholz2015"]
ALGORITHMS = ("minimum_length", "scholz2015")


def _station(value, what: str) -> Array:
    station = jnp.asarray(value)
    if not jnp.issubdtype(station.dtype, jnp.floating):
        station = station.astype(jnp.result_type(float))
    if station.shape != (3,):
        raise ValueError(f"{what} must have shape (3,), got {station.shape}")
    return station


def _body(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{what} must be a non-negative integer body index, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be a non-negative body index, got {value}")
    return int(value)


class CableSettings(eqx.Module):
    """Solver settings (static: they select code paths and loop budgets, they are not
    differentiated). Defaults are Simbody's (cablespan.md §4)."""

    algorithm: str = eqx.field(static=True, default="minimum_length")
    smoothness_tolerance: float = eqx.field(static=True, default=0.1 * math.pi / 180)
    max_iterations: int = eqx.field(static=True, default=50)
    curve_segment_accuracy: float = eqx.field(static=True, default=1e-9)
    use_warm_start: bool = eqx.field(static=True, default=True)
    max_step: float = eqx.field(static=True, default=10 * math.pi / 180)
    step_limit_by_magnitude: bool = eqx.field(static=True, default=False)

    def __check_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        if not (isinstance(self.smoothness_tolerance, (int, float)) and self.smoothness_tolerance > 0):
            raise ValueError(f"smoothness_tolerance must be a positive number, got {self.smoothness_tolerance!r}")
        if not (isinstance(self.max_iterations, (int, np.integer)) and self.max_iterations >= 0):
            raise ValueError(f"max_iterations must be a non-negative integer, got {self.max_iterations!r}")
        if not (isinstance(self.curve_segment_accuracy, (int, float)) and self.curve_segment_accuracy > 0):
            raise ValueError(f"curve_segment_accuracy must be a positive number, got {self.curve_segment_accuracy!r}")
        if not isinstance(self.use_warm_start, (bool, np.bool_)):
            raise ValueError(f"use_warm_start must be a bool, got {self.use_warm_start!r}")
        if not (isinstance(self.max_step, (int, float)) and self.max_step > 0):
            raise ValueError(f"max_step must be a positive angle in radians, got {self.max_step!r}")
        if not isinstance(self.step_limit_by_magnitude, (bool, np.bool_)):
            raise ValueError(f"step_limit_by_magnitude must be a bool, got {self.step_limit_by_magnitude!r}")


class Obstacle(eqx.Module):
    """A wrapping surface fixed to a body: ``X_BS`` places the surface frame S in body B."""

    body: int = eqx.field(static=True)
    X_BS: Transform
    surface: AbstractSurface
    contact_hint: Float[Array, "3"] | None  # in S; None: the obstacle starts lifted


class ViaPoint(eqx.Module):
    body: int = eqx.field(static=True)
    station: Float[Array, "3"]


class CableSpan(eqx.Module):
    """A frictionless cable from an origin station to a termination station, wrapping over
    obstacles and passing through via points in the order they were added.

    **Arguments:**

    - `origin_body`, `termination_body`: body indices (0 = ground) in the ``body_poses``
      that `solve` receives.
    - `origin_station`, `termination_station`: points fixed in those bodies, shape (3,).

    Build the path with `add_obstacle` and `add_via_point` (each returns a new
    `CableSpan`), tune the solver with `with_settings`, then call `solve`.
    """

    origin_body: int = eqx.field(static=True)
    origin_station: Float[Array, "3"]
    termination_body: int = eqx.field(static=True)
    termination_station: Float[Array, "3"]
    obstacles: tuple[Obstacle, ...] = ()
    via_points: tuple[ViaPoint, ...] = ()
    # Path order: ("obstacle", i) and ("via", j) in call order.
    elements: tuple[tuple[str, int], ...] = eqx.field(static=True, default=())
    settings: CableSettings = CableSettings()

    def __init__(
        self,
        origin_body: int,
        origin_station: ArrayLike,
        termination_body: int,
        termination_station: ArrayLike,
        obstacles: tuple[Obstacle, ...] = (),
        via_points: tuple[ViaPoint, ...] = (),
        elements: tuple[tuple[str, int], ...] = (),
        settings: CableSettings | None = None,
    ):
        self.origin_body = _body(origin_body, "origin_body")
        self.origin_station = _station(origin_station, "origin_station")
        self.termination_body = _body(termination_body, "termination_body")
        self.termination_station = _station(termination_station, "termination_station")
        self.obstacles = tuple(obstacles)
        self.via_points = tuple(via_points)
        self.elements = tuple(elements)
        self.settings = CableSettings() if settings is None else settings

    # ------------------------------------------------------------------ building
    def add_obstacle(
        self,
        body: int,
        X_BS: Transform,
        surface: AbstractSurface,
        contact_hint: ArrayLike | None = None,
    ) -> CableSpan:
        """Append an obstacle: ``surface`` placed at ``X_BS`` in ``body``.

        `contact_hint` (a point in the surface frame S, projected onto the surface) seeds
        the first solve with a zero-length geodesic there; without a hint the obstacle
        starts lifted and engages when the straight line first crosses it.
        """
        where = f"obstacle {len(self.obstacles)}"
        body = _body(body, f"{where}: body")
        if not isinstance(X_BS, Transform) or X_BS.batch_shape != ():
            raise ValueError(f"{where}: X_BS must be a single jw.Transform")
        if not isinstance(surface, AbstractSurface):
            raise ValueError(f"{where}: surface must be a jaxwrap surface, got {type(surface).__name__}")
        hint = None if contact_hint is None else _station(contact_hint, f"{where}: contact_hint")
        obstacle = Obstacle(body=body, X_BS=X_BS, surface=surface, contact_hint=hint)
        return self._replace(
            obstacles=self.obstacles + (obstacle,),
            elements=self.elements + (("obstacle", len(self.obstacles)),),
        )

    def add_via_point(self, body: int, station: ArrayLike) -> CableSpan:
        """Append a via point: the cable passes through ``station`` fixed in ``body``. Via
        points split the cable into segments that are solved independently."""
        where = f"via point {len(self.via_points)}"
        via = ViaPoint(body=_body(body, f"{where}: body"), station=_station(station, f"{where}: station"))
        return self._replace(
            via_points=self.via_points + (via,), elements=self.elements + (("via", len(self.via_points)),)
        )

    def with_settings(self, **changes) -> CableSpan:
        """A copy with some solver settings changed: ``algorithm`` (``"minimum_length"``, the
        default, or ``"scholz2015"``), ``smoothness_tolerance`` (rad), ``max_iterations``
        (per cable segment), ``curve_segment_accuracy``, ``use_warm_start``, ``max_step``
        (rad, the step limiter) and ``step_limit_by_magnitude`` (limit with |correction|
        instead of Simbody's signed correction)."""
        unknown = set(changes) - set(CableSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown cable settings {sorted(unknown)}; known: {sorted(CableSettings.__dataclass_fields__)}")
        current = {name: getattr(self.settings, name) for name in CableSettings.__dataclass_fields__}
        return self._replace(settings=CableSettings(**{**current, **changes}))

    def _replace(self, **changes) -> CableSpan:
        fields = ("origin_body", "origin_station", "termination_body", "termination_station")
        fields += ("obstacles", "via_points", "elements", "settings")
        return CableSpan(**{name: changes.get(name, getattr(self, name)) for name in fields})

    # ------------------------------------------------------------------ getters
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
    def smoothness_tolerance(self) -> float:
        return self.settings.smoothness_tolerance

    @property
    def max_iterations(self) -> int:
        return self.settings.max_iterations

    @property
    def curve_segment_accuracy(self) -> float:
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

    def segments(self) -> tuple[tuple[int, ...], ...]:
        """Obstacle indices of each cable segment (the stretches between via points)."""
        segments, current = [], []
        for kind, index in self.elements:
            if kind == "via":
                segments.append(tuple(current))
                current = []
            else:
                current.append(index)
        segments.append(tuple(current))
        return tuple(segments)

    def check_bodies(self, num_bodies: int) -> None:
        """Raise `ValueError` if a body index is out of range for ``num_bodies`` poses."""
        named = [("origin_body", self.origin_body), ("termination_body", self.termination_body)]
        named += [(f"obstacle {i} body", o.body) for i, o in enumerate(self.obstacles)]
        named += [(f"via point {j} body", v.body) for j, v in enumerate(self.via_points)]
        for what, body in named:
            if body >= num_bodies:
                raise ValueError(f"{what} = {body} is out of range: body_poses holds {num_bodies} bodies")

    # ------------------------------------------------------------------ solving
    def solve(self, body_poses: Transform, warm_start=None):
        """Solve for the locally shortest path; see `jaxwrap.CablePath`.

        **Arguments:**

        - `body_poses`: ``X_GB`` of every body, a `Transform` with leading axis
          ``n_bodies`` (``RobotModel.forward_kinematics`` returns one).
        - `warm_start`: a previous `CablePath` of this cable; its curves (stored in the
          surface frames, so they survive body motion) seed the solver when the
          ``use_warm_start`` setting is on. Without it the solver starts from the hints.

        **Returns:** a `CablePath`. Under `jit`, failures are reported in its status
        fields (`converged`, `smoothness`, `endpoint_inside`); `check` raises instead.
        """
        from ._solver import solve

        return solve(self, body_poses, warm_start)

    def check(self, body_poses: Transform, warm_start=None):
        """`solve`, then raise `ValueError` (outside `jit`) if an end or via point lies inside
        an obstacle or the solver did not converge; returns the path otherwise."""
        path = self.solve(body_poses, warm_start)
        inside = np.asarray(path.endpoint_inside)
        if inside.any():
            raise ValueError(
                f"a path point next to obstacle(s) {np.flatnonzero(inside).tolist()} (an end or via point, "
                "or a neighbouring contact point) lies inside that obstacle"
            )
        if not bool(path.converged):
            raise ValueError(
                f"cable solver did not converge: smoothness {float(path.smoothness):.3g} rad > tolerance "
                f"{self.settings.smoothness_tolerance:.3g} after {int(path.num_iterations)} iterations"
            )
        return path
