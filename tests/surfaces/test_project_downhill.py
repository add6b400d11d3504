"""`project_downhill` (Simbody's ContactGeometry::projectDownhillToNearestPoint, where
CableSpan places a hinted obstacle's initial contact point) against values of the Simbody
3.9 routine in the OpenSim 4.6 wheel (called through ctypes), and its defining property:
the surface point whose normal passes through the query point."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap._surfaces as js

# (surface, query point, Simbody's projectDownhillToNearestPoint(query))
SIMBODY = [
    (js.Ellipsoid(jnp.array([0.3, 0.15, 0.2])), [0.5, 0.4, 0.1],
     [0.24972935625185627, 0.07986152034971424, 0.030723128426948198]),
    (js.Ellipsoid(jnp.array([0.3, 0.15, 0.2])), [0.05, 0.02, 0.01],
     [0.0637525492217019, 0.145847586048985, 0.019431235363828552]),
    (js.Ellipsoid(jnp.array([0.3, 0.15, 0.2])), [-0.2, 0.3, -0.25],
     [-0.13381962500875394, 0.10073210764703788, -0.11833000543387834]),
    (js.Torus(0.2, 0.08), [0.4, 0.1, 0.2], [0.2505214380699396, 0.0626303595174849, 0.05485510184549359]),
    (js.Torus(0.2, 0.08), [0.1, -0.05, 0.02], [0.10910297885006887, -0.05455148942503443, 0.01769210159497579]),
    (js.Torus(0.2, 0.08), [-0.15, 0.2, -0.1], [-0.14146625258399798, 0.18862167011199732, -0.07155417527999328]),
]


@pytest.mark.parametrize("surface, query, expected", SIMBODY)
def test_matches_simbody(surface, query, expected):
    np.testing.assert_allclose(surface.project_downhill(jnp.asarray(query)), expected, atol=1e-14)


@pytest.mark.parametrize("surface", [js.Sphere(0.3), js.Cylinder(0.25), js.Ellipsoid(jnp.array([0.3, 0.15, 0.2])),
                                     js.Torus(0.2, 0.08)], ids=["sphere", "cylinder", "ellipsoid", "torus"])
def test_orthogonal_foot_point(surface):
    q = jnp.asarray(np.random.default_rng(0).uniform(-0.5, 0.5, size=(64, 3)))
    x = jax.jit(jax.vmap(surface.project_downhill))(q)
    f = jax.vmap(surface.implicit)(x)
    n = jax.vmap(surface.normal)(x)
    np.testing.assert_allclose(f, 0.0, atol=1e-13)
    np.testing.assert_allclose(jnp.cross(q - x, n), 0.0, atol=1e-12)
    if isinstance(surface, (js.Sphere, js.Cylinder)):  # there it is the radial projection
        np.testing.assert_allclose(x, jax.vmap(surface.project)(q), atol=1e-13)


@pytest.mark.parametrize("surface", [js.Sphere(0.3), js.Cylinder(0.25)], ids=["sphere", "cylinder"])
def test_closed_form_foot_is_simbodys_iteration(surface):
    """The sphere's and cylinder's closed-form foot point is where Simbody's iteration
    (the generic damped Newton of `AbstractSurface`) ends wherever that reaches the
    surface; deep inside, near a cylinder's axis, its 31 bounded steps can stop short."""
    rng = np.random.default_rng(1)
    q = rng.normal(size=(64, 3))
    q = q * rng.uniform(0.05, 2.0, size=(64, 1)) / np.linalg.norm(q, axis=-1, keepdims=True)
    generic = jax.jit(jax.vmap(lambda x: js.AbstractSurface.project_downhill(surface, x)))(jnp.asarray(q))
    reached = np.abs(jax.vmap(surface.implicit)(generic)) <= 1e-13
    assert reached.mean() > 0.9
    closed = jax.vmap(surface.project_downhill)(jnp.asarray(q))
    np.testing.assert_allclose(closed[reached], generic[reached], atol=1e-14)
