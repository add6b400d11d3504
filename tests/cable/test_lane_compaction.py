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
from jaxwrap._cable._solver import buffer_size, run_solver
from jaxwrap._cable._state import build_scene, initial_state

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_sweeps  # noqa: E402

SWEEPS = {s["name"]: s for s in cable_sweeps.load()}


def test_buffer_sizes():
    assert [buffer_size(n) for n in (1, 64, 127, 128, 200, 512, 4096)] == [1, 64, 127, 64, 64, 128, 128]


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


@pytest.mark.parametrize("fraction", [0.5, 1.0])
def test_frozen_lanes_are_never_stepped(fraction):
    """Lanes that start finished (a candidate round's settled legs) come back exactly as
    they went in, with no iteration, among unfrozen ones or all of them frozen; the
    others are solved as alone."""
    sw = SWEEPS["ellipsoid_0"]
    cable = cable_sweeps.cable_from(sw, "minimum_length", "hints")
    poses_at = cable_sweeps.pose_of_angle(sw)
    rng = np.random.default_rng(5)
    angles = jnp.asarray(rng.uniform(min(sw["angles"]), max(sw["angles"]), 160))
    frozen = jnp.asarray(rng.uniform(size=160) < fraction)

    def solve(a, f):
        scene = build_scene(cable, poses_at(a))
        state0 = initial_state(cable, scene, [o.contact_hint for o in cable.obstacles])
        carry = run_solver(cable, scene, state0, jnp.full(len(cable.legs()), f))
        return carry.iterations, carry.done, carry.state, state0

    iterations, done, state, state0 = jax.jit(jax.vmap(solve))(angles, frozen)
    f = np.asarray(frozen)
    assert np.all(np.asarray(iterations)[f] == 0) and np.all(np.asarray(done))
    for x, x0 in zip(jax.tree.leaves(state), jax.tree.leaves(state0)):
        np.testing.assert_array_equal(np.asarray(x)[f], np.asarray(x0)[f])
    if not f.all():
        single = jax.jit(solve)
        for i in np.flatnonzero(~f)[:3]:
            it_i, _, state_i, _ = single(angles[i], frozen[i])
            assert int(it_i[0]) == int(iterations[i, 0])
            for x, xi in zip(jax.tree.leaves(state), jax.tree.leaves(state_i)):
                np.testing.assert_allclose(np.asarray(x)[i], xi, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    ("sweep", "cold_start", "outer", "inner"), [("ellipsoid_0", "hints", 40, 4), ("chain_1", "candidates", 12, 2)]
)
def test_nested_vmaps_compact_all_their_lanes_together(sweep, cold_start, outer, inner):
    """A solve inside two `vmap`s (as a `CableSet`'s legs of one structure inside a batch
    of configurations) folds both levels into one batch of lanes
    (docs/performance.md#lanes-of-nested-batches): every lane equals the flat batch's,
    and the solver loop runs at the buffer's width, not over the outer × inner lanes
    (before, an inner level below `COMPACT_FROM` lanes was not compacted at all, and its
    LAPACK calls ran over the whole batch)."""
    sw = SWEEPS[sweep]
    algorithm = "scholz2015" if cold_start == "hints" else "minimum_length"
    cable = cable_sweeps.cable_from(sw, algorithm, cold_start)
    poses_at = cable_sweeps.pose_of_angle(sw)
    lo, hi = min(sw["angles"]), max(sw["angles"])
    angles = jnp.asarray(np.random.default_rng(7).uniform(lo - 0.3, hi + 0.3, outer * inner))

    def solve(c, a):
        return _outputs(jw.solve_cable(c, poses_at(a)))

    flat = jax.jit(jax.vmap(solve, in_axes=(None, 0)))(cable, angles)
    nested_fn = jax.jit(jax.vmap(jax.vmap(solve, in_axes=(None, 0)), in_axes=(None, 0)))
    nested = nested_fn(cable, angles.reshape(outer, inner))
    for x, y in zip(flat, nested):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y).reshape(x.shape))
    if cold_start == "hints":  # one solve per configuration: a lane each
        hlo = nested_fn.lower(cable, angles.reshape(outer, inner)).compile().as_text()
        calls = [line.split("custom-call(")[0] for line in hlo.splitlines() if 'custom_call_target="lapack_' in line]
        width = buffer_size(outer * inner)
        assert any(f"[{width}," in call for call in calls)
        assert not any(f"[{outer},{inner}," in call or f"[{outer * inner}," in call for call in calls), calls
