"""Simbody's CableSpan tests (docs/cable.md#validation) with their set-ups and tolerances:
testSimpleCable, testViaPoints, testSolverOptimum, testRobustInitialPath, the seven force
tests and the five length-rate tests, plus CableSubsystemTestHelper's perturbation test
(Jacobian, length gradient and Hessian predictions) and its geodesic test."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scenes import I3, TAN_22_5, T, darboux_reference, poses, simple_cable, single_sphere

import jaxwrap as jw
from jaxwrap._cable import _geometry as geometry
from jaxwrap._cable._solver import apply_correction
from jaxwrap._cable._state import build_scene

COS45 = SIN45 = np.sqrt(0.5)


def solve(cable, body_poses):
    """Simbody's start (the contact hints only): these tests replay Simbody's own."""
    return jax.jit(jw.solve_cable)(cable.with_settings(cold_start="hints"), body_poses)


# ------------------------------------------------------------------------ testSimpleCable
@pytest.fixture(scope="module")
def simple():
    cable, body_poses = simple_cable()
    return cable, body_poses, solve(cable, body_poses)


def test_simple_cable_lengths(simple):
    cable, _, path = simple
    assert cable.num_obstacles == 4 and cable.num_via_points == 0
    # Simbody's criterion (smooth) holds; jaxwrap's stricter one does not: the straight line
    # between the neighbours of the ellipsoid (1) and of the second torus (2) misses them, so
    # lifting either curve off shortens the path (docs/cable.md#results).
    assert float(path.smoothness) <= 1e-7 and path.result == jw.RESULTS.not_taut
    arcs = [float(path.curve_segment_arc_length(i)) for i in range(4)]
    np.testing.assert_allclose(arcs, np.pi / 2 * np.array([1, 1, 1.5, 2]), atol=1e-5)
    np.testing.assert_allclose(float(path.length), 15 + 5.5 * np.pi / 2, atol=1e-5)
    lines, t = path.evaluation.lines, jnp.linspace(0.0, 1.0, 4001)[:, None]
    for i, misses in enumerate([False, True, True, False]):
        a, b = (path.scene.X_GS[i].inverse().apply(x[i]) for x in (lines.prev_point, lines.next_point))
        depth = jnp.max(jax.vmap(cable.obstacles[i].surface.implicit)(a + t * (b - a)))
        assert bool(depth < 0) == misses, i


def test_simple_cable_default_start_finds_a_shorter_taut_path(simple):
    cable, body_poses, path = simple
    best = jax.jit(jw.solve_cable)(cable.with_settings(cold_start="candidates"), body_poses)
    assert bool(best.converged) and float(best.length) < float(path.length) - 1.0


def _frame(t, n):
    t, n = np.asarray(t, float), np.asarray(n, float)
    return np.stack([t, n, np.cross(t, n)], axis=1)


SIMPLE_FRAMES = [  # (P: t, n, p), (Q: t, n, p) per obstacle
    (((0, 1, 0), (-1, 0, 0), (0, 1, 0)), ((1, 0, 0), (0, 1, 0), (1, 2, 0))),
    (((1, 0, 0), (0, 1, 0), (4.5, 2, 0)), ((0, -1, 0), (1, 0, 0), (5.5, 1, 0))),
    (((0, -1, 0), (1, 0, 0), (5.5, -2, 0)), ((-1, 0, 0), (0, -1, 0), (4, -3.5, 0))),
    (((-1, 0, 0), (0, -1, 0), (-2, -3.5, 0)), ((0, 1, 0), (-1, 0, 0), (-4, -1.5, 0))),
]


def test_simple_cable_frenet_frames(simple):
    _, _, path = simple
    for i, expected in enumerate(SIMPLE_FRAMES):
        for got, (t, n, p) in zip(path.curve_segment_frames(i), expected):
            assert np.linalg.norm(np.asarray(got.translation) - p) < 1e-6
            assert np.linalg.norm(np.asarray(got.rotation) - _frame(t, n)) < 1e-6


def test_simple_cable_body_forces(simple):
    _, _, path = simple
    forces = np.asarray(path.body_forces(np.pi))
    expected = np.array(
        [
            [(0, 0, 1.5), (0, 2, 0)],
            [(0, 0, 0), (0, 1, 0)],
            [(0, 0, 0), (0, -1, 0)],
            [(0, 0, 8), (1, -1, 0)],
            [(0, 0, 0.5), (-1, -1, 0)],
        ]
    )
    for body in range(5):
        assert np.linalg.norm(expected[body] * np.pi - forces[body]) < 1e-5, body


def test_simple_cable_perturbation(simple):
    """CableSubsystemTestHelper perturbation test: ±1e-5 on each of the 4n DOFs; predictions
    ε + J dq, L + gᵀdq, g + H dq must match within 0.1 % of the perturbation."""
    cable, body_poses, path = simple
    errors = perturbation_errors(cable, body_poses, path.state)
    assert errors["path_error"] <= 1e-3
    assert errors["length"] <= 1e-3
    assert errors["gradient"] <= 1e-3


def perturbation_errors(cable, body_poses, state, delta=1e-5):
    scene = build_scene(cable, body_poses)
    n = cable.num_obstacles
    accuracy = cable.settings.curve_segment_accuracy

    def measures(c):
        geodesics = tuple(
            apply_correction(cable.obstacles[i].surface, g, c[i], accuracy) for i, g in enumerate(state.geodesics)
        )
        ev = geometry.evaluate(cable, scene, dataclasses.replace(state, geodesics=geodesics))
        var = geometry.variations(ev.curves)
        J = geometry.path_error_jacobian(ev.curves, var, ev.neighbours, ev.lines).reshape(4 * n, 4 * n)
        g, H = geometry.length_gradient_and_hessian(ev.curves, var, ev.neighbours, ev.lines)
        length = geometry.total_length(ev.curves, ev.neighbours, ev.lines)
        return ev.error.reshape(-1), length, g.reshape(-1), J, H.reshape(4 * n, 4 * n)

    @jax.jit
    def run():
        eps0, L0, g0, J, H = measures(jnp.zeros((n, 4)))
        steps = jnp.concatenate([-delta * jnp.eye(4 * n), delta * jnp.eye(4 * n)])
        eps1, L1, g1, _, _ = jax.vmap(lambda dq: measures(dq.reshape(n, 4)))(steps)
        return (
            jnp.max(jnp.abs(eps0 + steps @ J.T - eps1)) / delta,
            jnp.max(jnp.abs(L0 + steps @ g0 - L1)) / delta,
            jnp.max(jnp.abs(g0 + steps @ H.T - g1)) / delta,
        )

    e, l, g = run()
    return {"path_error": float(e), "length": float(l), "gradient": float(g)}


def test_simple_cable_geodesic_test(simple):
    """CableSubsystemTestHelper geodesic test: integrate the unconstrained Darboux-frame ODE
    (x' = t, t' = κn n_s, n' = -κn t - τg (t × n_s), b' = τg n_s, with κn = -k, τg = -τ) from
    every curve's P at accuracy 1e-13 and compare with the curve's Q."""
    cable, _, path = simple
    for i, obstacle in enumerate(cable.obstacles):
        surface = obstacle.surface
        g = path.state.geodesics[i]
        assert abs(float(surface.implicit(surface.project(g.p_SP)))) < 1e-9
        p_end, R_ode = map(np.asarray, darboux_reference(surface, g.p_SP, g.R_SP, g.arc_length))
        assert np.linalg.norm(p_end - np.asarray(g.p_SQ)) < 1e-7
        assert np.linalg.norm(np.asarray(g.R_SQ) @ R_ode.T - np.eye(3)) < 1e-7
        assert np.linalg.norm(R_ode @ R_ode.T - np.eye(3)) < 1e-8


# ------------------------------------------------------------------------ testViaPoints
def test_via_points():
    cable = (
        jw.CableSpan(1, [0, 0, 0], 2, [0, 0, 0])
        .add_via_point(3, [0, 0, 0])
        .add_via_point(4, [0, 0, 0])
        .add_via_point(5, [0, 0, 0])
    )
    body_poses = poses((0, 0, 0), (-4, 0, 0), (0, 1, 0), (0, 1, 2), (-4, 1, 2))
    path = solve(cable, body_poses)
    assert float(path.smoothness) == 0.0 and bool(path.converged)
    np.testing.assert_allclose(float(path.length), 1 + 2 + 4 + np.sqrt(5), atol=1e-5)
    s5 = 1 / np.sqrt(5)
    expected = [
        [(0, 0, 0), (0, 0, 0)],
        [(0, 0, 0), (0, 1, 0)],
        [(0, 0, 0), (0, s5, 2 * s5)],
        [(0, 0, 0), (0, -1, 1)],
        [(0, 0, 0), (-1, 0, -1)],
        [(0, 0, 0), (1, -s5, -2 * s5)],
    ]
    forces = np.asarray(path.body_forces(np.pi))
    for body, F in enumerate(expected):
        assert np.linalg.norm(np.array(F) * np.pi - forces[body]) < 1e-5, body
    np.testing.assert_allclose(path.origin_tangent, [0, 1, 0], atol=1e-12)
    tangents = [((0, 1, 0), (0, 0, 1)), ((0, 0, 1), (-1, 0, 0)), ((-1, 0, 0), (0, -s5, -2 * s5))]
    for i, (incoming, outgoing) in enumerate(tangents):
        got_in, got_out = path.via_point_tangents(i)
        np.testing.assert_allclose(got_in, incoming, atol=1e-12)
        np.testing.assert_allclose(got_out, outgoing, atol=1e-12)
    np.testing.assert_allclose(path.termination_tangent, [0, -s5, -2 * s5], atol=1e-12)
    np.testing.assert_allclose(path.via_point_location(1), [0, 1, 2])


# ------------------------------------------------------------------------ testSolverOptimum
@pytest.mark.parametrize(
    "algorithm, P, Q, length",
    [
        ("scholz2015", (0, 1, 0), (0, -1, 0), 2 * TAN_22_5 + np.pi),
        ("minimum_length", (COS45, SIN45, 0), (COS45, -SIN45, 0), 2 * TAN_22_5 + np.pi / 2),
    ],
)
def test_solver_optimum(algorithm, P, Q, length):
    """Scholz2015 stops on the longest stationary path, MinimumLength on the shortest."""
    cable, body_poses = single_sphere(hint=(-1.0, 0.0, 0.1))
    cable = cable.with_settings(algorithm=algorithm, curve_segment_accuracy=1e-12, smoothness_tolerance=1e-8, max_iterations=100)
    path = solve(cable, body_poses)
    frame_P, frame_Q = path.curve_segment_frames(0)
    assert np.linalg.norm(np.asarray(frame_P.translation) - P) < 1e-6
    assert np.linalg.norm(np.asarray(frame_Q.translation) - Q) < 1e-6
    assert float(path.smoothness) < 1e-8 and bool(path.converged)
    np.testing.assert_allclose(float(path.length), length, atol=1e-6)


# ------------------------------------------------------------------------ testRobustInitialPath
def test_robust_initial_path():
    """A cable starting almost through the torus hole: MinimumLength finds L = 5.6513; the
    upstream comment says Scholz2015 fails to initialize here (our Scholz2015 does not
    converge within 100 iterations either, see the second assertion)."""
    cable = jw.CableSpan(0, [-0.1, 0, 0], 0, [0.1, 0, 0]).add_obstacle(
        0, T(np.asarray(jw.rotation_y(np.pi / 2)), [0, 4, 0]), jw.Torus(2.0, 0.5), contact_hint=[0, -0.1, 0]
    )
    cable = cable.with_settings(curve_segment_accuracy=1e-12, smoothness_tolerance=1e-8, max_iterations=100)
    body_poses = poses()
    path = solve(cable, body_poses)
    assert float(path.smoothness) < 1e-8
    np.testing.assert_allclose(float(path.length), 5.6513, atol=1e-3)
    scholz = solve(cable.with_settings(algorithm="scholz2015"), body_poses)
    assert not bool(scholz.converged)


# ------------------------------------------------------------------------ TestCableSpan_Forces
FORCE_CASES = {
    "same_body": (
        lambda: (jw.CableSpan(0, [0, 1, 0], 0, [1, 1, 0]), poses()),
        [[(0, 0, 0), (0, 0, 0)]],
    ),
    "two_bodies": (
        lambda: (jw.CableSpan(0, [0, 0, 0], 1, [0, 0, 0]), poses((1, 0, 0))),
        [[(0, 0, 0), (1, 0, 0)], [(0, 0, 0), (-1, 0, 0)]],
    ),
    "force_and_moment_two_bodies": (
        lambda: (jw.CableSpan(0, [0, 0, 0], 1, [0, 2, 0]), poses((1, -2, 0))),
        [[(0, 0, 0), (1, 0, 0)], [(0, 0, 2), (-1, 0, 0)]],
    ),
    "single_obstacle": (
        lambda: single_sphere(hint=(1.0, 0.0, 0.0)),
        [[(0, 0, 0), (2 * COS45, 0, 0)], [(0, 0, 0), (-2 * COS45, 0, 0)]],
    ),
    "force_and_moment_single_obstacle": (
        lambda: single_sphere(hint=(1.0, 0.0, 0.0), body_offset=(0, -1, 0), X_BS_offset=(0, 1, 0)),
        [[(0, 0, 0), (2 * COS45, 0, 0)], [(0, 0, 2 * SIN45), (-2 * COS45, 0, 0)]],
    ),
    "single_via_point": (
        lambda: (jw.CableSpan(0, [0, 1, 0], 0, [0, -1, 0]).add_via_point(1, [1.0, 0, 0]), poses((0, 0, 0))),
        [[(0, 0, 0), (2 * SIN45, 0, 0)], [(0, 0, 0), (-2 * SIN45, 0, 0)]],
    ),
    "force_and_moment_single_via_point": (
        lambda: (jw.CableSpan(0, [0, 1, 0], 0, [0, -1, 0]).add_via_point(1, [1.0, 1, 0]), poses((0, -1, 0))),
        [[(0, 0, 0), (2 * SIN45, 0, 0)], [(0, 0, 2 * SIN45), (-2 * SIN45, 0, 0)]],
    ),
}


@pytest.mark.parametrize("name", list(FORCE_CASES))
def test_cable_forces(name):
    make, expected = FORCE_CASES[name]
    cable, body_poses = make()
    cable = cable.with_settings(curve_segment_accuracy=1e-12, smoothness_tolerance=1e-8)
    path = solve(cable, body_poses)
    forces = np.asarray(path.body_forces(1.0))
    for body, F in enumerate(expected):
        assert np.linalg.norm(np.asarray(F) - forces[body]) < 1e-6, (name, body)
    assert np.all(np.asarray(path.body_forces(0.0)) == 0) and np.all(np.asarray(path.body_forces(-1.0)) == 0)


def test_single_obstacle_force_scenario_length():
    """Force on a single obstacle from hint (1,0,0): F = (-1.414214, 0, 0), L = 2.3992235."""
    cable, body_poses = single_sphere()
    path = solve(cable.with_settings(curve_segment_accuracy=1e-12, smoothness_tolerance=1e-8), body_poses)
    np.testing.assert_allclose(float(path.length), 2 * TAN_22_5 + np.pi / 2, atol=1e-7)
    np.testing.assert_allclose(path.curve_segment_unit_force(0)[1], [-2 * COS45, 0, 0], atol=1e-7)


# ------------------------------------------------------------------------ TestCableSpan_LengthDot
def _velocities(n_bodies, **bodies):
    V = np.zeros((n_bodies, 2, 3))
    for body, (w, v) in bodies.items():
        V[int(body[1:])] = [w, v]
    return jnp.asarray(V)


U = ((1, 2, 3), (4, 5, 6))


@pytest.mark.parametrize(
    "name, make, velocities, expected",
    [
        ("on_same_body", lambda: (jw.CableSpan(1, [-1, 0, 0], 1, [0, 1, 0]), poses((0, 0, 0))), {"b1": U}, 0.0),
        (
            "on_same_body_with_obstacles",
            lambda: (
                jw.CableSpan(1, [2, 0, 0], 1, [-2, 0, 0])
                .add_obstacle(1, T(I3, [1, 1, 0]), jw.Sphere(1.0), contact_hint=[1, 1, 0])
                .add_obstacle(1, T(I3, [-1, 1, 0]), jw.Ellipsoid(jnp.array([0.5, 0.75, 1.0])), contact_hint=[-1, 1, 0]),
                poses((0, 0, 0)),
            ),
            {"b1": U},
            0.0,
        ),
        ("between_two_bodies_linear", lambda: (jw.CableSpan(0, [0, 0, 0], 1, [0, 2, 0]), poses((1, -2, 0))), {"b1": ((0, 0, 0), (4, 5, 6))}, 4.0),
        ("between_two_bodies_angular", lambda: (jw.CableSpan(0, [0, 0, 0], 1, [0, 2, 0]), poses((1, -2, 0))), {"b1": ((0, 1, 2), (0, 0, 0))}, -4.0),
        ("between_two_bodies_both", lambda: (jw.CableSpan(0, [0, 0, 0], 1, [0, 2, 0]), poses((1, -2, 0))), {"b1": ((0, 1, 2), (4, 5, 6))}, 0.0),
        ("with_single_obstacle", lambda: single_sphere(), {"b1": U}, 4 * 2 * COS45),
        ("with_single_via_point", lambda: (jw.CableSpan(0, [0, 1, 0], 0, [0, -1, 0]).add_via_point(1, [1.0, 0, 0]), poses((0, 0, 0))), {"b1": U}, 4 * 2 * SIN45),
    ],
)
def test_length_dot(name, make, velocities, expected):
    cable, body_poses = make()
    cable = cable.with_settings(curve_segment_accuracy=1e-12, smoothness_tolerance=1e-8)
    path = solve(cable, body_poses)
    assert bool(jnp.all(path.in_contact)), "all obstacles must be in contact"
    V = _velocities(body_poses.batch_shape[0], **velocities)
    assert abs(float(path.length_dot(V)) - expected) < 1e-13
