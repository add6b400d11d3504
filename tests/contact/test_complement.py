"""Complement offsets, the hold right-hand-side decoder and the explicit hold (set-up C)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from contact_setups import VALUES

import jaxwrap as jw

DECODED = [c for c in VALUES["cases"] if "decoded" in c]


def test_decoder_on_two_box_test(holds):
    # hpp computeRelativePoseRightHandSide on the rhs of each q_init (section 4.3, set-up C)
    hold = holds["C"]["hold"]
    for case in DECODED:
        floor, obj, X_FO = hold.decode_rhs(jnp.array(case["hold"]))
        expected = case["decoded"]
        assert (int(floor), int(obj)) == (expected["floor"], expected["object"]), case["name"]
        np.testing.assert_allclose(X_FO.translation, expected["translation"], atol=1e-12)
        np.testing.assert_allclose(X_FO.as_quaternion(), expected["quaternion"], atol=1e-12)


def test_decoder_inverts_the_complement(holds):
    # on configurations satisfying the contact, decoding the hold value returns the
    # selected pair and its relative pose X_FO (the object shape frame in the floor frame)
    hold = holds["C"]["hold"]
    keys = jax.random.split(jax.random.PRNGKey(3), 64)

    def check(key):
        k1, k2 = jax.random.split(key)
        q0 = jnp.concatenate([hold.model.random_configuration(k1)[:7], hold.model.random_configuration(k2)[7:]])
        q = jw.project(hold.contact, q0).q
        value = hold.value(q)
        floor, obj, X_FO = hold.decode_rhs(value)
        s = hold.select(q)
        actual = hold.contact.pairs(q).X_FO[s.floor, s.object]
        return floor - s.floor, obj - s.object, X_FO.as_matrix() - actual.as_matrix(), s.inside

    d_floor, d_obj, d_pose, inside = jax.jit(jax.vmap(check))(keys)
    assert bool(jnp.all(inside))
    np.testing.assert_array_equal(d_floor, 0)
    np.testing.assert_array_equal(d_obj, 0)
    # 1e-7: near angle pi hpp's log3 (reproduced) has only sqrt(eps) precision
    np.testing.assert_allclose(d_pose, 0, atol=1e-7)
    assert float(jnp.median(jnp.abs(d_pose))) < 1e-14


def test_complement_offsets_use_2M(holds):
    hold = holds["C"]["hold"]
    M = float(hold.contact.radius)
    case = DECODED[3]  # q_init[3]: floor 1, object 1, inside
    value = hold.complement.value(jnp.array(case["q"]))
    np.testing.assert_allclose(value[:2], [-0.6 + 2 * M, -0.8 + 2 * M], atol=1e-12)


def test_explicit_hold_places_box2(holds):
    # hpp: explicit hold from start (box1 at (0.3,-0.1,0.2), box2 at the origin) with the rhs
    # of q_init[0] puts box2 at (0.8, 0.7, 2.2); with the rhs of q_init[2] at (0.5, 0.25, -1.8)
    hold = holds["C"]["hold"]
    start = jnp.array(VALUES["explicit_hold"]["start"])
    by_name = {c["name"]: c for c in VALUES["cases"]}
    for result in VALUES["explicit_hold"]["results"]:
        rhs = jnp.array(by_name[result["rhs_from"]]["hold"])
        X = hold.object_pose(start, rhs)
        np.testing.assert_allclose(X.translation, result["box2"][:3], atol=1e-12)
        np.testing.assert_allclose(X.rotation, np.eye(3), atol=1e-12)
        # the configuration it describes satisfies the hold with that right-hand side
        q = jnp.concatenate([start[:7], X.translation, X.as_quaternion()])
        np.testing.assert_allclose(hold.value(q), rhs, atol=1e-12)
        # the (implicit) projector also lands on that leaf, moving both boxes minimally
        solution = jw.project(hold, start, rhs)
        assert bool(solution.success)
        np.testing.assert_allclose(hold.value(solution.q), rhs, atol=1e-12)
