"""`BicubicHeightMap` (Simbody's SmoothHeightMap over a BicubicSurface with smoothness 0):
interpolation, the natural-spline knot derivatives, C1 continuity across patch edges,
closed-form derivatives, validation, and geodesics that stay on the surface."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.interpolate
from test_numerical import darboux_reference

import jaxwrap as jw

# testAllSurfaceKinds' patch (docs/surfaces.md#height-map): row i <-> x_i, column j <-> y_j.
GRID = 2 * np.array([-2.0, -1.0, 1.0, 2.0])
HEIGHTS = 0.75 * np.array([[2, 3, 3, 1], [0, 1.5, 1.5, 0], [0, 1.5, 1.5, 0], [2, 3, 3, 1]])
# An irregular grid with random heights.
_rng = np.random.default_rng(7)
X_IRR = np.cumsum(_rng.uniform(0.3, 1.5, size=6)) - 3
Y_IRR = np.cumsum(_rng.uniform(0.3, 1.5, size=5)) - 2
F_IRR = _rng.normal(size=(6, 5))

SURFACES = {
    "simbody": jw.BicubicHeightMap(GRID, GRID, HEIGHTS),
    "irregular": jw.BicubicHeightMap(X_IRR, Y_IRR, F_IRR),
}


def _grid(surface):
    return np.asarray(surface.x), np.asarray(surface.y), np.asarray(surface.values)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_reproduces_grid_values(name):
    surface = SURFACES[name]
    x, y, f = _grid(surface)
    X, Y = np.meshgrid(x, y, indexing="ij")
    points = jnp.stack([X.ravel(), Y.ravel(), np.zeros(X.size)], -1)
    np.testing.assert_allclose(jax.vmap(surface.implicit)(points), f.ravel(), atol=1e-13)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_knot_derivatives_are_natural_cubic_spline_slopes(name):
    """f_x along x through each column, f_y along y through each row, f_xy along x through
    f_y: interpolating natural cubic splines (Simbody's SplineFitter, degree 3, smoothness 0)."""
    surface = SURFACES[name]
    x, y, f = _grid(surface)
    f_x = scipy.interpolate.CubicSpline(x, f, axis=0, bc_type="natural")(x, 1)
    f_y = scipy.interpolate.CubicSpline(y, f, axis=1, bc_type="natural")(y, 1)
    f_xy = scipy.interpolate.CubicSpline(x, f_y, axis=0, bc_type="natural")(x, 1)
    D = np.asarray(surface.knot_derivatives)
    np.testing.assert_allclose(D[..., 0, 0], f, atol=1e-13)
    np.testing.assert_allclose(D[..., 1, 0], f_x, atol=1e-12)
    np.testing.assert_allclose(D[..., 0, 1], f_y, atol=1e-12)
    np.testing.assert_allclose(D[..., 1, 1], f_xy, atol=1e-12)
    # Taking the mixed derivative the other way round gives the same f_xy.
    f_yx = scipy.interpolate.CubicSpline(y, f_x, axis=1, bc_type="natural")(y, 1)
    np.testing.assert_allclose(D[..., 1, 1], f_yx, atol=1e-12)


def test_bilinear_heights_are_reproduced_exactly_everywhere():
    """Natural splines reproduce linear data, so z = a + bx + cy + dxy is interpolated exactly,
    inside the grid and (continued boundary patches) outside it."""
    height = lambda x, y: 0.3 - 0.2 * x + 0.7 * y + 0.15 * x * y  # noqa: E731
    X, Y = np.meshgrid(X_IRR, Y_IRR, indexing="ij")
    surface = jw.BicubicHeightMap(X_IRR, Y_IRR, height(X, Y))
    p = np.random.default_rng(1).uniform(-8, 8, size=(200, 2))
    got = jax.vmap(lambda q: surface.height(q))(jnp.asarray(p))
    np.testing.assert_allclose(got, height(p[:, 0], p[:, 1]), atol=1e-12)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_c1_across_patch_edges(name):
    """Value and gradient agree on both sides of every interior grid line (to O(δ)); the
    second derivative across an edge may jump (a C1, not C2, surface)."""
    surface = SURFACES[name]
    x, y, _ = _grid(surface)
    rng = np.random.default_rng(2)
    delta = 1e-9
    points = []
    for edge in x[1:-1]:
        for s in rng.uniform(y[0] - 1, y[-1] + 1, size=7):
            points.append(((edge - delta, s, 0.0), (edge + delta, s, 0.0)))
    for edge in y[1:-1]:
        for s in rng.uniform(x[0] - 1, x[-1] + 1, size=7):
            points.append(((s, edge - delta, 0.0), (s, edge + delta, 0.0)))
    below, above = (jnp.asarray(np.array([p[k] for p in points])) for k in (0, 1))
    for fn, atol in ((surface.implicit, 1e-8), (surface.gradient, 1e-7)):
        np.testing.assert_allclose(jax.vmap(fn)(below), jax.vmap(fn)(above), atol=atol)


@pytest.mark.parametrize("name", sorted(SURFACES))
def test_closed_form_derivatives_match_autodiff_and_finite_differences(name):
    surface = SURFACES[name]
    x, y, _ = _grid(surface)
    rng = np.random.default_rng(3)
    # Inside the grid and a margin outside it (the continued boundary patches).
    p = np.stack(
        [rng.uniform(x[0] - 1, x[-1] + 1, 40), rng.uniform(y[0] - 1, y[-1] + 1, 40), rng.normal(size=40)], -1
    )
    p = jnp.asarray(p)
    f_of, g_of, H_of = (jax.jit(jax.vmap(fn)) for fn in (surface.implicit, surface.gradient, surface.hessian))
    g, H = g_of(p), H_of(p)
    np.testing.assert_allclose(g, jax.jit(jax.vmap(jax.grad(surface.implicit)))(p), atol=1e-12)
    np.testing.assert_allclose(H, jax.jit(jax.vmap(jax.hessian(surface.implicit)))(p), atol=1e-11)
    h = 1e-6
    E = np.eye(3)
    g_fd = np.stack([(f_of(p + h * E[k]) - f_of(p - h * E[k])) / (2 * h) for k in range(3)], -1)
    H_fd = np.stack([(g_of(p + h * E[k]) - g_of(p - h * E[k])) / (2 * h) for k in range(3)], -1)
    np.testing.assert_allclose(g, g_fd, atol=1e-8)
    np.testing.assert_allclose(H, H_fd, atol=1e-7)
    # The outward normal points up (f > 0 below the surface).
    assert bool(jnp.all(jax.vmap(surface.normal)(p)[:, 2] > 0))


def test_differentiable_with_respect_to_the_heights():
    """The fit is linear in the heights; the height at a point is differentiable through it."""
    q = jnp.array([0.7, -1.3])
    grad = jax.grad(lambda v: jw.BicubicHeightMap(GRID, GRID, v).height(q))(jnp.asarray(HEIGHTS))
    E = np.zeros_like(HEIGHTS)
    E[1, 1] = 1.0
    fd = (
        jw.BicubicHeightMap(GRID, GRID, HEIGHTS + 1e-6 * E).height(q)
        - jw.BicubicHeightMap(GRID, GRID, HEIGHTS - 1e-6 * E).height(q)
    ) / 2e-6
    np.testing.assert_allclose(grad[1, 1], fd, rtol=1e-8)
    # Linearity: the weights sum to 1 (a constant height field is reproduced).
    np.testing.assert_allclose(jnp.sum(grad), 1.0, atol=1e-13)


def test_is_surface_defined_is_the_grid_domain():
    surface = SURFACES["simbody"]
    inside = jnp.array([[0.0, 0.0, 5.0], [-4.0, 4.0, 0.0], [3.9, -3.9, -2.0]])
    outside = jnp.array([[4.1, 0.0, 0.0], [0.0, -4.01, 0.0], [-10.0, 10.0, 0.0]])
    assert bool(jnp.all(jax.vmap(surface.is_surface_defined)(inside)))
    assert not bool(jnp.any(jax.vmap(surface.is_surface_defined)(outside)))


@pytest.mark.parametrize(
    "args, match",
    [
        ((GRID[:1], GRID, HEIGHTS[:1]), "`x`"),
        ((GRID, GRID[::-1], HEIGHTS), "`y`"),
        ((GRID, np.array([-4.0, -2.0, -2.0, 4.0]), HEIGHTS), "`y`"),
        ((GRID.reshape(2, 2), GRID, HEIGHTS), "`x`"),
        ((GRID, GRID, HEIGHTS[:, :3]), "`values`"),
        ((GRID, GRID, np.where(np.eye(4) > 0, np.nan, HEIGHTS)), "`values`"),
    ],
)
def test_validation(args, match):
    with pytest.raises(ValueError, match=match):
        jw.BicubicHeightMap(*args)


def test_two_point_grid_is_bilinear():
    surface = jw.BicubicHeightMap([0.0, 1.0], [0.0, 2.0], [[0.0, 1.0], [2.0, 5.0]])
    # z = 2x + y/2 + xy, the bilinear function through the four corners.
    np.testing.assert_allclose(surface.height(jnp.array([0.5, 1.0])), 1.0 + 0.5 + 0.5, atol=1e-14)


def test_geodesic_on_a_tilted_plane_is_a_straight_line():
    """Planar height data are reproduced exactly, so the shot geodesic is a straight line."""
    X, Y = np.meshgrid(GRID, GRID, indexing="ij")
    surface = jw.BicubicHeightMap(GRID, GRID, 0.5 + 0.3 * X - 0.2 * Y)
    normal = np.array([-0.3, 0.2, 1.0]) / np.linalg.norm([-0.3, 0.2, 1.0])
    p = jnp.array([-3.0, 1.0, 0.5 - 0.9 - 0.2])
    t = np.cross(normal, [0.3, 1.0, 0.0])
    t /= np.linalg.norm(t)
    g = surface.shoot_geodesic(p, jnp.asarray(t), 6.0, accuracy=1e-10)
    np.testing.assert_allclose(g.p_SQ, p + 6.0 * t, atol=1e-9)
    np.testing.assert_allclose(g.tangent_Q, t, atol=1e-9)
    np.testing.assert_allclose(g.normal_Q, normal, atol=1e-12)
    np.testing.assert_allclose(g.jacobi_Q, [1.0, 6.0], atol=1e-9)  # flat: K = 0


def test_geodesic_over_the_simbody_patch_stays_on_the_surface():
    """Geodesics across several patch edges of testAllSurfaceKinds' height map: on f = 0 with
    a unit tangent and the surface normal at the end, and ending where Simbody's unconstrained
    Darboux-frame ODE (docs/surfaces.md#geodesic-check, accuracy 1e-13) ends."""
    surface = SURFACES["simbody"]
    starts = jnp.array([[-3.5, -3.0, 0.0], [3.0, -3.5, 0.0], [-3.0, 0.5, 0.0], [0.2, 3.5, 0.0]])
    starts = starts.at[:, 2].set(jax.vmap(surface.implicit)(starts))  # onto z = z_surf
    directions = jnp.array([[1.0, 1.0, 0.0], [-0.6, 1.0, 0.0], [1.0, -0.2, 0.0], [0.3, -1.0, 0.0]])
    lengths = jnp.array([8.0, 7.0, 6.5, 7.5])
    shoot = jax.jit(jax.vmap(lambda p, t, l: surface.shoot_geodesic(p, t, l, accuracy=1e-11)))
    g = shoot(starts, directions, lengths)
    assert bool(jnp.all(g.converged))
    np.testing.assert_allclose(jax.vmap(surface.implicit)(g.p_SQ), 0, atol=1e-13)
    np.testing.assert_allclose(jnp.linalg.norm(g.tangent_Q, axis=-1), 1, atol=1e-12)
    np.testing.assert_allclose(g.normal_Q, jax.vmap(surface.normal)(g.p_SQ), atol=1e-12)

    x, R_ode = darboux_reference(surface, g)
    np.testing.assert_allclose(g.p_SQ, x, atol=1e-7)
    np.testing.assert_allclose(g.tangent_Q, R_ode[:, :, 0], atol=1e-7)
