"""`CableSpan`: the immutable definition of a cable (after Simbody's ``CableSpan``).

The fields and structure live in `_definition.AbstractCableSpan`; this final class adds
construction (with validation that names the offending element) and the convenience
methods `solve` and `check`, one-line wrappers of `jaxwrap.solve_cable`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import equinox as eqx
import jax
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from .._misc import as_vector
from .._results import RESULTS
from .._spatial import Transform
from .._surfaces import AbstractSurface
from ._definition import WRAPS, AbstractCableSpan, CableSettings, Obstacle, ViaPoint
from ._path import CablePath
from ._solve import solve_cable
from ._state import CurveState

_compiled_solve = eqx.filter_jit(solve_cable)


def _body(value, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{what} must be a non-negative integer body index, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be a non-negative body index, got {value}")
    return int(value)


class CableSpan(AbstractCableSpan):
    """A frictionless cable from an origin station to a termination station, wrapping over
    obstacles and passing through via points in the order they were added.

    **Arguments:**

    - `origin_body`, `termination_body`: body indices (0 = ground) in the ``body_poses``
      that `solve` receives.
    - `origin_station`, `termination_station`: points fixed in those bodies, shape (3,).

    Build the path with `add_obstacle` and `add_via_point` (each returns a new
    `CableSpan`), tune the solver with `with_settings`, then solve with
    ``jw.solve_cable(cable, body_poses)``.
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
        origin_station: ArrayLike | Sequence,
        termination_body: int,
        termination_station: ArrayLike | Sequence,
        obstacles: tuple[Obstacle, ...] = (),
        via_points: tuple[ViaPoint, ...] = (),
        elements: tuple[tuple[str, int], ...] = (),
        settings: CableSettings | None = None,
    ):
        self.origin_body = _body(origin_body, "origin_body")
        self.origin_station = as_vector(origin_station, 3, "origin_station")
        self.termination_body = _body(termination_body, "termination_body")
        self.termination_station = as_vector(termination_station, 3, "termination_station")
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
        contact_hint: ArrayLike | Sequence | None = None,
        side: ArrayLike | Sequence | None = None,
        wrap: str = "shortest",
    ) -> CableSpan:
        """Append an obstacle: ``surface`` placed at ``X_BS`` in ``body``.

        `contact_hint` (a point in the surface frame S, projected onto the surface) seeds
        the first solve with a zero-length geodesic there; without a hint the obstacle
        starts lifted and engages when the straight line first crosses it.

        `side` (a point in S, not the origin) keeps the path on that side of the obstacle,
        like MuJoCo's side site or OpenSim's wrap quadrant: a straight line passing on the
        other side is wrapped round to this one, and a path on the wrong side is not a
        solution (`RESULTS.wrong_side`); see docs/cable.md#wrap-side.

        `wrap` says how the path passes it: ``"shortest"`` (default) solves the geodesic;
        two closed forms for a sphere or cylinder alone between two path points, solved by
        `jaxwrap.solve_cables` (a `CableSet`), reproduce MuJoCo: ``"inside"``, its *inside
        wrap* (a side site inside the geom: the path need only reach the solid, bending at
        one surface point, docs/cable.md#inside-wrap), and ``"mujoco"``, its choice among
        the straight line and the two tangent wraps (docs/cable-sets.md#mujoco-rule).
        """
        where = f"obstacle {len(self.obstacles)}"
        body = _body(body, f"{where}: body")
        if not isinstance(X_BS, Transform) or X_BS.batch_shape != ():
            raise ValueError(f"{where}: X_BS must be a single jw.Transform")
        if not isinstance(surface, AbstractSurface):
            raise ValueError(f"{where}: surface must be a jaxwrap surface, got {type(surface).__name__}")
        hint = None if contact_hint is None else as_vector(contact_hint, 3, f"{where}: contact_hint")
        if side is not None:
            side = as_vector(side, 3, f"{where}: side")
            if not isinstance(side, jax.core.Tracer) and not np.any(np.asarray(side)):
                raise ValueError(f"{where}: side must be a point away from the surface frame's origin, got (0, 0, 0)")
        if wrap not in WRAPS:
            raise ValueError(f"{where}: wrap must be one of {WRAPS}, got {wrap!r}")
        if wrap != "shortest" and not hasattr(surface, "shortest_touch"):
            raise ValueError(
                f"{where}: wrap={wrap!r} is a closed form for spheres and cylinders, not {type(surface).__name__}"
            )
        obstacle = Obstacle(body=body, X_BS=X_BS, surface=surface, contact_hint=hint, side=side, wrap=wrap)
        return self._replace(
            obstacles=self.obstacles + (obstacle,),
            elements=self.elements + (("obstacle", len(self.obstacles)),),
        )

    def add_via_point(self, body: int, station: ArrayLike | Sequence) -> CableSpan:
        """Append a via point: the cable passes through ``station`` fixed in ``body``. Via
        points split the cable into segments that are solved independently."""
        where = f"via point {len(self.via_points)}"
        via = ViaPoint(body=_body(body, f"{where}: body"), station=as_vector(station, 3, f"{where}: station"))
        return self._replace(
            via_points=self.via_points + (via,), elements=self.elements + (("via", len(self.via_points)),)
        )

    def with_settings(self, **changes) -> CableSpan:
        """A copy with some solver settings changed: ``algorithm`` (``"minimum_length"``, the
        default, or ``"scholz2015"``), ``smoothness_tolerance`` (rad), ``max_iterations``
        (per cable segment), ``curve_segment_accuracy``, ``use_warm_start``, ``max_step``
        (rad, the step limiter), ``step_limit_by_magnitude`` (limit with |correction|
        instead of Simbody's signed correction), ``touchdown`` (a `TouchdownSearch`),
        ``geodesic_integrator`` (a `GeodesicIntegrator`) and the rest of `CableSettings`'s
        fields."""
        unknown = set(changes) - set(CableSettings.__dataclass_fields__)
        if unknown:
            raise ValueError(
                f"unknown cable settings {sorted(unknown)}; known: {sorted(CableSettings.__dataclass_fields__)}"
            )
        current = {name: getattr(self.settings, name) for name in CableSettings.__dataclass_fields__}
        return self._replace(settings=CableSettings(**{**current, **changes}))

    def _replace(self, **changes) -> CableSpan:
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ solving
    def solve(self, body_poses: Transform, warm_start: CablePath | CurveState | None = None) -> CablePath:
        """``jw.solve_cable(self, body_poses, warm_start=warm_start)``; see `jaxwrap.solve_cable`.

        Prefer the function under `jax.jit`: ``jax.jit(jw.solve_cable)(cable, poses)`` takes
        the cable as an argument, so new parameter values do not recompile."""
        return solve_cable(self, body_poses, warm_start=warm_start)

    def check(self, body_poses: Transform, warm_start: CablePath | CurveState | None = None) -> CablePath:
        """Solve, then raise `ValueError` (outside `jit`) with the result's message and the
        details (which obstacle, what smoothness) unless the solve is successful; returns
        the path otherwise. Inside `jit` use ``jw.solve_cable(..., throw=True)``. The solve
        itself is compiled (`eqx.filter_jit`): op-by-op it would take minutes."""
        path = _compiled_solve(self, body_poses, warm_start=warm_start)
        if bool(path.converged):
            return path
        message = RESULTS[path.result]
        inside = np.asarray(path.endpoint_inside)
        if inside.any():
            message += f" (a path point next to obstacle(s) {np.flatnonzero(inside).tolist()} lies inside it)"
        else:
            message += (
                f" (smoothness {float(path.smoothness):.3g} rad, tolerance "
                f"{float(self.settings.smoothness_tolerance):.3g}, {int(path.num_iterations)} iterations)"
            )
        raise ValueError(message)
