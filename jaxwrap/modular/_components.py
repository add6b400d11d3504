"""Configuration components (Darwin2K ``cfgComponent``): user checks evaluated together.

A component is an `eqx.Module` (so its thresholds are array leaves) with an ``update``
method returning whether it is violated; `update_components` evaluates all of a
configuration's components and counts the violated ones, inside `jit`. Three built-ins
cover the usual design constraints and show the pattern for new ones.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Bool, Float, Int, Real

from ._configuration import Configuration
from ._deflection import compute_deflections
from ._metrics import STANDARD_GRAVITY, compute_energy_stability


class AbstractComponent(eqx.Module):
    """A check on a configuration at joint values ``q``."""

    @abc.abstractmethod
    def update(self, config: Configuration, q: Float[Array, " nq"]) -> Bool[Array, ""]:
        """True when the component's requirement is violated."""


class JointLimitMargin(AbstractComponent):
    """Violated when a joint is within ``margin`` (rad or m) of one of its limits."""

    margin: Real[ArrayLike, ""] = 0.0

    def update(self, config, q):
        n_base_q = q.shape[0] - config.num_joints()
        joints = q[n_base_q:]
        if not config.num_joints():
            return jnp.zeros((), dtype=bool)
        lower = jnp.stack([config.params_of(j)["lower"] for j in config.structure.joints])
        upper = jnp.stack([config.params_of(j)["upper"] for j in config.structure.joints])
        return jnp.any((joints < lower + self.margin) | (joints > upper - self.margin))


class DeflectionLimit(AbstractComponent):
    """Violated when the summed TCP deflection exceeds ``max_linear`` (m) or
    ``max_angular`` (rad) under ``gravity`` and the configuration's loads."""

    max_linear: Real[ArrayLike, ""] = jnp.inf
    max_angular: Real[ArrayLike, ""] = jnp.inf
    gravity: tuple[float, float, float] = eqx.field(static=True, default=STANDARD_GRAVITY)

    def update(self, config, q):
        linear, angular = compute_deflections(config, q, self.gravity)
        return (linear > self.max_linear) | (angular > self.max_angular)


class StabilityLimit(AbstractComponent):
    """Violated when the tip-over energy stability is below ``min_energy`` (J)."""

    min_energy: Real[ArrayLike, ""] = 0.0
    gravity: tuple[float, float, float] = eqx.field(static=True, default=STANDARD_GRAVITY)

    def update(self, config, q):
        return compute_energy_stability(config, q, self.gravity) < self.min_energy


def add_cfg_component(config: Configuration, component: AbstractComponent) -> Configuration:
    if not isinstance(component, AbstractComponent):
        raise TypeError(f"expected an AbstractComponent, got {type(component).__name__}")
    return dataclasses.replace(config, components=(*config.components, component))


def remove_cfg_component(config: Configuration, index: int) -> Configuration:
    if not 0 <= index < len(config.components):
        raise ValueError(f"component {index} does not exist; the configuration has {len(config.components)}")
    return dataclasses.replace(config, components=config.components[:index] + config.components[index + 1 :])


def update_components(config: Configuration, q: Real[ArrayLike, " nq"] | Sequence) -> Int[Array, ""]:
    """Evaluate every component at ``q``; the number violated (Darwin2K
    ``updateComponents``)."""
    q = jnp.asarray(q, dtype=config.twists.dtype)
    flags = [c.update(config, q) for c in config.components]
    return jnp.sum(jnp.stack(flags).astype(int)) if flags else jnp.zeros((), dtype=int)
