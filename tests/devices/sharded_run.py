"""Run by tests/devices/test_sharding.py in a subprocess with 4 host CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``, set before jax starts): every
sharded result next to its single-device twin, printed as one JSON object."""

from __future__ import annotations

import json
import pathlib
import sys
import warnings

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec  # noqa: E402

import jaxwrap as jw  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import cable_scenarios as scenarios  # noqa: E402


def _diff(a, b) -> float:
    pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    return max((float(jnp.max(jnp.abs(jnp.asarray(x, float) - jnp.asarray(y, float)))) for x, y in pairs), default=0.0)


def _shards(x) -> dict:
    return dict(
        spec=str(x.sharding.spec) if hasattr(x.sharding, "spec") else "",
        shard_rows=sorted({int(s.data.shape[0]) for s in x.addressable_shards}),
        devices=len({s.device for s in x.addressable_shards}),
    )


def _collectives(fn, *args) -> dict:
    text = fn.lower(*args).compile().as_text()
    return {op: text.count(op) for op in ("all-gather", "all-to-all", "all-reduce", "reduce-scatter")}


def main() -> None:
    report = dict(devices=jax.device_count())
    mesh = jw.batch_mesh()

    # A cable solved by the iterative solver (hint start) over a batch of termination poses.
    name = "sphere"
    cable = scenarios.build(name, cold_start="hints")
    poses = jax.vmap(scenarios.body_poses)(scenarios.terminations(name, 8, seed=3))

    def fields(path):
        return path.length, path.converged, path.num_iterations, path.state.geodesics[0].p_SP

    single = jax.jit(jax.vmap(lambda c, p: fields(jw.solve_cable(c, p)), in_axes=(None, 0)))
    sharded = jax.jit(jw.sharded_vmap(lambda c, p: fields(jw.solve_cable(c, p)), mesh, in_axes=(None, 0)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ref, out = single(cable, poses), sharded(cable, poses)
    report["host_device_warnings"] = [str(w.message) for w in caught if w.category is RuntimeWarning]
    report["solve"] = dict(diff=_diff(ref, out), converged=int(jnp.sum(out[1])), **_shards(out[0]))
    report["solve_collectives"] = _collectives(sharded, cable, poses)

    # A batch that does not divide by the device count (padded, then dropped).
    odd = jax.tree.map(lambda x: x[:7], poses)
    report["uneven"] = dict(
        diff=_diff(single(cable, odd), sharded(cable, odd)), rows=int(sharded(cable, odd)[0].shape[0])
    )

    # Reverse mode: the gradient of the batch's total length w.r.t. every cable leaf
    # (replicated: summed over devices).
    def total(vmapped):
        return lambda c, p: jnp.sum(vmapped(lambda c, p: jw.solve_cable(c, p).length, in_axes=(None, 0))(c, p))

    g_single = jax.jit(jax.grad(total(jax.vmap)))(cable, poses)
    g_sharded = jax.jit(jax.grad(total(lambda f, in_axes: jw.sharded_vmap(f, mesh, in_axes=in_axes))))(cable, poses)
    report["grad"] = dict(
        diff=_diff(g_single, g_sharded), scale=max(float(jnp.max(jnp.abs(x))) for x in jax.tree.leaves(g_single))
    )

    # A whole model's cable set: lengths and moment arms over a batch of configurations,
    # against MuJoCo's stored numbers too.
    model, cables = jw.load_mjcf(str(ROOT / "tests" / "data" / "mjcf" / "myoelbow_2dof6muscles.xml"))
    fixtures = np.load(ROOT / "tests" / "reference" / "mjcf_tendons.npz")
    qpos = jnp.asarray(fixtures["myoelbow_2dof6muscles/qpos"][:12])
    evaluate = jw.cable_lengths_and_moment_arms
    ref = jax.jit(jax.vmap(evaluate, (None, None, 0)))(model, cables, qpos)
    sharded_set = jax.jit(jw.sharded_vmap(evaluate, mesh, in_axes=(None, None, 0)))
    out = sharded_set(model, cables, qpos)
    report["cable_set"] = dict(
        diff=_diff(ref, out),
        mujoco_length=float(np.max(np.abs(np.asarray(out[0]) - fixtures["myoelbow_2dof6muscles/ten_length"][:12]))),
        **_shards(out[1]),
    )
    report["cable_set_collectives"] = _collectives(sharded_set, model, cables, qpos)
    report["batch_spec"] = str(PartitionSpec("batch"))
    print("REPORT " + json.dumps(report))


if __name__ == "__main__":
    main()
