"""What every module type shares: typed parameters with bounds, connectors, mass properties.

A module *type* (`HollowTube()`, `InlineRevolute()`, ...) is a small, hashable description
with no numbers in it; its parameter *values* live in the `Configuration` as array leaves
(one scalar per parameter), so they are differentiable design variables and batch under
`vmap`. The type computes, from those values, its connector frames and its mass
properties, both as traced JAX expressions. See docs/modular.md#modules.

Connector convention (Darwin2K's attachment rule): every connector frame has its z axis
pointing *out of* the module. When a child is attached, its connector is turned 180
degrees about its own y axis and made coincident with the parent's connector (after the
attachment's twist about the parent connector's z).
"""

from __future__ import annotations

import abc
import dataclasses
from typing import ClassVar, NamedTuple

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float

from .._spatial import Transform

Params = dict[str, Float[Array, ""]]

MODULE_KINDS = ("base", "joint", "link", "tool")


class ParamSpec(NamedTuple):
    """A module parameter (Darwin2K's ``paramSpec``): its name, default, closed bounds,
    units and meaning. Values outside ``[lower, upper]`` are rejected at construction."""

    name: str
    default: float
    lower: float
    upper: float
    units: str
    description: str


class MassProperties(NamedTuple):
    """Mass (kg), centre of mass (3,) and inertia about it (3, 3), in one frame."""

    mass: Float[Array, ""]
    com: Float[Array, "3"]
    inertia: Float[Array, "3 3"]


def frame(rotation: np.ndarray | None, translation) -> Transform:
    """A connector frame from a constant rotation (None: identity) and a translation whose
    components may be traced parameters."""
    dtype = jnp.result_type(float, *[jnp.asarray(c).dtype for c in translation])
    t = jnp.stack([jnp.asarray(c, dtype=dtype) for c in translation])
    R = jnp.eye(3, dtype=dtype) if rotation is None else jnp.asarray(rotation, dtype=dtype)
    return Transform(R, t)


# Rotations (NumPy, exact) taking a connector's z axis to the module's -z, +x and -x
# directions: Ry(pi), Ry(pi/2), Ry(-pi/2). POINT_MINUS_Z is also the attachment flip.
POINT_MINUS_Z = np.array([[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])
POINT_PLUS_X = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
POINT_MINUS_X = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def zero_mass(dtype=None) -> MassProperties:
    dtype = dtype or jnp.result_type(float)
    return MassProperties(jnp.zeros((), dtype), jnp.zeros(3, dtype), jnp.zeros((3, 3), dtype))


def tube_segment(mass, length, outer_diameter, inner_diameter, start, direction: int) -> MassProperties:
    """A thin-walled (or solid, inner 0) cylinder of ``length`` from ``start`` along the
    module axis ``direction`` (0 = x, 2 = z), uniform density."""
    r2 = (outer_diameter**2 + inner_diameter**2) / 4.0
    axial = 0.5 * mass * r2
    transverse = mass * (3.0 * r2 + length**2) / 12.0
    diag = [transverse, transverse, transverse]
    diag[direction] = axial
    unit = np.zeros(3)
    unit[direction] = 1.0
    com = jnp.stack([jnp.asarray(c) for c in start]) + 0.5 * length * unit
    return MassProperties(mass, com, jnp.diag(jnp.stack(diag)))


def combine(parts: list[MassProperties]) -> MassProperties:
    """Mass properties of rigidly joined parts (parallel-axis theorem); zero mass gives a
    zero centre of mass, without dividing by zero."""
    masses = jnp.stack([p.mass for p in parts])
    coms = jnp.stack([p.com for p in parts])
    total = jnp.sum(masses)
    safe_total = jnp.where(total > 0, total, 1.0)
    com = jnp.where(total > 0, jnp.sum(masses[:, None] * coms, axis=0) / safe_total, 0.0)
    d = coms - com
    eye = jnp.eye(3, dtype=coms.dtype)
    shift = masses[:, None, None] * (jnp.sum(d * d, axis=1)[:, None, None] * eye - d[:, :, None] * d[:, None, :])
    inertia = jnp.sum(jnp.stack([p.inertia for p in parts]) + shift, axis=0)
    return MassProperties(total, com, inertia)


def transform_mass(X: Transform, m: MassProperties) -> MassProperties:
    """Mass properties given in frame B, expressed in frame A (``X = X_AB``)."""
    return MassProperties(m.mass, X.apply(m.com), X.rotation @ m.inertia @ X.rotation.T)


@dataclasses.dataclass(frozen=True)
class AbstractModule(abc.ABC):
    """A module type (Darwin2K ``module``): ``kind`` is one of ``base``, ``joint``,
    ``link``, ``tool``; ``params`` lists its parameters; ``num_connectors`` its connectors.

    Subclasses implement `connectors` (frames in the module frame; for joints, connector 0
    is on the housing and the others on the output, in the output frame) and
    `mass_properties` (in the module frame; for joints, the housing side)."""

    kind: ClassVar[str]
    params: ClassVar[tuple[ParamSpec, ...]]
    num_connectors: ClassVar[int]

    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        return tuple(p.name for p in cls.params)

    @classmethod
    def param_spec(cls, name: str) -> ParamSpec:
        for p in cls.params:
            if p.name == name:
                return p
        raise ValueError(f"{cls.__name__} has no parameter {name!r}; its parameters are {list(cls.param_names())}")

    @abc.abstractmethod
    def connectors(self, p: Params) -> Transform:
        """Connector frames (n_connectors,) in the module frame."""

    @abc.abstractmethod
    def mass_properties(self, p: Params) -> MassProperties:
        """Mass properties in the module frame."""

    @property
    def type_name(self) -> str:
        return type(self).__name__
