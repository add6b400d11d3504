"""The rigid module catalog: bases, links (hollow tubes, elbows, tees) and tools.

Joint modules, with their motor and gearbox, are in `_joints.py`. Every module frame
has its origin at the module's proximal connector (connector 0) except bases, whose origin
is the middle of the footprint on the floor. Dimensions follow Darwin2K's ``hollowTube``
(length, outer diameter, wall thickness, material); see docs/modular.md#modules.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar

import jax.numpy as jnp
from jaxtyping import Array, Float

from .._spatial import Transform
from ._module import (
    POINT_MINUS_X,
    POINT_MINUS_Z,
    POINT_PLUS_X,
    AbstractModule,
    MassProperties,
    Params,
    ParamSpec,
    combine,
    frame,
    tube_segment,
)

# ---------------------------------------------------------------------------- bases
_FOOTPRINT = (
    ParamSpec("height", 0.1, 0.0, 5.0, "m", "height of the mounting connector above the floor"),
    ParamSpec("footprint_length", 0.5, 0.01, 20.0, "m", "support rectangle along the base x axis"),
    ParamSpec("footprint_width", 0.5, 0.01, 20.0, "m", "support rectangle along the base y axis"),
    ParamSpec("mass", 10.0, 0.0, 1.0e5, "kg", "base mass (a uniform box over the footprint, up to the connector)"),
)
_DRIVE = (
    ParamSpec("max_speed", 1.0, 0.0, 100.0, "m/s", "largest translational speed of the base"),
    ParamSpec("max_turn_rate", 1.0, 0.0, 100.0, "rad/s", "largest angular speed of the base"),
    ParamSpec("drive_force", 100.0, 0.0, 1.0e6, "N", "largest force the base drive exerts"),
    ParamSpec("drive_torque", 50.0, 0.0, 1.0e6, "N m", "largest torque the base drive exerts"),
)


@dataclasses.dataclass(frozen=True)
class _BaseModule(AbstractModule):
    """A base (Darwin2K ``baseModule``): one mounting connector on top, a rectangular
    support polygon on the floor (``supportPts``) and a stable point at its centre."""

    kind: ClassVar[str] = "base"
    num_connectors: ClassVar[int] = 1
    motion: ClassVar[str]  # "fixed", "planar" or "spatial" (Darwin2K's baseMotionType)
    joint_kind: ClassVar[str]  # the RobotModel joint from the world

    def connectors(self, p: Params) -> Transform:
        return Transform.stack([frame(None, (0.0, 0.0, p["height"]))])

    def support_polygon(self, p: Params) -> Float[Array, "4 3"]:
        """Vertices of the support polygon in the base frame, counter-clockwise seen from +z."""
        a, b = p["footprint_length"] / 2, p["footprint_width"] / 2
        zero = jnp.zeros_like(a)
        return jnp.stack(
            [jnp.stack([a, -b, zero]), jnp.stack([a, b, zero]), jnp.stack([-a, b, zero]), jnp.stack([-a, -b, zero])]
        )

    def stable_point(self, p: Params) -> Float[Array, "3"]:
        """A point that is always inside the support polygon (Darwin2K's ``stablePt``)."""
        return jnp.zeros(3, dtype=p["height"].dtype)

    def mass_properties(self, p: Params) -> MassProperties:
        m, L, W, h = p["mass"], p["footprint_length"], p["footprint_width"], p["height"]
        inertia = m / 12.0 * jnp.diag(jnp.stack([W**2 + h**2, L**2 + h**2, L**2 + W**2]))
        zero = jnp.zeros_like(h)
        return MassProperties(m, jnp.stack([zero, zero, h / 2]), inertia)

    @abc.abstractmethod
    def max_velocities(self, p: Params) -> Float[Array, " nv"]:
        """Largest rate of each base velocity coordinate (empty for a fixed base)."""

    @abc.abstractmethod
    def drive_limits(self, p: Params) -> Float[Array, " nv"]:
        """Largest force or torque along each base velocity coordinate."""


@dataclasses.dataclass(frozen=True)
class FixedBase(_BaseModule):
    """A base fixed to the floor (manipulators); it can still tip over its footprint."""

    params: ClassVar[tuple[ParamSpec, ...]] = _FOOTPRINT
    motion: ClassVar[str] = "fixed"
    joint_kind: ClassVar[str] = "fixed"

    def max_velocities(self, p: Params) -> Float[Array, " nv"]:
        return jnp.zeros(0, dtype=p["height"].dtype)

    def drive_limits(self, p: Params) -> Float[Array, " nv"]:
        return jnp.zeros(0, dtype=p["height"].dtype)


@dataclasses.dataclass(frozen=True)
class PlanarBase(_BaseModule):
    """A mobile base moving on the floor: DOFs (x, y, yaw), a `RobotModel` ``planar``
    joint (q = x, y, cos, sin; v = vx, vy, yaw rate in the base frame)."""

    params: ClassVar[tuple[ParamSpec, ...]] = _FOOTPRINT + _DRIVE
    motion: ClassVar[str] = "planar"
    joint_kind: ClassVar[str] = "planar"

    def max_velocities(self, p: Params) -> Float[Array, " nv"]:
        return jnp.stack([p["max_speed"], p["max_speed"], p["max_turn_rate"]])

    def drive_limits(self, p: Params) -> Float[Array, " nv"]:
        return jnp.stack([p["drive_force"], p["drive_force"], p["drive_torque"]])


@dataclasses.dataclass(frozen=True)
class FreeFlyingBase(_BaseModule):
    """A free-flying base (Darwin2K ``testBase``/``virtualBase``): a `RobotModel`
    ``floating`` joint (q = x, y, z, qx, qy, qz, qw; v = linear, angular in the base
    frame). Its support polygon applies when it stands on the floor."""

    params: ClassVar[tuple[ParamSpec, ...]] = _FOOTPRINT + _DRIVE
    motion: ClassVar[str] = "spatial"
    joint_kind: ClassVar[str] = "floating"

    def max_velocities(self, p: Params) -> Float[Array, " nv"]:
        return jnp.stack([p["max_speed"]] * 3 + [p["max_turn_rate"]] * 3)

    def drive_limits(self, p: Params) -> Float[Array, " nv"]:
        return jnp.stack([p["drive_force"]] * 3 + [p["drive_torque"]] * 3)


# ---------------------------------------------------------------------------- links
_SECTION = (
    ParamSpec("outer_diameter", 0.05, 0.002, 2.0, "m", "outer diameter of the tube"),
    ParamSpec("wall_thickness", 0.003, 0.0001, 1.0, "m", "wall thickness (at most half the outer diameter)"),
    ParamSpec("density", 2700.0, 10.0, 25000.0, "kg/m^3", "material density (default aluminium)"),
)


@dataclasses.dataclass(frozen=True)
class _TubeModule(AbstractModule):
    kind: ClassVar[str] = "link"

    @staticmethod
    def inner_diameter(p: Params) -> Float[Array, ""]:
        return p["outer_diameter"] - 2.0 * p["wall_thickness"]

    @classmethod
    def mass_per_length(cls, p: Params) -> Float[Array, ""]:
        return p["density"] * jnp.pi * (p["outer_diameter"] ** 2 - cls.inner_diameter(p) ** 2) / 4.0

    def _segment(self, p: Params, length, start, direction: int) -> MassProperties:
        mass = self.mass_per_length(p) * length
        return tube_segment(mass, length, p["outer_diameter"], self.inner_diameter(p), start, direction)


@dataclasses.dataclass(frozen=True)
class HollowTube(_TubeModule):
    """A straight hollow tube of circular section (Darwin2K ``hollowTube``) along its z
    axis: connector 0 at the origin (pointing -z), connector 1 at ``(0, 0, length)``.
    The only module that bends in `compute_deflections` (Euler-Bernoulli beam)."""

    params: ClassVar[tuple[ParamSpec, ...]] = (
        ParamSpec("length", 0.5, 0.005, 20.0, "m", "tube length between its connectors"),
        *_SECTION,
        ParamSpec("youngs_modulus", 70.0e9, 1.0e6, 2.0e12, "Pa", "Young's modulus (default aluminium)"),
        ParamSpec("poisson_ratio", 0.33, 0.0, 0.5, "", "Poisson's ratio (shear modulus for torsion)"),
    )
    num_connectors: ClassVar[int] = 2

    def connectors(self, p: Params) -> Transform:
        return Transform.stack([frame(POINT_MINUS_Z, (0.0, 0.0, 0.0)), frame(None, (0.0, 0.0, p["length"]))])

    def mass_properties(self, p: Params) -> MassProperties:
        return self._segment(p, p["length"], (0.0, 0.0, 0.0), 2)


@dataclasses.dataclass(frozen=True)
class ElbowTube(_TubeModule):
    """A tube with a 90-degree bend (Darwin2K ``elbowLink2``): a leg of ``length`` along
    z, then one along x; connector 1 at ``(length, 0, length)`` pointing +x. Rigid."""

    params: ClassVar[tuple[ParamSpec, ...]] = (
        ParamSpec("length", 0.1, 0.005, 20.0, "m", "length of each leg"),
        *_SECTION,
    )
    num_connectors: ClassVar[int] = 2

    def connectors(self, p: Params) -> Transform:
        L = p["length"]
        return Transform.stack([frame(POINT_MINUS_Z, (0.0, 0.0, 0.0)), frame(POINT_PLUS_X, (L, 0.0, L))])

    def mass_properties(self, p: Params) -> MassProperties:
        L = p["length"]
        return combine([self._segment(p, L, (0.0, 0.0, 0.0), 2), self._segment(p, L, (0.0, 0.0, L), 0)])


@dataclasses.dataclass(frozen=True)
class TeeTube(_TubeModule):
    """A branching tube (a tee, for two arms on one trunk): a trunk of ``length`` along
    z, then a cross bar with connector 1 at ``(length, 0, length)`` pointing +x and
    connector 2 at ``(-length, 0, length)`` pointing -x. Rigid."""

    params: ClassVar[tuple[ParamSpec, ...]] = (
        ParamSpec("length", 0.1, 0.005, 20.0, "m", "trunk length and half cross-bar length"),
        *_SECTION,
    )
    num_connectors: ClassVar[int] = 3

    def connectors(self, p: Params) -> Transform:
        L = p["length"]
        return Transform.stack(
            [
                frame(POINT_MINUS_Z, (0.0, 0.0, 0.0)),
                frame(POINT_PLUS_X, (L, 0.0, L)),
                frame(POINT_MINUS_X, (-L, 0.0, L)),
            ]
        )

    def mass_properties(self, p: Params) -> MassProperties:
        L = p["length"]
        return combine([self._segment(p, L, (0.0, 0.0, 0.0), 2), self._segment(p, 2 * L, (-L, 0.0, L), 0)])


# ---------------------------------------------------------------------------- tools
@dataclasses.dataclass(frozen=True)
class SimpleTool(AbstractModule):
    """A small cylindrical tool (Darwin2K ``simpleTool``) with its tool control point (TCP)
    at ``(0, 0, length)``, axes parallel to the module's. Each tool is an end point."""

    kind: ClassVar[str] = "tool"
    params: ClassVar[tuple[ParamSpec, ...]] = (
        ParamSpec("length", 0.05, 0.0, 5.0, "m", "distance from the connector to the TCP"),
        ParamSpec("diameter", 0.03, 0.001, 1.0, "m", "tool body diameter"),
        ParamSpec("mass", 0.2, 0.0, 1.0e4, "kg", "tool mass"),
    )
    num_connectors: ClassVar[int] = 1

    def connectors(self, p: Params) -> Transform:
        return Transform.stack([frame(POINT_MINUS_Z, (0.0, 0.0, 0.0))])

    def tcp(self, p: Params) -> Transform:
        """The tool control point frame in the module frame."""
        return frame(None, (0.0, 0.0, p["length"]))

    def mass_properties(self, p: Params) -> MassProperties:
        return tube_segment(p["mass"], p["length"], p["diameter"], 0.0 * p["diameter"], (0.0, 0.0, 0.0), 2)
