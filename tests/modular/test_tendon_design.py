"""The tendon co-design example (jaxwrap.modular._tendon_example): the tendons' moment arms
against the planar geometry of a pulley joint, convergence of the joint design search
(link lengths, tube diameters, pulley radii, footprint) from 8 random starts with every
constraint checked, and the loss gradient against central differences."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap.modular import _tendon_example as ex

M = jw.modular


@pytest.fixture(scope="module")
def problem():
    config = ex.tendon_arm()
    return config, ex.tendon_space(config), ex.tendon_data()


@pytest.fixture(scope="module")
def metrics_fn():
    return jax.jit(
        jax.vmap(
            lambda space, config, z, q, data: ex.tendon_metrics(space.apply(config, z), q, data),
            in_axes=(None, None, 0, 0, None),
        )
    )


def _planar_arm(q, r, a=ex.STATION, e=ex.CLEARANCE):
    """Moment arms (+ tendon, - tendon) of one pulley joint bent by q, from plane geometry:
    stations p = (-a, s(r+e)) before the joint and b = R(q)(a, s(r+e)) after it, s = ±1. A
    straight tendon pulls b towards p, so its arm is the z-moment ``b × (p - b)/|p - b|``,
    the signed distance of the line from the axis; when that line passes nearer than r on
    the tendon's side (or on the other side), the tendon wraps the pulley and pulls
    tangentially at the radius, with arm ``s r``."""
    arms = []
    for s in (1.0, -1.0):
        p = np.array([-a, s * (r + e)])
        c, si = np.cos(q), np.sin(q)
        b = np.array([c * a - si * s * (r + e), si * a + c * s * (r + e)])
        straight = (b[0] * p[1] - b[1] * p[0]) / np.linalg.norm(p - b)
        arms.append(s * max(s * straight, r))
    return np.array(arms)


def test_tendon_moment_arms_match_plane_geometry(problem, metrics_fn):
    """At q = 0 both tendons run straight at r + 5 mm; bent, the outer one wraps its pulley
    (arm = the pulley radius) and the inner one pulls along its chord."""
    config, space, data = problem
    z = space.unconstrained(space.read(config))[None]
    qs = jnp.array([[0.0, 0.0, 0.0], [0.4, -0.9, 1.6], [-1.3, 0.2, -2.1], [2.0, 1.1, -0.05]])
    arms = np.asarray(metrics_fn(space, config, z, qs[None], data)["arms"][0])
    radii = [float(config.params[j]["pulley_radius"]) for j in ex.JOINTS]
    expected = np.array([[_planar_arm(float(q[j]), radii[j]) for j in range(3)] for q in np.asarray(qs)])
    # -dL/dq: positive when pulling the tendon turns the joint forward.
    np.testing.assert_allclose(arms, expected, atol=1e-9)
    np.testing.assert_allclose(arms[0], [[0.025, -0.025]] * 3, atol=1e-12)
    assert np.sum(np.isclose(np.abs(arms), 0.02, atol=1e-9)) >= 8  # wrapped somewhere


def test_tendon_design_converges_from_eight_random_starts(problem, metrics_fn):
    config, space, data = problem
    z0, q0 = ex.random_starts(space, jax.random.PRNGKey(0), 8)
    result = M.design_search(
        ex.tendon_loss,
        space,
        config,
        z0,
        q0,
        data,
        optimizer=ex.OPTIMIZER,
        num_steps=ex.NUM_STEPS,
        steps_per_call=500,
        progress=False,
    )
    m = jax.tree_util.tree_map(np.asarray, metrics_fn(space, config, result.z, result.aux, data))
    reach = np.linalg.norm(m["tip"] - np.asarray(data["targets"]), axis=-1)
    # Every start: every target reached to 0.5 mm; at every target the gravity torque of
    # each joint (up to 14 N m) held by tendon tensions of at most 600 N to 1e-3 N m; tip-over
    # energy at least 4 J and deflection under 1.5 mm (to the penalties' 0.1 %); joints
    # inside +-2.2 rad (to 1 mrad); losses within the spread of the local optima found.
    assert reach.max() < 5e-4, reach
    assert m["shortfall"].max() < 1e-3, m["shortfall"].max()
    assert np.abs(m["torque"]).max() > 5.0
    assert m["energy"].min() > 0.999 * 4.0
    assert m["deflection"].max() < 1.001 * 1.5e-3
    assert np.abs(np.asarray(result.aux)).max() < 2.201
    loss = np.asarray(result.loss)
    assert np.all((loss > 2.5) & (loss < 4.0)), loss
    assert np.all(np.asarray(result.history[:, -1]) < 1e-3 * np.asarray(result.history[:, 0]))
    # The torque requirement is what sizes the pulleys: some tendon works at full tension.
    values = np.asarray(jax.vmap(space.values)(result.z))
    radii = values[:, 6:9]
    assert np.all(radii >= np.asarray(space.lower[6:9])) and np.all(radii <= np.asarray(space.upper[6:9]))
    tension, torque = float(data["max_tension"]), m["torque"]
    margin = np.where(torque >= 0, tension * m["arms"].max(-1) - torque, torque - tension * m["arms"].min(-1))
    tightest = margin.min(axis=(1, 2))
    assert np.all(np.abs(tightest) < 1e-3), tightest
    assert radii[:, 0].min() > 0.01  # the shoulder needs a real pulley


def test_tendon_design_gradients_match_central_differences(problem):
    config, space, data = problem
    z0, q0 = ex.random_starts(space, jax.random.PRNGKey(3), 1)
    x0 = jnp.concatenate([z0[0], q0[0].ravel()])
    n = space.size

    def loss(x):
        return ex.tendon_loss(space.apply(config, x[:n]), x[n:].reshape(-1, 3), data)

    g = jax.jit(jax.grad(loss))(x0)
    h = 1e-6
    steps = h * jnp.eye(x0.size)
    f = jax.jit(jax.vmap(loss))
    fd = (f(x0 + steps) - f(x0 - steps)) / (2 * h)
    assert np.all(np.isfinite(np.asarray(g)))
    np.testing.assert_allclose(fd, g, rtol=1e-6, atol=1e-6 * float(jnp.max(jnp.abs(g))))
