"""Paths that can be trusted (docs/cable.md#results, #cold-start-candidates): a path reported
successful is a genuine taut one, cold starts reach the shortest path without a lucky hint,
invalid input gives NaN and a failure code, and a batched path keeps its batch axes.

Each defect found in the field is reproduced here as it was reported, with Simbody's
hint-only start (``cold_start="hints"``, which must now flag it) and with the default
candidate start (which must return the right path)."""

from __future__ import annotations

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shortest_paths import cylinder_shortest, sphere_shortest

import jaxwrap as jw

T = jw.Transform
GROUND = T.identity((1,))


def _cable(origin, termination, surface, hint, **settings):
    return (
        jw.CableSpan(0, origin, 0, termination)
        .add_obstacle(0, T.identity(), surface, contact_hint=hint)
        .with_settings(**settings)
    )


# ---------------------------------------------------------------------------- reported defects
@pytest.fixture(scope="module")
def solve_both():
    """(hints, candidates) solves of a one-obstacle cable on ground, jitted once; the hints
    solve is Simbody's (its start and its `MinimumLength` step, no Gauss-Newton polish), as
    the defects were reported."""
    solve = jax.jit(jw.solve_cable)
    simbody = {"cold_start": "hints", "gauss_newton_below": 0.0}
    return lambda cable: (solve(cable.with_settings(**simbody), GROUND), solve(cable, GROUND))


def test_a_path_that_doubles_back_is_not_converged(solve_both):
    """Cylinder r = 1, origin (0, 1.2, 0), termination (1.197, 0.085, 0), hint (1, 0, 0): the
    hint's path overshoots the termination and its last line comes back along the curve
    (length 2.8233, smooth by Simbody's measure). The shortest wrap is 1.6553."""
    cable = _cable([0.0, 1.2, 0.0], [1.197, 0.085, 0.0], jw.Cylinder(1.0), [1.0, 0.0, 0.0])
    hints, best = solve_both(cable)
    assert float(hints.length) == pytest.approx(2.8233, abs=1e-4)
    assert hints.result == jw.RESULTS.not_taut and not bool(hints.converged)
    assert bool(best.converged)
    np.testing.assert_allclose(best.length, cylinder_shortest([0, 1.2, 0], [1.197, 0.085, 0], 1.0), rtol=1e-9)


def test_origin_equal_to_termination_gives_zero(solve_both):
    cable = _cable([-2.0, 0.5, 0.0], [-2.0, 0.5, 0.0], jw.Sphere(1.0), [0.0, 1.0, 0.0])
    hints, best = solve_both(cable)
    assert float(hints.length) == pytest.approx(3.607, abs=1e-3) and hints.result == jw.RESULTS.not_taut
    assert bool(best.converged) and float(best.length) == 0.0 and not bool(best.in_contact[0])


@pytest.mark.parametrize("y", [1.001, 1.003])
def test_the_cable_lets_go_of_an_obstacle_it_no_longer_touches(y, solve_both):
    """Ends at (-2, y, 0) and (2, y, 0) above a unit sphere: the straight line is the path,
    and dL/dy = 0; the hint's path clings to the sphere (5e-7 and 4.5e-6 too long)."""
    cable = _cable([-2.0, y, 0.0], [2.0, y, 0.0], jw.Sphere(1.0), [0.0, 1.0, 0.0])
    hints, best = solve_both(cable)
    assert bool(hints.in_contact[0]) and hints.result == jw.RESULTS.not_taut
    assert bool(best.converged) and not bool(best.in_contact[0])
    assert float(best.length) == pytest.approx(4.0, abs=1e-15)

    def length(y):
        c = eqx.tree_at(lambda c: (c.origin_station, c.termination_station), cable,
                        (jnp.stack([-2.0, y, 0.0]), jnp.stack([2.0, y, 0.0])))
        return jw.solve_cable(c, GROUND).length

    assert float(jax.grad(length)(y)) == 0.0


@pytest.mark.parametrize(
    "change",
    ["nan_pose", "infinite_radius", "nan_origin", "scaled_rotation"],
)
def test_invalid_input_gives_nan_and_a_failure_code(change):
    cable = _cable([-2.0, 0.5, 0.0], [2.0, 0.5, 0.0], jw.Sphere(1.0), [0.0, 1.0, 0.0])
    poses = T.identity((2,))
    if change == "nan_pose":
        poses = T(poses.rotation, poses.translation.at[1, 0].set(jnp.nan))
        cable = jw.CableSpan(0, [-2.0, 0.5, 0.0], 1, [2.0, 0.5, 0.0]).add_obstacle(
            0, T.identity(), jw.Sphere(1.0), contact_hint=[0.0, 1.0, 0.0])
    elif change == "infinite_radius":
        cable = eqx.tree_at(lambda c: c.obstacles[0].surface.radius, cable, jnp.inf)
    elif change == "nan_origin":
        cable = eqx.tree_at(lambda c: c.origin_station, cable, jnp.array([jnp.nan, 0.5, 0.0]))
    else:  # a "rotation" of 2 I: the straight line would have been 8.0
        poses = T(poses.rotation.at[0].set(2 * jnp.eye(3)), poses.translation)
    path = jax.jit(jw.solve_cable)(cable, poses)
    assert path.result == jw.RESULTS.invalid_input
    assert bool(jnp.isnan(path.length)) and bool(jnp.all(jnp.isnan(path.points(4))))


