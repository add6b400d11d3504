"""The fused geodesic loop (docs/performance.md#fused-geodesic-loop) against diffrax's
`diffeqsolve` with the same tableau and controller: end states, Jacobi scalars,
derivatives, failures, idle (not integrated) lanes, and the integrator's validation."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._cable._solver import REMEMBERED_STEP, _curvature_step
from jaxwrap._surfaces._geodesic_ode import geodesic_vector_field, shoot_numerically

SURFACES = {
    "ellipsoid": jw.Ellipsoid(jnp.array([1.2, 0.7, 0.9])),
    "torus": jw.Torus(0.6, 0.4),
    "implicit sphere": jw.ImplicitSurface(lambda x, p: 1 - jnp.dot(x, x) / p**2, 0.8),
}
B = 48


@pytest.fixture(scope="module")
def starts():
    key = jax.random.split(jax.random.PRNGKey(7), 3)
    points = jax.random.normal(key[0], (B, 3))
    tangents = jax.random.normal(key[1], (B, 3))
    lengths = jax.random.uniform(key[2], (B,), minval=0.0, maxval=2.5).at[0].set(0.0)
    return points, tangents, lengths


def _shoot(surface, loop, accuracy, solver=diffrax.Tsit5()):
    integrator = jw.GeodesicIntegrator(solver=solver, loop=loop)
    return jax.jit(jax.vmap(lambda p, t, l: surface.shoot_geodesic(p, t, l, accuracy=accuracy, integrator=integrator)))


@pytest.mark.parametrize("name", list(SURFACES))
def test_fused_matches_diffrax(name, starts):
    surface = SURFACES[name]
    reference = _shoot(surface, "diffrax", 1e-14, diffrax.Dopri8())(*starts)
    diffrax_loop = _shoot(surface, "diffrax", 1e-10)(*starts)
    fused = _shoot(surface, "fused", 1e-10)(*starts)
    assert bool(jnp.all(fused.result == jw.RESULTS.successful))
    err_fused = jnp.max(jnp.abs(fused.p_SQ - reference.p_SQ))
    err_diffrax = jnp.max(jnp.abs(diffrax_loop.p_SQ - reference.p_SQ))
    # The same method to the same tolerance: the same global error, within a factor.
    assert float(err_fused) <= 3 * float(err_diffrax) + 1e-12
    np.testing.assert_allclose(fused.jacobi_Q, reference.jacobi_Q, atol=5e-7)
    np.testing.assert_allclose(fused.R_SQ, reference.R_SQ, atol=5e-7)
    steps_f, steps_d = np.asarray(fused.num_steps, float), np.asarray(diffrax_loop.num_steps, float)
    if surface.geodesic_chart:
        # Another ODE (the surface's own coordinates, docs/surfaces.md#geodesic-charts)
        # to the same tolerance: at most 10 % more steps.
        assert steps_f.mean() <= 1.1 * steps_d.mean()
    else:
        # Steps: the same controller (the last step is clipped slightly differently).
        assert abs(steps_f.mean() - steps_d.mean()) <= 0.1 * steps_d.mean()


@pytest.mark.parametrize("name", ["ellipsoid", "torus"])
def test_batched_shots_equal_single_shots(name, starts):
    """A geodesic does not depend on the batch it is shot in. The surfaces' eighth-order
    pair often opens with a short step whose error estimate is at its rounding level,
    which a batched program rounds differently from a single one; such an estimate does
    not size the next step (docs/performance.md#rounding-level-error-estimates), so step
    counts agree and end states agree to rounding."""
    surface = SURFACES[name]

    def shoot(p, t, l):
        g = surface.shoot_geodesic(p, t, l, accuracy=1e-9)
        return jnp.concatenate([g.p_SQ, g.tangent_Q, g.jacobi_Q, g.jacobi_dot_Q]), g.num_steps

    assert isinstance(surface.geodesic_solver, diffrax.Dopri8)  # the pair whose first estimates are rounding
    ends, steps = jax.jit(jax.vmap(shoot))(*starts)
    single = jax.jit(shoot)
    for i in range(B):
        end_i, steps_i = single(*(x[i] for x in starts))
        assert int(steps_i) == int(steps[i]), i
        np.testing.assert_allclose(end_i, ends[i], rtol=0, atol=1e-13, err_msg=str(i))


@pytest.mark.parametrize("name", ["ellipsoid", "torus"])
def test_a_remembered_first_step_keeps_the_accuracy_and_takes_fewer_steps(name, starts):
    """The cable solver reshoots a curve from its previous shot's mean step
    (docs/performance.md#remembered-first-step). Reshooting every start a little moved
    (tangent turned, 3 % longer, as a correction does): the end states are as accurate
    as with Hairer's first step, the shots take fewer steps, a batched shot equals a
    single one, and a first step of 0 is Hairer's (the same steps)."""
    surface = SURFACES[name]
    points, tangents, lengths = starts
    turned = tangents + 0.05 * jax.random.normal(jax.random.PRNGKey(11), tangents.shape)

    def shoot(accuracy):
        def f(p, t, l, first_step):
            g = shoot_numerically(surface, p, t, l, accuracy=accuracy, first_step=first_step)
            return jnp.concatenate([g.p_SQ, g.tangent_Q, g.jacobi_Q, g.jacobi_dot_Q]), g.num_steps

        return f

    single = jax.jit(shoot(1e-9))
    shoot9, none = jax.jit(jax.vmap(shoot(1e-9))), jnp.zeros(B)
    _, previous_steps = shoot9(points, tangents, lengths, none)
    remembered = np.where(previous_steps > 0, REMEMBERED_STEP * lengths / np.maximum(previous_steps, 1), 0.0)
    moved = 1.03 * lengths
    reference, _ = jax.jit(jax.vmap(shoot(1e-13)))(points, turned, moved, none)
    hairer, hairer_steps = shoot9(points, turned, moved, none)
    ends, steps = shoot9(points, turned, moved, jnp.asarray(remembered))
    err_hairer = float(jnp.max(jnp.abs(hairer - reference)))
    err_remembered = float(jnp.max(jnp.abs(ends - reference)))
    assert err_remembered <= 3 * err_hairer + 1e-12, (err_remembered, err_hairer)
    assert np.mean(steps) <= 0.95 * np.mean(hairer_steps), (np.mean(steps), np.mean(hairer_steps))
    # Without a remembered step: exactly Hairer's (the default).
    plain = jax.jit(
        jax.vmap(lambda p, t, l: (lambda g: (g.p_SQ, g.num_steps))(shoot_numerically(surface, p, t, l, accuracy=1e-9)))
    )
    plain_ends, plain_steps = plain(points, turned, moved)
    np.testing.assert_array_equal(plain_steps, hairer_steps)
    np.testing.assert_allclose(plain_ends, hairer[:, :3], rtol=0, atol=1e-13)
    for i in range(0, B, 7):
        end_i, steps_i = single(points[i], turned[i], moved[i], jnp.asarray(remembered[i]))
        assert int(steps_i) == int(steps[i]), i
        np.testing.assert_allclose(end_i, ends[i], rtol=0, atol=1e-13, err_msg=str(i))


@pytest.mark.parametrize(
    "surface",
    [SURFACES["ellipsoid"], SURFACES["torus"], jw.Ellipsoid(jnp.array([1.0, 0.8, 0.1])), jw.Torus(1.0, 0.15)],
    ids=["ellipsoid", "torus", "flat ellipsoid", "thin torus"],
)
def test_a_first_step_from_the_curvature_keeps_the_accuracy_and_takes_no_more_steps(surface, starts):
    """A curve shot for the first time in a cable solve starts from a step sized by the
    normal curvatures at its start (docs/performance.md#remembered-first-step), on round
    and on tightly curved surfaces (a flat ellipsoid's rim, a thin tube): as accurate as
    Hairer's first step, and no more steps on average."""
    points, tangents, lengths = starts
    # Up to half an extent: over longer curves a flat ellipsoid's geodesics part so fast
    # that the ends' global errors, not the steps, are what differ.
    lengths = 0.2 * lengths * surface.extent()

    def shoot(accuracy, seeded):
        def f(p, t, l):
            start = shoot_numerically(surface, p, t, 0.0)
            first_step = _curvature_step(surface, start, accuracy) if seeded else None
            g = shoot_numerically(surface, p, t, l, accuracy=accuracy, first_step=first_step)
            return jnp.concatenate([g.p_SQ, g.tangent_Q, g.jacobi_Q]), g.num_steps

        return jax.jit(jax.vmap(f))

    reference, _ = shoot(1e-13, False)(points, tangents, lengths)
    for accuracy in (1e-7, 1e-10):
        hairer, hairer_steps = shoot(accuracy, False)(points, tangents, lengths)
        seeded, steps = shoot(accuracy, True)(points, tangents, lengths)
        err_hairer = float(jnp.max(jnp.abs(hairer - reference)))
        err_seeded = float(jnp.max(jnp.abs(seeded - reference)))
        assert err_seeded <= 3 * err_hairer + 1e-12, (accuracy, err_seeded, err_hairer)
        assert np.mean(steps) <= np.mean(hairer_steps), (accuracy, np.mean(steps), np.mean(hairer_steps))


def test_default_loop_per_surface():
    assert jw.Ellipsoid(jnp.ones(3)).geodesic_loop == "fused"
    assert jw.Torus(2.0, 0.5).geodesic_loop == "fused"
    assert jw.ImplicitSurface(lambda x, p: 1 - jnp.dot(x, x) / p**2, 1.0).geodesic_loop == "diffrax"


@pytest.mark.parametrize("name", ["ellipsoid", "torus"])
def test_fused_derivatives_match_diffrax_and_finite_differences(name, starts):
    surface = SURFACES[name]
    points, tangents, lengths = (x[:6] for x in starts)
    weights = jnp.array([1.0, -2.0, 0.5])

    def value(loop):
        integrator = jw.GeodesicIntegrator(loop=loop)

        def f(p, t, l):
            g = surface.shoot_geodesic(p, t, l, accuracy=1e-12, integrator=integrator)
            return jnp.dot(g.p_SQ, weights) + g.jacobi_Q[0]

        return f

    grads_fused = jax.vmap(jax.grad(value("fused"), argnums=(0, 1, 2)))(points, tangents, lengths)
    grads_diffrax = jax.vmap(jax.grad(value("diffrax"), argnums=(0, 1, 2)))(points, tangents, lengths)
    for a, b in zip(grads_fused, grads_diffrax):
        np.testing.assert_allclose(a, b, atol=1e-8)
    # d/dlength by central differences of the fused loop itself.
    f = jax.vmap(value("fused"))
    h = 1e-5
    fd = (f(points, tangents, lengths + h) - f(points, tangents, lengths - h)) / (2 * h)
    np.testing.assert_allclose(grads_fused[2], fd, atol=2e-6)


def _chart_states(name, key):
    """64 random chart states of SURFACES[name], and their Cartesian states."""
    surface = SURFACES[name]
    key = jax.random.split(key, 4)
    jacobi = jax.random.normal(key[2], (64, 4))
    if name == "torus":
        u, v = jax.random.uniform(key[0], (2, 64), minval=-np.pi, maxval=np.pi)
        heading = jax.random.uniform(key[1], (64,), minval=-np.pi, maxval=np.pi)
        pairs = [jnp.cos(u), jnp.sin(u), jnp.cos(v), jnp.sin(v), jnp.cos(heading), jnp.sin(heading)]
        z = jnp.concatenate([jnp.stack(pairs, 1), jacobi], 1)
    else:  # ellipsoid: s on the unit sphere, t tangent at p = D s
        s = jax.random.normal(key[0], (64, 3))
        s = s / jnp.linalg.norm(s, axis=1, keepdims=True)
        n = s / surface.radii
        t = jnp.cross(n, jax.random.normal(key[1], (64, 3)))
        z = jnp.concatenate([s, t / jnp.linalg.norm(t, axis=1, keepdims=True), jacobi], 1)
    return surface, z, jax.vmap(surface.state_from_chart)(z)


@pytest.mark.parametrize("name", ["ellipsoid", "torus"])
def test_chart_is_the_geodesic_ode(name):
    """A surface's chart (docs/surfaces.md#geodesic-charts) at random surface states:
    the round trip to Cartesian states is exact, a chart state is on the surface with a
    unit tangent and is its own projection, and the chart field moves the Cartesian
    state as the geodesic ODE does (p' = t, t' = -λ∇f, the Jacobi equations with the
    surface's Gaussian curvature)."""
    surface, z, y = _chart_states(name, jax.random.PRNGKey(3))
    assert surface.geodesic_chart
    np.testing.assert_allclose(jax.vmap(surface.implicit)(y[:, :3]), 0.0, atol=1e-14)
    np.testing.assert_allclose(jnp.einsum("bi,bi->b", y[:, 3:6], jax.vmap(surface.gradient)(y[:, :3])), 0, atol=1e-13)
    np.testing.assert_allclose(jnp.linalg.norm(y[:, 3:6], axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(jax.vmap(surface.chart_from_state)(y), z, atol=1e-14)
    np.testing.assert_allclose(jax.vmap(surface.chart_project)(z), z, atol=1e-14)
    moved = jax.vmap(lambda z: jax.jvp(surface.state_from_chart, (z,), (surface.chart_field(z),))[1])(z)
    cartesian = jax.vmap(lambda y: geodesic_vector_field(None, y, (surface, 1.0)))(y)
    np.testing.assert_allclose(moved, cartesian, atol=1e-13)


@pytest.mark.parametrize("name", ["ellipsoid", "torus"])
def test_idle_lanes_take_no_step(name, starts):
    surface = SURFACES[name]
    points, tangents, lengths = starts
    move = jnp.arange(B) % 3 == 0
    shoot = jax.jit(jax.vmap(lambda p, t, l, m: shoot_numerically(surface, p, t, l, accuracy=1e-10, integrate=m)))
    g = shoot(points, tangents, lengths, move)
    full = _shoot(surface, None, 1e-10)(points, tangents, lengths)
    np.testing.assert_array_equal(np.asarray(g.num_steps)[~np.asarray(move)], 0)
    np.testing.assert_allclose(g.p_SQ[move], full.p_SQ[move], atol=1e-15)
    # An idle lane returns its start state (the caller discards it).
    np.testing.assert_allclose(g.p_SQ[~move], g.p_SP[~move], atol=1e-15)


def test_fused_failure_is_reported_not_raised():
    surface = SURFACES["torus"]
    integrator = jw.GeodesicIntegrator(max_steps=3, loop="fused")
    g = jax.jit(
        lambda: surface.shoot_geodesic(jnp.array([1.0, 0, 0.0]), jnp.array([0.0, 1, 0.3]), 3.0, integrator=integrator)
    )()
    assert g.result == jw.RESULTS.geodesic_failed
    assert bool(jnp.all(jnp.isnan(g.p_SQ)))


@pytest.mark.parametrize(
    "surface", [jw.Ellipsoid(jnp.array([1.2, 0.7, 0.9], jnp.float32)), jw.Torus(jnp.float32(0.9), jnp.float32(0.4))]
)
def test_fused_in_float32(surface):
    p, t = jnp.array([1.2, 0.0, 0.0], jnp.float32), jnp.array([0.0, 1.0, 0.2], jnp.float32)
    ref = surface.shoot_geodesic(p.astype(float), t.astype(float), 1.5, accuracy=1e-12)
    g = surface.shoot_geodesic(p, t, jnp.float32(1.5), accuracy=1e-6)
    assert g.p_SQ.dtype == jnp.float32 and g.result == jw.RESULTS.successful
    np.testing.assert_allclose(g.p_SQ, ref.p_SQ, atol=2e-5)


def test_integrator_validation():
    with pytest.raises(ValueError, match="loop must be"):
        jw.GeodesicIntegrator(loop="fast")
    jw.GeodesicIntegrator(loop="fused", adjoint=diffrax.ForwardMode())
    with pytest.raises(ValueError, match="takes no adjoint"):
        jw.GeodesicIntegrator(loop="fused", adjoint=diffrax.RecursiveCheckpointAdjoint())
    with pytest.raises(ValueError, match="explicit Runge-Kutta"):
        jw.GeodesicIntegrator(loop="fused", solver=diffrax.Kvaerno5())
