"""Derivatives of shooting: jax.grad / jax.jacfwd against central differences, with
respect to every surface parameter and to the start point, tangent and length."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap._surfaces as js

ACCURACY = 1e-12
H = 1e-5


def _implicit_fn(x, p):
    return 1 - (x[0] / p[0]) ** 2 - (x[1] / p[1]) ** 2 - (x[2] / p[2]) ** 2 - p[3] * x[0] * x[1]


# name -> (parameter vector, surface from parameters, start point, start tangent, length)
CASES = {
    "sphere": (jnp.array([1.3]), lambda q: js.Sphere(q[0]), (1.0, 0.8, 0.3), (0.0, 0.3, 1.0), 2.0),
    "cylinder": (jnp.array([0.8]), lambda q: js.Cylinder(q[0]), (0.7, 0.4, 0.1), (0.2, 0.9, 0.4), 2.5),
    "ellipsoid": (jnp.array([1.5, 2.6, 1.0]), js.Ellipsoid, (1.2, 0.8, 0.4), (-0.3, 1.0, 0.2), 2.0),
    "torus": (jnp.array([2.0, 0.5]), lambda q: js.Torus(q[0], q[1]), (2.3, 0.5, 0.3), (0.1, 0.4, 1.0), 1.8),
    "implicit": (
        jnp.array([1.2, 0.9, 1.4, 0.2]),
        lambda q: js.ImplicitSurface(_implicit_fn, q),
        (0.9, 0.5, 0.6),
        (-0.4, 1.0, 0.3),
        1.5,
    ),
}

_W = np.random.default_rng(0).normal(size=22)


def _summary(g):
    """A fixed random functional of everything the cable solver reads."""
    parts = jnp.concatenate(
        [g.p_SQ, g.tangent_Q, g.normal_Q, g.jacobi_Q, g.jacobi_dot_Q, g.curvatures_Q,
         g.torsion_Q[None], g.p_SP, g.curvatures_P, g.torsion_P[None]]
    )
    return jnp.dot(jnp.asarray(_W[: parts.size]), parts)


def _central_differences(f, x):
    eye = jnp.eye(x.size, dtype=x.dtype)
    plus = jax.vmap(lambda e: f(x + H * e))(eye)
    minus = jax.vmap(lambda e: f(x - H * e))(eye)
    return (plus - minus) / (2 * H)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_wrt_surface_parameters(name):
    q, make, p, t, length = CASES[name]
    p, t = jnp.asarray(p), jnp.asarray(t)

    def value(q):
        return _summary(make(q).shoot_geodesic(p, t, length, accuracy=ACCURACY))

    grad, fd = jax.jit(lambda q: (jax.grad(value)(q), _central_differences(value, q)))(q)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["torus", "sphere"])
def test_jacobians_wrt_start_point_tangent_length(name):
    q, make, p, t, length = CASES[name]
    surface = make(q)
    x = jnp.concatenate([jnp.asarray(p), jnp.asarray(t), jnp.array([length])])

    def end_state(x):
        g = surface.shoot_geodesic(x[0:3], x[3:6], x[6], accuracy=ACCURACY)
        return jnp.concatenate([g.p_SQ, g.tangent_Q, g.jacobi_Q])

    fwd, rev, fd = jax.jit(
        lambda x: (jax.jacfwd(end_state)(x), jax.jacrev(end_state)(x), _central_differences(end_state, x).T)
    )(x)
    np.testing.assert_allclose(rev, fwd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fwd, fd, rtol=1e-5, atol=1e-6)


def test_grad_under_vmap():
    """Batched gradients equal per-item gradients (one compile for the batch)."""
    q, make, p, t, _ = CASES["ellipsoid"]
    lengths = jnp.array([0.0, 1.0, 2.5])

    def value(q, length):
        return _summary(make(q).shoot_geodesic(jnp.asarray(p), jnp.asarray(t), length))

    g = jax.jit(jax.vmap(jax.grad(value), in_axes=(None, 0)))(q, lengths)
    single = jax.jit(jax.grad(value))
    for k, length in enumerate(lengths):
        np.testing.assert_allclose(g[k], single(q, length), rtol=1e-10, atol=1e-12)
