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


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_wrap_turning_like_a_path_goes_round_its_way(kind):
    """`shortest_wrap_turning` (a warm start's continuation, docs/cable.md#warm-starts-in-closed-form):
    given the angular momentum of the shortest wrap it is that wrap; given the opposite
    one, the other side: a tangent-arc-tangent path without kinks, at least as long,
    whose own angular momentum is the opposite (about a cylinder's axis); given none, the shortest wrap. It touches
    exactly where the shortest wrap does (where the segment meets the surface)."""
    surface, _ = KINDS[kind]
    ends = _ends(5, 500)
    if kind == "cylinder":
        across = np.linalg.norm(ends[..., :2], axis=-1, keepdims=True)
        ends[..., :2] *= np.maximum(1.0, 1.001 * RADIUS / across)
    hint = jnp.array([0.0, 0.0, 1.0])

    def momentum(P, t_P, length):
        g = surface.shoot_geodesic(P, t_P, length)
        return jnp.cross(g.p_SP, g.tangent_P) + jnp.cross(g.p_SQ, g.tangent_Q), g

    @jax.jit
    @jax.vmap
    def wraps(ab):
        a, b = ab
        touches, P, t_P, length = surface.shortest_wrap(a, b, hint)
        L, _ = momentum(P, t_P, length)
        same = surface.shortest_wrap_turning(a, b, hint, L)
        none = surface.shortest_wrap_turning(a, b, hint, jnp.zeros(3))
        other = surface.shortest_wrap_turning(a, b, hint, -L)
        L_other, g = momentum(*other[1:])
        total = jnp.linalg.norm(other[1] - a) + other[3] + jnp.linalg.norm(b - g.p_SQ)
        kinks = jnp.stack([
            jnp.dot((other[1] - a) / jnp.linalg.norm(other[1] - a), g.tangent_P),
            jnp.dot((b - g.p_SQ) / jnp.linalg.norm(b - g.p_SQ), g.tangent_Q),
        ])
        shortest = jnp.linalg.norm(P - a) + length + jnp.linalg.norm(b - momentum(P, t_P, length)[1].p_SQ)
        # About a cylinder only the turn about its axis says the way round.
        spin = L_other[2] * L[2] if kind == "cylinder" else jnp.dot(L_other, L)
        return touches, (P, length), same, none, other[0], total, shortest, kinks, spin

    touches, (P, length), same, none, touches_other, total, shortest, kinks, dot = jax.tree.map(
        np.asarray, wraps(jnp.asarray(ends))
    )
    for turned in (same, none):
        np.testing.assert_array_equal(turned[0], touches)
        np.testing.assert_allclose(turned[1][touches], P[touches], atol=1e-12)
        np.testing.assert_allclose(turned[3][touches], length[touches], atol=1e-12)
    np.testing.assert_array_equal(touches_other, touches)
    wrapped = touches & (np.abs(dot) > 1e-9)  # not a wrap of zero length or one in every plane
    assert wrapped.mean() > 0.2
    assert np.all(dot[wrapped] < 0)
    assert np.all(total[wrapped] >= shortest[wrapped] - 1e-12)
    np.testing.assert_allclose(kinks[wrapped], 1.0, atol=1e-9)
