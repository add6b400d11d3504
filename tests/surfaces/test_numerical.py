"""Numerically shot geodesics (diffrax) on ellipsoid and torus: Simbody's geodesic test,
known geodesics, Jacobi scalars versus finite differences, drift, batching, float32."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate

import jaxwrap._surfaces as js

R, A = 2.0, 0.5  # torus ring / tube radius
SURFACES = {
    "ellipsoid": js.Ellipsoid(jnp.array([1.5, 2.6, 1.0])),
    "torus": js.Torus(R, A),
}


def shooter(surface, accuracy):
    return jax.jit(
        jax.vmap(lambda p, t, l: surface.shoot_geodesic(p, t, l, accuracy=accuracy))
    )


def darboux_reference(surface, geodesic):
    """Simbody's geodesic test (docs/surfaces.md#geodesic-check): integrate the *unconstrained*
    Darboux-frame ODE x' = t, t' = κ n_s, n' = -κ t - τ_g (t × n_s), b' = τ_g n_s
    (κ CableSpan sign, τ_g = -τ, n_s the surface normal at x) at accuracy 1e-13."""

    def field(s, y, args):
        x, t = y[0:3], y[3:6]
        n_s = surface.normal(x)
        kappa = surface.normal_curvature(x, t)
        tau_g = -surface.geodesic_torsion(x, t)
        return jnp.concatenate([t, kappa * n_s, -kappa * t - tau_g * jnp.cross(t, n_s), tau_g * n_s])

    def solve(g):
        R0 = g.R_SP
        y0 = jnp.concatenate([g.p_SP, R0[:, 0], R0[:, 1], R0[:, 2]])
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(field), diffrax.Dopri8(), 0.0, g.arc_length, None, y0,
            stepsize_controller=diffrax.PIDController(rtol=1e-13, atol=1e-13),
            max_steps=20000,
        )
        y = sol.ys[-1]
        return y[0:3], jnp.stack([y[3:6], y[6:9], y[9:12]], axis=-1)

    return jax.jit(jax.vmap(solve))(geodesic)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_simbody_geodesic_test(name, cases):
    surface = SURFACES[name]
    points, tangents, lengths = cases(surface, 2, 8, [0.5, 2.0, 3.5, 6.0])
    g = shooter(surface, 1e-10)(points, tangents, lengths)
    assert bool(jnp.all(g.converged))
    x, R_ode = darboux_reference(surface, g)
    # Initial frames: on the surface, orthonormal, Y = surface normal (< 1e-9).
    np.testing.assert_allclose(jax.vmap(surface.implicit)(g.p_SP), 0, atol=1e-9)
    np.testing.assert_allclose(jnp.einsum("kji,kjl->kil", g.R_SP, g.R_SP), np.broadcast_to(np.eye(3), (8, 3, 3)), atol=1e-9)
    # End frames against the reference (< 1e-7).
    np.testing.assert_allclose(g.p_SQ, x, atol=1e-7)
    np.testing.assert_allclose(jnp.einsum("kij,klj->kil", g.R_SQ, R_ode), np.broadcast_to(np.eye(3), (8, 3, 3)), atol=1e-7)
    # Drift of the reference itself stays small (sanity, as Simbody checks it).
    np.testing.assert_allclose(jax.vmap(surface.implicit)(x), 0, atol=1e-8)


@pytest.fixture(scope="module")
def spheroid_shoot():
    surface = js.Ellipsoid(jnp.array([1.5, 1.5, 0.8]))
    return surface, shooter(surface, 1e-11)


def test_ellipsoid_of_revolution_equator_and_meridian(spheroid_shoot):
    surface, shoot = spheroid_shoot
    a, c = 1.5, 0.8
    quarter_meridian = scipy.integrate.quad(lambda u: np.hypot(a * np.sin(u), c * np.cos(u)), 0, np.pi / 2, epsabs=1e-14)[0]
    p = jnp.array([[a, 0.0, 0.0]] * 2)
    t = jnp.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    g = shoot(p, t, jnp.array([2.0, quarter_meridian]))
    # Equator: a circle of radius a.
    np.testing.assert_allclose(g.p_SQ[0], [a * np.cos(2 / a), a * np.sin(2 / a), 0], atol=1e-9)
    np.testing.assert_allclose(g.tangent_Q[0], [-np.sin(2 / a), np.cos(2 / a), 0], atol=1e-9)
    # Meridian: stays in the xz plane and reaches the pole after a quarter perimeter.
    np.testing.assert_allclose(g.p_SQ[1], [0, 0, c], atol=1e-9)
    np.testing.assert_allclose(g.tangent_Q[1], [-1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(g.normal_Q[1], [0, 0, 1], atol=1e-9)


@pytest.fixture(scope="module")
def torus_shoot():
    return shooter(SURFACES["torus"], 1e-11)


def test_torus_equators_and_meridian(torus_shoot):
    s = 2.3
    p = jnp.array([[R + A, 0, 0], [R - A, 0, 0], [R + A, 0, 0]])
    t = jnp.array([[0.0, 1, 0], [0.0, 1, 0], [0.0, 0, 1]])
    g = torus_shoot(p, t, jnp.full(3, s))
    for k, rho in enumerate((R + A, R - A)):
        phi = s / rho
        np.testing.assert_allclose(g.p_SQ[k], [rho * np.cos(phi), rho * np.sin(phi), 0], atol=1e-9)
        # Constant K along an equator: a = cos(√K s) (outer, K > 0), cosh (inner, K < 0).
        K = (1 if k == 0 else -1) / (A * rho)
        w = np.sqrt(abs(K))
        a, r = (np.cos(w * s), np.sin(w * s) / w) if K > 0 else (np.cosh(w * s), np.sinh(w * s) / w)
        np.testing.assert_allclose(g.jacobi_Q[k], [a, r], rtol=1e-8)
    # Meridian: the tube circle of radius a.
    phi = s / A
    np.testing.assert_allclose(g.p_SQ[2], [R + A * np.cos(phi), 0, A * np.sin(phi)], atol=1e-9)
    np.testing.assert_allclose(g.tangent_Q[2], [-np.sin(phi), 0, np.cos(phi)], atol=1e-9)
    np.testing.assert_allclose(g.curvatures_Q[2, 0], -1 / A, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_jacobi_scalars_match_finite_differences(name, cases):
    """Shift P along b_P (-> a, a') and rotate t_P about n_P towards b_P (-> r, r')."""
    surface = SURFACES[name]
    points, tangents, lengths = cases(surface, 3, 4, [0.7, 1.6, 2.4, 3.1])
    shoot = shooter(surface, 1e-12)
    g = shoot(points, tangents, lengths)
    t, b = g.tangent_P, g.binormal_P
    h = 1e-4
    shifted = [shoot(g.p_SP + s * h * b, t, lengths) for s in (1, -1)]
    rotated = [shoot(g.p_SP, np.cos(h) * t + s * np.sin(h) * b, lengths) for s in (1, -1)]

    def rates(pair):
        dp = (pair[0].p_SQ - pair[1].p_SQ) / (2 * h)
        dt = (pair[0].tangent_Q - pair[1].tangent_Q) / (2 * h)
        return jnp.sum(dp * g.binormal_Q, -1), jnp.sum(dt * g.binormal_Q, -1)

    (a, a_dot), (r, r_dot) = rates(shifted), rates(rotated)
    fd = np.stack([a, r, a_dot, r_dot], -1)
    exact = np.concatenate([g.jacobi_Q, g.jacobi_dot_Q], -1)
    # Relative error 1e-5 (an absolute floor for entries that happen to be near zero).
    np.testing.assert_allclose(fd, exact, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_no_drift_off_the_surface(name, cases):
    """Coordinate projection after each step: a long geodesic (many turns) stays on f = 0
    to round-off, with a unit tangent in the tangent plane."""
    surface = SURFACES[name]
    points, tangents, _ = cases(surface, 4, 2, [0.0])
    g = shooter(surface, 1e-9)(points, tangents, jnp.full(2, 40.0))
    assert bool(jnp.all(g.converged))
    np.testing.assert_allclose(jax.vmap(surface.implicit)(g.p_SQ), 0, atol=1e-14)
    samples = jax.vmap(lambda p, t: surface.geodesic_points(p, t, 40.0, 9))(points, tangents)
    np.testing.assert_allclose(jax.vmap(jax.vmap(surface.implicit))(samples), 0, atol=1e-14)
    np.testing.assert_allclose(samples[:, -1], g.p_SQ, atol=1e-7)


def test_samples_are_equally_spaced_on_the_spheroid_equator():
    surface = js.Ellipsoid(jnp.array([1.5, 1.5, 0.8]))
    pts = surface.geodesic_points(jnp.array([1.5, 0, 0]), jnp.array([0.0, 1, 0]), 3.0, 5, accuracy=1e-11)
    phis = np.linspace(0, 2.0, 5)
    np.testing.assert_allclose(pts, np.stack([1.5 * np.cos(phis), 1.5 * np.sin(phis), 0 * phis], -1), atol=1e-9)


def test_zero_length_returns_start_frame():
    surface = SURFACES["torus"]
    p, t = jnp.array([R + A, 0.0, 0.0]), jnp.array([0.0, 1.0, 1.0])

    def summary(p, t, l):
        g = surface.shoot_geodesic(p, t, l)
        return jnp.sum(g.R_SQ) + jnp.sum(g.p_SQ) + jnp.sum(g.jacobi_Q) + jnp.sum(g.curvatures_Q)

    g, grads, dp_dl = jax.jit(
        lambda p, t, l: (
            surface.shoot_geodesic(p, t, l),
            jax.grad(summary, argnums=(0, 1, 2))(p, t, l),
            jax.jacfwd(lambda l: surface.shoot_geodesic(p, t, l).p_SQ)(l),
        )
    )(p, t, 0.0)
    np.testing.assert_allclose(g.p_SQ, g.p_SP, atol=1e-15)
    np.testing.assert_allclose(g.R_SQ, g.R_SP, atol=1e-15)
    np.testing.assert_allclose(g.jacobi_Q, [1, 0])
    np.testing.assert_allclose(g.jacobi_dot_Q, [0, 1])
    assert all(np.all(np.isfinite(x)) for x in grads)
    # d p_Q / dℓ at ℓ = 0 is the start tangent.
    np.testing.assert_allclose(dp_dl, g.tangent_P, atol=1e-12)


def test_vmap_over_surface_parameters():
    rings = jnp.array([1.5, 2.0, 3.0])
    p, t = jnp.array([0.0, 3.5, 0.3]), jnp.array([1.0, 0.0, 0.4])
    shoot = jax.jit(lambda ring: js.Torus(ring, 0.5).shoot_geodesic(p, t, 1.7))
    batched = jax.vmap(shoot)(rings)
    for k, ring in enumerate(rings):
        single = shoot(ring)
        np.testing.assert_allclose(batched.p_SQ[k], single.p_SQ, atol=1e-12)
        np.testing.assert_allclose(batched.jacobi_Q[k], single.jacobi_Q, atol=1e-12)


def test_float32_smoke():
    """float32 in, float32 out (the library never flips jax_enable_x64); looser accuracy."""
    radii32 = jnp.array([1.5, 2.6, 1.0], jnp.float32)
    p = jnp.array([1.5, 0.1, 0.05], jnp.float32)
    t = jnp.array([0.0, 1.0, 0.3], jnp.float32)

    @jax.jit
    def run(radii, p, t, length):
        def shoot(r):
            return js.Ellipsoid(r).shoot_geodesic(p, t, length)

        return shoot(radii), jax.grad(lambda r: shoot(r).p_SQ[1])(radii)

    g32, grad = run(radii32, p, t, jnp.float32(2.0))
    g64, _ = run(radii32.astype(jnp.float64), p.astype(jnp.float64), t.astype(jnp.float64), 2.0)
    assert g32.p_SQ.dtype == jnp.float32 and g32.R_SQ.dtype == jnp.float32
    assert g32.jacobi_Q.dtype == jnp.float32 and bool(g32.converged)
    np.testing.assert_allclose(g32.p_SQ, g64.p_SQ, atol=2e-4)
    np.testing.assert_allclose(g32.jacobi_Q, g64.jacobi_Q, atol=2e-4)
    assert grad.dtype == jnp.float32 and np.all(np.isfinite(grad))
    s32 = js.Sphere(jnp.float32(1.0)).shoot_geodesic(p, t, jnp.float32(1.0))
    assert s32.R_SQ.dtype == jnp.float32
