"""Warm starts over a sphere or cylinder alone in its leg, in closed form
(docs/cable.md#warm-starts-in-closed-form): with the default ``cold_start="candidates"``
a warm-started solve moves such an obstacle straight onto the closed-form path that goes
round the way the previous path did, where Simbody's start (``cold_start="hints"``)
iterates from the previous path. Both must end on the same path, step after step,
with the same derivatives; the closed form in one evaluation."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_trust  # noqa: E402

TIGHT = dict(smoothness_tolerance=1e-9, curve_segment_accuracy=1e-12, max_iterations=100)
NUM, STEPS = 24, 40
T_END = 0.03 * (STEPS - 1)


@pytest.fixture(scope="module", params=["sphere", "cylinder"])
def sweep(request):
    """Per trajectory of `cable_trust.crossing` (its random configuration, the body
    turning while its centre crosses the line between the end points: lifted, touchdown,
    wrap, liftoff) and step: the default warm solve from the previous default path, and
    Simbody's iterative warm solve from that same previous path."""
    kind = request.param
    base = cable_trust.cable(kind, **TIGHT)

    def step(default, hints, poses, state):
        closed = jw.solve_cable(default, poses, warm_start=state)
        iterated = jw.solve_cable(hints, poses, warm_start=state)
        out = lambda p: (p.length, p.result._value, p.in_contact[0], p.num_iterations, p.smoothness)  # noqa: E731
        return closed.state, (out(closed), out(iterated))

    keys = jax.random.split(jax.random.PRNGKey(3), NUM)
    closed, iterated = cable_trust.crossing_trajectories(kind, base, keys, 0.03 * jnp.arange(STEPS), step)
    return kind, jax.tree.map(np.asarray, closed), jax.tree.map(np.asarray, iterated)


def test_closed_form_warm_steps_equal_the_iterated_ones(sweep):
    """Every valid step succeeds in closed form at its first evaluation, and wherever the
    iterated warm start succeeds too, both end on the same path. The iterated one fails
    at a few steps where the closed form does not: as the line leaves the obstacle it
    keeps a short wrap the line no longer needs (`not_taut`) for a step or two, or runs
    out of iterations (measured: 24 of 936 steps on the sphere, 13 on the cylinder)."""
    kind, (length, result, contact, iterations, smoothness), (length_it, result_it, contact_it, _, _) = sweep
    ok, ok_it = result == 0, result_it == 0
    # cable_trust's cylinder, randomly turned, sometimes passes through an end point:
    # no valid configuration, and both say so.
    inside = result == jw.RESULTS.endpoint_inside_obstacle._value
    np.testing.assert_array_equal(ok | inside, True)
    np.testing.assert_array_equal(result_it[inside], result[inside])
    assert inside.mean() <= (0.05 if kind == "cylinder" else 0.0)
    assert np.all(ok[ok_it]) and ok_it.mean() >= 0.9, ok_it.mean()
    np.testing.assert_array_equal(contact[ok_it], contact_it[ok_it])
    np.testing.assert_allclose(length[ok_it], length_it[ok_it], rtol=0, atol=1e-9)
    # Wrapped and lifted steps both occur; a closed-form step is smooth at once.
    assert 0.3 < contact[ok].mean() < 0.8, contact[ok].mean()
    assert np.all(iterations[ok] == 0)
    assert np.all(smoothness[ok] <= 1e-12)


def _lone(surface, side=None):
    cable = jw.CableSpan(0, [-2.0, 0.3, 0.1], 0, [2.0, 0.3, -0.1]).add_obstacle(
        1, jw.Transform.identity(), surface, contact_hint=[0.0, -1.0, 0.0], side=side
    )
    return cable.with_settings(**TIGHT)


def _at(y):
    return jw.Transform(jnp.broadcast_to(jnp.eye(3), (2, 3, 3)), jnp.array([[0.0, 0.0, 0.0], [0.0, y, 0.0]]))


