"""`Configuration`: a robot composed of parameterized modules (Darwin2K ``configuration``).

An immutable pytree. Its array leaves are the design and state numbers, each
differentiable and batchable: module parameters (one scalar per parameter of every
prototype), attachment twists, chain and base costs, the joint lock mask, end-point
loads and payloads. Its static fields are the structure (prototypes, attachments, the
instantiated tree, bodies, chains, end points) and the motion mode, so one compiled
program serves every design with the same structure. Setters return a new configuration.

Build one with `ConfigurationBuilder`; the operations are free functions taking the
configuration first (`compute_cg(config, q)`), in `_kinematics.py`, `_metrics.py` and
`_deflection.py`. See docs/modular.md.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from .._misc import concrete_value
from ._graph import Attachment, Structure, instantiate
from ._module import AbstractModule, ParamSpec


class MotionMode(enum.Enum):
    """Which DOFs may move (Darwin2K ``motionMode``): the Jacobian keeps only their columns."""

    BASE_ONLY = "base_only"  # only the base link's DOFs
    CHAINS_ONLY = "chains_only"  # only the serial chains' DOFs (not the base's)
    ALL = "all"


BASE_ONLY, CHAINS_ONLY, ALL = MotionMode.BASE_ONLY, MotionMode.CHAINS_ONLY, MotionMode.ALL


def _check_value(module_name: str, module: AbstractModule, spec: ParamSpec, value) -> None:
    concrete = concrete_value(value)
    if concrete is None:
        return  # traced: bounds are the design space's job (`DesignSpace` maps into them)
    if concrete.shape != ():
        raise ValueError(
            f"module {module_name!r}: parameter {spec.name!r} must be a scalar, got shape {concrete.shape}"
        )
    v = float(concrete)
    if not np.isfinite(v) or not spec.lower <= v <= spec.upper:
        raise ValueError(
            f"module {module_name!r} ({module.type_name}): parameter {spec.name!r} = {v} is outside its bounds "
            f"[{spec.lower}, {spec.upper}] {spec.units}"
        )


def _check_module_params(name: str, module: AbstractModule, p: dict) -> None:
    """Bounds of each parameter, and the relations between them."""
    for spec in module.params:
        _check_value(name, module, spec, p[spec.name])
    values = {k: concrete_value(v) for k, v in p.items()}
    if "wall_thickness" in values and values["wall_thickness"] is not None and values["outer_diameter"] is not None:
        if 2 * float(values["wall_thickness"]) > float(values["outer_diameter"]):
            raise ValueError(
                f"module {name!r}: wall_thickness {float(values['wall_thickness'])} exceeds half the outer "
                f"diameter {float(values['outer_diameter'])}"
            )
    if module.kind == "joint" and values["lower"] is not None and values["upper"] is not None:
        if float(values["lower"]) > float(values["upper"]):
            raise ValueError(
                f"joint module {name!r}: lower limit {float(values['lower'])} exceeds upper {float(values['upper'])}"
            )


class Configuration(eqx.Module):
    """A robot composed of parameterized modules; see the module docstring.

    Array fields: ``params`` (prototype name -> parameter name -> scalar), ``twists``
    (n_attachments,), radians about each connection axis; ``chain_cost`` and
    ``base_cost`` (scalars); ``locked`` (n_joints,), 1.0 per locked joint in joint order;
    ``tip_forces`` and ``tip_torques`` (n_end_points, 3), world frame; ``payloads``, one
    `AttachedPayload` or None per end point; ``components``, `AbstractComponent` checks.
    """

    # Shapes are in the docstring, not in jaxtyping annotations: a configuration may be
    # batched (leading design axes on every leaf) and still be copied with a new static field.
    params: dict[str, dict[str, Array]]
    twists: Array
    chain_cost: Array
    base_cost: Array
    locked: Array
    tip_forces: Array
    tip_torques: Array
    payloads: tuple
    components: tuple

    label: str = eqx.field(static=True)
    prototypes: tuple[tuple[str, AbstractModule], ...] = eqx.field(static=True)
    attachments: tuple[Attachment, ...] = eqx.field(static=True)
    structure: Structure = eqx.field(static=True)
    motion_mode: MotionMode = eqx.field(static=True)

    # ------------------------------------------------------------------ structure
    def module_of(self, instance: int) -> AbstractModule:
        return self.prototypes[self.structure.instances[instance].prototype][1]

    def params_of(self, instance: int) -> dict[str, Array]:
        """The parameters of an instance: its prototype's (copies share them)."""
        return self.params[self.prototypes[self.structure.instances[instance].prototype][0]]

    def instance_index(self, name: str) -> int:
        for i, inst in enumerate(self.structure.instances):
            if inst.name == name:
                return i
        raise ValueError(f"no module instance {name!r}; instances are {[i.name for i in self.structure.instances]}")

    def joint_index(self, joint: int | str) -> int:
        """Position of a joint module (instance name or index) in joint order."""
        if isinstance(joint, str):
            inst = self.instance_index(joint)
            if inst not in self.structure.joints:
                raise ValueError(f"module {joint!r} is not a joint module")
            return self.structure.joints.index(inst)
        if not 0 <= int(joint) < len(self.structure.joints):
            raise ValueError(f"joint index {joint} out of range [0, {len(self.structure.joints)})")
        return int(joint)

    def end_point_index(self, end_point: int | str) -> int:
        """Position of an end point (tool instance name or index) in end-point order."""
        if isinstance(end_point, str):
            inst = self.instance_index(end_point)
            if inst not in self.structure.end_points:
                raise ValueError(f"module {end_point!r} is not a tool, so it is no end point")
            return self.structure.end_points.index(inst)
        if isinstance(end_point, bool) or not 0 <= int(end_point) < len(self.structure.end_points):
            raise ValueError(
                f"end point {end_point!r} does not exist; the configuration has {len(self.structure.end_points)}"
            )
        return int(end_point)

    @property
    def base(self) -> AbstractModule:
        return self.module_of(0)

    def base_is_mobile(self) -> bool:
        return base_is_mobile(self)

    # ------------------------------------------------------------------ Darwin2K counts
    def num_joints(self) -> int:
        return len(self.structure.joints)

    def num_links(self) -> int:
        """Rigid bodies of the mechanism (the base and one per joint output)."""
        return self.structure.num_bodies - 1

    def num_modules(self) -> int:
        return len(self.structure.instances)

    def num_chains(self) -> int:
        return len(self.structure.chains)

    def num_prototypes(self) -> int:
        return len(self.prototypes)

    def num_end_points(self) -> int:
        return len(self.structure.end_points)

    def num_components(self) -> int:
        return len(self.components)

    def num_dofs(self) -> int:
        """Velocity coordinates: the base's (0, 3 or 6) and one per joint."""
        return num_base_dofs(self) + self.num_joints()

    # ------------------------------------------------------------------ getters
    def get_module(self, i: int) -> str:
        return self.structure.instances[i].name

    def get_joint(self, i: int) -> str:
        return self.structure.instances[self.structure.joints[i]].name

    def get_joint_by_dof(self, dof: int) -> str | None:
        """The joint module moving velocity coordinate ``dof``, or None for a base DOF."""
        n_base = num_base_dofs(self)
        if not 0 <= dof < n_base + self.num_joints():
            raise ValueError(f"dof {dof} out of range [0, {n_base + self.num_joints()})")
        return None if dof < n_base else self.get_joint(dof - n_base)

    def get_prototype(self, i: int) -> tuple[str, AbstractModule]:
        return self.prototypes[i]

    def get_chain(self, i: int):
        return self.structure.chains[i]

    def get_end_point(self, i: int) -> str:
        return self.structure.instances[self.structure.end_points[i]].name

    def get_component(self, i: int):
        return self.components[i]

    def get_param(self, module: str, name: str) -> Array:
        if module not in self.params:
            raise ValueError(f"no prototype module {module!r}; modules are {list(self.params)}")
        if name not in self.params[module]:
            raise ValueError(f"module {module!r} has no parameter {name!r}; it has {list(self.params[module])}")
        return self.params[module][name]

    # ------------------------------------------------------------------ equality
    def __eq__(self, other) -> bool:
        """Same structure, motion mode and numbers (Darwin2K's ``operator==``); needs
        concrete arrays."""
        if not isinstance(other, Configuration):
            return NotImplemented
        if (self.prototypes, self.attachments, self.motion_mode) != (
            other.prototypes,
            other.attachments,
            other.motion_mode,
        ):
            return False
        leaves_a, tree_a = jax.tree_util.tree_flatten(self)
        leaves_b, tree_b = jax.tree_util.tree_flatten(other)
        return tree_a == tree_b and all(
            bool(np.array_equal(np.asarray(a), np.asarray(b))) for a, b in zip(leaves_a, leaves_b)
        )

    __hash__ = None

    def __repr__(self) -> str:
        return (
            f"Configuration({self.label!r}, modules={self.num_modules()}, joints={self.num_joints()}, "
            f"chains={self.num_chains()}, end_points={self.num_end_points()}, base={type(self.base).__name__})"
        )


