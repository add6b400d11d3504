"""The closed-form shortest wrap over a sphere or a cylinder (docs/surfaces.md#shortest-wrap)
against the independent references of tests/cable/shortest_paths.py: the same length as
the shortest path over either side, and a path that is one: tangent lines that meet the
geodesic at its ends without a kink, on the surface."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "cable"))
from shortest_paths import cylinder_shortest, sphere_shortest  # noqa: E402

RADIUS = 0.7
KINDS = {"sphere": (jw.Sphere(RADIUS), sphere_shortest), "cylinder": (jw.Cylinder(RADIUS), cylinder_shortest)}


def _ends(seed: int, num: int):
    """End points on shells from just outside the surface to 4 radii, in every direction,
    some pairs nearly opposite through the axis (where both sides of a cylinder nearly tie)."""
    rng = np.random.default_rng(seed)
    d = rng.normal(size=(num, 2, 3))
    d[: num // 4, 1] = -d[: num // 4, 0] + 0.05 * rng.normal(size=(num // 4, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    r = RADIUS * rng.uniform(1.001, 4.0, size=(num, 2, 1))
    return d * r


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_shortest_wrap_is_the_shortest_path(kind):
    surface, reference = KINDS[kind]
    ends = _ends(3, 2000)
    if kind == "cylinder":  # outside the cylinder: push the end points out across the axis
        across = np.linalg.norm(ends[..., :2], axis=-1, keepdims=True)
        ends[..., :2] *= np.maximum(1.0, 1.001 * RADIUS / across)

    @jax.jit
    @jax.vmap
    def wrap(ab):
        a, b = ab
        touches, P, t_P, length = surface.shortest_wrap(a, b, jnp.array([0.0, 0.0, 1.0]))
        g = surface.shoot_geodesic(P, t_P, length)
        total = jnp.linalg.norm(P - a) + length + jnp.linalg.norm(b - g.p_SQ)
        kink_P = jnp.dot((P - a) / jnp.linalg.norm(P - a), g.tangent_P)
        kink_Q = jnp.dot((b - g.p_SQ) / jnp.linalg.norm(b - g.p_SQ), g.tangent_Q)
        return touches, total, kink_P, kink_Q, jnp.abs(surface.implicit(P)), jnp.dot(t_P, surface.normal(P))

    touches, total, kink_P, kink_Q, off_surface, normal_component = (np.asarray(x) for x in wrap(jnp.asarray(ends)))
    expected = np.array([reference(a, b, RADIUS) for a, b in ends])
    straight = np.linalg.norm(ends[:, 1] - ends[:, 0], axis=-1)
    # The reference is longer than the straight line exactly where the segment crosses.
    np.testing.assert_array_equal(touches, expected > straight * (1 + 1e-13))
    assert 0.2 < touches.mean() < 0.98
    np.testing.assert_allclose(total[touches], expected[touches], rtol=1e-12)
    np.testing.assert_allclose(kink_P[touches], 1.0, atol=1e-12)
    np.testing.assert_allclose(kink_Q[touches], 1.0, atol=1e-12)
    assert off_surface[touches].max() < 1e-12 and np.abs(normal_component[touches]).max() < 1e-12


def test_a_sphere_wrap_through_the_centre_takes_the_hint_plane():
    """a, b and the centre on one line: every plane through them holds a shortest path;
    the hint's is taken."""
    sphere = jw.Sphere(1.0)
    a, b = jnp.array([-2.0, 0.0, 0.0]), jnp.array([3.0, 0.0, 0.0])
    for hint in (jnp.array([0.0, 1.0, 0.0]), jnp.array([0.3, 0.0, -1.0])):
        touches, P, t_P, length = sphere.shortest_wrap(a, b, hint)
        assert bool(touches) and bool(jnp.all(jnp.isfinite(P)))
        assert float(jnp.dot(jnp.cross(a, P), jnp.cross(a, hint))) > 0  # P in the hint's half plane
        expected = sphere_shortest(np.asarray(a), np.asarray(b) + [0, 1e-12, 0], 1.0)
        total = jnp.linalg.norm(P - a) + length + jnp.sqrt(8.0)
        np.testing.assert_allclose(total, expected, rtol=1e-10)
