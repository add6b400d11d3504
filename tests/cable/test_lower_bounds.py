"""Lower bounds from closed-form wraps (docs/cable.md#lower-bounds-from-closed-form-wraps):
the shortest path between two points that keeps out of one sphere or cylinder is in closed
form, and no path of a leg that keeps out of all its obstacles is shorter, so a genuine
candidate of that length settles the leg after the opening round."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
import jaxwrap._cable._candidates as candidates
from jaxwrap._cable._candidates import _leg_starts, _schedule, lower_bounds, settled, straight_lengths
from jaxwrap._cable._state import build_scene
from jaxwrap._surfaces._shortest_wrap import cylinder_shortest_length, sphere_shortest_length

sys.path.insert(0, str(pathlib.Path(__file__).parent))
sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_trust as ct  # noqa: E402
from shortest_paths import cylinder_shortest, sphere_shortest  # noqa: E402

INF = np.inf


def _points(key, num, radius):
    """Pairs of points outside radius `radius`, at 1.01 to 4 radii, in every direction."""
    k_dir, k_dist = jax.random.split(key)
    d = jax.random.normal(k_dir, (num, 2, 3))
    d = d / jnp.linalg.norm(d, axis=-1, keepdims=True)
    return d * jax.random.uniform(k_dist, (num, 2, 1), minval=1.01, maxval=4.0) * radius


def test_closed_form_lengths_match_independent_references():
    """Random pairs around a sphere and an (infinite) cylinder, at radii over six decades,
    against the numpy references of tests/cable/shortest_paths.py; plus the cases the
    planar formula treats apart: a segment that misses, ends and centre collinear (every
    plane is a shortest one), and an end inside (no such path: the segment's length)."""
    sphere = jax.jit(jax.vmap(sphere_shortest_length, in_axes=(None, 0, 0)))
    cylinder = jax.jit(jax.vmap(cylinder_shortest_length, in_axes=(None, 0, 0)))
    for k, r in enumerate(map(jnp.asarray, [1e-3, 0.4, 250.0])):
        ab = _points(jax.random.PRNGKey(k), 300, r)
        # Cylinder ends outside it across the axis, anywhere along it.
        across = _points(jax.random.PRNGKey(10 + k), 300, r).at[..., 2].set(0.0)
        across = across / jnp.linalg.norm(across, axis=-1, keepdims=True) * jnp.linalg.norm(ab, axis=-1, keepdims=True)
        ab_cyl = across.at[..., 2].set(3.0 * ab[..., 2])
        got_s = np.asarray(sphere(r, ab[:, 0], ab[:, 1]))
        got_c = np.asarray(cylinder(r, ab_cyl[:, 0], ab_cyl[:, 1]))
        ref_s = [sphere_shortest(np.asarray(a), np.asarray(b), float(r)) for a, b in ab]
        ref_c = [cylinder_shortest(np.asarray(a), np.asarray(b), float(r)) for a, b in ab_cyl]
        np.testing.assert_allclose(got_s, ref_s, rtol=1e-12)
        np.testing.assert_allclose(got_c, ref_c, rtol=1e-12)
        straight = np.linalg.norm(np.asarray(ab[:, 1] - ab[:, 0]), axis=-1)
        assert np.all(got_s >= straight * (1 - 1e-15)) and np.mean(got_s > straight * (1 + 1e-9)) > 0.1
    r = jnp.asarray(0.5)
    a, b = jnp.array([-2.0, 0.0, 0.0]), jnp.array([3.0, 0.0, 0.0])  # through the centre
    half_turn = np.sqrt(4 - r**2) + np.sqrt(9 - r**2) + r * (np.pi - np.arccos(r / 2) - np.arccos(r / 3))
    np.testing.assert_allclose(sphere_shortest_length(r, a, b), half_turn, rtol=1e-14)
    np.testing.assert_allclose(
        cylinder_shortest_length(r, a, b + jnp.array([0.0, 0.0, 2.0])), np.hypot(half_turn, 2.0), rtol=1e-14
    )
    miss = jnp.array([3.0, 0.6, 0.0])
    np.testing.assert_allclose(sphere_shortest_length(r, a.at[1].set(0.6), miss), 5.0, rtol=1e-15)
    inside = jnp.array([0.1, 0.0, 0.0])
    np.testing.assert_allclose(sphere_shortest_length(r, inside, b), 2.9, rtol=1e-15)
    np.testing.assert_allclose(cylinder_shortest_length(r, inside.at[2].set(5.0), b), np.hypot(2.9, 5.0), rtol=1e-15)
    g = jax.grad(lambda p: sphere_shortest_length(r, p, b) + cylinder_shortest_length(r, p, b))(a)
    assert bool(jnp.all(jnp.isfinite(g)))


def test_a_shortest_candidate_settles_its_leg_only_where_it_attains_the_bound():
    """`settled` with a lower bound: a genuine candidate as long as the bound settles the
    leg on its own (the straight line's rule); one shorter than the bound (a path through
    an obstacle it does not neighbour) settles nothing; without `agreement` (after the
    opening round) two agreeing candidates do not settle it either."""
    cable = jw.CableSpan(0, [0.0, 0.0, 0.0], 0, [1.0, 0.0, 0.0])
    tol2 = float(cable.settings.smoothness_tolerance) ** 2
    bound = jnp.full(4, 2.0)
    scores = jnp.array([[2.0 * (1 + 0.5 * tol2), 1.9, 2.5, INF], [INF, INF, 2.5, INF]])
    agree = np.ones(4, bool)
    assert settled(cable, scores, agree, bound=bound).tolist() == [True, False, True, False]
    assert settled(cable, scores, agree, bound=bound, agreement=False).tolist() == [True, False, False, False]
    # Legs that settle by any genuine path are unaffected.
    assert settled(cable, scores, ~agree, bound=bound, agreement=False).tolist() == [True, True, True, False]


def test_the_opening_round_holds_the_lifted_and_exact_starts():
    """A leg of several obstacles opens with its lifted start and the exact start of each
    sphere and cylinder; its other first starts make the next round."""
    cable = ct.cable("three")
    poses, ends = ct.configuration("three", jax.random.PRNGKey(0))
    cable = ct._with_ends(cable, ends)
    scene = build_scene(cable, poses)
    first, _, agree = _leg_starts(cable, scene, 0)
    _, unused, _ = _schedule(cable, scene)
    exact = [s for s in first if candidates.EXACT in s.values()]
    assert agree and len(exact) == 2
    assert int((~unused[0, :, 0]).sum()) == 1 + len(exact)
    assert int((~unused[1, :, 0]).sum()) == len(first) - 1 - len(exact)


@pytest.fixture(scope="module")
def three_class():
    """96 configurations of `benchmarks/cable_trust.py`'s sphere-cylinder-ellipsoid leg
    (random SO(3) obstacle rotations and end points), default settings, solved with the
    closed-form bounds and with the straight line's alone."""
    keys = jax.random.split(jax.random.PRNGKey(7), 96)
    base = ct.cable("three")

    def solve(key):
        poses, ends = ct.configuration("three", key)
        cable = ct._with_ends(base, ends)
        path = jw.solve_cable(cable, poses)
        scene = build_scene(cable, poses)
        return (
            path.length,
            path.result._value,
            path.converged,
            lower_bounds(cable, scene)[0],
            straight_lengths(scene)[0],
        )

    with_bounds = jax.jit(jax.vmap(solve))(keys)
    straight_only = pytest.MonkeyPatch()
    straight_only.setattr(candidates, "lower_bounds", lambda cable, scene: straight_lengths(scene))
    try:
        without = jax.jit(jax.vmap(solve))(keys)
    finally:
        straight_only.undo()
    return jax.tree.map(np.asarray, with_bounds), jax.tree.map(np.asarray, without)


def test_the_bounds_keep_the_same_paths_and_settle_more_legs(three_class):
    """On the whole class the kept paths are those of the straight line's certificate alone
    (same results, lengths to the tolerance's slack: a tie may now go to an exact start
    that was later before), and the bound is attained, so legs settle after the opening
    round, at more configurations than the straight line alone settles."""
    (length, result, converged, bound, straight), (length0, result0, converged0, _, _) = three_class
    np.testing.assert_array_equal(result, result0)
    np.testing.assert_array_equal(converged, converged0)
    np.testing.assert_allclose(length, length0, rtol=1e-9)
    assert converged.mean() > 0.9
    ok = converged
    assert np.all(length[ok] >= bound[ok] * (1 - 1e-9))  # never shorter than a bound
    at_bound = ok & (np.abs(length - bound) <= 1e-9 * bound)
    at_straight = ok & (np.abs(length - straight) <= 1e-9 * straight)
    assert at_bound.sum() > at_straight.sum() + 5, (at_bound.sum(), at_straight.sum())
