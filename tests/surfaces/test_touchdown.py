"""Touchdown search (Simbody's calcNearestPointOnLineImplicitly, docs/surfaces.md#touchdown-line-search)
against dense brute-force sampling of f along lines that miss, graze and cross."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap._surfaces as js

SURFACES = {
    "sphere": js.Sphere(1.5),
    "cylinder": js.Cylinder(0.7),
    "ellipsoid": js.Ellipsoid(jnp.array([1.0, 0.5, 0.75])),
    "torus": js.Torus(2.0, 0.25),
}
# Offsets of the line from a surface point along the outward normal:
# clear miss, graze from outside, graze from inside, clear cross.
OFFSETS = np.array([0.3, 1e-3, -1e-3, -0.2])
ALPHAS = np.linspace(0, 1, 20001)


def lines(surface, seed):
    """Lines through p + δ n along a tangent direction u, for every offset δ."""
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(3, 3))
    if isinstance(surface, js.Torus):  # outer part of the tube: f has one maximum per line
        raw[:, 2] *= 0.2
        raw[:, :2] *= 3 / np.linalg.norm(raw[:, :2], axis=1, keepdims=True)
    p = jax.vmap(surface.project)(jnp.asarray(raw))
    n = jax.vmap(surface.normal)(p)
    other = rng.normal(size=(3, 3))
    if isinstance(surface, js.Cylinder):
        # Keep lines away from the axis direction: along it f is flat, the nearest point
        # is not unique, and Simbody's damped Newton (|c''| + 0.5) crawls (see
        # test_flat_direction_reports_no_convergence).
        other = other * 0.3 + np.array([0.0, 0.0, 1.0])
    u = jnp.cross(n, jnp.asarray(other))
    u = u / jnp.linalg.norm(u, axis=1, keepdims=True)
    centre = (p[:, None] + OFFSETS[None, :, None] * n[:, None]).reshape(-1, 3)
    u = jnp.repeat(u, len(OFFSETS), 0)
    half = 0.6 * (1 + 0.5 * rng.random(size=(len(centre), 1)))  # asymmetric segments
    return centre - half * u, centre + 0.6 * u, jnp.repeat(p, len(OFFSETS), 0), centre


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_touchdown_matches_brute_force(name):
    surface = SURFACES[name]
    a, b, p, centre = lines(surface, 7)
    guess = centre + jnp.array([0.05, -0.02, 0.03])  # near, not on, the line
    result = jax.jit(jax.vmap(surface.nearest_point_on_line))(a, b, guess)
    samples = a[:, None] + ALPHAS[None, :, None] * (b - a)[:, None]
    f = jax.vmap(jax.vmap(surface.implicit))(samples)
    below_expected = np.asarray(jnp.max(f, axis=1) > 0)
    np.testing.assert_array_equal(below_expected, np.tile(OFFSETS < 0, 3))
    np.testing.assert_array_equal(result.below, below_expected)
    assert bool(jnp.all(result.converged))
    # Every returned point lies on its segment at the returned parameter.
    np.testing.assert_allclose(result.point, a + result.alpha[:, None] * (b - a), atol=1e-14)
    # Touchdown: the returned point is on or inside the surface.
    f_point = jax.vmap(surface.implicit)(result.point)
    assert np.all(np.asarray(f_point)[below_expected] > -1e-15)
    # Miss: the returned point is where f peaks along the line (brute-force argmax).
    alpha_bf = ALPHAS[np.argmax(np.asarray(f), axis=1)]
    miss = ~below_expected
    np.testing.assert_allclose(np.asarray(result.alpha)[miss], alpha_bf[miss], atol=2e-4)
    assert np.all(np.asarray(f_point)[miss] >= np.max(np.asarray(f), axis=1)[miss] - 1e-9)


def test_torus_line_through_the_hole_and_degenerate_segment():
    torus = SURFACES["torus"]
    # Along the axis (ρ = 0, where f is not smooth): a clean miss, no NaN.
    result = torus.nearest_point_on_line(jnp.array([0.0, 0, -1]), jnp.array([0.0, 0, 2]), jnp.zeros(3))
    assert not bool(result.below) and bool(result.converged)
    np.testing.assert_allclose(result.point, [0, 0, 0], atol=1e-9)
    # Degenerate segment: A itself, below iff inside.
    inside = jnp.array([2.1, 0, 0])
    assert bool(torus.nearest_point_on_line(inside, inside, inside).below)
    outside = jnp.array([3.0, 0, 0])
    res = torus.nearest_point_on_line(outside, outside, inside)
    assert not bool(res.below)
    np.testing.assert_allclose(res.point, outside)


def test_guess_only_enters_through_its_projection_on_the_line():
    sphere = SURFACES["sphere"]
    a, b = jnp.array([-2.0, 1.7, 0.0]), jnp.array([2.0, 1.7, 0.0])
    for guess in (jnp.array([-1.9, 5.0, 3.0]), jnp.array([1.5, -4.0, 0.0])):
        res = sphere.nearest_point_on_line(a, b, guess)
        assert not bool(res.below)
        np.testing.assert_allclose(res.point, [0, 1.7, 0], atol=1e-9)


def test_flat_direction_reports_no_convergence():
    """A line almost parallel to the cylinder axis: f barely varies along it, the damped
    Newton converges linearly, and after CableSpan's 50 iterations the search reports
    `converged = False` (Simbody's MaxIterationsExceeded) with the right decision."""
    cylinder = SURFACES["cylinder"]
    # f(α) = r² - 0.8² - (0.1α - 0.05)²: c'' = 0.02, so each step contracts by 0.96 only.
    a, b = jnp.array([0.8, -0.05, -1.0]), jnp.array([0.8, 0.05, 1.0])
    res = cylinder.nearest_point_on_line(a, b, jnp.array([0.8, 0.04, 0.8]))
    assert not bool(res.below) and not bool(res.converged)
    assert int(res.num_iterations) == 50
    assert abs(float(res.alpha) - 0.5) < 0.4 * 0.2  # from α0 = 0.9 towards the optimum 0.5
    shift = jnp.array([0.15, 0.0, 0.0])
    below = cylinder.nearest_point_on_line(a - shift, b - shift, a)
    assert bool(below.below) and bool(below.converged)