def test_a_failed_lane_does_not_abort_a_batched_gradient():
    """A vmapped grad and jacfwd over three poses, one with a NaN: that lane's derivative
    is NaN and the others equal their own single solves' (lineax raised on the NaN
    Jacobian before and aborted the whole batch; docs/cable.md#implicit-differentiation)."""
    cable = jw.CableSpan(0, [-2.0, 0.5, 0.0], 1, [2.0, 0.5, 0.0]).add_obstacle(
        0, T.identity(), jw.Sphere(1.0), contact_hint=[0.0, 1.0, 0.0])

    def length(x):
        poses = T(jnp.tile(jnp.eye(3), (2, 1, 1)), jnp.zeros((2, 3)).at[1].set(x))
        return jw.solve_cable(cable, poses).length

    xs = jnp.array([[0.0, 0.0, 0.0], [jnp.nan, 0.0, 0.0], [0.1, -0.2, 0.05]])
    single = jax.jit(jax.grad(length))
    for derivative in (jax.grad, jax.jacfwd):
        batched = np.asarray(jax.jit(jax.vmap(derivative(length)))(xs))
        assert np.isnan(batched[1]).all()
        for k in (0, 2):
            assert np.isfinite(batched[k]).all()
            np.testing.assert_allclose(batched[k], single(xs[k]), rtol=1e-10, atol=1e-14)


# ---------------------------------------------------------------------------- batched paths
def test_every_property_of_a_batched_path_keeps_the_batch_axes():
    cable = (
        jw.CableSpan(0, [-2.0, 0.5, 0.0], 1, [1.0, 0.3, 0.2])
        .add_obstacle(0, T.identity(), jw.Sphere(1.0), contact_hint=[0.0, 1.0, 0.0])
        .add_via_point(1, [0.0, 1.5, 0.0])
        .add_obstacle(1, T.from_translation([1.5, 0.0, 0.0]), jw.Cylinder(0.3), contact_hint=[0.0, 0.3, 0.0])
    )

    def poses(x):
        return T(jnp.tile(jnp.eye(3), (2, 1, 1)), jnp.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]).at[1, 0].set(x))

    xs = jnp.array([1.0, 1.2, 1.4])
    paths = jax.jit(jax.vmap(lambda x: jw.solve_cable(cable, poses(x))))(xs)
    one = jw.solve_cable(cable, poses(xs[1]))
    V = jnp.zeros((2, 2, 3)).at[1, 1, 0].set(1.0)
    checks = {
        "length": (paths.length, one.length),
        "converged": (paths.converged, one.converged),
        "in_contact": (paths.in_contact, one.in_contact),
        "smoothness": (paths.smoothness, one.smoothness),
        "origin_tangent": (paths.origin_tangent, one.origin_tangent),
        "termination_tangent": (paths.termination_tangent, one.termination_tangent),
        "origin_unit_force": (paths.origin_unit_force, one.origin_unit_force),
        "termination_unit_force": (paths.termination_unit_force, one.termination_unit_force),
        "via_point_location": (paths.via_point_location(0), one.via_point_location(0)),
        "via_point_tangents": (jnp.stack(paths.via_point_tangents(0), 1), jnp.stack(one.via_point_tangents(0))),
        "via_point_unit_force": (paths.via_point_unit_force(0), one.via_point_unit_force(0)),
        "arc_length": (paths.curve_segment_arc_length(1), one.curve_segment_arc_length(1)),
        "frames": (paths.curve_segment_frames(1)[1].translation, one.curve_segment_frames(1)[1].translation),
        "curve_points": (paths.curve_segment_points(0, 5), one.curve_segment_points(0, 5)),
        "points": (paths.points(4), one.points(4)),
        "unit_force": (paths.curve_segment_unit_force(0), one.curve_segment_unit_force(0)),
        "body_forces": (paths.body_forces(10.0), one.body_forces(10.0)),
        "power": (paths.power(10.0, V), one.power(10.0, V)),
        "length_dot": (paths.length_dot(V), one.length_dot(V)),
    }
    for name, (batched, single) in checks.items():
        assert batched.shape == (3, *jnp.shape(single)), name
        np.testing.assert_allclose(batched[1], single, rtol=1e-12, atol=1e-14, err_msg=name)
    # per-lane arguments are mapped along with the path
    tensions = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(paths.body_forces(tensions)[2], 3.0 * paths.body_forces(1.0)[2], rtol=1e-14)


