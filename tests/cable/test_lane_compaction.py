"""Lane compaction (docs/performance.md#lane-compaction): a batched solve gives every lane
exactly what it gets alone, including lanes that run out of iterations, for the hint
start (`run_solver`) and the candidate start (`run_solver_stack`), and the compaction
levels are as documented."""

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._cable._solver import buffer_size

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_sweeps  # noqa: E402

SWEEPS = {s["name"]: s for s in cable_sweeps.load()}


def test_buffer_sizes():
    assert [buffer_size(n) for n in (1, 64, 127, 128, 200, 512, 4096)] == [1, 64, 127, 64, 64, 128, 1024]


def _outputs(path):
    return path.length, path.num_iterations, path.result._value, path.smoothness


@pytest.mark.parametrize(
    ("sweep", "cold_start", "batch"), [("ellipsoid_0", "hints", 160), ("chain_1", "candidates", 24)]
)
def test_batched_lanes_equal_single_solves(sweep, cold_start, batch):
    sw = SWEEPS[sweep]
    algorithm = "scholz2015" if cold_start == "hints" else "minimum_length"
    cable = cable_sweeps.cable_from(sw, algorithm, cold_start)
    poses_at = cable_sweeps.pose_of_angle(sw)
    lo, hi = min(sw["angles"]), max(sw["angles"])
    angles = jnp.asarray(np.random.default_rng(3).uniform(lo - 0.3, hi + 0.3, batch))

    def solve(c, a):
        return _outputs(jw.solve_cable(c, poses_at(a)))

    L, it, result, smooth = jax.jit(jax.vmap(solve, in_axes=(None, 0)))(cable, angles)
    it = np.asarray(it)
    # The batch mixes fast lanes with slow and failing ones, so compaction has work.
    assert it.max() >= 3 * np.median(it)
    single = jax.jit(solve)
    picks = sorted(set(np.argsort(it)[-4:].tolist()) | set(range(0, batch, max(batch // 6, 1))))
    for i in picks:
        Li, iti, ri, si = single(cable, angles[i])
        assert int(iti) == it[i] and int(ri) == int(result[i]), i
        np.testing.assert_allclose(Li, L[i], rtol=0, atol=1e-14, equal_nan=True)
        np.testing.assert_allclose(si, smooth[i], rtol=0, atol=1e-14, equal_nan=True)
