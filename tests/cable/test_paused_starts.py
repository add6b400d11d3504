"""Paused candidate starts (docs/cable.md#paused-starts): a start of a leg of several
obstacles pauses after `CANDIDATE_PATIENCE` corrections and is resumed, from where it
paused, only where the other starts leave its leg unsettled. A paused solve resumed is
bitwise the solve that never paused; over random chain configurations pausing keeps the
same paths (none longer) and result codes. What it saves is measured in
benchmarks/cable_starts.py and the class timings (docs/cable.md#paused-starts)."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._cable import _candidates
from jaxwrap._cable._candidates import _leg_starts, start_states
from jaxwrap._cable._solver import NO_PAUSE, initial_carry, resume, run_solver_stack
from jaxwrap._cable._state import build_scene

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_trust as ct  # noqa: E402

PATIENCE = 3


def _chain_solves(key):
    """Every first start of the chain's sphere-cylinder leg at one random configuration:
    solved without pausing; paused after PATIENCE corrections; and that resumed."""
    poses, ends = ct.configuration("chain", key)
    cable = ct._with_ends(ct.cable("chain"), ends)
    scene = build_scene(cable, poses)
    first, _, _ = _leg_starts(cable, scene, 0)
    states = start_states(cable, scene, first)
    num_legs = len(cable.legs())
    frozen = jnp.zeros(num_legs, bool).at[1:].set(True)  # leg 0 only

    def carries(patience):
        return jax.vmap(lambda s: initial_carry(cable, scene, s, frozen, jnp.full(num_legs, patience)))(states)

    whole = run_solver_stack(cable, scene, carries(NO_PAUSE))
    paused = run_solver_stack(cable, scene, carries(PATIENCE))
    resumed = run_solver_stack(cable, scene, jax.vmap(lambda c: resume(c, jnp.ones(num_legs, bool)))(paused))
    return whole, paused, resumed


def test_a_paused_start_resumed_goes_on_as_if_it_never_paused():
    keys = jax.random.split(jax.random.PRNGKey(11), 4)
    whole, paused, resumed = jax.jit(jax.vmap(_chain_solves))(keys)
    it = np.asarray(whole.iterations[..., 0])
    did_pause = np.asarray(paused.paused[..., 0])
    # Exactly the starts that need more than PATIENCE corrections paused, after PATIENCE.
    assert did_pause.any() and (~did_pause).any()
    np.testing.assert_array_equal(did_pause, it > PATIENCE)
    np.testing.assert_array_equal(np.asarray(paused.iterations[..., 0]), np.minimum(it, PATIENCE))
    assert np.asarray(paused.done).all()
    # The paused ones resumed end bitwise where the whole solves end; the others are untouched.
    assert not np.asarray(resumed.paused).any()
    for field in ("iterations", "done", "smoothness", "inside", "geodesic_failed"):
        np.testing.assert_array_equal(np.asarray(getattr(resumed, field)), np.asarray(getattr(whole, field)))
    for a, b in zip(jax.tree.leaves(resumed.state), jax.tree.leaves(whole.state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.fixture(scope="module")
def chain_with_and_without_pausing():
    keys = jax.random.split(jax.random.PRNGKey(5), 48)
    base = ct.cable("chain")

    def solve(c, key):
        poses, ends = ct.configuration("chain", key)
        path = jw.solve_cable(ct._with_ends(c, ends), poses)
        return path.length, path.result._value, path.num_iterations

    # A fresh trace of each: the patience is read when the candidates are traced.
    with_pausing = jax.jit(jax.vmap(solve, in_axes=(None, 0)))(base, keys)
    patience = _candidates.CANDIDATE_PATIENCE
    _candidates.CANDIDATE_PATIENCE = NO_PAUSE
    try:
        without = jax.jit(jax.vmap(lambda c, k: solve(c, k), in_axes=(None, 0)))(base, keys)
    finally:
        _candidates.CANDIDATE_PATIENCE = patience
    return [np.asarray(x) for x in with_pausing], [np.asarray(x) for x in without]


def test_pausing_keeps_the_same_paths_and_result_codes(chain_with_and_without_pausing):
    (length, result, iterations), (length0, result0, iterations0) = chain_with_and_without_pausing
    np.testing.assert_array_equal(result, result0)
    ok = result == 0
    assert ok.sum() >= 40
    # The same path (up to what the tolerance leaves undetermined), never a longer one.
    assert np.all(length[ok] <= length0[ok] * (1 + 1e-7))
    np.testing.assert_allclose(length[ok], length0[ok], rtol=1e-6)
    # Mostly the same candidate is kept, with its own corrections (a resumed one's count
    # runs on from where it paused).
    assert np.mean(iterations[ok] == iterations0[ok]) > 0.9
