"""Coupled joints (a joint moved by a function of another joint's coordinate), the
`PiecewiseCubic` functions they use, and a ``q`` order other than the bodies' order."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._kinematics import dof_twists, jacobian_from_poses
from jaxwrap._kinematics._functions import PiecewiseCubic
from jaxwrap._kinematics._spec import ModelSpec


def test_simm_spline_reproduces_cubics_and_is_twice_continuous():
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(-2, 2, 9))
    cubic = np.poly1d([0.3, -0.2, 0.5, 0.1])
    f = PiecewiseCubic.simm_spline(x, cubic(x))
    t = np.linspace(x[0], x[-1], 301)
    # Its end conditions match third derivatives of end cubics, so a cubic is exact.
    np.testing.assert_allclose(np.asarray(f(t)), cubic(t), atol=1e-12)
    y = rng.normal(size=9)
    g = PiecewiseCubic.simm_spline(x, y)
    np.testing.assert_allclose(np.asarray(g(x)), y, atol=1e-14)
    second = jax.vmap(jax.grad(jax.grad(g)))
    for knot in x[1:-1]:
        left, right = second(jnp.array([knot - 1e-9, knot + 1e-9]))
        assert abs(float(left - right)) < 1e-6 * (1.0 + abs(float(left)))
    # Beyond the knots: straight lines with the end slopes.
    np.testing.assert_allclose(float(g(x[-1] + 1.0)), y[-1] + float(g.derivative(x[-1])), atol=1e-12)
    np.testing.assert_allclose(
        np.asarray(g.derivative(t)), np.asarray(jax.vmap(jax.grad(g))(jnp.asarray(t))), atol=1e-12
    )


def test_spline_matches_opensim():
    opensim = pytest.importorskip("opensim")
    rng = np.random.default_rng(1)
    for n in (2, 3, 4, 7, 17):
        x, y = np.sort(rng.uniform(-2, 2, n)), rng.normal(size=n)
        spline, linear = opensim.SimmSpline(), opensim.PiecewiseLinearFunction()
        for a, b in zip(x, y):
            spline.addPoint(a, b)
            linear.addPoint(a, b)
        t = np.linspace(-3, 3, 121)
        for theirs, ours in (
            (spline, PiecewiseCubic.simm_spline(x, y)),
            (linear, PiecewiseCubic.piecewise_linear(x, y)),
        ):
            reference = [theirs.calcValue(opensim.Vector(1, float(v))) for v in t]
            np.testing.assert_allclose(np.asarray(ours(t)), reference, atol=1e-13)


@pytest.fixture(scope="module")
def coupled_model():
    knots = np.linspace(-2, 2, 7)
    f = PiecewiseCubic.simm_spline(knots, 0.1 * np.sin(knots))
    g = jw.Polynomial.of([0.2, -0.1, 0.5, 0.1])  # OpenSim's PolynomialFunction
    spec = ModelSpec("coupled")
    for body in ("a/x", "a", "b", "c", "p"):
        spec = spec.add_body(body, mass=1.0, com=(0.1, 0.0, 0.0))
    spec = spec.add_joint("ax", "prismatic", "world", "a/x", axis=(1, 0, 0), coupling=("knee", f))
    spec = spec.add_joint("knee", "revolute", "a/x", "a", axis=(0, 0, 1))
    spec = spec.add_joint(
        "hip", "revolute", "a", "b", axis=(0, 1, 0), placement=jw.Transform(jnp.eye(3), jnp.array([0.0, 0.3, 0.0]))
    )
    spec = spec.add_joint("slide", "prismatic", "b", "c", axis=(0, 0, 1))
    spec = spec.add_joint("moving", "revolute", "c", "p", axis=(1, 1, 0), coupling=("hip", g))
    return jw.RobotModel.from_spec(spec.with_coordinate_order(["slide", "hip", "knee"]))


def test_polynomial_values_and_derivatives():
    """`jw.Polynomial` against NumPy's polyval and polyder, scaled, and jax's own
    derivative, in any shape."""
    coefficients = [0.3, -1.2, 0.5, 2.0, -0.7]
    f = jw.Polynomial.of(coefficients)
    x = jnp.linspace(-3.0, 3.0, 13).reshape(13, 1)
    np.testing.assert_allclose(np.asarray(f(x)), np.polyval(coefficients, np.asarray(x)), rtol=1e-14)
    np.testing.assert_allclose(
        np.asarray(f.derivative(x)), np.polyval(np.polyder(coefficients), np.asarray(x)), rtol=1e-13
    )
    np.testing.assert_allclose(
        np.asarray(jax.vmap(jax.grad(f))(x[:, 0])), np.asarray(f.derivative(x[:, 0])), rtol=1e-13
    )
    np.testing.assert_allclose(np.asarray(f.scaled(2.5)(x)), 2.5 * np.asarray(f(x)), rtol=1e-14)
    assert float(jw.Polynomial.of([4.0]).derivative(1.0)) == 0.0
    with pytest.raises(ValueError, match="finite"):
        jw.Polynomial.of([1.0, np.nan])


def test_coupled_model_structure(coupled_model):
    model = coupled_model
    assert model.joint_names == ("slide", "hip", "knee")
    assert (model.nq, model.nv) == (3, 3)
    assert len(model.couplings) == 2 and len(model.joint_functions) == 2
    q = jnp.array([0.1, -0.4, 0.7])
    np.testing.assert_allclose(np.asarray(jw.integrate(model, q, jnp.array([1.0, 2.0, 3.0]))), [1.1, 1.6, 3.7])
    np.testing.assert_allclose(np.asarray(jw.difference(model, q, q + 1.0)), np.ones(3))
    assert jw.neutral(model).shape == (3,)


def test_coupled_jacobians_equal_autodiff(coupled_model):
    model = coupled_model
    point = jnp.array([0.1, -0.2, 0.3])
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    qs = jax.vmap(lambda k: jax.random.uniform(k, (3,), minval=-1.5, maxval=1.5))(keys)
    bodies = jnp.arange(1, model.num_bodies)
    v = jnp.array([0.3, -0.2, 0.5])

    @jax.jit
    def compare(q):
        J = jax.vmap(lambda b: jw.jacobian(model, q, b, point))(bodies)
        origin = jax.vmap(lambda b: jw.jacobian(model, q, b))(bodies)
        reference = jax.jacfwd(lambda q: jw.forward_kinematics(model, q).apply(point)[1:])(q)
        return J[:, :3], reference, jw.body_velocities(model, q, v)[1:, 0], origin[:, 3:] @ v

    J, reference, angular, expected = jax.vmap(compare)(qs)
    np.testing.assert_allclose(np.asarray(J), np.asarray(reference), atol=1e-12)
    np.testing.assert_allclose(np.asarray(angular), np.asarray(expected), atol=1e-12)


def test_coupled_model_errors_and_gradients(coupled_model):
    model = coupled_model
    with pytest.raises(ValueError, match="coupled joints"):
        dof_twists(model, jw.forward_kinematics(model, jnp.zeros(3)))
    with pytest.raises(ValueError, match="pass q="):
        jacobian_from_poses(model, jw.forward_kinematics(model, jnp.zeros(3)), 4)
    spec = ModelSpec("bad").add_body("a").add_body("b")
    spec = spec.add_joint("j", "revolute", "world", "a")
    f = PiecewiseCubic.constant(0.2)
    with pytest.raises(ValueError, match="source joint 'nope' is not defined"):
        jw.RobotModel.from_spec(spec.add_joint("c", "prismatic", "a", "b", coupling=("nope", f)))
    with pytest.raises(ValueError, match="only revolute and prismatic"):
        spec.add_joint("c", "spherical", "a", "b", coupling=("j", f))
    with pytest.raises(ValueError, match="coupling must be"):
        spec.add_joint("c", "prismatic", "a", "b", coupling=("j", 0.2))
    with pytest.raises(ValueError, match="coordinate order"):
        jw.RobotModel.from_spec(spec.add_joint("k", "revolute", "a", "b").with_coordinate_order(["k"]))
    with pytest.raises(ValueError, match="x must increase"):
        PiecewiseCubic.simm_spline([0.0, 0.0, 1.0], [1.0, 2.0, 3.0])
    # Gradients reach the spline values through the kinematics.
    q = jnp.array([0.1, -0.4, 0.7])

    def tip_x(functions):
        moved = eqx.tree_at(lambda m: m.joint_functions, model, functions)
        return moved.forward_kinematics(q)[model.body_index("a")].translation[0]

    grad = jax.grad(tip_x)(model.joint_functions)
    h = 1e-6
    bumped = model.joint_functions[0].y.at[3].add(h)
    functions = (
        PiecewiseCubic(model.joint_functions[0].knots, bumped, *[getattr(model.joint_functions[0], c) for c in "bcd"]),
        model.joint_functions[1],
    )
    fd = (tip_x(functions) - tip_x(model.joint_functions)) / h
    np.testing.assert_allclose(float(grad[0].y[3]), float(fd), atol=1e-6)
