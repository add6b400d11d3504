"""Surface geometry: Simbody's implicit scaling, derivatives, curvature signs, projection,
validation, NaN safety (docs/surfaces.md#sign-conventions)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
import jaxwrap._surfaces as js

R_TORUS, A_TORUS = 2.0, 0.5
SURFACES = {
    "sphere": js.Sphere(1.5),
    "cylinder": js.Cylinder(0.7),
    "ellipsoid": js.Ellipsoid(jnp.array([1.5, 2.6, 1.0])),
    "torus": js.Torus(R_TORUS, A_TORUS),
}
# Points near (not on) each surface, away from singular sets.
POINTS = np.array([[0.9, -0.4, 0.7], [0.3, 1.1, -0.5], [-1.2, 0.2, 0.4], [1.9, 0.6, 0.3]])


def test_implicit_scaling_matches_simbody():
    x = jnp.array([0.3, -0.2, 0.5])
    rho = np.hypot(0.3, -0.2)
    assert float(js.Sphere(1.5).implicit(x)) == pytest.approx(1.5**2 - 0.38, abs=1e-15)
    assert float(js.Cylinder(0.7).implicit(x)) == pytest.approx(0.49 - 0.13, abs=1e-15)
    assert float(SURFACES["ellipsoid"].implicit(x)) == pytest.approx(
        1 - (0.3 / 1.5) ** 2 - (0.2 / 2.6) ** 2 - 0.5**2, abs=1e-15
    )
    assert float(SURFACES["torus"].implicit(x)) == pytest.approx(
        1 - ((2 - rho) ** 2 + 0.25) / 0.25, abs=1e-13
    )


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_closed_form_derivatives_match_autodiff(name):
    surface = SURFACES[name]
    for x in POINTS:
        x = jnp.asarray(x)
        np.testing.assert_allclose(
            surface.gradient(x), jax.grad(surface.implicit)(x), atol=1e-12
        )
        np.testing.assert_allclose(
            surface.hessian(x), jax.hessian(surface.implicit)(x), atol=1e-12
        )


def test_curvature_signs_sphere():
    """ContactGeometry: k = +1/r (convex positive); CableSpan: κ = -1/r; τ = 0; K = 1/r²."""
    sphere = js.Sphere(2.0)
    x, d = jnp.array([0.0, 0.0, 2.0]), jnp.array([1.0, 0.0, 0.0])
    assert float(sphere.curvature(x, d)) == pytest.approx(0.5)
    assert float(sphere.normal_curvature(x, d)) == pytest.approx(-0.5)
    assert float(sphere.geodesic_torsion(x, d)) == pytest.approx(0.0, abs=1e-15)
    assert float(sphere.gaussian_curvature(x)) == pytest.approx(0.25)
    np.testing.assert_allclose(sphere.normal(x), [0, 0, 1])


def test_curvature_cylinder_and_torus():
    cylinder = js.Cylinder(2.0)
    x = jnp.array([2.0, 0.0, 0.3])
    d45 = jnp.array([0.0, 1.0, 1.0]) / np.sqrt(2)
    # Simbody's cylinder override k = (dx² + dy²)/ρ. Along the 45° helix n turns about z
    # at rate 1/(2√2); n' = -κ t + τ b with κ = -1/4 gives τ = +1/4.
    assert float(cylinder.curvature(x, d45)) == pytest.approx(0.25)
    assert float(cylinder.geodesic_torsion(x, d45)) == pytest.approx(0.25)
    assert float(cylinder.gaussian_curvature(x)) == pytest.approx(0.0, abs=1e-15)

    torus = SURFACES["torus"]
    for phi in (0.0, 0.7, np.pi / 2, 2.5, np.pi):
        x = jnp.array([R_TORUS + A_TORUS * np.cos(phi), 0.0, A_TORUS * np.sin(phi)])
        expected = np.cos(phi) / (A_TORUS * (R_TORUS + A_TORUS * np.cos(phi)))
        assert float(torus.gaussian_curvature(x)) == pytest.approx(expected, rel=1e-12)
        # Meridian (tube circle) curvature is 1/a, convex everywhere on the tube.
        d = jnp.array([-np.sin(phi), 0.0, np.cos(phi)])
        assert float(torus.curvature(x, d)) == pytest.approx(1 / A_TORUS, rel=1e-12)
        assert float(torus.geodesic_torsion(x, d)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_project_lands_on_surface(name):
    surface = SURFACES[name]
    projected = jax.vmap(surface.project)(jnp.asarray(POINTS))
    f = jax.vmap(surface.implicit)(projected)
    np.testing.assert_allclose(f, 0, atol=1e-14)
    # Outward normal points away from the inside: f decreases along it.
    n = jax.vmap(surface.normal)(projected)
    inner = jax.vmap(lambda p, n: surface.implicit(p - 1e-3 * n))(projected, n)
    assert np.all(inner > 0)


def test_implicit_surface_uses_autodiff():
    surface = js.ImplicitSurface(lambda x, p: 1 - jnp.sum((x / p) ** 2), jnp.array([1.5, 2.6, 1.0]))
    for x in POINTS:
        x = jnp.asarray(x)
        np.testing.assert_allclose(surface.gradient(x), SURFACES["ellipsoid"].gradient(x), atol=1e-14)
        np.testing.assert_allclose(surface.hessian(x), SURFACES["ellipsoid"].hessian(x), atol=1e-14)
        d = jnp.array([0.6, 0.0, 0.8])
        assert float(surface.geodesic_torsion(x, d)) == pytest.approx(
            float(SURFACES["ellipsoid"].geodesic_torsion(x, d)), abs=1e-14
        )


@pytest.mark.parametrize(
    "make, parameter",
    [
        (lambda: js.Sphere(0.0), "radius"),
        (lambda: js.Sphere(-1.0), "radius"),
        (lambda: js.Cylinder(-0.5), "radius"),
        (lambda: js.Ellipsoid(jnp.array([1.0, 0.0, 2.0])), "radii"),
        (lambda: js.Ellipsoid(jnp.array([1.0, 2.0])), "radii"),
        (lambda: js.Torus(0.0, 0.1), "ring_radius"),
        (lambda: js.Torus(1.0, -0.1), "tube_radius"),
        (lambda: js.Torus(1.0, 1.0), "tube_radius"),
        (lambda: js.Torus(1.0, 1.5), "tube_radius"),
    ],
)
def test_invalid_parameters_raise(make, parameter):
    with pytest.raises(ValueError, match=parameter):
        make()


def test_validation_skips_traced_parameters():
    radii = jnp.array([0.5, 1.0, 2.0])
    f = jax.vmap(lambda r: js.Torus(3.0, r).implicit(jnp.array([3.0, 0.0, 0.1])))
    np.testing.assert_allclose(f(radii), 1 - 0.01 / radii**2)
    assert float(jax.jit(lambda r: js.Sphere(r).implicit(jnp.zeros(3)))(2.0)) == 4.0


def test_nan_free_at_singular_points():
    sphere, torus = SURFACES["sphere"], SURFACES["torus"]
    origin = jnp.zeros(3)
    # Sphere centre: ∇f = 0 -> Simbody's fallback normal; derivatives finite.
    n = sphere.normal(origin)
    np.testing.assert_allclose(np.linalg.norm(n), 1.0)
    assert np.all(np.isfinite(jax.jacfwd(sphere.normal)(origin)))
    assert np.all(np.isfinite(jax.grad(lambda x: sphere.project(x)[0])(origin)))
    # Torus: on the axis (ρ = 0) and on the tube's centre circle (∇f = 0).
    for x in (origin, jnp.array([0.0, 0.0, 0.7]), jnp.array([R_TORUS, 0.0, 0.0])):
        for fn in (torus.implicit, lambda x: torus.normal(x)[0], lambda x: torus.gaussian_curvature(x)):
            assert np.isfinite(fn(x))
            assert np.all(np.isfinite(jax.grad(fn)(x)))
    # Darboux frame with a tangent parallel to the normal: still a rotation.
    R = js.darboux_frame(jnp.array([0.0, 0.0, 1.0]), jnp.array([0.0, 0.0, 2.0]))
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-15)
    assert np.all(np.isfinite(jax.jacfwd(lambda t: js.darboux_frame(jnp.array([0.0, 0.0, 1.0]), t))(jnp.array([0.0, 0.0, 2.0]))))


@pytest.mark.parametrize(
    "surface",
    [jw.Sphere(1.0), jw.Cylinder(0.7), jw.Ellipsoid(jnp.array([1.0, 2.0, 3.0])), jw.Torus(2.0, 0.5)],
    ids=["sphere", "cylinder", "ellipsoid", "torus"],
)
def test_zero_length_geodesic_equals_shooting_zero_length(surface):
    p, t = jnp.array([0.3, 0.9, 0.2]), jnp.array([1.0, 0.2, -0.3])
    direct = surface.zero_length_geodesic(p, t)
    shot = surface.shoot_geodesic(p, t, 0.0)
    for a, b in zip(jax.tree.leaves(direct), jax.tree.leaves(shot)):
        if jnp.issubdtype(a.dtype, jnp.floating):
            np.testing.assert_allclose(a, b, atol=1e-14)
