"""Derivatives of solved paths (implicit differentiation of the converged path) against
central finite differences of re-solved lengths, for every array leaf of the cable and the
body poses; forward and reverse mode agree; no NaN across touchdown and liftoff."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import jaxlie
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree
from scenes import I3, Rx90, Ry90, T, poses

import jaxwrap as jw

# The hints' wraps (Simbody's start): the scenes are built around them.
SETTINGS = dict(curve_segment_accuracy=1e-13, smoothness_tolerance=1e-11, max_iterations=100, cold_start="hints")


def analytic_scene():
    """Sphere and cylinder on moving bodies, a via point between them."""
    cable = (
        jw.CableSpan(1, [0.1, 0.0, 0.05], 2, [-0.1, 0.2, 0.0])
        .add_obstacle(3, T(I3, [0.0, 0.1, 0.0]), jw.Sphere(0.8), contact_hint=[0.0, -0.8, 0.1])
        .add_via_point(4, [0.05, 0.0, 0.1])
        .add_obstacle(0, T(Rx90, [4.0, -0.4, 0.0]), jw.Cylinder(0.5), contact_hint=[0.0, -0.5, 0.0])
        .with_settings(**SETTINGS)
    )
    body_poses = poses((-2.0, 0.2, 0.1), (6.0, 0.1, -0.2), (0.0, -0.3, 0.0), (2.0, 0.6, 0.3))
    rotations = body_poses.rotation.at[3].set(jw.rotation_z(0.3) @ jw.rotation_x(0.2))
    return cable, jw.Transform(rotations, body_poses.translation)


def numerical_scene():
    """Ellipsoid then torus (diffrax-integrated geodesics)."""
    cable = (
        jw.CableSpan(0, [-3.0, 0.3, 0.1], 1, [0.0, 0.0, 0.0])
        .add_obstacle(0, T(I3, [-1.0, -0.6, 0.0]), jw.Ellipsoid(jnp.array([0.6, 0.8, 0.5])), contact_hint=[0.1, 0.8, 0.0])
        .add_obstacle(0, T(Ry90, [1.5, 0.9, 0.0]), jw.Torus(1.0, 0.3), contact_hint=[0.0, -1.3, 0.0])
        .with_settings(**SETTINGS)
    )
    return cable, poses((3.5, 0.2, -0.1))


SCENES = {"analytic": analytic_scene, "numerical": numerical_scene}


@pytest.fixture(scope="module", params=list(SCENES))
def scene(request):
    cable, body_poses = SCENES[request.param]()
    params, static = eqx.partition((cable, body_poses), eqx.is_inexact_array)
    flat, unravel = ravel_pytree(params)

    def length(x):
        cable, body_poses = eqx.combine(unravel(x), static)
        return cable.solve(body_poses).length

    return request.param, cable, body_poses, flat, length


def test_path_is_converged_and_wrapped(scene):
    _, cable, body_poses, _, _ = scene
    path = jax.jit(lambda X: cable.solve(X))(body_poses)
    assert bool(path.converged) and bool(jnp.all(path.in_contact))


def test_gradient_matches_central_differences(scene):
    """Every leaf: stations, X_BS, surface parameters, hints, via stations, body poses."""
    name, _, _, flat, length = scene
    grad = jax.jit(jax.grad(length))(flat)
    h = 1e-5
    steps = h * jnp.eye(flat.size)
    both = jnp.concatenate([flat + steps, flat - steps])
    values = jax.jit(jax.vmap(length))(both)
    fd = (values[: flat.size] - values[flat.size :]) / (2 * h)
    scale = max(1.0, float(jnp.max(jnp.abs(fd))))
    np.testing.assert_allclose(grad, fd, atol=1e-6 * scale, rtol=1e-6, err_msg=name)
    assert float(jnp.max(jnp.abs(grad))) > 0.1  # the scene is sensitive to its parameters


def test_forward_and_reverse_mode_agree(scene):
    """jacfwd and jacrev of a vector output (a contact frame and a unit force) agree, along
    four random directions that mix every leaf of the cable and the body poses."""
    _, cable, body_poses, flat, _ = scene
    params, static = eqx.partition((cable, body_poses), eqx.is_inexact_array)
    _, unravel = ravel_pytree(params)
    directions = jax.random.normal(jax.random.PRNGKey(0), (flat.size, 4)) / np.sqrt(flat.size)

    def outputs(z):
        cable, body_poses = eqx.combine(unravel(flat + directions @ z), static)
        path = cable.solve(body_poses)
        P, Q = path.curve_segment_frames(1)
        return jnp.concatenate([P.translation, Q.rotation[:, 0], path.curve_segment_unit_force(0).reshape(-1)])

    z = jnp.zeros(4)
    forward = jax.jit(jax.jacfwd(outputs))(z)
    reverse = jax.jit(jax.jacrev(outputs))(z)
    np.testing.assert_allclose(forward, reverse, atol=1e-10)
    assert bool(jnp.all(jnp.isfinite(forward))) and float(jnp.max(jnp.abs(forward))) > 1e-3


def test_no_nan_across_touchdown_and_liftoff():
    """A dense sweep of cold solves that lifts the cable off a sphere and puts it back:
    values and gradients stay finite, and the length is continuous."""
    cable = jw.CableSpan(1, [0, 0, 0], 2, [0, 0, 0]).add_obstacle(0, T(I3, [0, -1.5, 0]), jw.Sphere(1.5))

    def length(y):
        X = jw.Transform(jnp.broadcast_to(jnp.eye(3), (3, 3, 3)), jnp.array([[0.0, 0, 0], [-2.0, 0, 0], [2.0, 0, 0]]) + jnp.array([0.0, 1.0, 0.0]) * y)
        return cable.solve(X).length

    ys = jnp.linspace(-0.3, 0.3, 301)  # includes y = 0 exactly (grazing)
    values, grads = jax.jit(jax.vmap(jax.value_and_grad(length)))(ys)
    assert bool(jnp.all(jnp.isfinite(values))) and bool(jnp.all(jnp.isfinite(grads)))
    assert float(jnp.max(jnp.abs(jnp.diff(values)))) < 0.01
    # Above the sphere the cable is straight: L = 4 and dL/dy = 0.
    np.testing.assert_allclose(values[ys > 0], 4.0, atol=1e-12)
    np.testing.assert_allclose(grads[ys > 0], 0.0, atol=1e-12)


@pytest.mark.parametrize("name", list(SCENES))
def test_second_derivatives_match_differences_of_gradients(name):
    """Second order through the implicit rule (a moment arm's design gradient needs it):
    Hessians, forward over reverse, equal central differences of the gradient, and reverse
    over reverse gives the same Hessian (closed-form curves only). The converged root has to carry its own derivative
    inside the rule, or these come out near zero. Directions: two random mixes of every
    leaf (surface parameters included) except the rotation matrices, which turn on SO(3)
    (``R exp(w)``; off the manifold a rotation matrix is not a pose). On the numerical
    scene the first derivative in the corrections comes from the Jacobi fields and the
    second from forward mode through the integrator (docs/cable.md#implicit-differentiation)."""
    cable, body_poses = SCENES[name]()
    params, static = eqx.partition((cable, body_poses), eqx.is_inexact_array)
    flat, unravel = ravel_pytree(params)
    is_rotation = ravel_pytree(
        jax.tree_util.tree_map_with_path(lambda path, x: jnp.full(x.shape, "rotation" in jax.tree_util.keystr(path)), params)
    )[0]
    keys = jax.random.split(jax.random.PRNGKey(1), 2)
    directions = jnp.where(is_rotation[:, None], 0.0, jax.random.normal(keys[0], (flat.size, 2)) / np.sqrt(flat.size))
    turns = jax.random.normal(keys[1], (2, 3))

    def turned(path, x, z):
        if "rotation" not in jax.tree_util.keystr(path):
            return x
        return x @ jaxlie.SO3.exp(z @ turns).as_matrix()

    def length(z):
        moved = unravel(flat + directions @ z)
        moved = jax.tree_util.tree_map_with_path(lambda path, x: turned(path, x, z), moved)
        cable, body_poses = eqx.combine(moved, static)
        return cable.solve(body_poses).length

    z = jnp.zeros(2)
    gradient = jax.grad(length)
    # Central differences at steps h and h/2, combined by Richardson's extrapolation: the
    # numerical scene's third derivatives put a plain central difference 7e-5 off at
    # h = 1e-4 (its error falls as h²). The Hessian (forward over reverse: `jvp` of the
    # gradient along each direction at z) and the 8 gradients the differences need are
    # one batch of one compiled program: `jvp`'s primal output is the gradient itself.
    h = 1e-4
    steps = jnp.array([h, -h, h / 2, -h / 2])
    offsets = (steps[:, None, None] * jnp.eye(2)[None]).reshape(-1, 2)
    points = jnp.concatenate([jnp.zeros((2, 2)), z + offsets])
    tangents = jnp.concatenate([jnp.eye(2), jnp.zeros((8, 2))])
    gradients, hessian_rows = jax.jit(jax.vmap(lambda p, t: jax.jvp(gradient, (p,), (t,))))(points, tangents)
    forward_over_reverse = hessian_rows[:2].T  # column j: the derivative along direction j
    g = gradients[2:].reshape(4, 2, 2)  # (step, direction, component)
    central = lambda i: (g[i] - g[i + 1]) / (2 * steps[i])  # noqa: E731
    fd = (4 * central(2) - central(0)) / 3
    np.testing.assert_allclose(forward_over_reverse, fd.T, rtol=1e-6, atol=1e-8)
    assert float(jnp.max(jnp.abs(fd))) > 0.05
    if name == "analytic":
        # Integrated geodesics' second derivatives are forward mode through the
        # integrator's while loop, which reverse mode cannot differentiate.
        reverse_over_reverse = jax.jit(jax.jacrev(gradient))(z)
        np.testing.assert_allclose(reverse_over_reverse, forward_over_reverse, rtol=1e-9, atol=1e-11)
