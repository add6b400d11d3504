"""`jw.moment_arms` of one cable takes its moment arms from the solved path's forces
(docs/cable.md#moment-arms): they equal ``-dL/dv`` by implicit differentiation of the
length on a model with a floating base at random SO(3) orientations, a revolute joint,
a prismatic joint and a coupled joint that turns an ellipsoid, with the cable over that
ellipsoid, a cylinder on the moving elbow axis and a via point. A moment arm's design
gradient now runs in reverse mode on integrated surfaces too, and equals central
differences. Invalid input gives NaN moment arms; bad arguments a clear error."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import jaxlie
import numpy as np
import pytest

import jaxwrap as jw

SETTINGS = dict(smoothness_tolerance=1e-11, curve_segment_accuracy=1e-12, max_iterations=100)
NUM = 8


def arm():
    T = jw.Transform.from_translation
    b = jw.RobotModelBuilder("arm")
    for name in ("humerus", "cam", "forearm", "hand"):
        b = b.add_body(name, mass=1.0, com=(0, -0.1, 0))
    b = b.add_joint("shoulder", "floating", "world", "humerus")
    b = b.add_joint("elbow", "revolute", "humerus", "forearm", placement=T([0, -0.3, 0]), axis=(0, 0, 1))
    # The ellipsoid's mount turns with the elbow, by 0.3 rad per rad.
    b = b.add_joint(
        "cam",
        "revolute",
        "humerus",
        "cam",
        placement=T([-0.028, -0.22, 0]),
        axis=(0, 0, 1),
        coupling=("elbow", jw.Polynomial.of([0.3, 0.0])),
    )
    b = b.add_joint("wrist", "prismatic", "forearm", "hand", placement=T([0, -0.05, 0]), axis=(0, 1, 0))
    model = b.build()
    humerus, cam, forearm, hand = (model.body_index(n) for n in ("humerus", "cam", "forearm", "hand"))
    cable = (
        jw.CableSpan(humerus, [-0.03, -0.08, 0.0], hand, [-0.02, -0.1, 0.01])
        .add_obstacle(
            cam, jw.Transform.identity(), jw.Ellipsoid(jnp.array([0.01, 0.05, 0.02])), contact_hint=[-0.01, 0, 0]
        )
        .add_obstacle(humerus, T([0, -0.3, 0]), jw.Cylinder(0.022), contact_hint=[-0.022, 0, 0], side=[-0.05, 0, 0])
        .add_via_point(forearm, [-0.026, -0.03, 0.005])
        .with_settings(**SETTINGS)
    )
    return model, cable


def configurations(model, key):
    k1, k2, k3, k4 = jax.random.split(key, 4)
    rotation = jax.vmap(lambda k: jaxlie.SO3.sample_uniform(k).wxyz)(jax.random.split(k1, NUM))
    position = jax.random.uniform(k2, (NUM, 3), minval=-1.0, maxval=1.0)
    elbow = jax.random.uniform(k3, (NUM, 1), minval=0.2, maxval=1.6)
    wrist = jax.random.uniform(k4, (NUM, 1), minval=-0.02, maxval=0.02)
    # The floating joint's q: translation then quaternion (docs/conventions.md).
    q = jnp.concatenate([position, rotation[:, 1:], rotation[:, :1], elbow, wrist], axis=1)
    assert q.shape[1] == model.nq
    return q


@pytest.fixture(scope="module")
def setup():
    model, cable = arm()
    return model, cable, configurations(model, jax.random.PRNGKey(3))


def test_moment_arms_equal_implicit_derivatives_of_the_length(setup):
    model, cable, q = setup

    def both(model, cable, q):
        path = jw.solve_cable(cable, jw.forward_kinematics(model, q))

        def length(v):
            return jw.solve_cable(cable, jw.forward_kinematics(model, jw.integrate(model, q, v))).length

        implicit = -jax.grad(length)(jnp.zeros(model.nv))
        # jw.moment_arms(model, cable, q) is this on its own solve (one solve fewer here).
        return jw.moment_arms_from_paths(model, cable, q, path), implicit, path.converged, path.in_contact

    # One more configuration, invalid (NaN): its moment arms are NaN.
    q = jnp.concatenate([q, q[:1].at[0, 6].set(jnp.nan)])
    arms, implicit, converged, contact = jax.jit(jax.vmap(both, in_axes=(None, None, 0)))(model, cable, q)
    assert bool(jnp.all(jnp.isnan(arms[-1])))
    arms, implicit, converged, contact = (x[:-1] for x in (arms, implicit, converged, contact))
    assert bool(jnp.all(converged))
    assert bool(jnp.any(contact[:, 0])) and bool(jnp.any(contact[:, 1]))  # both obstacles wrap somewhere
    np.testing.assert_allclose(arms, implicit, rtol=1e-8, atol=1e-10)
    # The floating base's six coordinates carry nothing: a cable from the humerus to the
    # hand is in equilibrium when the whole arm moves.
    np.testing.assert_allclose(arms[:, :6], 0.0, atol=1e-10)
    assert float(jnp.min(jnp.abs(arms[:, 6]))) > 1e-3  # the elbow's
    assert float(jnp.min(jnp.abs(arms[:, 7]))) > 0.1  # the wrist's slide


def test_a_moment_arms_design_gradient_runs_in_reverse_mode(setup):
    """The elbow moment arm's derivative in the ellipsoid's radii: reverse mode (which
    through the length's Hessian could not pass the integrator's loop) agrees with central
    differences."""
    model, cable, q = setup
    q = q[:2]

    def elbow_arm(radii, q):
        thicker = eqx.tree_at(lambda c: c.obstacles[0].surface.radii, cable, radii)
        return jw.moment_arms(model, thicker, q)[6]

    radii = cable.obstacles[0].surface.radii
    reverse = jax.jit(jax.vmap(jax.grad(elbow_arm), in_axes=(None, 0)))(radii, q)
    h = 1e-6
    steps = h * jnp.eye(3)
    arm_at = jax.jit(jax.vmap(jax.vmap(elbow_arm, in_axes=(0, None)), in_axes=(None, 0)))
    central = (arm_at(radii + steps, q) - arm_at(radii - steps, q)) / (2 * h)
    np.testing.assert_allclose(reverse, central, rtol=1e-4, atol=1e-6)
    assert float(jnp.max(jnp.abs(reverse))) > 1e-3


def test_moment_arms_from_a_path_check_what_they_are_given(setup, library_checks_only):
    model, _, q = setup
    straight = jw.CableSpan(1, [0.0, -0.1, 0.0], 3, [0.0, -0.1, 0.0])
    poses = jw.forward_kinematics(model, q[0])
    path = jw.solve_cable(straight, poses)
    np.testing.assert_allclose(
        jw.moment_arms_from_paths(model, straight, q[0], path), jw.moment_arms(model, straight, q[0])
    )
    batch = jax.vmap(jw.solve_cable, in_axes=(None, 0))(
        straight, jax.vmap(jw.forward_kinematics, in_axes=(None, 0))(model, q)
    )
    with pytest.raises(ValueError, match="jax.vmap"):
        jw.moment_arms_from_paths(model, straight, q[0], batch)
    with pytest.raises(ValueError, match="CablePath"):
        jw.moment_arms_from_paths(model, straight, q[0], path.length)
    more = jw.Transform(
        jnp.concatenate([poses.rotation, poses.rotation[:1]]),
        jnp.concatenate([poses.translation, poses.translation[:1]]),
    )
    with pytest.raises(ValueError, match="6 body poses"):
        jw.moment_arms_from_paths(model, straight, q[0], jw.solve_cable(straight, more))
