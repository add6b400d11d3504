"""Design search: the box reparameterisation, the example's convergence from 8 random
starts (every constraint checked on every start), and its gradients against central
differences."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap.modular import _reach_example as ex

M = jw.modular


@pytest.fixture(scope="module")
def problem():
    config = ex.reach_arm()
    return config, ex.reach_space(config), ex.reach_data()


def test_design_space_maps_into_the_box(problem):
    config, space, _ = problem
    assert space.size == 8 and space.variables[0] == ("l1", "length")
    z = jnp.linspace(-30.0, 30.0, 8)
    v = space.values(z)
    assert np.all(v >= space.lower) and np.all(v <= space.upper)
    inside = (space.lower + space.upper) / 2 + 0.1 * (space.upper - space.lower)
    np.testing.assert_allclose(space.values(space.unconstrained(inside)), inside, rtol=1e-14)
    applied = space.apply(config, space.unconstrained(inside))
    np.testing.assert_allclose(space.read(applied), inside, rtol=1e-14)
    np.testing.assert_array_equal(space.read(config)[:3], [0.4, 0.3, 0.15])
    starts = space.random(jax.random.PRNGKey(1), 100)
    assert starts.shape == (100, 8) and np.all(np.abs(starts) < 3.0)
    with pytest.raises(ValueError, match=r"\('l1', 'length'\): bounds \[0.001, 0.5\] must lie within"):
        M.DesignSpace.from_config(config, [("l1", "length")], {("l1", "length"): (0.001, 0.5)})
    with pytest.raises(ValueError, match="no prototype module 'l9'"):
        M.DesignSpace.from_config(config, [("l9", "length")])
    with pytest.raises(ValueError, match="has no parameter 'size'"):
        M.DesignSpace.from_config(config, [("l1", "size")])


def test_design_search_converges_from_eight_random_starts(problem):
    config, space, data = problem
    z0, q0 = ex.random_starts(space, jax.random.PRNGKey(0), 8)
    result = M.design_search(
        ex.reach_loss, space, config, z0, q0, data, num_steps=1500, steps_per_call=100, progress=False
    )
    assert result.history.shape == (8, 1500)
    metrics = jax.jit(jax.vmap(lambda z, q: ex.task_metrics(space.apply(config, z), q)))(result.z, result.aux)
    reach_error = np.linalg.norm(np.asarray(metrics["tip"]) - np.asarray(data["targets"]), axis=-1)
    # Every start: every target reached to 0.5 mm, tip-over energy at least 3 J (to the
    # penalty's 2 %), deflection under 1 mm (to 1 %), and a loss near the others'.
    assert reach_error.max() < 5e-4, reach_error
    assert float(metrics["energy"].min()) > 0.98 * 3.0
    assert float(metrics["deflection"].max()) < 1.01e-3
    assert np.all(np.asarray(result.loss) < 3.1) and np.all(np.asarray(result.loss) > 2.0), result.loss
    assert np.all(np.asarray(result.history[:, -1]) < 1e-3 * np.asarray(result.history[:, 0]))
    best = M.best_design(space, config, result)
    values = np.asarray(space.read(best))
    assert np.all(values >= np.asarray(space.lower)) and np.all(values <= np.asarray(space.upper))
    np.testing.assert_allclose(ex.reach_loss(best, result.aux[int(result.best)], data), result.loss.min(), rtol=1e-10)


def test_design_loss_gradients_match_central_differences(problem):
    config, space, data = problem
    z0, q0 = ex.random_starts(space, jax.random.PRNGKey(5), 1)
    x0 = jnp.concatenate([z0[0], q0[0].ravel()])

    def loss(x):
        return ex.reach_loss(space.apply(config, x[:8]), x[8:].reshape(4, 3), data)

    g = jax.jit(jax.grad(loss))(x0)
    h = 1e-6
    steps = h * jnp.eye(x0.size)
    f = jax.jit(jax.vmap(loss))
    fd = (f(x0 + steps) - f(x0 - steps)) / (2 * h)
    np.testing.assert_allclose(fd, g, rtol=1e-6, atol=1e-6 * float(jnp.max(jnp.abs(g))))
