"""`CablePath`: a solved cable and everything computed from it (docs/cable.md#outputs).

Spatial vectors follow the jaxwrap contract: velocities ``[angular, linear]`` (linear =
velocity of the body origin), forces ``[moment about the body origin, force]``, both in
ground, arrays of shape (..., 2, 3). Unit forces are the forces for unit tension.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Int, Real

from .._results import RESULTS
from .._spatial import Transform
from ._definition import AbstractCableSpan
from ._geometry import Evaluation, total_length
from ._state import CurveState, Scene


def _per_path(*array_ndims: int):
    """Evaluate a method lane by lane on a batched path (one returned by `jax.vmap` or
    `solve_cables`), so every output keeps the batch axes. `array_ndims` gives the
    unbatched rank of each array argument (an argument with more axes is mapped along
    with the path); Python ints (indices, sample counts) stay static."""

    def decorate(method):
        @functools.wraps(method)
        def wrapper(self, *args):
            batch = self.smoothness.ndim
            if batch == 0:
                return method(self, *args)
            static = [not hasattr(a, "ndim") and not isinstance(a, (float, list, tuple)) for a in args]
            arrays = [jnp.asarray(a) for a, s in zip(args, static) if not s]
            ndims = [n for n, s in zip(array_ndims or (0,) * len(args), static) if not s]

            def lane(path, *lane_arrays):
                it = iter(lane_arrays)
                return method(path, *(a if s else next(it) for a, s in zip(args, static)))

            axes = [0 if a.ndim > n else None for a, n in zip(arrays, ndims)]
            fn = lane
            for _ in range(batch):
                fn = jax.vmap(fn, in_axes=(0, *axes))
            return fn(self, *arrays)

        return wrapper

    return decorate


class CablePath(eqx.Module):
    """A solved cable path (a pytree: batch it with `vmap`, differentiate any output).

    **Status fields:**

    - `result`: a `jaxwrap.RESULTS` item, the outcome of the solve (one per path when
      batched); `converged` is its boolean summary, ``result == RESULTS.successful``.
    - `smoothness`: the largest angular discontinuity (rad) between a straight line and a
      curve, over the whole path (Simbody's max path error).
    - `num_iterations`: corrections applied, summed over legs.
    - `endpoint_inside`: (num_obstacles,) a neighbouring path point of the obstacle's
      curve (an end or via point, or the adjacent contact point on another obstacle) lies
      inside it, where the surface is defined (Simbody throws there; ``throw=True``
      raises).
    """

    cable: AbstractCableSpan
    body_poses: Transform
    scene: Scene
    state: CurveState  # warm-start data, in surface frames
    evaluation: Evaluation
    result: RESULTS
    smoothness: Float[Array, ""]
    num_iterations: Int[Array, ""]
    endpoint_inside: Bool[Array, " n"]

    @property
    def converged(self) -> Bool[Array, ...]:
        """``result == RESULTS.successful`` (keeps batch axes)."""
        return jnp.asarray(self.result == RESULTS.successful)

    # ------------------------------------------------------------------ basics
    @property
    @_per_path()
    def length(self) -> Float[Array, "*batch"]:
        """Total length: straight lines plus the arcs of the obstacles in contact."""
        ev = self.evaluation
        return total_length(ev.curves, ev.neighbours, ev.lines)

    @property
    @_per_path()
    def in_contact(self) -> Bool[Array, "*batch n"]:
        return self.evaluation.neighbours.active

    @property
    @_per_path()
    def origin_tangent(self) -> Float[Array, "*batch 3"]:
        """Direction of the first straight line (pointing along the cable, origin to termination)."""
        return self.evaluation.lines.e_first[0]

    @property
    @_per_path()
    def termination_tangent(self) -> Float[Array, "*batch 3"]:
        """Direction of the last straight line (origin to termination)."""
        return self.evaluation.lines.e_last[-1]

    @_per_path()
    def via_point_location(self, i: int) -> Float[Array, "*batch 3"]:
        return self.scene.via[i]

    @_per_path()
    def via_point_tangents(self, i: int) -> tuple[Float[Array, "*batch 3"], Float[Array, "*batch 3"]]:
        """(incoming, outgoing) unit directions at via point ``i``."""
        lines = self.evaluation.lines
        return lines.e_last[i], lines.e_first[i + 1]

    # ------------------------------------------------------------------ curves
    @_per_path()
    def curve_segment_arc_length(self, i: int) -> Float[Array, "*batch"]:
        """Geodesic length over obstacle ``i``; NaN while the cable is lifted from it."""
        ev = self.evaluation
        return jnp.where(ev.neighbours.active[i], ev.curves.arc_length[i], jnp.nan)

    @_per_path()
    def curve_segment_frames(self, i: int) -> tuple[Transform, Transform]:
        """Darboux frames at first (P) and last (Q) contact in ground: x = tangent,
        y = outward normal, z = binormal."""
        c = self.evaluation.curves
        return Transform(c.R_GP[i], c.P[i]), Transform(c.R_GQ[i], c.Q[i])

    @_per_path()
    def curve_segment_points(self, i: int, num_samples: int) -> Float[Array, "*batch num_samples 3"]:
        """``num_samples`` points of the curve over obstacle ``i`` at equal arc-length
        spacing, in ground. A lifted obstacle emits the point of the straight line nearest
        to it (its tracking point) ``num_samples`` times, so shapes never change."""
        if num_samples < 2:
            raise ValueError(f"num_samples must be at least 2, got {num_samples}")
        g = self.state.geodesics[i]
        obstacle = self.cable.obstacles[i]
        X_GS = self.scene.X_GS[i]
        points = obstacle.surface.geodesic_points(
            g.p_SP,
            g.R_SP[:, 0],
            g.arc_length,
            num_samples,
            accuracy=self.cable.settings.curve_segment_accuracy,
            integrator=self.cable.settings.integrator(),
        )
        lifted = jnp.broadcast_to(self.state.tracking[i], points.shape)
        return X_GS.apply(jnp.where(self.in_contact[i], points, lifted))

    @_per_path()
    def points(self, num_samples_per_curve: int = 16) -> Float[Array, "*batch n 3"]:
        """The whole path resampled: origin, every obstacle's curve (``num_samples_per_curve``
        points each) and via point in path order, termination."""
        pieces = [self.scene.origin[None]]
        for kind, index in self.cable.elements:
            if kind == "via":
                pieces.append(self.scene.via[index][None])
            else:
                pieces.append(self.curve_segment_points(index, num_samples_per_curve))
        pieces.append(self.scene.termination[None])
        return jnp.concatenate(pieces)

    # ------------------------------------------------------------------ forces
    def _lever(self, body: int, point: Array) -> Array:
        return point - self.body_poses.translation[body]

    def _spatial(self, body: int, point: Array, force: Array) -> Array:
        return jnp.stack([jnp.cross(self._lever(body, point), force), force])

    @property
    @_per_path()
    def origin_unit_force(self) -> Float[Array, "*batch 2 3"]:
        """[moment about the origin body's origin, force] for unit tension."""
        return self._spatial(self.cable.origin_body, self.scene.origin, self.origin_tangent)

    @property
    @_per_path()
    def termination_unit_force(self) -> Float[Array, "*batch 2 3"]:
        return self._spatial(self.cable.termination_body, self.scene.termination, -self.termination_tangent)

    @_per_path()
    def curve_segment_unit_force(self, i: int) -> Float[Array, "*batch 2 3"]:
        """Force of the cable on obstacle ``i``'s body (−t_P at P, t_Q at Q); zero when lifted."""
        c = self.evaluation.curves
        body = self.cable.obstacles[i].body
        t_P, t_Q = c.R_GP[i][:, 0], c.R_GQ[i][:, 0]
        moment = jnp.cross(self._lever(body, c.Q[i]), t_Q) - jnp.cross(self._lever(body, c.P[i]), t_P)
        return jnp.where(self.in_contact[i], jnp.stack([moment, t_Q - t_P]), 0.0)

    @_per_path()
    def via_point_unit_force(self, i: int) -> Float[Array, "*batch 2 3"]:
        incoming, outgoing = self.via_point_tangents(i)
        return self._spatial(self.cable.via_points[i].body, self.scene.via[i], outgoing - incoming)

    def _unit_forces(self) -> list[tuple[int, Array]]:
        cable = self.cable
        forces = [(cable.origin_body, self.origin_unit_force), (cable.termination_body, self.termination_unit_force)]
        forces += [(o.body, self.curve_segment_unit_force(i)) for i, o in enumerate(cable.obstacles)]
        forces += [(v.body, self.via_point_unit_force(j)) for j, v in enumerate(cable.via_points)]
        return forces

    @_per_path(0)
    def body_forces(self, tension: Real[ArrayLike, ""] | Sequence) -> Float[Array, "*batch n_bodies 2 3"]:
        """Spatial forces of the cable on every body for ``tension``; all zero for
        ``tension <= 0`` (a cable cannot push)."""
        n_bodies = self.body_poses.batch_shape[0]
        total = jnp.zeros((n_bodies, 2, 3), self.scene.origin.dtype)
        for body, unit in self._unit_forces():
            total = total.at[body].add(unit)
        tension = jnp.asarray(tension)
        return jnp.where(tension > 0, tension, 0.0) * total

    @_per_path(0, 3)
    def power(
        self, tension: Real[ArrayLike, ""] | Sequence, body_velocities: Real[ArrayLike, "n_bodies 2 3"] | Sequence
    ) -> Float[Array, "*batch"]:
        """Power the cable delivers to the bodies: ``Σ F · V`` for ``tension``, with
        ``F = [moment, force]`` and ``V = [angular, linear]``."""
        forces = self.body_forces(tension)
        return jnp.sum(forces * jnp.asarray(body_velocities))

    # ------------------------------------------------------------------ length rate
    @_per_path(3)
    def length_dot(self, body_velocities: Real[ArrayLike, "n_bodies 2 3"] | Sequence) -> Float[Array, "*batch"]:
        """Exact rate of change of the length: Σ over straight lines of ``e · (v_end − v_start)``
        with the velocities of the material points of the bodies at the line ends (the arcs
        contribute nothing; Scholz et al. 2015)."""
        V = jnp.asarray(body_velocities)
        cable, ev, scene = self.cable, self.evaluation, self.scene

        def velocity(body: int, point: Array) -> Array:
            return V[body, 1] + jnp.cross(V[body, 0], self._lever(body, point))

        start_bodies = [cable.origin_body] + [v.body for v in cable.via_points]
        end_bodies = [v.body for v in cable.via_points] + [cable.termination_body]
        rate = jnp.zeros((), scene.origin.dtype)
        legs = cable.legs()
        c, topology, lines = ev.curves, ev.neighbours, ev.lines
        v_P = [velocity(o.body, c.P[i]) for i, o in enumerate(cable.obstacles)]
        v_Q = [velocity(o.body, c.Q[i]) for i, o in enumerate(cable.obstacles)]
        for s, obstacles in enumerate(legs):
            v_start = velocity(start_bodies[s], scene.leg_start[s])
            v_last = v_start
            for i in obstacles:
                # Line into curve i starts at the previous active point (v_last so far).
                rate = rate + jnp.where(topology.active[i], jnp.dot(lines.e_in[i], v_P[i] - v_last), 0.0)
                v_last = jnp.where(topology.active[i], v_Q[i], v_last)
            rate = rate + jnp.dot(lines.e_last[s], velocity(end_bodies[s], scene.leg_end[s]) - v_last)
        return rate
