"""Jacobians: finite differences along integrate, hpp's analytic formula, vmap, NaN-freedom."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from contact_setups import build_setup

import jaxwrap as jw
from jaxwrap._contact._log3 import jlog3
from jaxwrap._misc import skew

N_RANDOM = 48


def random_configurations(model, seed, n=N_RANDOM):
    keys = jax.random.split(jax.random.PRNGKey(seed), n)
    q = jax.vmap(model.random_configuration)(keys)
    return q.at[:, 2].multiply(0.5)


def margins(hold, q):
    """Distance of `q` to the nearest switch: in-plane boundary, pair tie, and hpp's log3
    branch within 1e-2 of angle pi (precise to sqrt(eps) only, as upstream)."""
    g = hold.contact.pairs(q)
    s = hold.select(q)
    dist = jnp.sort(g.selection_distance.reshape(-1))
    gap = dist[1] - dist[0] if dist.size > 1 else jnp.inf
    angle = jnp.linalg.norm(g.v6[s.floor, s.object, 3:])
    return jnp.minimum(jnp.minimum(jnp.abs(g.in_plane_distance[s.floor, s.object]), gap), jnp.pi - 1e-2 - angle)


@pytest.mark.parametrize("setup", ["C", "B_trapeze"])
def test_jacobian_equals_central_differences_away_from_switches(setup):
    hold = build_setup(setup)
    q = random_configurations(hold.model, seed=1)

    def check(q):
        J = hold.jacobian(q)
        h = 1e-5

        def column(e):
            return (hold.value(hold.model.integrate(q, h * e)) - hold.value(hold.model.integrate(q, -h * e))) / (2 * h)

        fd = jax.vmap(column, out_axes=1)(jnp.eye(hold.model.nv))
        jacfwd = jax.jacfwd(lambda v: hold.value_with_selection(hold.model.integrate(q, v), hold.select(q)))
        return J, fd, hold.finite_difference_central(q), margins(hold, q), jacfwd(jnp.zeros(hold.model.nv))

    J, fd, fd_hpp_rule, margin, jacfwd = jax.jit(jax.vmap(check))(q)
    away = np.asarray(margin) > 0.1
    assert away.sum() >= N_RANDOM // 2
    np.testing.assert_allclose(J[away], fd[away], rtol=0, atol=1e-7)
    # hpp's step rule (eps * |q[j]|, eps = sqrt(machine eps)) is coarser; test-jacobians.cc bound 1.22e-4
    np.testing.assert_allclose(J[away], fd_hpp_rule[away], rtol=0, atol=1.22e-4)
    np.testing.assert_allclose(J, jacfwd, rtol=0, atol=1e-14)


def test_jacobian_equals_hpp_analytic_formula_two_boxes():
    # section 2.4: J_trans = Rf^T([R1^T c1]x w1 - v1 + R1^T R2 v2 - R1^T [c2]x R2 w2),
    # J_rot = Jlog(r) Rf^T(-w1 + R1^T R2 w2), body-frame joint Jacobians of the two free-flyers
    hold = build_setup("C")
    contact = hold.contact
    nv = hold.model.nv
    eye = jnp.eye(nv)
    v1, w1, v2, w2 = eye[0:3], eye[3:6], eye[6:9], eye[9:12]

    def check(q):
        s = hold.select(q)
        X = hold.model.forward_kinematics(q)
        R1, t1, R2, t2 = X.rotation[1], X.translation[1], X.rotation[2], X.translation[2]
        floor_frames = jw.Transform.stack([f.frame for f in contact.floors])
        object_frames = jw.Transform.stack([o.frame for o in contact.objects])
        Rf, Co = floor_frames.rotation[s.floor], object_frames.translation[s.object]
        c2 = R2 @ Co
        c1 = c2 + t2 - t1
        J_trans = Rf.T @ (skew(R1.T @ c1) @ w1 - v1 + R1.T @ R2 @ v2 - R1.T @ skew(c2) @ R2 @ w2)
        r = contact.pairs(q).v6[s.floor, s.object, 3:]
        J_rot = jlog3(r) @ Rf.T @ (-w1 + R1.T @ R2 @ w2)
        J6 = jnp.concatenate([J_trans, J_rot])
        outside = jnp.where(s.inside, 0.0, 1.0)
        expected = jnp.concatenate(
            [J6[:1], outside * J6[1:3], J6[4:6], (1 - outside) * J6[1:3], J6[3:4]]
        )
        return hold.jacobian(q) - expected

    diff = jax.jit(jax.vmap(check))(random_configurations(hold.model, seed=2))
    np.testing.assert_allclose(diff, 0, atol=1e-12)


def test_vmap_equals_loop():
    hold = build_setup("B_trapeze")
    q = random_configurations(hold.model, seed=3, n=8)
    f = jax.jit(lambda q: hold.value_and_jacobian(q))
    batched = jax.jit(jax.vmap(lambda q: hold.value_and_jacobian(q)))(q)
    for k in range(q.shape[0]):
        single = f(q[k])
        np.testing.assert_allclose(batched[0][k], single[0], rtol=0, atol=1e-15)
        np.testing.assert_allclose(batched[1][k], single[1], rtol=0, atol=1e-15)


@pytest.mark.parametrize("smoothing", [0.0, 0.05])
def test_no_nan_over_a_sweep_across_edges_and_pair_switches(smoothing):
    # the trapeze slides along y = 0 and y = 5 (a vertex line) from the square across the
    # shared edge x = 0 into the pentagon and out of it, at heights crossing the floor plane
    hold = build_setup("B_trapeze", smoothing=smoothing)
    xs = jnp.linspace(-6.0, 6.0, 241)
    qs = []
    for y, z in [(0.0, 0.1), (5.0, 0.0), (-6.0, -0.2)]:
        qs.append(jnp.stack([xs, jnp.full_like(xs, y), jnp.full_like(xs, z)], axis=1))
    positions = jnp.concatenate(qs)
    q = jnp.concatenate([positions, jnp.tile(jnp.array([0.0, 0, 0, 1]), (positions.shape[0], 1))], axis=1)

    def evaluate(q):
        value, J = hold.value_and_jacobian(q)
        grad_points = jax.grad(
            lambda pts: jnp.sum(
                jw.ConvexShapeContactHold(hold.model, [f.reverse() for f in hold.contact.floors],
                                          [jw.ConvexShape(pts, body=1)], smoothing=smoothing).value(q)
            )
        )(hold.contact.objects[0].points)
        return value, J, grad_points

    value, J, grad_points = jax.jit(jax.vmap(evaluate))(q)
    selection = jax.vmap(hold.select)(q)
    assert len(set(np.asarray(selection.floor).tolist())) == 2  # both floors were selected
    assert len(set(np.asarray(selection.inside).tolist())) == 2  # inside and outside
    for array in (value, J, grad_points):
        assert bool(jnp.all(jnp.isfinite(array)))
