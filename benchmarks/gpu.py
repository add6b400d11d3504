"""Throughput on an accelerator: cable paths per second for the sphere, cylinder,
ellipsoid, torus and the 4-obstacle chain (benchmarks/cable_scenarios.py) at large
batches, float32 and float64, with compile times.

    python benchmarks/gpu.py                        # batches 2^14 .. 2^20, both dtypes
    python benchmarks/gpu.py --log2-batches 14 16 --dtypes float32 --scenarios sphere torus
    python benchmarks/gpu.py --log2-batches 6 --repeats 1    # a smoke run on CPU (tests)

Every path is solved cold with jaxwrap's default settings (the default cold start,
float32 on the scale-relative defaults) from a random termination, in one
``jit(sharded_vmap(solve_cable))`` call over every visible device (one device: the same
as ``jit(vmap)``). A batch that does not fit in memory is reported as such and the run
goes on. Times are medians of ``--repeats`` calls after the compiling one;
paths/s = batch / median. ``--json FILE`` also writes the rows.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxwrap as jw

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import cable_scenarios as scenarios  # noqa: E402

SCENARIOS = ("sphere", "cylinder", "ellipsoid", "torus", "chain")


def _solve(cable, poses):
    path = jw.solve_cable(cable, poses)
    return path.length, path.converged


def measure(name: str, dtype: str, batch: int, repeats: int, seed: int = 0) -> dict:
    """One row: compile seconds, median seconds per batch, paths/s, converged fraction."""
    row = dict(scenario=name, dtype=dtype, batch=batch, devices=jax.device_count())
    with jax.enable_x64(dtype == "float64"):
        ends = np.asarray(scenarios.terminations(name, batch, seed=seed), dtype=np.float64)
        ends = jnp.asarray(ends, dtype=jnp.dtype(dtype))
        cable = scenarios.build(name)
        poses = jax.vmap(scenarios.body_poses)(ends)
        solve = jax.jit(jw.sharded_vmap(_solve, in_axes=(None, 0)))
        try:
            start = time.perf_counter()
            compiled = solve.lower(cable, poses).compile()
            row["compile_s"] = time.perf_counter() - start
            lengths, converged = jax.block_until_ready(compiled(cable, poses))
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                jax.block_until_ready(compiled(cable, poses))
                times.append(time.perf_counter() - start)
        except Exception as error:  # out of memory on the device, most often
            row["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
            return row
        median = statistics.median(times)
        row.update(
            seconds=median,
            paths_per_s=batch / median,
            converged=float(jnp.mean(converged)),
            nan=int(jnp.sum(~jnp.isfinite(lengths))),
            length_dtype=str(lengths.dtype),
        )
    return row


def _format(row: dict) -> str:
    head = f"| {row['scenario']} | {row['dtype']} | 2^{int(np.log2(row['batch']))} |"
    if "error" in row:
        return head + f" – | – | – | – | {row['error']} |"
    return (
        head + f" {row['compile_s']:.1f} s | {row['seconds'] * 1e3:.2f} ms | {row['paths_per_s']:.3g} |"
        f" {100 * row['converged']:.2f} % | {row['nan']} NaN |"
    )


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log2-batches", type=int, nargs="+", default=list(range(14, 21)))
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"], choices=["float32", "float64"])
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    print(f"jax {jax.__version__}, {jax.device_count()} x {jax.devices()[0].device_kind} ({jax.default_backend()})")
    print("| scenario | dtype | batch | compile | time per batch | paths/s | converged | NaN |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for name in args.scenarios:
        for dtype in args.dtypes:
            for log2 in args.log2_batches:
                row = measure(name, dtype, 2**log2, args.repeats)
                rows.append(row)
                print(_format(row), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return rows


if __name__ == "__main__":
    main()
