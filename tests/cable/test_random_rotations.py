"""Random configurations with uniformly random obstacle rotations, at a reduced size
(benchmarks/cable_trust.py runs 100,000 per scenario): no path reported successful is
longer than the shortest genuine candidate (1e-9 relative), no NaN, and the default cold
start succeeds on every valid configuration (a randomly turned infinite cylinder sometimes
passes through an end point: that one is reported as `endpoint_inside_obstacle`)."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import jaxlie
import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_trust  # noqa: E402

import jaxwrap as jw  # noqa: E402

# Configurations added to the random ones: the chain's number 193 of seed 0, where the
# sphere stays lifted and the cylinder has two taut wraps 1.5 % apart; only the cylinder's
# exact start (its closed-form shortest wrap between the leg's ends) reaches the shorter
# one (docs/cable.md#cold-start-candidates).
PINNED = {"chain": [193]}


@pytest.mark.parametrize("kind", ["sphere", "cylinder", "ellipsoid", "torus", "chain"])
def test_random_obstacle_rotations(kind):
    pinned = jax.random.split(jax.random.PRNGKey(0), 1024)[jnp.array(PINNED[kind])] if kind in PINNED else None
    r = cable_trust.check(kind, num=32, chunk=32, seed=7, extra_keys=pinned)
    assert r["longer"] == 0 and r["nan"] == 0
    assert r["inside"] <= r["num"] // 8
    assert r["success"] == r["num"] - r["inside"]


@pytest.mark.parametrize("kind", ["ellipsoid", "torus"])
def test_gradients_under_random_rotations_match_differences(kind):
    """Implicit derivatives of the length through integrated geodesics (their corrections'
    derivative from the Jacobi fields, docs/cable.md#implicit-differentiation) on random
    configurations of the same class: with respect to both end points, the obstacle body's
    position and a turn of its random SO(3) rotation (``R exp(w)``), batched, against
    central differences (they agree to about 2e-9). Compared on the wrapped paths where
    every perturbed solve converged with the same contact (elsewhere the length has a
    kink)."""
    base = cable_trust.cable(kind, smoothness_tolerance=1e-9, max_iterations=100)
    keys = jax.random.split(jax.random.PRNGKey(11), 48)

    def solve(x, key):  # x: end points (6), obstacle position (3), turn (3)
        poses, ends = cable_trust.configuration(kind, key)
        rotations = poses.rotation.at[1].set(poses.rotation[1] @ jaxlie.SO3.exp(x[9:]).as_matrix())
        poses = jw.Transform(rotations, poses.translation.at[1].add(x[6:9]))
        path = jw.solve_cable(cable_trust._with_ends(base, ends + x[:6].reshape(2, 3)), poses)
        return path.length, (path.converged, path.in_contact)

    zero = jnp.zeros(12)
    gradients, (ok, contact) = jax.jit(jax.vmap(jax.grad(solve, has_aux=True), in_axes=(None, 0)))(zero, keys)
    h = 1e-6
    steps = jnp.concatenate([h * jnp.eye(12), -h * jnp.eye(12)])
    lengths, (ok_fd, contact_fd) = jax.jit(jax.vmap(jax.vmap(solve, in_axes=(0, None)), in_axes=(None, 0)))(steps, keys)
    fd = (lengths[:, :12] - lengths[:, 12:]) / (2 * h)
    same = ok & jnp.all(ok_fd, axis=1) & jnp.all(contact_fd == contact[:, None], axis=(1, 2))
    valid = np.asarray(same & jnp.any(contact, axis=1))  # wrapped paths only
    assert valid.sum() >= 4, valid  # 5 (ellipsoid) and 8 (torus) of 48 wrap
    assert np.all(np.isfinite(np.asarray(gradients)))
    np.testing.assert_allclose(np.asarray(gradients)[valid], np.asarray(fd)[valid], atol=1e-7, rtol=0)
