"""Robustness and batching on the benchmark scenarios (benchmarks/cable_scenarios.py):
1,000 random configurations per one-obstacle scenario (500 on the torus, 200 on the
4-obstacle chain, to keep the suite's time), cold and warm, with the default algorithm and
cold start (``python benchmarks/cable.py --robustness 10000`` runs the full size);
analytic shortest lengths on the sphere and the cylinder; vmap equals a loop; float32."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_scenarios as scenarios  # noqa: E402

NUM = {"torus": 500, "chain": 200}  # 1,000 for the others


def _wrap_length(a, b, r):
    """Shortest length from a to b around a circle/sphere of radius r at the origin
    (the plane through a, b and the centre), or the straight distance if the segment misses."""
    d = b - a
    t = np.clip(-np.sum(a * d, -1) / np.sum(d * d, -1), 0, 1)
    misses = np.linalg.norm(a + t[:, None] * d, axis=-1) >= r
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    gamma = np.arccos(np.clip(np.sum(a * b, -1) / (na * nb), -1, 1))
    wrapped = np.sqrt(na**2 - r**2) + np.sqrt(nb**2 - r**2) + r * (gamma - np.arccos(r / na) - np.arccos(r / nb))
    return np.where(misses, np.linalg.norm(d, axis=-1), wrapped)


def analytic_length(name, ends):
    """Sphere: great-circle wrap. Cylinder: unrolled helix, sqrt(L_xy^2 + dz^2)."""
    spec = scenarios.BENCH_SCENARIOS[name]["obstacles"][0]
    R = scenarios._rotation_xyz(spec["xyz"])
    to_S = lambda p: (np.asarray(p) - np.asarray(spec["p"])) @ R  # noqa: E731  (R^T p per row)
    a = to_S(np.broadcast_to(scenarios.BENCH_SCENARIOS[name]["origin"], ends.shape))
    b = to_S(np.asarray(ends))
    if name == "sphere":
        return _wrap_length(a, b, spec["radius"])
    xy = _wrap_length(a[:, :2], b[:, :2], spec["radius"])
    return np.sqrt(xy**2 + (b[:, 2] - a[:, 2]) ** 2)


@pytest.mark.parametrize("name", scenarios.NAMES)
def test_random_configurations(name):
    cable = scenarios.build(name)  # default settings: minimum_length, tolerance 0.1 deg

    @jax.jit
    @jax.vmap
    def cold_and_warm(end, end_nearby):
        cold = cable.solve(scenarios.body_poses(end))
        warm = cable.solve(scenarios.body_poses(end_nearby), warm_start=cold)
        return cold.length, cold.converged, warm.length, warm.converged, warm.num_iterations

    ends = scenarios.terminations(name, NUM.get(name, 1_000), seed=0)
    nearby = ends + 1e-3 * jax.random.normal(jax.random.PRNGKey(1), ends.shape)
    cold_length, cold_ok, warm_length, warm_ok, warm_iterations = map(np.asarray, cold_and_warm(ends, nearby))

    assert np.isfinite(cold_length).all() and np.isfinite(warm_length).all()
    assert cold_ok.mean() >= 0.999, f"{name}: cold converged {cold_ok.mean():.4%}"
    assert warm_ok.mean() >= 0.999, f"{name}: warm converged {warm_ok.mean():.4%}"
    assert np.median(warm_iterations) <= 3
    if name in ("sphere", "cylinder"):
        # The shortest path is unique here: the solver must find it.
        np.testing.assert_allclose(cold_length, analytic_length(name, ends), rtol=1e-5)


def test_vmap_equals_loop_of_single_solves():
    cable = scenarios.build("ellipsoid")
    ends = scenarios.terminations("ellipsoid", 4, seed=3)
    single = jax.jit(lambda end: cable.solve(scenarios.body_poses(end)).length)
    batched = jax.jit(jax.vmap(lambda end: cable.solve(scenarios.body_poses(end)).length))(ends)
    looped = jnp.stack([single(end) for end in ends])
    np.testing.assert_allclose(batched, looped, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["sphere", "ellipsoid"])
def test_float32(name):
    """float32 end to end (no x64): converges at the default tolerance and agrees with
    float64 to float32 accuracy."""
    ends64 = scenarios.terminations(name, 256, seed=7)
    cable64 = scenarios.build(name)
    lengths64 = jax.jit(jax.vmap(lambda e: cable64.solve(scenarios.body_poses(e)).length))(ends64)
    with jax.enable_x64(False):
        cable = scenarios.build(name)
        ends = jnp.asarray(np.asarray(ends64), jnp.float32)

        @jax.jit
        @jax.vmap
        def solve(end):
            path = cable.solve(scenarios.body_poses(end))
            return path.length, path.converged

        lengths, converged = solve(ends)
        assert lengths.dtype == jnp.float32
        assert float(jnp.mean(converged)) >= 0.99
        np.testing.assert_allclose(np.asarray(lengths), np.asarray(lengths64), rtol=1e-4)
