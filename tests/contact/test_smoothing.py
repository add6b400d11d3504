"""The smooth variant: soft pair and inside weights; smoothing = 0 is exactly hpp."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from contact_setups import VALUES, free_flyers

import jaxwrap as jw


def test_smoothing_is_continuous_across_a_pair_switch_and_zero_is_hpp():
    switch = VALUES["pair_switch"]
    model = free_flyers("obj")
    floors = [jw.ConvexShape(f) for f in switch["floors"]]
    obj = [jw.ConvexShape(switch["object"], body=1)]
    hard = jw.ConvexShapeContactHold(model, floors, obj)
    soft = jw.ConvexShapeContactHold(model, floors, obj, smoothing=0.05)

    def evaluate(x):
        q = jnp.array([0.0, 0.3, 0.5, 0, 0, 0, 1]).at[0].set(x)
        # small step: hpp's criterion (dn^2 inside, dp^2 + dn^2 outside) has a jump in its
        # second derivative at the edge, so the central difference error is O(h / smoothing^2)
        h = 1e-9
        fd = (soft.value(q.at[0].add(h)) - soft.value(q.at[0].add(-h))) / (2 * h)
        return hard.value(q), soft.value(q), soft.jacobian(q)[:, 0], fd

    xs = jnp.array([-0.01, -1e-9, 0.0, 1e-9, 0.01])
    hard_v, soft_v, soft_J, fd = jax.jit(jax.vmap(evaluate))(xs)
    # hard: hpp's jump (complement changes by ~2M); soft: continuous, Jacobian = derivative
    assert float(jnp.abs(hard_v[1] - hard_v[3]).max()) > 1.0
    assert float(jnp.abs(soft_v[1] - soft_v[3]).max()) < 1e-6
    np.testing.assert_allclose(soft_J, fd, atol=1e-5)
    for case, value in zip(switch["cases"], hard_v[jnp.array([4, 2, 0])]):
        np.testing.assert_allclose(value, case["hold"], atol=1e-9)
    # far from switches a small temperature reproduces hpp
    sharp = jw.ConvexShapeContactHold(model, floors, obj, smoothing=1e-3)
    q = jnp.array([0.7, 0.3, 0.5, 0, 0, 0, 1])
    np.testing.assert_allclose(sharp.value(q), hard.value(q), atol=1e-9)
