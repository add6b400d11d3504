"""A warm start's continuation of a leg of several obstacles pauses after
`WARM_PATIENCE` corrections, restarts the leg from lifted, and is resumed from where it
paused only where the restart is no genuine path (docs/cable.md#warm-start-fallback).
Checked on a leg over two spheres, warm-started after large moves of the end point, with
the patience lowered to 5 so that many continuations pause: where the continuation
needs fewer corrections, the warm solve is the unpaused one bit for bit; elsewhere it
converges wherever the unpaused one does, and the lanes it resumes equal the unpaused
continuation (length and corrections)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
import jaxwrap._cable._candidates as candidates
from jaxwrap._cable._solver import NO_PAUSE

PATIENCE = 5


def _cable(cold_start="candidates", side=None):
    return (
        jw.CableSpan(0, [-2.0, 0.05, 0.0], 1, [0.0, 0.0, 0.0])
        .add_obstacle(
            0, jw.Transform.from_translation([-0.6, 0.0, 0.0]), jw.Sphere(0.5), contact_hint=[0.0, 0.5, 0.0], side=side
        )
        .add_obstacle(0, jw.Transform.from_translation([0.6, 0.0, 0.0]), jw.Sphere(0.5), contact_hint=[0.0, 0.5, 0.0])
        .with_settings(cold_start=cold_start)
    )


def _poses(end):
    return jw.Transform(jnp.broadcast_to(jnp.eye(3), (2, 3, 3)), jnp.stack([jnp.zeros(3), end]))


def _warm(cable, ends, previous):
    # A fresh function per call: WARM_PATIENCE is read when the solve is traced.
    return jax.jit(jax.vmap(lambda e, p: jw.solve_cable(cable, _poses(e), warm_start=p)))(ends, previous)


@pytest.mark.parametrize("side", [None, (0.0, 1.0, 0.0)], ids=["free", "sided"])
def test_paused_continuations_restart_or_resume(monkeypatch, side):
    rng = np.random.default_rng(5)
    start = jnp.asarray(np.array([2.0, 0.0, 0.0]) + rng.uniform(-1, 1, size=(96, 3)) * [0.3, 0.8, 0.8])
    moved = start + jnp.asarray(rng.normal(size=(96, 3)) * 0.35)
    previous = jax.jit(jax.vmap(lambda e: jw.solve_cable(_cable(side=side), _poses(e))))(start)
    continued = _warm(_cable("hints", side=side), moved, previous)  # the continuation alone
    monkeypatch.setattr(candidates, "WARM_PATIENCE", NO_PAUSE)
    unpaused = _warm(_cable(side=side), moved, previous)
    monkeypatch.setattr(candidates, "WARM_PATIENCE", PATIENCE)
    paused = _warm(_cable(side=side), moved, previous)

    length, length_0 = np.asarray(paused.length), np.asarray(unpaused.length)
    iterations, iterations_0 = np.asarray(paused.num_iterations), np.asarray(unpaused.num_iterations)
    ok, ok_0 = np.asarray(paused.converged), np.asarray(unpaused.converged)
    # The unpaused warm start's corrections are its continuation's (plus a restart's); a
    # continuation pauses when it has taken PATIENCE and is not yet found smooth.
    quick = iterations_0 < PATIENCE
    assert np.sum(quick) >= 10 and np.sum(~quick) >= 10, np.bincount(iterations_0)
    # Continuations that finish within the patience never pause.
    np.testing.assert_array_equal(length[quick], length_0[quick])
    np.testing.assert_array_equal(iterations[quick], iterations_0[quick])
    # The others converge wherever the unpaused warm start does; a lane that differs from
    # it took the restart's genuine path, and one resumed is the unpaused continuation
    # (the same length and corrections).
    assert np.all(ok | ~ok_0)
    same = (length == length_0) & (iterations == iterations_0)
    assert np.all(same | ok)
    assert np.all(np.isfinite(length[ok]))
    if side is not None:  # some configurations have no path on that side: resumed
        assert np.sum(~quick & same & ~ok) >= 1
    assert np.sum(~same) >= 1, "no continuation paused for the restart"
    # Simbody's continuation alone from the same paths, for scale: where it converges
    # within the patience the default warm start returns its path.
    alone = np.asarray(continued.num_iterations) < PATIENCE
    np.testing.assert_allclose(length[alone & quick], np.asarray(continued.length)[alone & quick], rtol=1e-12)
