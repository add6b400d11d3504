"""The wrap side (`add_obstacle(..., side=...)`, docs/cable.md#wrap-side): a line on the
wrong side is wrapped round to the right one, a path already on the right side is left
alone, for the closed-form sphere and cylinder and for the general ellipsoid start, with
the whole scene turned by random rotations. The expected lengths are written out here in
the plane of the wrap, independently of jaxwrap: straight, the short way round or the long
way round."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import jaxwrap as jw

HEIGHTS = np.array([-1.5, -0.5, 0.5, 1.5])
SIDES = np.array([1.0, -1.0])
RISE = 0.1  # the termination sits a little above the wrap plane (a helix on the cylinder)


def _planar(a, b, r, long_way):
    """Length from a to b round the circle |x| = r in their plane: the straight line if
    it misses the disk and the short way is asked for, else one of the two wraps."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    t = np.clip(-a @ d / (d @ d), 0, 1)
    if not long_way and np.linalg.norm(a + t * d) >= r:
        return np.linalg.norm(d)
    la, lb = np.linalg.norm(a), np.linalg.norm(b)
    angle = np.arccos(np.clip(a @ b / (la * lb), -1, 1))
    turn = (2 * np.pi - angle if long_way else angle) - np.arccos(r / la) - np.arccos(r / lb)
    return np.sqrt(la**2 - r**2) + np.sqrt(lb**2 - r**2) + r * turn


def expected(kind, y, side):
    """The straight line at y passes on the +y side of the centre when y > 0; the side
    asks for sign(side); a side against the line's is the long way round for a crossing
    line, and a forced wrap for a missing one (also the long way in the wrap plane)."""
    a, b = np.array([-2.0, y, 0.0]), np.array([2.0, y, RISE])
    long_way = np.sign(y) != np.sign(side)
    if kind == "cylinder":
        return np.hypot(_planar(a[:2], b[:2], 1.0, long_way), RISE)
    e1 = a / np.linalg.norm(a)
    e2 = b - (b @ e1) * e1
    e2 /= np.linalg.norm(e2)
    return _planar([a @ e1, a @ e2], [b @ e1, b @ e2], 1.0, long_way)


SURFACES = {
    "sphere": jw.Sphere(1.0),
    "cylinder": jw.Cylinder(1.0),
    "ellipsoid": jw.Ellipsoid(jnp.array([1.0, 1.0, 1.0])),
}


@functools.cache
def _solver(kind):
    """One compiled program per surface kind: heights, sides and rotations are traced."""

    def solve(y, side, rotation):
        X_BS = jw.Transform(rotation, jnp.array([0.3, -0.2, 0.5]))
        origin = X_BS.apply(jnp.array([-2.0, 0.0, 0.0]) + jnp.array([0.0, 1.0, 0.0]) * y)
        termination = X_BS.apply(jnp.array([2.0, 0.0, RISE]) + jnp.array([0.0, 1.0, 0.0]) * y)
        cable = jw.CableSpan(0, origin, 0, termination).add_obstacle(
            0, X_BS, SURFACES[kind], side=jnp.array([0.0, 2.0, 0.0]) * side
        )
        path = jw.solve_cable(cable, jw.Transform.from_translation(jnp.zeros((1, 3))))
        return path.length, path.result._value, path.in_contact[0]

    return jax.jit(jax.vmap(solve))


@pytest.mark.parametrize("kind", sorted(SURFACES))
def test_the_path_keeps_to_its_side_under_any_rotation(kind):
    rng = np.random.default_rng(11)
    ys, sides = (x.ravel() for x in np.meshgrid(HEIGHTS, SIDES, indexing="ij"))
    ys, sides = np.tile(ys, 3), np.tile(sides, 3)
    rotations = Rotation.random(len(ys), random_state=rng).as_matrix()
    lengths, results, contact = _solver(kind)(jnp.asarray(ys), jnp.asarray(sides), jnp.asarray(rotations))
    assert np.all(np.asarray(results) == jw.RESULTS.successful._value)
    want = np.array([expected(kind, y, s) for y, s in zip(ys, sides)])
    np.testing.assert_allclose(np.asarray(lengths), want, rtol=1e-9)
    # Lifted exactly where the line misses the obstacle on the asked side.
    np.testing.assert_array_equal(np.asarray(contact), ~((np.abs(ys) > 1) & (np.sign(ys) == sides)))


def test_the_forced_wrap_is_differentiable():
    def length(y):
        cable = jw.CableSpan(0, jnp.stack([-2.0, y, 0.0]), 0, jnp.stack([2.0, y, RISE])).add_obstacle(
            0, jw.Transform.from_translation(jnp.zeros(3)), jw.Cylinder(1.0), side=[0.0, 1.0, 0.0]
        )
        return jw.solve_cable(cable, jw.Transform.from_translation(jnp.zeros((1, 3)))).length

    y, h = -1.5, 1e-6
    grad = float(jax.jit(jax.grad(length))(y))
    fd = (expected("cylinder", y + h, 1.0) - expected("cylinder", y - h, 1.0)) / (2 * h)
    assert grad == pytest.approx(fd, rel=1e-6)
    assert grad < 0  # moving the line towards the side shortens the forced wrap


def test_no_taut_path_on_the_side_is_a_failure_not_a_wrong_answer():
    """Over a flattened ellipsoid the cable slides off the +y side towards the short z
    axis: no stationary path passes on +y, and the result says so."""
    cable = jw.CableSpan(0, [-2.0, -0.5, 0.0], 0, [2.0, -0.5, RISE]).add_obstacle(
        0, jw.Transform.from_translation(jnp.zeros(3)), jw.Ellipsoid(jnp.array([1.0, 0.7, 0.5])), side=[0, 1.0, 0]
    )
    path = jw.solve_cable(cable, jw.Transform.from_translation(jnp.zeros((1, 3))))
    assert path.result == jw.RESULTS.wrong_side
    assert not bool(path.converged)


def test_a_side_at_the_origin_is_refused():
    cable = jw.CableSpan(0, [-2.0, 0, 0], 0, [2.0, 0, 0])
    with pytest.raises(ValueError, match="obstacle 0: side"):
        cable.add_obstacle(0, jw.Transform.from_translation(jnp.zeros(3)), jw.Sphere(1.0), side=[0, 0, 0])
    with pytest.raises(ValueError, match="obstacle 0: side"):
        cable.add_obstacle(0, jw.Transform.from_translation(jnp.zeros(3)), jw.Sphere(1.0), side=[0, 1.0])