# ---------------------------------------------------------------------------- the class, closed form
def _pin_sweep_case(key, kind):
    """A random pin joint from ground (random SO(3) placement), the obstacle on the moving
    body at a random pose, origin on ground, termination on the body."""
    k = jax.random.split(key, 6)
    R_pin = jw.Transform.from_axis_angle(jax.random.normal(k[0], (3,)) * 2.0).rotation
    R_obstacle = jw.Transform.from_axis_angle(jax.random.normal(k[1], (3,)) * 2.0).rotation
    offset = jax.random.normal(k[2], (3,)) * 0.1
    origin = jax.random.normal(k[3], (3,)) * 0.3 + jnp.array([-1.2, 0.0, 0.0])
    termination = jax.random.normal(k[4], (3,)) * 0.3 + jnp.array([1.2, 0.0, 0.0])
    surface = jw.Sphere(0.4) if kind == "sphere" else jw.Cylinder(0.3)
    cable = (
        jw.CableSpan(0, origin, 1, termination)
        .add_obstacle(1, T(R_obstacle, offset), surface, contact_hint=jnp.array([0.0, 0.4, 0.0]) @ R_obstacle)
        .with_settings(smoothness_tolerance=1e-7, max_iterations=100)
    )
    return cable, R_pin, k[5]


@pytest.mark.parametrize("kind", ["sphere", "cylinder"])
def test_cold_sweeps_on_a_moving_obstacle_reach_the_closed_form_shortest_wrap(kind):
    """Random pin-joint sweeps over 2.3 rad, every angle cold from the same hint (the hint
    turns with the body): every path is successful and as long as the closed-form
    shortest wrap over either side, to 1e-9 relative."""
    cases = [_pin_sweep_case(jax.random.PRNGKey(seed), kind) for seed in range(6)]
    cables = jax.tree.map(lambda *x: jnp.stack(x), *[c for c, _, _ in cases])
    R_pins = jnp.stack([r for _, r, _ in cases])
    angles = jnp.linspace(-1.15, 1.15, 24)

    def poses(R_pin, angle):
        return T(jnp.stack([jnp.eye(3), R_pin @ jw.rotation_z(angle)]), jnp.zeros((2, 3)))

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(0, 0, None))
    @functools.partial(jax.vmap, in_axes=(None, None, 0))
    def solve(cable, R_pin, angle):
        path = jw.solve_cable(cable, poses(R_pin, angle))
        X_GS = path.scene.X_GS[0]
        ends = X_GS.inverse().apply(jnp.stack([path.scene.origin, path.scene.termination]))
        return path.length, path.converged, ends

    lengths, converged, ends = solve(cables, R_pins, angles)
    assert bool(jnp.all(converged))
    shortest = sphere_shortest if kind == "sphere" else cylinder_shortest
    radius = 0.4 if kind == "sphere" else 0.3
    exact = np.array([[shortest(a, b, radius) for a, b in np.asarray(e)] for e in ends])
    np.testing.assert_allclose(lengths, exact, rtol=1e-9)


def _trust_case(key):
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
    import cable_trust

    base = cable_trust.cable("cylinder", smoothness_tolerance=1e-9, max_iterations=100)
    poses, ends = cable_trust.configuration("cylinder", key)
    return cable_trust._with_ends(base, ends), poses, ends


@pytest.mark.parametrize(
    "key, expected",
    [
        # Configuration 71 of benchmarks/cable_trust.py's cylinder class at size 256 (seed 7):
        # the lifted and near-side starts both stall at smoothness 0.97 after 100 iterations,
        # and the best of the broader reference starts (hints, lifted, both sides) is the
        # longer side, 4.33154841.
        ((7, 256, 71), 4.32949082),
        # The one path of the 100,000-configuration run that was reported successful and
        # longer than the shortest (3.71889 against 3.71541 m): the lifted start reached the
        # other side of a cylinder that the end points nearly straddle.
        ((45056, 4096, 2461), 3.71541226),
    ],
)
def test_a_single_cylinder_starts_on_its_shortest_wrap(key, expected):
    """The default cold start on a lone cylinder is its closed-form shortest wrap: converged
    without a correction, at the shortest length over either side."""
    seed, num, index = key
    cable, poses, ends = _trust_case(jax.random.split(jax.random.PRNGKey(seed), num)[index])
    path = jax.jit(jw.solve_cable)(cable, poses)
    assert path.result == jw.RESULTS.successful and int(path.num_iterations) == 0
    np.testing.assert_allclose(path.length, expected, rtol=1e-8)
    a, b = poses[1].inverse().apply(ends)
    np.testing.assert_allclose(path.length, cylinder_shortest(np.asarray(a), np.asarray(b), 0.3), rtol=1e-12)
