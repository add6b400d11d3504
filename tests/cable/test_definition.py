"""CableSpan construction, settings and the errors it raises for bad input."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scenes import I3, T, poses

import jaxwrap as jw


def test_defaults_and_getters():
    cable = jw.CableSpan(0, [0, 0, 0], 1, [1, 0, 0])
    assert cable.algorithm == "minimum_length"
    assert cable.smoothness_tolerance == pytest.approx(0.1 * math.pi / 180)
    assert cable.smoothness_tolerance == pytest.approx(1.7453292519943296e-3)
    assert cable.max_iterations == 50
    assert cable.curve_segment_accuracy == 1e-9
    assert cable.use_warm_start is True
    cable = cable.add_obstacle(0, T(), jw.Sphere(1.0)).add_via_point(1, [0, 0, 0]).add_obstacle(1, T(), jw.Cylinder(0.5))
    assert (cable.num_obstacles, cable.num_via_points) == (2, 1)
    assert cable.legs() == ((0,), (1,))
    tuned = cable.with_settings(algorithm="scholz2015", max_iterations=7, use_warm_start=False)
    assert (tuned.algorithm, tuned.max_iterations, tuned.use_warm_start) == ("scholz2015", 7, False)
    assert cable.algorithm == "minimum_length"  # immutable: the original is unchanged


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(algorithm="newton"), "algorithm must be one of"),
        (dict(smoothness_tolerance=0.0), "smoothness_tolerance must be a positive"),
        (dict(max_iterations=-1), "max_iterations must be a non-negative integer"),
        (dict(curve_segment_accuracy=-1e-9), "curve_segment_accuracy must be a positive"),
        (dict(use_warm_start="yes"), "use_warm_start must be a bool"),
        (dict(max_step=0), "max_step must be a positive"),
        (dict(tolerance=1e-3), "unknown cable settings"),
    ],
)
def test_invalid_settings(change, message, library_checks_only):
    with pytest.raises(ValueError, match=message):
        jw.CableSpan(0, [0, 0, 0], 1, [1, 0, 0]).with_settings(**change)


def test_invalid_definitions(library_checks_only):
    with pytest.raises(ValueError, match="origin_body must be a non-negative"):
        jw.CableSpan(-1, [0, 0, 0], 1, [1, 0, 0])
    with pytest.raises(ValueError, match=r"termination_station must have shape \(3,\)"):
        jw.CableSpan(0, [0, 0, 0], 1, [1, 0])
    cable = jw.CableSpan(0, [0, 0, 0], 1, [1, 0, 0])
    with pytest.raises(ValueError, match="obstacle 0: surface must be a jaxwrap surface"):
        cable.add_obstacle(0, T(), "sphere")
    with pytest.raises(ValueError, match="obstacle 0: X_BS must be a single"):
        cable.add_obstacle(0, jw.Transform.identity((2,)), jw.Sphere(1.0))
    with pytest.raises(ValueError, match="via point 0: station"):
        cable.add_via_point(0, [1.0, 2.0])
    with pytest.raises(ValueError, match="radius"):
        jw.Sphere(-1.0)


def test_body_index_out_of_range():
    cable = jw.CableSpan(0, [0, 0, 0], 1, [1, 0, 0]).add_obstacle(5, T(), jw.Sphere(1.0))
    with pytest.raises(ValueError, match="obstacle 0 body = 5 is out of range: body_poses holds 2 bodies"):
        cable.solve(poses((2, 0, 0)))
    with pytest.raises(ValueError, match="body_poses must be a Transform with one leading axis"):
        cable.solve(jw.Transform.identity())


def test_end_point_inside_obstacle_is_reported():
    """The origin lies inside the sphere: a status field under jit, an error from check()."""
    cable = jw.CableSpan(0, [0.2, 0, 0], 1, [0, 0, 0]).add_obstacle(0, T(), jw.Sphere(1.0), contact_hint=[1, 0, 0])
    path = jax.jit(lambda X: cable.solve(X))(poses((3, 0, 0)))
    assert bool(path.endpoint_inside[0]) and not bool(path.converged)
    with pytest.raises(ValueError, match=r"obstacle\(s\) \[0\]"):
        cable.check(poses((3, 0, 0)))
    ok = jw.CableSpan(0, [-3, 0.5, 0], 1, [0, 0, 0]).add_obstacle(0, T(), jw.Sphere(1.0), contact_hint=[0, 1, 0])
    assert bool(ok.check(poses((3, 0.5, 0))).converged)


@pytest.mark.parametrize("cold_start", ["candidates", "hints"])
def test_a_leg_with_an_end_inside_its_obstacle_stops_at_its_first_update(cold_start):
    """An end station or via point inside its leg's first or last obstacle is that
    obstacle's neighbour in every update, so the leg fails whatever the solver does: it
    stops at its first status update (where Simbody throws), in every candidate start,
    instead of spending its iteration budget. The result and the per-obstacle flags are
    as before; the cable's other legs are solved as they are alone."""
    I = jnp.eye(3)
    egg = jw.Ellipsoid(jnp.array([1.0, 0.6, 0.8]))
    wrapped = jw.Ellipsoid(jnp.array([0.5, 0.7, 0.6]))
    # Leg 0: the origin inside the first ellipsoid. Leg 1: a via point over the second one.
    # Leg 2: the termination inside the third.
    cable = (
        jw.CableSpan(0, [0.3, 0.1, 0.0], 0, [9.2, 0.1, 0.0])
        .add_obstacle(0, T(), egg, contact_hint=[0, 0.6, 0])
        .add_via_point(0, [3.0, 0.2, 0.0])
        .add_obstacle(0, T(I, [4.5, 0.0, 0.0]), wrapped, contact_hint=[0, 0.7, 0])
        .add_via_point(0, [6.0, 0.2, 0.0])
        .add_obstacle(0, T(I, [9.0, 0.0, 0.0]), egg, contact_hint=[0, 0.6, 0])
        .with_settings(cold_start=cold_start)
    )
    alone = (
        jw.CableSpan(0, [3.0, 0.2, 0.0], 0, [6.0, 0.2, 0.0])
        .add_obstacle(0, T(I, [4.5, 0.0, 0.0]), wrapped, contact_hint=[0, 0.7, 0])
        .with_settings(cold_start=cold_start)
    )
    X = jw.Transform(jnp.eye(3)[None], jnp.zeros((1, 3)))
    path = jax.jit(jw.solve_cable)(cable, X)
    middle = jax.jit(jw.solve_cable)(alone, X)
    assert path.result == jw.RESULTS.endpoint_inside_obstacle
    assert path.endpoint_inside.tolist() == [True, False, True]
    assert bool(middle.converged) and bool(middle.in_contact[0]) and int(middle.num_iterations) > 0
    # The stuck legs took no correction; the middle one took those it takes alone.
    assert int(path.num_iterations) == int(middle.num_iterations)
    np.testing.assert_allclose(path.curve_segment_arc_length(1), middle.curve_segment_arc_length(0), rtol=1e-12)


def test_point_outside_a_height_map_domain_is_not_inside():
    """Simbody only counts a neighbour as inside where the surface is defined: an end point
    below the continued height map but off its grid is fine. (The termination is low enough
    to lie below the map and high enough that the straight line from the map to it crosses
    the sphere, so the hints' wrap over the sphere is taut.)"""
    height_map = jw.BicubicHeightMap([-2.0, 0, 2], [-2.0, 0, 2], [[0, 0, 0], [0, 1.0, 0], [0, 0, 0]])
    cable = (
        jw.CableSpan(0, [-3.0, 0, 0.5], 0, [7.0, 0, -0.6])
        .add_obstacle(0, T(), height_map, contact_hint=[0, 0, 1.0])
        .add_obstacle(0, T(I3, [4.0, 0, 0.5]), jw.Sphere(1.0), contact_hint=[0, 0, 1.0])
    )
    path = jax.jit(jw.solve_cable)(cable.with_settings(cold_start="hints"), jw.Transform(jnp.eye(3)[None], jnp.zeros((1, 3))))
    assert not bool(jnp.any(path.endpoint_inside))
    assert bool(path.converged) and bool(jnp.all(path.in_contact))
    np.testing.assert_array_less(float(path.smoothness), cable.smoothness_tolerance)
