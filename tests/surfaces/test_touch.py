"""The inside wrap (`Sphere/Cylinder.shortest_touch`) against a brute-force minimiser:
random end points around spheres and cylinders (some segments crossing the solid, some
end points inside it), lengths to 1e-10 of scipy's bounded minimisation over the circle
(docs/surfaces.md#inside-wrap), and first and second derivatives against differences."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import jaxwrap as jw

NUM = 64


def _reference(radius, a2, b2, dz):
    """min over the circle of sqrt((|a - t| + |t - b|)^2 + dz^2), or the straight line
    where the segment reaches the disc (brute force, then bounded Brent)."""
    d = b2 - a2
    s = np.clip(-(a2 @ d) / (d @ d), 0, 1)
    if min(np.linalg.norm(a2), np.linalg.norm(b2), np.linalg.norm(a2 + s * d)) <= radius:
        return np.sqrt(d @ d + dz**2)

    def g(phi):
        t = radius * np.array([np.cos(phi), np.sin(phi)])
        return np.linalg.norm(a2 - t) + np.linalg.norm(b2 - t)

    grid = np.linspace(-np.pi, np.pi, 4001)
    k = int(np.argmin([g(p) for p in grid]))
    best = minimize_scalar(g, bounds=(grid[k] - 0.01, grid[k] + 0.01), method="bounded", options={"xatol": 1e-13})
    return np.sqrt(best.fun**2 + dz**2)


@pytest.fixture(scope="module")
def cases():
    rng = np.random.default_rng(7)
    a = rng.uniform(-3, 3, (NUM, 3))
    b = rng.uniform(-3, 3, (NUM, 3))
    radius = rng.uniform(0.5, 1.5, NUM)
    return a, b, radius


@pytest.mark.parametrize("kind", ["sphere", "cylinder"])
def test_touch_lengths_match_brute_force(cases, kind):
    a, b, radius = cases
    surface = jw.Sphere if kind == "sphere" else jw.Cylinder
    touches, _, length = jax.jit(jax.vmap(lambda r, x, y: surface(r).shortest_touch(x, y)))(radius, a, b)
    expected = []
    for r, x, y in zip(radius, a, b):
        if kind == "cylinder":
            expected.append(_reference(r, x[:2], y[:2], y[2] - x[2]))
        else:  # the plane through the centre and both points
            e0 = x / np.linalg.norm(x)
            e1 = y - (y @ e0) * e0
            e1 /= np.linalg.norm(e1)
            expected.append(_reference(r, np.array([x @ e0, 0.0]), np.array([y @ e0, y @ e1]), 0.0))
    np.testing.assert_allclose(np.asarray(length), expected, rtol=1e-10)
    assert 0.2 < float(jnp.mean(touches)) < 0.9  # both regimes sampled


def test_touch_derivatives_match_differences():
    """d length / d(end point, radius) and the second derivative along a direction."""
    a = jnp.array([2.0, 0.7, 0.3])
    b = jnp.array([0.4, 2.2, -0.5])

    def length(x):
        return jw.Cylinder(x[6]).shortest_touch(x[:3], x[3:6])[2] + jw.Sphere(x[6]).shortest_touch(x[:3], x[3:6])[2]

    x = jnp.concatenate([a, b, jnp.array([0.9])])
    direction = jnp.linspace(-1.0, 1.0, 7)
    grad = jax.grad(length)(x)
    h = 1e-6
    fd = (length(x + h * direction) - length(x - h * direction)) / (2 * h)
    np.testing.assert_allclose(float(grad @ direction), float(fd), rtol=1e-7)
    second = jax.jvp(lambda y: jax.grad(length)(y) @ direction, (x,), (direction,))[1]
    fd2 = (jax.grad(length)(x + h * direction) @ direction - jax.grad(length)(x - h * direction) @ direction) / (2 * h)
    np.testing.assert_allclose(float(second), float(fd2), rtol=1e-5)
