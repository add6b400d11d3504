"""`sharded_vmap`: a vmapped function with its batch split across devices
(docs/performance.md#many-devices).

Every jaxwrap solve is independent per batch element, so a batch shards without moving
rows between devices: the batched inputs and every output are constrained to
``NamedSharding(mesh, P(axis))`` inside the traced function and XLA's partitioner splits
the program along that axis. Arguments that are not batched are replicated (a gradient
with respect to one is summed over devices). `jax.shard_map` would let each device stop
its loops on its own, but lineax's linear solves, which the implicit derivatives used
then, refused the manual-sharding structures it creates; see the design note.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ._misc import batch_level_not_folded

__all__ = ["batch_mesh", "sharded_vmap"]


def batch_mesh(devices: Sequence[jax.Device] | None = None, axis_name: str = "batch") -> Mesh:
    """A one-axis mesh over `devices` (default: every device of every process, so after
    ``jax.distributed.initialize()`` it spans all hosts)."""
    devices = jax.devices() if devices is None else list(devices)
    if not devices:
        raise ValueError("batch_mesh: no devices given")
    return Mesh(np.asarray(devices), (axis_name,))


def _normalize_in_axes(in_axes, num_args: int) -> tuple:
    if isinstance(in_axes, (int, type(None))):
        in_axes = (in_axes,) * num_args
    in_axes = tuple(in_axes)
    if len(in_axes) != num_args:
        raise ValueError(f"sharded_vmap: in_axes has {len(in_axes)} entries for {num_args} arguments")
    for i, axis in enumerate(in_axes):
        if axis not in (0, None):
            raise ValueError(
                f"sharded_vmap: in_axes[{i}] = {axis!r}; only 0 (batched along the leading axis) "
                "or None (shared by every batch element) is supported: move the batch axis first"
            )
    return in_axes


def _warn_if_host_devices(mesh: Mesh) -> None:
    """Several CPU devices of one process share its XLA thread pool
    (docs/performance.md#host-devices-on-one-cpu-slower-and-they-can-hang)."""
    local = [d for d in mesh.devices.flat if d.platform == "cpu" and d.process_index == jax.process_index()]
    if len(local) > 1:
        warnings.warn(
            f"sharded_vmap: the mesh holds {len(local)} CPU devices of this process. They share one XLA "
            "thread pool: on one CPU that is slower than a single device, and XLA:CPU can deadlock when "
            "jaxlib's batched LAPACK calls (the cable solver makes them) hold every pool thread. Such "
            "devices are for testing sharding; to use several cores, run one process per core "
            "(docs/performance.md#host-devices-on-one-cpu-slower-and-they-can-hang).",
            RuntimeWarning,
            stacklevel=3,
        )


def sharded_vmap(
    fn: Callable[..., Any],
    mesh: Mesh | None = None,
    *,
    in_axes: int | None | Sequence[int | None] = 0,
    axis_name: str | None = None,
) -> Callable[..., Any]:
    """``vmap(fn, in_axes)`` with the batch axis split over the devices of `mesh`.

    ``in_axes`` is 0 (the argument is batched along its leading axis) or None (shared),
    per positional argument. Every output is batched along its leading axis and comes back
    sharded along `axis_name` (``NamedSharding(mesh, P(axis_name))``), never gathered. A
    batch whose size is not a multiple of the device count is padded with copies of its
    last element, which are dropped from the outputs. `mesh` defaults to `batch_mesh()`,
    built when the function is first called. Wrap the result in `jax.jit`; the model or
    cable stays an argument, so new numbers reuse the compiled program::

        solve = jax.jit(jw.sharded_vmap(jw.solve_cable, in_axes=(None, 0)))
        paths = solve(cable, body_poses)  # body_poses batched: (B, n, 3, 3), (B, n, 3)

    Equal, lane for lane, to ``jax.vmap(fn, in_axes)``; see docs/performance.md#many-devices
    for multi-host runs. Several CPU devices of one process (host devices) give a
    ``RuntimeWarning``: they share one thread pool, run slower than one device, and XLA:CPU
    can deadlock on them; use them to test sharding only.
    """

    @functools.wraps(fn)
    def wrapped(*args):
        mesh_ = batch_mesh() if mesh is None else mesh
        _warn_if_host_devices(mesh_)
        name = axis_name
        if name is None:
            if len(mesh_.axis_names) != 1:
                raise ValueError(
                    f"sharded_vmap: the mesh has axes {mesh_.axis_names}; name the batch axis (axis_name=)"
                )
            name = mesh_.axis_names[0]
        elif name not in mesh_.axis_names:
            raise ValueError(f"sharded_vmap: axis_name {name!r} is not an axis of the mesh {mesh_.axis_names}")
        axes = _normalize_in_axes(in_axes, len(args))

        dynamic, static = eqx.partition(args, eqx.is_array)
        sizes = {
            int(jnp.shape(leaf)[0]) if jnp.ndim(leaf) else -1
            for arg, axis in zip(dynamic, axes, strict=True)
            if axis == 0
            for leaf in jax.tree.leaves(arg)
        }
        if not sizes:
            raise ValueError("sharded_vmap: no argument is batched (every in_axes is None)")
        if -1 in sizes or len(sizes) != 1:
            raise ValueError(
                f"sharded_vmap: batched arrays must share one leading batch size; found sizes {sorted(sizes)}"
            )
        (batch,) = sizes
        devices = mesh_.shape[name]
        padded = -(-batch // devices) * devices

        batched = NamedSharding(mesh_, PartitionSpec(name))
        replicated = NamedSharding(mesh_, PartitionSpec())

        def place(leaf):  # a batched leaf: padded to whole shards, one row per device
            if padded != batch:
                leaf = jnp.concatenate([leaf, jnp.repeat(leaf[-1:], padded - batch, axis=0)], axis=0)
            leaf = leaf.reshape(devices, padded // devices, *leaf.shape[1:])
            return jax.lax.with_sharding_constraint(leaf, batched)

        def unplace(leaf):
            if not eqx.is_array(leaf):
                return leaf
            leaf = leaf.reshape(padded, *leaf.shape[2:])[:batch]
            return jax.lax.with_sharding_constraint(leaf, batched)

        dynamic = tuple(
            jax.tree.map(place, arg) if axis == 0 else jax.lax.with_sharding_constraint(arg, replicated)
            for arg, axis in zip(dynamic, axes, strict=True)
        )
        # vmap over each device's lanes inside vmap over the devices: whatever a batched
        # rule does across lanes (the cable solver's lane compaction sorts and gathers
        # them) stays within one device's block.
        per_device = jax.vmap(lambda *a: fn(*eqx.combine(a, static)), in_axes=axes)
        with batch_level_not_folded():  # the devices' level: never folded into lanes
            out = jax.vmap(per_device, in_axes=axes)(*dynamic)
        return jax.tree.map(unplace, out)

    return wrapped
