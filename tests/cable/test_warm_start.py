"""Warm-started solving over motions: Simbody's testTouchdownAndLiftoff (628 steps on a
torus, an ellipsoid, a sphere and a cylinder) and the warm-start toggle test of PR #858."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scenes import I3, Ry90, T

import jaxwrap as jw

TOUCHDOWN_SCENES = {
    # geometry, X_BS, scene offset
    "torus": (lambda: jw.Torus(2.0, 0.25), (Ry90, (0, 1.75, 0)), (0, 2, 0)),
    "ellipsoid": (lambda: jw.Ellipsoid(jnp.array([1.0, 0.5, 0.75])), (I3, (0, -0.5, 0)), (0, 0, 0)),
    "sphere": (lambda: jw.Sphere(1.5), (I3, (0, -1.5, 0)), (0, -2, 0)),
    "cylinder": (lambda: jw.Cylinder(2.0), (I3, (0, -2, 0)), (0, -6, 0)),
}


@pytest.mark.parametrize("name", list(TOUCHDOWN_SCENES))
def test_touchdown_and_liftoff(name):
    """Both end points move as y = 0.1 sin(angle), angle = 0.01, 0.03, ... < 4π (628 steps),
    each solve warm-started from the previous one; in contact exactly when y < 0."""
    surface, (R, p), offset = TOUCHDOWN_SCENES[name]
    offset = np.asarray(offset, float)
    cable = jw.CableSpan(1, [0, 0, 0], 2, [0, 0, 0]).add_obstacle(0, T(R, offset + np.asarray(p)), surface())
    cable = cable.with_settings(curve_segment_accuracy=1e-12, smoothness_tolerance=1e-6)
    angles = jnp.arange(1e-2, 4 * np.pi, 0.02)
    assert len(angles) == 628

    def body_poses(y):
        translations = jnp.stack([jnp.zeros(3), offset + jnp.array([-2.0, 0, 0]) + jnp.array([0, 1.0, 0]) * y,
                                  offset + jnp.array([2.0, 0, 0]) + jnp.array([0, 1.0, 0]) * y])
        return jw.Transform(jnp.broadcast_to(jnp.eye(3), (3, 3, 3)), translations)

    @jax.jit
    def sweep(angles):
        first = cable.solve(body_poses(0.1 * jnp.sin(angles[0])))

        def step(state, angle):
            path = cable.solve(body_poses(0.1 * jnp.sin(angle)), warm_start=state)
            return path.state, (path.in_contact[0], path.converged, path.num_iterations, path.length)

        _, out = jax.lax.scan(step, first.state, angles)
        return out

    in_contact, converged, iterations, lengths = sweep(angles)
    y = 0.1 * np.sin(np.asarray(angles))
    mismatches = np.flatnonzero(np.asarray(in_contact) != (y < 0))
    assert mismatches.size == 0, f"{name}: contact status wrong at steps {mismatches[:10]}"
    assert bool(jnp.all(converged))
    assert int(jnp.max(iterations)) <= 10  # warm start: few corrections per step
    assert bool(jnp.all(jnp.isfinite(lengths)))


def _pendulum_cable():
    """PR #858 testUseWarmStart: a cable from a pendulum head (1 m below its pin) to the base,
    over a thin ellipsoid under the pin."""
    return jw.CableSpan(2, [0, 0, 0], 1, [0, 0, 0]).add_obstacle(
        1, T(I3, (0, -0.5, 0)), jw.Ellipsoid(jnp.array([0.1, 0.1, 0.5])), contact_hint=[0.01, 0.2, 0]
    ).with_settings(curve_segment_accuracy=1e-12, smoothness_tolerance=1e-8, max_iterations=100)


def _pendulum_poses(theta):
    base = jnp.array([0.0, 1.5, 0.0])
    R = jw.rotation_z(theta)
    head = base + R @ jnp.array([0.0, -1.0, 0.0])
    rotations = jnp.stack([jnp.eye(3), jnp.eye(3), R])
    return jw.Transform(rotations, jnp.stack([jnp.zeros(3), base, head]))


@pytest.mark.parametrize("use_warm_start", [True, False])
def test_use_warm_start(use_warm_start):
    """Realize at θ0, then at 2π. Warm start on: starting at 0.05π or 1.95π ends on opposite
    sides of the ellipsoid; off: both solves start from the hint and agree."""
    cable = _pendulum_cable().with_settings(use_warm_start=use_warm_start)

    @jax.jit
    def final_contact_point(theta0):
        first = cable.solve(_pendulum_poses(theta0))
        second = cable.solve(_pendulum_poses(2 * jnp.pi), warm_start=first)
        return second.curve_segment_frames(0)[0].translation, second.converged

    (p1, ok1), (p2, ok2) = final_contact_point(0.05 * np.pi), final_contact_point(1.95 * np.pi)
    assert bool(ok1) and bool(ok2)
    if use_warm_start:
        assert abs(float(p1[0] + p2[0])) < 1e-5 and abs(float(p1[1] - p2[1])) < 1e-5
        assert abs(float(p1[2])) < 1e-5 and abs(float(p2[2])) < 1e-5
        assert abs(float(p1[0])) > 1e-3  # genuinely on opposite sides
    else:
        assert float(jnp.linalg.norm(p1 - p2)) < 1e-5