# ---------------------------------------------------------------------------- builder
@dataclasses.dataclass(frozen=True)
class ConfigurationBuilder:
    """Assemble a `Configuration` from prototype modules and attachments.

    Immutable: `add_module` and `attach` return a new builder. Example::

        b = ConfigurationBuilder("arm")
        b = b.add_module("base", FixedBase(), height=0.1)
        b = b.add_module("shoulder", RightAngleRevolute(), lower=-2.0, upper=2.0)
        b = b.attach("base", 0, "shoulder", 0)
        config = b.build()
    """

    label: str = "robot"
    modules: tuple[tuple[str, AbstractModule, tuple[tuple[str, object], ...]], ...] = ()
    attachments: tuple[tuple[Attachment, object], ...] = ()

    def add_module(self, name: str, module: AbstractModule, **params) -> ConfigurationBuilder:
        """A prototype module called ``name`` with parameter values (defaults elsewhere)."""
        if not isinstance(module, AbstractModule):
            raise TypeError(f"module {name!r}: expected a module type such as HollowTube(), got {module!r}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"module names must be non-empty strings, got {name!r}")
        if any(n == name for n, _, _ in self.modules):
            raise ValueError(f"module {name!r} is defined twice")
        unknown = sorted(set(params) - set(module.param_names()))
        if unknown:
            raise ValueError(
                f"module {name!r} ({module.type_name}) has no parameters {unknown}; it has {list(module.param_names())}"
            )
        return dataclasses.replace(self, modules=(*self.modules, (name, module, tuple(params.items()))))

    def attach(
        self, parent: str, parent_connector: int, child: str, child_connector: int = 0, twist: float = 0.0
    ) -> ConfigurationBuilder:
        """Attach ``child`` (by its connector ``child_connector``) to ``parent``'s connector
        ``parent_connector``, turned by ``twist`` radians about the connection axis.
        Attaching one prototype several times duplicates it with its subgraph."""
        return dataclasses.replace(
            self, attachments=(*self.attachments, (Attachment(parent, parent_connector, child, child_connector), twist))
        )

    def build(self) -> Configuration:
        """Validate, instantiate and freeze.

        **Raises:** `ValueError` naming the module or attachment for a cycle, a missing
        module or connector, a parameter outside its bounds, an unreachable module.
        """
        dtype = jnp.result_type(float)
        prototypes = tuple((name, module) for name, module, _ in self.modules)
        attachments = tuple(a for a, _ in self.attachments)
        structure = instantiate(prototypes, attachments)
        params = {}
        for name, module, values in self.modules:
            given = dict(values)
            p = {spec.name: jnp.asarray(given.get(spec.name, spec.default), dtype=dtype) for spec in module.params}
            _check_module_params(name, module, p)
            params[name] = p
        twists = jnp.asarray([t for _, t in self.attachments], dtype=dtype).reshape(len(attachments))
        n_ep = len(structure.end_points)
        config = Configuration(
            params=params,
            twists=twists,
            chain_cost=jnp.asarray(1.0, dtype=dtype),
            base_cost=jnp.asarray(1.0, dtype=dtype),
            locked=jnp.zeros(len(structure.joints), dtype=dtype),
            tip_forces=jnp.zeros((n_ep, 3), dtype=dtype),
            tip_torques=jnp.zeros((n_ep, 3), dtype=dtype),
            payloads=(None,) * n_ep,
            components=(),
            label=self.label,
            prototypes=prototypes,
            attachments=attachments,
            structure=structure,
            motion_mode=MotionMode.ALL,
        )
        return config


# ---------------------------------------------------------------------------- setters (functional)
def with_params(config: Configuration, values: dict[str, dict[str, ArrayLike]]) -> Configuration:
    """A configuration with some parameters replaced: ``{module: {param: value}}``.
    Concrete values are checked against the bounds; traced ones pass (design search)."""
    params = {name: dict(p) for name, p in config.params.items()}
    modules = dict(config.prototypes)
    for name, changes in values.items():
        if name not in params:
            raise ValueError(f"no prototype module {name!r}; modules are {list(params)}")
        for key, value in changes.items():
            if key not in params[name]:
                raise ValueError(f"module {name!r} has no parameter {key!r}; it has {list(params[name])}")
            params[name][key] = jnp.asarray(value, dtype=config.twists.dtype)
        _check_module_params(name, modules[name], params[name])
    return eqx.tree_at(lambda c: c.params, config, params)


def with_twist(config: Configuration, attachment: int, twist: ArrayLike) -> Configuration:
    return eqx.tree_at(lambda c: c.twists, config, config.twists.at[attachment].set(twist))


def base_is_mobile(config: Configuration) -> bool:
    """True for planar and free-flying bases (Darwin2K ``baseIsMobile``)."""
    return config.base.motion != "fixed"


def num_base_dofs(config: Configuration) -> int:
    return {"fixed": 0, "planar": 3, "spatial": 6}[config.base.motion]


def set_motion_mode(config: Configuration, mode: MotionMode) -> Configuration:
    """A configuration whose Jacobians keep only the columns ``mode`` lets move (static:
    changing it compiles a new program)."""
    if not isinstance(mode, MotionMode):
        raise ValueError(f"mode must be a MotionMode (BASE_ONLY, CHAINS_ONLY, ALL), got {mode!r}")
    return dataclasses.replace(config, motion_mode=mode)


def get_motion_mode(config: Configuration) -> MotionMode:
    return config.motion_mode


def set_chain_cost(config: Configuration, cost: ArrayLike) -> Configuration:
    """Relative cost of moving serial-chain DOFs (weights a redundancy resolution)."""
    return eqx.tree_at(lambda c: c.chain_cost, config, jnp.asarray(cost, dtype=config.twists.dtype))


def set_base_cost(config: Configuration, cost: ArrayLike) -> Configuration:
    """Relative cost of moving base DOFs."""
    return eqx.tree_at(lambda c: c.base_cost, config, jnp.asarray(cost, dtype=config.twists.dtype))


def get_cost_vector(config: Configuration) -> Float[Array, " nv"]:
    """Per-DOF motion cost, in ``v`` order: the base cost for base DOFs, the chain cost
    for joint DOFs."""
    n_base, n_joints = num_base_dofs(config), config.num_joints()
    return jnp.concatenate([jnp.full(n_base, config.base_cost), jnp.full(n_joints, config.chain_cost)])


# ---------------------------------------------------------------------------- locks
def lock_mask(config: Configuration, end_point: int | str, recurse: int | bool) -> np.ndarray:
    """Static (n_joints,) mask of the joints `set_lock_from_endpoint` acts on: with
    ``recurse`` 0, the joints of the end point's serial chain; with 1, every joint that
    moves the end point (its chain and all ancestor chains up to the base)."""
    s = config.structure
    e = config.end_point_index(end_point)
    mask = np.zeros(len(s.joints), dtype=bool)
    chain = s.end_point_chain[e]
    if recurse:
        body = s.instances[s.end_points[e]].body
        for b in s.body_ancestors(body):
            if b >= 2:
                mask[b - 2] = True
    elif chain >= 0:
        mask[list(s.chains[chain].joints)] = True
    return mask


def set_lock_from_endpoint(
    config: Configuration, end_point: int | str, val: ArrayLike = 1, recurse: int | bool = 0
) -> Configuration:
    """Lock (``val`` = 1) or unlock (0) the joints contributing to an end point's motion
    (Darwin2K ``setLockFromEndpoint``; `lock_mask` says which). Locked joints get zero
    Jacobian columns. Raises `ValueError` for a missing end point."""
    if recurse not in (0, 1, True, False):
        raise ValueError(f"recurse must be 0 or 1, got {recurse!r}")
    mask = lock_mask(config, end_point, recurse)
    locked = jnp.where(mask, jnp.asarray(val, dtype=config.locked.dtype), config.locked)
    return eqx.tree_at(lambda c: c.locked, config, locked)


def clear_lock(config: Configuration) -> Configuration:
    """Unlock every joint."""
    return eqx.tree_at(lambda c: c.locked, config, jnp.zeros_like(config.locked))


def set_tip_load(
    config: Configuration,
    end_point: int | str,
    force: ArrayLike | Sequence,
    torque: ArrayLike | Sequence = (0.0, 0.0, 0.0),
) -> Configuration:
    """The external force and torque (world frame, torque about the TCP) acting on the
    end point, e.g. the weight of a tool load. Darwin2K's ``endPointRec::tipForce`` is the
    force the end effector applies to its environment, the negative of this."""
    e = config.end_point_index(end_point)
    f = jnp.asarray(force, dtype=config.tip_forces.dtype)
    t = jnp.asarray(torque, dtype=config.tip_forces.dtype)
    if f.shape != (3,) or t.shape != (3,):
        raise ValueError(f"force and torque must have shape (3,), got {f.shape} and {t.shape}")
    config = eqx.tree_at(lambda c: c.tip_forces, config, config.tip_forces.at[e].set(f))
    return eqx.tree_at(lambda c: c.tip_torques, config, config.tip_torques.at[e].set(t))
