"""Joint modules: revolute and prismatic about the module's local z, with a DC motor and a
gearbox (Darwin2K ``componentJoint``: ``rotaryActuator`` + ``gearBox``).

A joint module has a housing, fixed to its parent, and an output that moves: connector 0
is on the housing (in the module frame, whose origin is on the joint axis), the others on
the output (in the output frame, equal to the module frame at q = 0). The housing carries
the module's mass (motor, gearbox, casing), a solid cylinder on the axis.

Motor model (docs/modular.md#motors), with motor speed ``w = N |qdot|``, gear ratio N,
efficiency eta, stall torque ``tau_s`` and no-load speed ``w0`` of the motor:

- driving: ``max_torque = eta N tau_s (1 - w / w0)``, clipped at 0;
- braking (torque opposing the motion, back-EMF adding to the supply):
  ``max_torque = N tau_s (1 + w / w0) / eta``;
- ``cont_torque = eta N tau_cont``; ``max_vel = w0 / N``;
- electrical power ``P = I^2 R + k_t w_m I`` with ``I = tau_m / k_t + i0 sign(w_m)``,
  ``tau_m`` the motor torque (``tau / (eta N)`` driving, ``eta tau / N`` braking); P < 0
  is regeneration.

A passive joint (``passive=True``) has no motor: zero torque and power, ``max_vel`` the
joint's own ``max_speed`` parameter.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Real

from .._spatial import Transform
from ._module import (
    POINT_MINUS_X,
    POINT_MINUS_Z,
    POINT_PLUS_X,
    AbstractModule,
    MassProperties,
    Params,
    ParamSpec,
    frame,
    tube_segment,
)

_HOUSING = (
    ParamSpec("mass", 1.0, 0.0, 1.0e4, "kg", "mass of motor, gearbox and housing (on the housing side)"),
    ParamSpec("length", 0.08, 0.0, 5.0, "m", "housing length along the joint axis"),
    ParamSpec("radius", 0.04, 0.001, 5.0, "m", "housing radius (offset of radial connectors)"),
    ParamSpec("pulley_radius", 0.02, 0.001, 5.0, "m", "radius of the tendon pulley on the joint output"),
)
_MOTOR = (
    ParamSpec("stall_torque", 0.5, 0.0, 1.0e5, "N m", "motor stall torque"),
    ParamSpec("no_load_speed", 600.0, 1.0e-3, 1.0e5, "rad/s", "motor no-load speed"),
    ParamSpec("cont_torque", 0.15, 0.0, 1.0e5, "N m", "motor continuous torque rating"),
    ParamSpec("torque_constant", 0.05, 1.0e-6, 1.0e3, "N m/A", "motor torque constant k_t (= back-EMF constant)"),
    ParamSpec("resistance", 1.0, 0.0, 1.0e4, "ohm", "winding resistance"),
    ParamSpec("no_load_current", 0.1, 0.0, 1.0e3, "A", "no-load current i0"),
    ParamSpec("gear_ratio", 100.0, 1.0e-3, 1.0e6, "", "motor turns per joint radian (per metre x 2 pi: prismatic)"),
    ParamSpec("gear_efficiency", 0.8, 0.01, 1.0, "", "gearbox efficiency"),
    ParamSpec("max_speed", 2.0, 0.0, 1.0e4, "rad/s or m/s", "joint speed limit of a passive joint"),
)


def _limits(lower: float, upper: float, lo_bound: float, hi_bound: float, units: str) -> tuple[ParamSpec, ...]:
    return (
        ParamSpec("lower", lower, lo_bound, hi_bound, units, "lower joint limit"),
        ParamSpec("upper", upper, lo_bound, hi_bound, units, "upper joint limit"),
    )


@dataclasses.dataclass(frozen=True)
class AbstractJointModule(AbstractModule):
    """A one-DOF joint module about (revolute) or along (prismatic) its local z axis."""

    passive: bool = False
    kind: ClassVar[str] = "joint"
    num_connectors: ClassVar[int] = 2
    joint_kind: ClassVar[str]  # "revolute" or "prismatic"

    def mass_properties(self, p: Params) -> MassProperties:
        half = p["length"] / 2
        return tube_segment(p["mass"], p["length"], 2 * p["radius"], 0.0 * half, (0.0, 0.0, -half), 2)

    # ----------------------------------------------------------------- motor and gearbox
    def max_vel(self, p: Params) -> Float[Array, ""]:
        if self.passive:
            return p["max_speed"]
        return p["no_load_speed"] / p["gear_ratio"]

    def max_torque(self, p: Params, velocity: Real[ArrayLike, ""], is_braking: bool) -> Float[Array, ""]:
        if self.passive:
            return jnp.zeros_like(p["stall_torque"])
        ratio = p["gear_ratio"] * jnp.abs(velocity) / p["no_load_speed"]
        n, eta, tau_s = p["gear_ratio"], p["gear_efficiency"], p["stall_torque"]
        if is_braking:
            return n * tau_s * (1.0 + ratio) / eta
        return eta * n * tau_s * jnp.maximum(1.0 - ratio, 0.0)

    def cont_torque(self, p: Params) -> Float[Array, ""]:
        if self.passive:
            return jnp.zeros_like(p["cont_torque"])
        return p["gear_efficiency"] * p["gear_ratio"] * p["cont_torque"]

    def power(self, p: Params, velocity: Real[ArrayLike, ""], torque: Real[ArrayLike, ""]) -> Float[Array, ""]:
        if self.passive:
            return jnp.zeros_like(p["resistance"])
        n, eta, kt = p["gear_ratio"], p["gear_efficiency"], p["torque_constant"]
        w_m = n * velocity
        driving = torque * velocity >= 0
        tau_m = jnp.where(driving, torque / (eta * n), eta * torque / n)
        current = tau_m / kt + p["no_load_current"] * jnp.sign(w_m)
        return current**2 * p["resistance"] + kt * w_m * current


_REVOLUTE = _limits(-jnp.pi, jnp.pi, -100.0, 100.0, "rad") + _HOUSING + _MOTOR


@dataclasses.dataclass(frozen=True)
class InlineRevolute(AbstractJointModule):
    """Revolute joint with both connectors on its axis (Darwin2K ``inlineRevolute2``):
    connector 0 at ``(0, 0, -length/2)``, connector 1 at ``(0, 0, length/2)``."""

    params: ClassVar[tuple[ParamSpec, ...]] = _REVOLUTE
    joint_kind: ClassVar[str] = "revolute"

    def connectors(self, p: Params) -> Transform:
        half = p["length"] / 2
        return Transform.stack([frame(POINT_MINUS_Z, (0.0, 0.0, -half)), frame(None, (0.0, 0.0, half))])


@dataclasses.dataclass(frozen=True)
class RightAngleRevolute(AbstractJointModule):
    """Revolute joint entered along its axis, leaving at a right angle (Darwin2K
    ``rightAngleJoint``): connector 0 at ``(0, 0, -length/2)``, connector 1 at
    ``(radius, 0, 0)`` pointing +x."""

    params: ClassVar[tuple[ParamSpec, ...]] = _REVOLUTE
    joint_kind: ClassVar[str] = "revolute"

    def connectors(self, p: Params) -> Transform:
        half = p["length"] / 2
        return Transform.stack([frame(POINT_MINUS_Z, (0.0, 0.0, -half)), frame(POINT_PLUS_X, (p["radius"], 0.0, 0.0))])


@dataclasses.dataclass(frozen=True)
class ElbowRevolute(AbstractJointModule):
    """Revolute elbow (Darwin2K ``elbowJoint2``): both connectors radial, connector 0 at
    ``(-radius, 0, 0)`` pointing -x and connector 1 at ``(radius, 0, 0)`` pointing +x, so
    the links on either side turn in the plane normal to the axis."""

    params: ClassVar[tuple[ParamSpec, ...]] = _REVOLUTE
    joint_kind: ClassVar[str] = "revolute"

    def connectors(self, p: Params) -> Transform:
        r = p["radius"]
        return Transform.stack([frame(POINT_MINUS_X, (-r, 0.0, 0.0)), frame(POINT_PLUS_X, (r, 0.0, 0.0))])


@dataclasses.dataclass(frozen=True)
class PrismaticJoint(AbstractJointModule):
    """Telescoping prismatic joint along its z axis (Darwin2K ``prismaticTube``):
    connector 0 at ``(0, 0, -length/2)``, connector 1 at ``(0, 0, length/2)`` on the
    slider, which moves by q along z."""

    params: ClassVar[tuple[ParamSpec, ...]] = (
        _limits(0.0, 0.2, -100.0, 100.0, "m")
        + _HOUSING
        + tuple(
            p._replace(default=2 * jnp.pi / 0.005) if p.name == "gear_ratio" else p
            for p in _MOTOR
            if p.name != "max_speed"
        )
        + (ParamSpec("max_speed", 0.2, 0.0, 1.0e4, "m/s", "joint speed limit of a passive joint"),)
    )
    joint_kind: ClassVar[str] = "prismatic"

    def connectors(self, p: Params) -> Transform:
        half = p["length"] / 2
        return Transform.stack([frame(POINT_MINUS_Z, (0.0, 0.0, -half)), frame(None, (0.0, 0.0, half))])
