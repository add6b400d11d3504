"""`ConvexShape` against hpp-constraints' tests/convex-shape.cc and tests/test-jacobians.cc."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

TRIANGLE = [(0, 0, 0), (2, 0, 0), (0, 2, 0)]
SQUARE = [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0)]


def test_convex_shape_triangle_inside_outside():
    # tests/convex-shape.cc `triangle`
    t = jw.ConvexShape(TRIANGLE)
    inside = [(0, 0, 0), (2, 0, 0), (0, 2, 0), (1, 1, 0), (0.5, 0.5, 0)]
    outside = [(-1, -1, 0), (1, -1, 0), (3, -0.2, 0), (2, 2, 0), (-0.2, 3, 0), (-1, 1, 0)]
    for p in inside:
        assert bool(t.is_inside_local(jnp.array(p, float))), p
        assert float(t.distance_local(jnp.array(p, float))) <= 0, p
    for p in outside:
        assert not bool(t.is_inside_local(jnp.array(p, float))), p
        assert float(t.distance_local(jnp.array(p, float))) >= 0, p


@pytest.mark.parametrize(
    "point, expected",
    [((0, 3, 0), 1.0), ((3, 0, 0), 1.0), ((1, 1, 0), -1.0), ((0, 1, 0), 0.0),
     # further values returned by hpp-constraints 9.0.2 for this square
     ((3, 3, 0), 1.414213562373095), ((1, 0.2, 0), -0.2), ((-1, -1, 0), 1.414213562373095)],
)
def test_convex_shape_distance_square(point, expected):
    # tests/convex-shape.cc `distance`
    d = jw.ConvexShape(SQUARE).distance_local(jnp.array(point, float))
    np.testing.assert_allclose(float(d), expected, atol=1e-12)


def test_jacobians_cc_triangle():
    # tests/test-jacobians.cc `triangle`
    t = jw.ConvexShape([(0, 0, 0), (1, 0, 0), (0, 1, 0)])
    np.testing.assert_allclose(t.normal, [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(t.centre, [1 / 3, 1 / 3, 0], atol=1e-15)
    R = t.frame.rotation
    x_axis, y_axis = R[:, 1], R[:, 2]  # hpp's planeXaxis, planeYaxis
    assert abs(float(x_axis @ t.normal)) < 1e-15 and abs(float(y_axis @ t.normal)) < 1e-15
    assert abs(float(x_axis @ y_axis)) < 1e-15
    # intersection of the line through p6 = (-1,-1,1) along (0,1,-1) with the plane: (-1,0,0)
    p6, u = jnp.array([-1.0, -1, 1]), jnp.array([0.0, 1, -1])
    hit = p6 + u * (t.normal @ (t.centre - p6)) / (t.normal @ u)
    np.testing.assert_allclose(hit, [-1, 0, 0], atol=1e-15)
    assert bool(t.is_inside_local(jnp.array([0.2, 0.2, 0])))
    assert not bool(t.is_inside_local(jnp.array([1.0, 1, 0])))
    for p in t.points:
        assert abs(float(t.distance_local(p))) < 1e-15
    np.testing.assert_allclose(t.distance_local(jnp.array([0.2, 0.2, 0])), -0.2, atol=1e-8)
    np.testing.assert_allclose(t.distance_local(jnp.array([1.0, 1, 0])), 0.5 * np.sqrt(2), atol=1e-8)
    np.testing.assert_allclose(t.distance_local(jnp.array([-1.0, -1, 0])), np.sqrt(2), atol=1e-8)


def test_frames_of_point_segment_polygon(values):
    point = jw.ConvexShape([(0.3, 0.2, 0.1)])
    np.testing.assert_array_equal(point.frame.rotation, np.eye(3))
    np.testing.assert_array_equal(point.frame.translation, [0.3, 0.2, 0.1])
    # the LINE object of section 4.3: N = (0,1,0), Ns0 = (0,0,1), Us0 = (1,0,0)
    line = jw.ConvexShape(values["line_object"]["object"])
    np.testing.assert_allclose(line.frame.rotation, np.array(values["line_object"]["frame_rotation_columns"]).T, atol=1e-15)
    # a segment along z takes the second branch: N = (0, -U_z, U_y)/|.| = (0,-1,0)
    np.testing.assert_allclose(jw.ConvexShape([(0, 0, 0), (0, 0, 2)]).normal, [0, -1, 0], atol=1e-15)
    # set-up A's object and the reversed floors of set-up B (section 4.2)
    obj = jw.ConvexShape(values["setups"]["A"]["objects"][0]["points"])
    np.testing.assert_allclose(obj.frame.rotation, [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-15)
    np.testing.assert_allclose(obj.frame.translation, [0, 0, -0.1], atol=1e-15)
    square, penta = (jw.ConvexShape(f["points"]).reverse() for f in values["setups"]["B_point"]["floors"])
    np.testing.assert_allclose(square.frame.rotation, np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]]).T, atol=1e-15)
    np.testing.assert_allclose(square.centre, [2.5, 0, 0], atol=1e-15)
    np.testing.assert_allclose(penta.centre, [-1.8, 0, 0], atol=1e-15)
    np.testing.assert_allclose(penta.edge_normals[0], [-0.894427190999916, 0.447213595499958, 0], atol=1e-15)
    np.testing.assert_allclose(penta.edge_directions[0], [-0.447213595499958, -0.894427190999916, 0], atol=1e-15)


def test_reverse_flips_normal_keeps_centre_and_frame_is_right_handed():
    shape = jw.ConvexShape([(-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0)])
    reversed_ = shape.reverse()
    np.testing.assert_allclose(reversed_.normal, -shape.normal)
    np.testing.assert_allclose(reversed_.centre, shape.centre)
    np.testing.assert_allclose(reversed_.points[0], shape.points[-1])
    for s in (shape, reversed_):
        R = s.frame.rotation
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)
        np.testing.assert_allclose(jnp.linalg.det(R), 1.0, atol=1e-15)
        # in-plane normals point out of the polygon
        mid = (s.points + jnp.roll(s.points, -1, axis=0)) / 2
        assert bool(jnp.all(jnp.sum((mid - s.centre) * s.edge_normals, axis=-1) > 0))


def test_distance_gradients_are_nan_free_at_vertices_and_edges():
    t = jw.ConvexShape(SQUARE)
    grad = jax.vmap(jax.grad(t.distance_local))
    points = jnp.array([[0, 0, 0], [2, 2, 0], [1, 0, 0], [3, 3, 0], [1, 1, 0], [-1, 0.5, 0]], float)
    assert bool(jnp.all(jnp.isfinite(grad(points))))
    grad_points = jax.grad(lambda p: jw.ConvexShape(p).distance_local(jnp.array([3.0, 0.5, 0])))(t.points)
    assert bool(jnp.all(jnp.isfinite(grad_points)))


@pytest.mark.parametrize(
    "points, message",
    [
        (np.zeros((0, 3)), "empty"),
        ([(0, 0, 0), (0, 0, 0)], "repeated"),
        ([(0, 0, 0), (1, 0, 0), (1, 0, 0), (0, 1, 0)], "repeated"),
        ([(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0)], "collinear"),
        ([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0.1)], "not planar"),
        ([(0, 0, 0), (2, 0, 0), (1, 0.5, 0), (2, 2, 0), (0, 2, 0)], "not convex"),
        # a pentagram turns left at every vertex but winds twice
        ([(np.cos(a), np.sin(a), 0) for a in np.arange(5) * 4 * np.pi / 5], "winds"),
        ([(0, 0, 0), (1, 0)], "shape"),
        ([(0, 0, np.nan)], "finite"),
    ],
)
def test_invalid_shapes_raise_value_error_naming_the_shape(points, message):
    with pytest.raises(ValueError, match=message) as info:
        jw.ConvexShape(points, name="my_shape")
    assert "my_shape" in str(info.value)


def test_clockwise_polygon_is_convex_about_its_own_normal():
    # hpp's fixtures give floors clockwise seen from +z: valid, with normal -z.
    square = jw.ConvexShape([(5, 5, 0), (5, -5, 0), (0, -5, 0), (0, 5, 0)])
    np.testing.assert_allclose(square.normal, [0, 0, -1])