# One compiled program per cable structure and start mode, shared by the tests below.
_cold = jax.jit(lambda cable, y: jw.solve_cable(cable, _at(y)))
_warm = jax.jit(lambda cable, y, start: jw.solve_cable(cable, _at(y), warm_start=start))


def _middle_y(path, y):
    """The y of the middle of the wrap, relative to the obstacle's centre at y."""
    return float(path.curve_segment_points(0, 3)[1, 1]) - y


@pytest.mark.parametrize("surface", [jw.Sphere(1.0), jw.Cylinder(1.0)], ids=["sphere", "cylinder"])
def test_a_warm_start_keeps_the_longer_side_it_is_on(surface):
    """Started (Simbody's way) on the far side of a line that crosses the obstacle, a
    path stays there warm, as the iterated warm start does; a cold start takes the
    shorter side. Moved on until the line misses the obstacle, it lifts off."""
    cable = _lone(surface)
    hints = cable.with_settings(cold_start="hints")
    far = _cold(hints, 0.0)  # the hint lies on the far side (-y)
    assert far.converged and _middle_y(far, 0.0) < 0
    for y in (0.05, 0.1, 0.2):
        warm, iterated, cold = _warm(cable, y, far.state), _warm(hints, y, far.state), _cold(cable, y)
        assert warm.converged and iterated.converged and int(warm.num_iterations) == 0
        np.testing.assert_allclose(warm.length, iterated.length, rtol=0, atol=1e-10)
        assert float(warm.length) > float(cold.length) + 0.1
        assert _middle_y(warm, y) < 0 < _middle_y(cold, y)
        far = warm
    # Lifted: the line clears the obstacle (its points at y = 0.3 ± 0.1, shifted by -1.5).
    lifted = _warm(cable, -1.5, far.state)
    assert lifted.converged and not bool(lifted.in_contact[0])
    np.testing.assert_allclose(lifted.length, np.linalg.norm([4.0, 0.0, -0.2]), rtol=1e-14)


@jax.jit
def _length_and_derivative(cable, y, start):
    """The warm-started length at y, its derivative, and the lengths at y ± 1e-6."""
    length = lambda y: jw.solve_cable(cable, _at(y), warm_start=start).length  # noqa: E731
    value, derivative = jax.value_and_grad(length)(y)
    return value, derivative, jax.vmap(length)(y + jnp.array([1e-6, -1e-6]))


@pytest.mark.parametrize("surface", [jw.Sphere(1.0), jw.Cylinder(1.0)], ids=["sphere", "cylinder"])
def test_closed_form_warm_derivatives_equal_the_iterated_ones(surface):
    """The derivative of the length with respect to the obstacle's position, warm
    started in closed form and iterated, wrapped and lifted."""
    cable = _lone(surface)
    hints = cable.with_settings(cold_start="hints")
    start = _cold(cable, 0.0).state
    for y in (0.1, 1.2):
        _, g, (plus, minus) = _length_and_derivative(cable, y, start)
        _, g_iterated, _ = _length_and_derivative(hints, y, start)
        np.testing.assert_allclose(g, g_iterated, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(g, (plus - minus) / 2e-6, rtol=1e-6, atol=1e-8)


def test_a_sided_obstacle_warm_starts_on_its_side():
    """With a wrap side the warm start is the cold start's sided closed form, whatever
    side the previous path took."""
    cable = _lone(jw.Sphere(1.0), side=[0.0, -1.0, 0.0])
    start = _cold(cable.with_settings(cold_start="hints"), -1.5)  # lifted, line on +y
    warm, cold = _warm(cable, -0.2, start.state), _cold(cable, -0.2)
    assert warm.converged and cold.converged and int(warm.num_iterations) == 0
    np.testing.assert_allclose(warm.length, cold.length, rtol=0, atol=1e-12)
    assert _middle_y(warm, -0.2) < 0
