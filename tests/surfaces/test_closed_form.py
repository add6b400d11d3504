"""Sphere and cylinder: closed-form geodesics (docs/surfaces.md#closed-forms) against the generic
diffrax path on an `ImplicitSurface` with the same f (issue: <= 1e-8 at accuracy 1e-10)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap._surfaces as js

ACCURACY = 1e-10
FIELDS = ("R_SP", "p_SP", "R_SQ", "p_SQ", "jacobi_Q", "jacobi_dot_Q",
          "curvatures_P", "curvatures_Q", "torsion_P", "torsion_Q")

PAIRS = {
    "sphere": (js.Sphere(1.3), js.ImplicitSurface(lambda x, r: r**2 - x @ x, 1.3)),
    "cylinder": (
        js.Cylinder(0.8),
        js.ImplicitSurface(lambda x, r: r**2 - x[0] ** 2 - x[1] ** 2, 0.8),
    ),
}


def _batched_shoot(surface, accuracy=1e-9):
    return jax.jit(jax.vmap(lambda p, t, l: surface.shoot_geodesic(p, t, l, accuracy=accuracy)))


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_closed_form_matches_generic_integration(name, cases):
    closed, generic = PAIRS[name]
    # Lengths from 0 to about one and a half turns.
    points, tangents, lengths = cases(closed, 1, 12, [0.0, 0.3, 1.0, 2.5, 4.0, 7.0])
    points = points + 1e-3  # slightly off the surface: both paths project the same way
    a = _batched_shoot(closed)(points, tangents, lengths)
    b = _batched_shoot(generic, ACCURACY)(points, tangents, lengths)
    assert bool(jnp.all(b.converged))
    for field in FIELDS:
        np.testing.assert_allclose(getattr(b, field), getattr(a, field), atol=1e-8, err_msg=field)


def test_sphere_great_circle_values():
    """Quarter turn from (r,0,0) along +y on a sphere of radius 2 (frames per docs/surfaces.md#darboux-frame)."""
    r = 2.0
    g = js.Sphere(r).shoot_geodesic(jnp.array([r, 0, 0]), jnp.array([0.0, 1, 0]), np.pi * r / 2)
    np.testing.assert_allclose(g.p_SQ, [0, r, 0], atol=1e-15)
    np.testing.assert_allclose(g.R_SQ, np.array([[-1, 0, 0], [0, 1, 0], [0, 0, -1]]).T, atol=1e-15)
    np.testing.assert_allclose(g.jacobi_Q, [0, r], atol=1e-15)
    np.testing.assert_allclose(g.jacobi_dot_Q, [-1 / r, 0], atol=1e-15)
    np.testing.assert_allclose(g.curvatures_P, [-1 / r, -1 / r])
    assert g.num_steps == 0 and bool(g.converged)


def test_cylinder_helix():
    """Helix at pitch angle α: x = r cos(s cos α / r), y = r sin(...), z = z0 + s sin α."""
    r, alpha, z0, s = 0.8, 0.4, 0.3, 5.0
    cylinder = js.Cylinder(r)
    p = jnp.array([r, 0, z0])
    t = jnp.array([0.0, np.cos(alpha), np.sin(alpha)])
    g = cylinder.shoot_geodesic(p, t, s)
    phi = s * np.cos(alpha) / r
    np.testing.assert_allclose(g.p_SQ, [r * np.cos(phi), r * np.sin(phi), z0 + s * np.sin(alpha)], atol=1e-14)
    np.testing.assert_allclose(g.tangent_Q, [-np.sin(phi) * np.cos(alpha), np.cos(phi) * np.cos(alpha), np.sin(alpha)], atol=1e-14)
    np.testing.assert_allclose(g.jacobi_Q, [1, s])
    np.testing.assert_allclose(g.jacobi_dot_Q, [0, 1])
    samples = cylinder.geodesic_points(p, t, s, 11)
    phis = np.linspace(0, phi, 11)
    np.testing.assert_allclose(samples[:, 0], r * np.cos(phis), atol=1e-14)
    np.testing.assert_allclose(samples[:, 2], z0 + np.linspace(0, s, 11) * np.sin(alpha), atol=1e-14)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_samples_equal_arc_length(name):
    closed, generic = PAIRS[name]
    p, t, length = jnp.array([0.9, 0.3, 0.2]), jnp.array([0.1, 0.8, 0.5]), 3.0
    a = closed.geodesic_points(p, t, length, 7)
    b = generic.geodesic_points(p, t, length, 7, accuracy=ACCURACY)
    np.testing.assert_allclose(b, a, atol=1e-8)
    np.testing.assert_allclose(a[-1], closed.shoot_geodesic(p, t, length).p_SQ, atol=1e-14)
    np.testing.assert_allclose(jax.vmap(closed.implicit)(a), 0, atol=1e-14)
