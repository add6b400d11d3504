"""Batched placement projection (set-up A: a box bottom on a 2 x 2 table) and its derivatives."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from contact_setups import VALUES, build_setup, free_flyers

import jaxwrap as jw


def starts_near_table(n, seed=0):
    """Box poses above and around the table (|x|, |y| < 1.5: some start off the edge),
    heights 0..1, rotations up to ~1.5 rad."""
    k1, k2 = jax.random.split(jax.random.PRNGKey(seed))
    pos = jax.random.uniform(k1, (n, 3), minval=jnp.array([-1.5, -1.5, 0.0]), maxval=jnp.array([1.5, 1.5, 1.0]))
    rotation = jax.random.normal(k2, (n, 3)) * 0.5
    quat = jax.vmap(lambda w: jw.Transform.from_axis_angle(w).as_quaternion())(rotation)
    return jnp.concatenate([pos, quat], axis=1)


@pytest.fixture(scope="module")
def contact():
    return build_setup("A", jw.ConvexShapeContact)


def test_thousand_starts_land_on_the_table(contact):
    q0 = starts_near_table(1000)
    solution = jax.jit(jax.vmap(lambda q: jw.project(contact, q)))(q0)
    residual = jax.jit(jax.vmap(lambda q: jnp.max(jnp.abs(contact.value(q)))))(solution.q)
    assert float(jnp.mean(residual <= 1e-10)) >= 0.99
    assert float(jnp.mean(solution.success)) >= 0.99
    np.testing.assert_allclose(solution.residual, residual, atol=1e-15)
    # the boxes end up resting on the table, bottom face down, inside it
    ok = np.asarray(solution.success)
    z_axis = jax.vmap(lambda q: contact.model.forward_kinematics(q)[1].rotation[:, 2])(solution.q)
    np.testing.assert_allclose(z_axis[ok], np.tile([0, 0, 1], (ok.sum(), 1)), atol=1e-10)
    np.testing.assert_allclose(solution.q[ok, 2], 0.1, atol=1e-10)
    assert bool(jnp.all(jnp.abs(solution.q[ok, :2]) <= 1 + 1e-9))


def test_hold_right_hand_sides_place_objects(contact):
    # project onto the leaf of another configuration's hold value: same relative pose
    hold = build_setup("A")
    target = jnp.array(VALUES["cases"][2]["q"])  # A3: inside, rotated
    rhs = hold.value(jw.project(hold.contact, target).q)
    starts = starts_near_table(16, seed=1)
    solution = jax.vmap(lambda q: jw.project(hold, q, rhs))(starts)
    # the same from a loop (vmap equals loop)
    np.testing.assert_allclose(jw.project(hold, starts[3], rhs).q, solution.q[3], atol=1e-14)
    assert bool(jnp.all(solution.success))
    values = jax.vmap(hold.value)(solution.q)
    np.testing.assert_allclose(values, jnp.tile(rhs, (16, 1)), atol=1e-12)
    np.testing.assert_allclose(solution.q, jnp.tile(solution.q[:1], (16, 1)), atol=1e-9)


def test_stacked_constraints_and_rhs_forms(contact):
    hold = build_setup("A")
    q0 = starts_near_table(1, seed=2)[0]
    rhs3 = hold.complement.value(q0)
    stacked = jw.project([contact, hold.complement], q0, [None, rhs3])
    assert bool(stacked.success)
    np.testing.assert_allclose(hold.value(stacked.q), jnp.concatenate([jnp.zeros(5), rhs3]), atol=1e-12)
    with pytest.raises(ValueError, match="right-hand side"):
        jw.project([contact, hold.complement], q0, [None, jnp.zeros(2)])
    other = jw.ConvexShapeContact(free_flyers("a", "b"), [jw.ConvexShape([(0, 0, 0), (1, 0, 0), (0, 1, 0)])],
                                  [jw.ConvexShape([(0, 0, 0)], body=1)])
    with pytest.raises(ValueError, match="another model"):
        jw.project([contact, other], q0)


def test_implicit_derivatives_wrt_margin_shape_points_and_rhs(contact):
    q0 = starts_near_table(1, seed=4)[0]

    # raising the margin or the table's points lifts the box by as much, nothing else moves
    table = jnp.array(VALUES["setups"]["A"]["floors"][0]["points"], float)

    def lifted(margin_and_dz):
        margin, dz = margin_and_dz
        floor = jw.ConvexShape(table.at[:, 2].add(dz))
        c = jw.ConvexShapeContact(contact.model, [floor], contact.objects, normal_margin=margin)
        return jw.project(c, q0).q

    dq = jax.jacfwd(lifted)(jnp.zeros(2))
    for dq_k in dq.T:
        np.testing.assert_allclose(dq_k[2], 1.0, atol=1e-12)
        np.testing.assert_allclose(jnp.delete(dq_k, 2), 0.0, atol=1e-12)

    # right-hand side: compare with re-projecting from the solution after a small change
    hold = build_setup("A")
    solution = jw.project(hold, q0, hold.value(q0))
    rhs = hold.value(solution.q)
    J = jax.jacfwd(lambda r: jw.project(hold, solution.q, r).q)(rhs)
    h = 1e-6
    direction = jnp.array([0.0, 0, 0, 0, 0, 0.3, -0.2, 0.1])
    moved = jw.project(hold, solution.q, rhs + h * direction).q
    np.testing.assert_allclose((moved - solution.q) / h, J @ direction, atol=1e-6)


def test_throw_option(contact):
    q0 = starts_near_table(1, seed=5)[0]
    with pytest.raises(Exception, match="not satisfied"):
        jax.block_until_ready(jw.project(contact, q0, max_steps=0, throw=True).q)
