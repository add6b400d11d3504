"""Transform and rotation helpers: group identities, conversions, NaN-free gradients at
zero rotation and at angle pi."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jaxwrap as jw
from jaxwrap._spatial import (
    axis_angle_to_rotation,
    quaternion_to_rotation,
    rotation_to_axis_angle,
    rotation_to_quaternion,
)

finite = st.floats(-3.0, 3.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)


def _transform(w, t):
    return jw.Transform.from_axis_angle(jnp.asarray(w), jnp.asarray(t))


@jax.jit
def _identities(w1, t1, w2, t2, w3, t3, p):
    X, Y, Z = _transform(w1, t1), _transform(w2, t2), _transform(w3, t3)
    assoc = jnp.max(jnp.abs(((X @ Y) @ Z).as_matrix() - (X @ (Y @ Z)).as_matrix()))
    inverse = jnp.max(jnp.abs((X @ X.inverse()).as_matrix() - jnp.eye(4)))
    apply = jnp.max(jnp.abs((X @ Y).apply(p) - X.apply(Y.apply(p))))
    ortho = jnp.max(jnp.abs(X.rotation.T @ X.rotation - jnp.eye(3)))
    det = jnp.linalg.det(X.rotation)
    log_exp = jnp.max(jnp.abs(jw.Transform.exp(X.log()).as_matrix() - X.as_matrix()))
    return assoc, inverse, apply, ortho, det, log_exp


@settings(max_examples=60, deadline=None)
@given(vec3, vec3, vec3, vec3, vec3, vec3, vec3)
def test_group_identities(w1, t1, w2, t2, w3, t3, p):
    assoc, inverse, apply, ortho, det, log_exp = _identities(w1, t1, w2, t2, w3, t3, p)
    assert assoc < 1e-12 and inverse < 1e-12 and apply < 1e-12
    assert ortho < 1e-13 and abs(det - 1.0) < 1e-13
    assert log_exp < 1e-10


def test_axis_rotations_match_right_hand_rule():
    a = 0.3
    np.testing.assert_allclose(jw.rotation_z(a) @ np.array([1.0, 0, 0]), [np.cos(a), np.sin(a), 0], atol=1e-15)
    np.testing.assert_allclose(jw.rotation_x(a) @ np.array([0, 1.0, 0]), [0, np.cos(a), np.sin(a)], atol=1e-15)
    np.testing.assert_allclose(jw.rotation_y(a) @ np.array([0, 0, 1.0]), [np.sin(a), 0, np.cos(a)], atol=1e-15)
    np.testing.assert_allclose(jw.rotation_z(a), axis_angle_to_rotation(jnp.array([0, 0, a])), atol=1e-15)
    assert jw.rotation_x(jnp.zeros(5)).shape == (5, 3, 3)


def test_quaternion_roundtrip_and_pinocchio_order():
    # 90 degrees about z: (x, y, z, w) = (0, 0, sin 45, cos 45)
    q = jnp.array([0.0, 0.0, np.sqrt(0.5), np.sqrt(0.5)])
    np.testing.assert_allclose(quaternion_to_rotation(q), jw.rotation_z(np.pi / 2), atol=1e-15)
    rotations = jax.vmap(axis_angle_to_rotation)(jax.random.normal(jax.random.PRNGKey(0), (50, 3)))
    back = quaternion_to_rotation(rotation_to_quaternion(rotations))
    np.testing.assert_allclose(back, rotations, atol=1e-13)


def test_axis_angle_roundtrip_including_pi():
    w = jax.random.normal(jax.random.PRNGKey(1), (50, 3))
    w = w / jnp.linalg.norm(w, axis=-1, keepdims=True) * jnp.linspace(0.0, np.pi - 1e-9, 50)[:, None]
    np.testing.assert_allclose(rotation_to_axis_angle(axis_angle_to_rotation(w)), w, atol=1e-8)
    # exactly pi: the axis is recovered up to sign
    w_pi = jnp.array([0.0, np.pi, 0.0])
    np.testing.assert_allclose(jnp.abs(rotation_to_axis_angle(axis_angle_to_rotation(w_pi))), jnp.abs(w_pi), atol=1e-7)


@pytest.mark.parametrize(
    "w",
    [np.zeros(3), np.array([0.0, 0.0, np.pi]), np.array([np.pi, 0.0, 0.0]), np.array([1e-9, 0.0, 0.0])],
    ids=["zero", "pi-z", "pi-x", "tiny"],
)
def test_gradients_finite_at_singular_points(w):
    def scalar(w):
        X = jw.Transform.from_axis_angle(w, jnp.array([0.1, 0.2, 0.3]))
        return jnp.sum(X.as_axis_angle() ** 2) + jnp.sum(X.log()) + jnp.sum(X.as_quaternion())

    g = jax.grad(scalar)(jnp.asarray(w))
    assert np.all(np.isfinite(g))
    h = jax.jacfwd(lambda w: jw.Transform.from_axis_angle(w).rotation)(jnp.asarray(w))
    assert np.all(np.isfinite(h))


def test_batching_over_leading_axes():
    w = jax.random.normal(jax.random.PRNGKey(2), (4, 3))
    t = jax.random.normal(jax.random.PRNGKey(3), (4, 3))
    X = jw.Transform.from_axis_angle(w, t)
    assert X.batch_shape == (4,) and len(X) == 4
    p = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(X.apply(p)[2], X[2].apply(p), atol=1e-15)
    XY = X @ X[0]  # broadcast a single transform against a batch
    np.testing.assert_allclose(XY.as_matrix()[3], X[3].as_matrix() @ X[0].as_matrix(), atol=1e-14)
    stacked = jw.Transform.stack([X[0], X[1]])
    np.testing.assert_allclose(stacked.rotation, X.rotation[:2])
    single = jw.Transform.identity()
    np.testing.assert_allclose(single.apply(jnp.ones((7, 3))), jnp.ones((7, 3)))
    under_vmap = jax.vmap(lambda X: X.inverse().apply(p))(X)
    np.testing.assert_allclose(under_vmap[1], X[1].inverse().apply(p), atol=1e-14)


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, 3\)"):
        jw.Transform(jnp.eye(2), jnp.zeros(3))
    with pytest.raises(ValueError, match=r"\(\.\.\., 3\)"):
        jw.Transform(jnp.eye(3), jnp.zeros(2))


def test_float32_without_x64():
    with jax.enable_x64(False):
        X = jw.Transform.from_axis_angle(jnp.array([0.1, 0.2, 0.3], jnp.float32), jnp.ones(3, jnp.float32))
        assert X.rotation.dtype == jnp.float32
        err = jnp.max(jnp.abs((X @ X.inverse()).as_matrix() - jnp.eye(4)))
        assert err < 1e-6


def test_se3_and_se2_maps_match_matrix_exponential():
    """exp/log against scipy's matrix exponential from 1e-9 rad to pi, across the series
    switch (jaxlie 1.5's SE(3) exp is off by |w||v|/2 below |w| = 1e-5; ours is not)."""
    from scipy.linalg import expm

    from jaxwrap._spatial import se2_exp, se2_log, se3_exp

    angles = np.concatenate([np.geomspace(1e-9, 3.1, 60), [0.1 - 1e-12, 0.1 + 1e-12]])
    axis = np.array([0.6, 0.0, 0.8])
    twists = np.concatenate([np.tile([0.3, -0.2, 0.5], (len(angles), 1)), angles[:, None] * axis], axis=1)
    rotations, translations = jax.vmap(se3_exp)(twists)
    logs = jax.vmap(lambda t: jw.Transform.exp(t).log())(twists)
    planar = np.stack([np.full_like(angles, 0.3), np.full_like(angles, -0.2), angles], axis=1)
    units, xys = jax.vmap(se2_exp)(planar)
    planar_logs = jax.vmap(se2_log)(units, xys)
    for k, twist in enumerate(twists):
        M = np.zeros((4, 4))
        M[:3, :3] = np.asarray(jw._spatial.skew(twist[3:]))
        M[:3, 3] = twist[:3]
        E = expm(M)
        np.testing.assert_allclose(rotations[k], E[:3, :3], atol=1e-14)
        np.testing.assert_allclose(translations[k], E[:3, 3], atol=1e-14)
        M2 = np.zeros((3, 3))
        M2[:2, :2] = [[0, -angles[k]], [angles[k], 0]]
        M2[:2, 2] = planar[k, :2]
        E2 = expm(M2)
        np.testing.assert_allclose(units[k], [E2[0, 0], E2[1, 0]], atol=1e-14)
        np.testing.assert_allclose(xys[k], E2[:2, 2], atol=1e-14)
    np.testing.assert_allclose(logs, twists, atol=1e-13)
    np.testing.assert_allclose(planar_logs, planar, atol=1e-13)
