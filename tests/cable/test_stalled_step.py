"""Where Simbody's minimum-length step stalls, the Gauss-Newton polish takes over
(docs/cable.md#where-the-minimum-length-step-stalls).

On small obstacles in a scene measured in metres, the minimum-length step's damping can
slow its linear convergence to a crawl a few degrees from the path, above the polish's
threshold, until the iterations run out. The geometry is real: the lateral gastrocnemii of
the two Rajagopal models (femoral condyles r = 2.5 cm, shank r = 5.5 cm with a wrap side)
at 64 configurations each, body poses from OpenSim
(tests/reference/generate_gastrocnemius.py). Solved from the contact hints without the
stall rule, 30 of these 256 solves run out of budget at a smoothness of 0.05-0.11 rad
(with the default settings 21 did, until stop 48's exact starts)."""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._cable import _solver
from jaxwrap._results import RESULTS

FIXTURE = np.load(pathlib.Path(__file__).parents[1] / "reference" / "gastrocnemius_rajagopal.npz")
MUSCLES = sorted({key.rsplit("/", 1)[0] for key in FIXTURE.files})


def gastrocnemius(muscle: str) -> tuple[jw.CableSpan, jw.Transform]:
    """The muscle on bodies 0 = femur, 1 = tibia, 2 = calcaneus, and its (64, 3) body poses."""
    data = {key.rsplit("/", 1)[1]: FIXTURE[key] for key in FIXTURE.files if key.startswith(muscle + "/")}
    cable = jw.CableSpan(0, data["origin_station"], 2, data["termination_station"])
    for body, R, p, radius, side in zip(
        data["obstacle_bodies"], data["obstacle_R"], data["obstacle_p"], data["radius"], data["side"], strict=True
    ):
        side = None if np.isnan(side).any() else side
        cable = cable.add_obstacle(int(body), jw.Transform(jnp.asarray(R), jnp.asarray(p)), jw.Cylinder(float(radius)), side=side)
    return cable, jw.Transform(jnp.asarray(data["body_R"]), jnp.asarray(data["body_p"]))


def _fields(path):
    return path.length, path.result._value, path.num_iterations, path.smoothness


def _solver_program():
    """A `jit(vmap)` of the solve, the cable an argument (the four muscles share it)."""
    return jax.jit(jax.vmap(lambda cable, X: _fields(jw.solve_cable(cable, X)), in_axes=(None, 0)))


def _solve_all(program, **settings):
    out = [program(cable.with_settings(**settings), poses) for cable, poses in map(gastrocnemius, MUSCLES)]
    return [np.concatenate([np.asarray(o[k]) for o in out]) for k in range(4)]


@pytest.fixture(scope="module")
def default():
    return _solve_all(_solver_program())


def test_default_settings_converge_where_the_minimum_length_step_stalls(default):
    lengths, results, iterations, smoothness = default
    assert (results == RESULTS.successful._value).all(), np.unique(results, return_counts=True)
    assert (smoothness <= jw.CableSettings().smoothness_tolerance).all()
    assert iterations.max() <= 15, iterations.max()
    # The same paths as the scale-free step and Scholz 2015, which do not stall: equal to
    # what the default smoothness tolerance (0.1°) leaves undetermined.
    for other in (dict(scale_free_step=True), dict(algorithm="scholz2015")):
        L, r, _, _ = _solve_all(_solver_program(), **other)
        assert (r == RESULTS.successful._value).all(), other
        np.testing.assert_allclose(lengths, L, atol=1e-7, rtol=0)


def test_without_the_stall_rule_these_solves_run_out_of_iterations(monkeypatch):
    """The scene exercises the rule: with it switched off (a stall window of 0), Simbody's
    damped step crawls and some solves end `max_iterations_reached` a few degrees from
    the path, on paths that the rule finishes in a handful of corrections. Solved from the
    contact hints (Simbody's start, ``cold_start="hints"``): since stop 48 the default
    candidate start also starts each cylinder on its closed-form wrap between the leg's
    ends (docs/cable.md#cold-start-candidates), which reaches these paths without a crawl,
    so it no longer shows the stall (measured: 30 of the 256 hinted solves run out without
    the rule, none of the default ones)."""
    hints = dict(cold_start="hints")
    with_rule = _solve_all(_solver_program(), **hints)
    monkeypatch.setattr(_solver, "STALL_WINDOW", 0.0)
    jax.clear_caches()  # programs traced with the rule on must not be reused, nor these after
    try:
        lengths, results, iterations, smoothness = _solve_all(_solver_program(), **hints)
    finally:
        jax.clear_caches()
    assert (with_rule[1] == RESULTS.successful._value).all()
    failed = results == RESULTS.max_iterations_reached._value
    assert failed.sum() >= 10, failed.sum()
    assert (smoothness[failed] < 4 * jw.CableSettings().gauss_newton_below).all()
    assert (with_rule[2][failed] <= 15).all() and (iterations[failed] == 50).all()
    ok = ~failed
    np.testing.assert_allclose(lengths[ok], with_rule[0][ok], atol=1e-7, rtol=0)
