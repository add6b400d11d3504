"""Gradient-based design search over continuous module parameters (docs/modular.md#design-search).

A `DesignSpace` picks module parameters and maps each from an unconstrained real z into
its box ``[lower, upper]`` (``lower + (upper - lower) * sigmoid(z)``), so any optax
optimiser runs unconstrained while every design stays valid. `design_search` minimises a
user loss ``loss(config, aux, data)`` jointly over the design and auxiliary variables
(joint angles per task pose, say), from many starts at once (`vmap`), in compiled chunks
of steps (`lax.scan`) with a progress bar between chunks. The loss is a plain function of
its arguments: targets and weights travel in ``data``, so new targets never recompile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jaxtyping import Array, Float, PRNGKeyArray

from ._configuration import Configuration, with_params


class DesignSpace(eqx.Module):
    """Module parameters ``variables`` ((module, parameter) pairs) and their boxes."""

    lower: Float[Array, " n"]
    upper: Float[Array, " n"]
    variables: tuple[tuple[str, str], ...] = eqx.field(static=True)

    @classmethod
    def from_config(
        cls,
        config: Configuration,
        variables: Sequence[tuple[str, str]],
        bounds: dict[tuple[str, str], tuple[float, float]] | None = None,
    ) -> DesignSpace:
        """The parameters ``variables`` of ``config``'s prototypes, each in its module's
        declared bounds or, narrower, ``bounds[(module, param)]``."""
        modules = dict(config.prototypes)
        lower, upper = [], []
        bounds = bounds or {}
        for module, name in variables:
            if module not in modules:
                raise ValueError(f"design variable ({module!r}, {name!r}): no prototype module {module!r}")
            spec = modules[module].param_spec(name)
            lo, hi = bounds.get((module, name), (spec.lower, spec.upper))
            if not spec.lower <= lo < hi <= spec.upper:
                raise ValueError(
                    f"design variable ({module!r}, {name!r}): bounds [{lo}, {hi}] must lie within the parameter's "
                    f"[{spec.lower}, {spec.upper}] and be non-empty"
                )
            lower.append(lo)
            upper.append(hi)
        dtype = config.twists.dtype
        return cls(jnp.asarray(lower, dtype), jnp.asarray(upper, dtype), tuple((m, n) for m, n in variables))

    @property
    def size(self) -> int:
        return len(self.variables)

    def values(self, z: Float[Array, " n"]) -> Float[Array, " n"]:
        """Parameter values of the unconstrained point ``z``."""
        return self.lower + (self.upper - self.lower) * jax.nn.sigmoid(z)

    def unconstrained(self, values: Float[Array, " n"]) -> Float[Array, " n"]:
        """The ``z`` of parameter values strictly inside the box."""
        u = (jnp.asarray(values) - self.lower) / (self.upper - self.lower)
        return jnp.log(u) - jnp.log1p(-u)

    def read(self, config: Configuration) -> Float[Array, " n"]:
        """The current values of the variables in ``config``."""
        return jnp.stack([config.params[m][n] for m, n in self.variables])

    def apply(self, config: Configuration, z: Float[Array, " n"]) -> Configuration:
        """``config`` with the variables set from ``z`` (traceable)."""
        v = self.values(z)
        changes: dict[str, dict[str, Array]] = {}
        for k, (m, n) in enumerate(self.variables):
            changes.setdefault(m, {})[n] = v[k]
        return with_params(config, changes)

    def random(self, key: PRNGKeyArray, num: int, margin: float = 0.05) -> Float[Array, "num n"]:
        """``num`` starting points uniform in the box, shrunk by ``margin`` of each range."""
        u = jax.random.uniform(key, (num, self.size), minval=margin, maxval=1 - margin, dtype=self.lower.dtype)
        return jnp.log(u) - jnp.log1p(-u)


class DesignResult(eqx.Module):
    """`design_search`'s outcome, one row per start: the final ``z`` and ``aux``, the
    loss after every step (``history``), the final ``loss``, and ``best``, the start with
    the lowest final loss."""

    z: Float[Array, "starts n"]
    aux: Any
    history: Float[Array, "starts steps"]
    loss: Float[Array, " starts"]
    best: Array


# Reused so that repeated searches with the default optimiser hit the compilation cache
# (optax builds new closures, hence a new static argument, on every call of optax.adam).
DEFAULT_OPTIMIZER = optax.adam(0.05)


@eqx.filter_jit
def _run(loss, optimizer, num_steps, space, config, data, state):
    """``num_steps`` optimiser steps for every start (``state`` has a leading starts axis).
    ``loss`` and ``optimizer`` are static (compiled once per function), the rest traced."""
    return jax.vmap(lambda st: _chunk(loss, optimizer, num_steps, space, config, data, st))(state)


@eqx.filter_jit
def _final_loss(loss, space, config, data, z, aux):
    return jax.vmap(lambda z, aux: loss(space.apply(config, z), aux, data))(z, aux)


def _chunk(loss, optimizer, num_steps, space, config, data, state):
    """``num_steps`` optimiser steps for one start."""

    def objective(variables):
        z, aux = variables
        return loss(space.apply(config, z), aux, data)

    def step(carry, _):
        variables, opt_state = carry
        value, grads = jax.value_and_grad(objective)(variables)
        updates, opt_state = optimizer.update(grads, opt_state, variables)
        return (optax.apply_updates(variables, updates), opt_state), value

    return jax.lax.scan(step, state, None, length=num_steps)


def design_search(
    loss: Callable[[Configuration, Any, Any], Array],
    space: DesignSpace,
    config: Configuration,
    z0: Float[Array, "starts n"],
    aux0: Any = None,
    data: Any = None,
    *,
    optimizer: optax.GradientTransformation | None = None,
    num_steps: int = 500,
    steps_per_call: int = 50,
    progress: bool = True,
) -> DesignResult:
    """Minimise ``loss(space.apply(config, z), aux, data)`` over ``(z, aux)`` from every
    start in ``z0`` (and ``aux0``, with the same leading axis) at once.

    **Arguments:** `loss`, a function of (configuration, aux, data) returning a scalar;
    `space`; `config`, the base design; `z0` (starts, n); `aux0`, a pytree of extra
    variables with a leading starts axis, or None; `data`, a pytree of constants (task
    targets, weights); `optimizer` (default ``optax.adam(0.05)``); `num_steps`;
    `steps_per_call`, steps per compiled call (the progress bar moves between calls; a
    last, shorter chunk compiles once more);
    `progress`: show a tqdm bar.

    **Returns:** a `DesignResult`; ``space.apply(config, result.z[result.best])`` is the
    best design.
    """
    z0 = jnp.asarray(z0)
    if z0.ndim != 2 or z0.shape[1] != space.size:
        raise ValueError(f"z0 must have shape (starts, {space.size}), got {z0.shape}")
    starts = z0.shape[0]
    optimizer = optimizer or DEFAULT_OPTIMIZER
    variables = (z0, aux0)
    opt_state = jax.vmap(optimizer.init)(variables)
    state = (variables, opt_state)
    histories = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_steps, desc="design search", unit="step")
    done = 0
    while done < num_steps:
        n = min(steps_per_call, num_steps - done)
        state, values = _run(loss, optimizer, n, space, config, data, state)
        histories.append(values)
        done += n
        if bar is not None:
            bar.update(n)
            bar.set_postfix(best_loss=f"{float(jnp.min(values[:, -1])):.4g}")
    if bar is not None:
        bar.close()
    (z, aux), _ = state
    history = jnp.concatenate(histories, axis=1) if histories else jnp.zeros((starts, 0))
    final = _final_loss(loss, space, config, data, z, aux)
    best = jnp.argmin(jnp.where(jnp.isfinite(final), final, jnp.inf))
    return DesignResult(z, aux, history, final, best)


def best_design(space: DesignSpace, config: Configuration, result: DesignResult) -> Configuration:
    """The configuration of the best start."""
    return space.apply(config, result.z[int(np.asarray(result.best))])
