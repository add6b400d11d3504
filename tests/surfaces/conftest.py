"""Shared fixtures for the surface tests."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def start_data(surface, seed: int, n: int, lengths):
    """n projected start points, tangent-plane directions and the given lengths (cycled)."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(n, 3))
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    points = jax.vmap(surface.project)(jnp.asarray(raw * 1.5))
    normals = jax.vmap(surface.normal)(points)
    d = rng.normal(size=(n, 3))
    d = d - np.sum(d * normals, axis=1, keepdims=True) * normals
    tangents = d / np.linalg.norm(d, axis=1, keepdims=True)
    lengths = jnp.asarray(np.resize(np.asarray(lengths, float), n))
    return points, jnp.asarray(tangents), lengths


@pytest.fixture(scope="session")
def cases():
    """`cases(surface, seed, n, lengths)` -> (points, tangents, lengths) on the surface."""
    return start_data
