"""Cables and contacts on a configuration's links: a tendon over a joint pulley (moment arm
equal to the pulley radius, length gradient with respect to the radius against central
differences) and the base footprint as a ConvexShapeContact object on a floor."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from modular_robots import planar_3r

import jaxwrap as jw

M = jw.modular


def _tendon(config):
    """A tendon on the +y side of links 1 and 2, 5 mm outside the j2 pulley, over it."""
    r = config.params["j2"]["pulley_radius"]
    b1, s1 = M.module_point(config, "l1", jnp.stack([0.0, r + 0.005, 0.4]))
    b2, s2 = M.module_point(config, "l2", jnp.stack([0.0, r + 0.005, 0.0]))
    body, X_BS, pulley = M.joint_pulley(config, "j2")
    return jw.CableSpan(b1, s1, b2, s2).add_obstacle(body, X_BS, pulley, contact_hint=(0.0, 0.03, 0.0))


def _tendon_outputs(radius, q):
    config = M.with_params(planar_3r(), {"j2": {"pulley_radius": radius}})
    cable = _tendon(config)
    path = jw.solve_cable(cable, M.update_pose(config, q).body_poses)
    return path.length, (path.converged, path.in_contact, jw.moment_arms(M.to_robot_model(config), cable, q))


# One program for the length, its radius derivative, the flags and the moment arms.
_tendon_and_gradient = jax.jit(jax.value_and_grad(_tendon_outputs, has_aux=True))


@pytest.mark.parametrize("q2", [-0.5, -1.0])
def test_tendon_over_a_joint_pulley(q2):
    q = jnp.array([0.3, q2, 0.8])
    (length, (converged, in_contact, arms)), grad = _tendon_and_gradient(0.03, q)
    assert bool(converged) and bool(in_contact[0])
    # Wrapped on a pulley centred on the joint axis and turning with the joint: the moment
    # arm about that joint is the pulley radius; the other joints do not move the tendon.
    np.testing.assert_allclose(arms, [0.0, 0.03, 0.0], atol=1e-12)
    h = 1e-6
    fd = (_tendon_and_gradient(0.03 + h, q)[0][0] - _tendon_and_gradient(0.03 - h, q)[0][0]) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-7)


def test_base_footprint_on_a_floor():
    c = planar_3r(base=M.FreeFlyingBase())
    shape = M.footprint_shape(c)
    np.testing.assert_allclose(shape.points, M.support_polygon(c, jnp.array([0, 0, 0, 0, 0, 0, 1.0, 0, 0, 0]))[0][::-1])
    floor = jw.ConvexShape([[2, -2, 0], [2, 2, 0], [-2, 2, 0], [-2, -2, 0]], body=0)
    contact = jw.ConvexShapeContact(M.to_robot_model(c), floors=[floor], objects=[shape])
    standing = jnp.array([0.3, -0.2, 0.0, 0, 0, 0, 1, 0.3, -0.5, 0.8])
    evaluate = jax.jit(lambda contact, q: (contact.value(q), contact.jacobian(q)))
    np.testing.assert_allclose(evaluate(contact, standing)[0], 0.0, atol=1e-15)
    value, jacobian = evaluate(contact, standing.at[2].set(0.1))
    np.testing.assert_allclose(value[0], -0.1, rtol=1e-12)
    assert jacobian.shape == (5, 9)


def test_moment_arm_design_gradient():
    """The design gradient of a moment arm is a second derivative through the cable solve:
    on the pulley the moment arm is the radius, so its radius derivative is 1 and its
    derivative with respect to the link length 0; with the tendon off the pulley (bent the
    other way) both equal central differences."""

    def arm(design, q):
        radius, length = design
        config = M.with_params(planar_3r(), {"j2": {"pulley_radius": radius}, "l1": {"length": length}})
        cable = _tendon(config).with_settings(smoothness_tolerance=1e-9, curve_segment_accuracy=1e-13)
        return jw.moment_arms(M.to_robot_model(config), cable, q)[1]

    design = jnp.array([0.03, 0.4])
    arm_and_gradient = jax.jit(jax.value_and_grad(arm))
    _, wrapped = arm_and_gradient(design, jnp.array([0.3, -0.5, 0.8]))
    np.testing.assert_allclose(wrapped, [1.0, 0.0], atol=1e-9)
    q_off = jnp.array([0.3, 0.6, 0.8])
    value, off = arm_and_gradient(design, q_off)
    assert float(value) > 0.035  # off the pulley: straight, farther out than r + 5 mm
    h = 1e-6
    fd = [(arm_and_gradient(design + h * e, q_off)[0] - arm_and_gradient(design - h * e, q_off)[0]) / (2 * h) for e in jnp.eye(2)]
    np.testing.assert_allclose(off, fd, rtol=1e-6, atol=1e-8)
    assert float(jnp.max(jnp.abs(off))) > 0.1
