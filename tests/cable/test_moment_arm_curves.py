"""Moment-arm curves users can plot: on the demo elbow (the cable wraps the distal
humerus over the whole range and touches down on the elbow at 0.2 rad), the moment arm of cold
solves at every angle equals that of a warm-started sweep, equals -dL/dq by central
differences, and is continuous except where the contact set changes. Where the warm
sweep stays on a longer taut branch (it keeps a contact the shortest path lets go of), the
cold solve is the shorter path."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxwrap as jw
from jaxwrap.cli import elbow_model_and_cable

MODEL, CABLE = elbow_model_and_cable()
CABLE = CABLE.with_settings(smoothness_tolerance=1e-10, curve_segment_accuracy=1e-12, max_iterations=100)
ANGLES = jnp.linspace(0.0, 1.8, 37)


@jax.jit
@functools.partial(jax.vmap, in_axes=(None, None, 0))
def cold(model, cable, angle):
    q = angle[None]
    path = jw.solve_cable(cable, jw.forward_kinematics(model, q))
    return path.length, jw.moment_arms(model, cable, q)[0], path.in_contact, path.converged


@jax.jit
def warm(model, cable, angles):
    def step(previous, angle):
        q = angle[None]
        path = jw.solve_cable(cable, jw.forward_kinematics(model, q), warm_start=previous)
        arm = jw.moment_arms(model, cable, q, warm_start=previous)[0]
        return path.state, (arm, path.in_contact, path.converged, path.length)

    first = jw.solve_cable(cable, jw.forward_kinematics(model, angles[:1]))
    return jax.lax.scan(step, first.state, angles)[1]


def test_cold_and_warm_sweeps_give_the_same_moment_arm_curve():
    lengths, arms, contact, converged = cold(MODEL, CABLE, ANGLES)
    warm_arms, warm_contact, warm_converged, warm_lengths = warm(MODEL, CABLE, ANGLES)
    assert bool(jnp.all(converged)) and bool(jnp.all(warm_converged))
    # The warm sweep follows its branch: where it keeps a contact the cold solve (the
    # shortest genuine candidate) lets go of, both are taut and the cold path is the shorter.
    same_branch = np.all(np.asarray(contact) == np.asarray(warm_contact), axis=1)
    assert same_branch.sum() >= len(ANGLES) - 8
    assert np.all(np.asarray(lengths)[~same_branch] < np.asarray(warm_lengths)[~same_branch])
    np.testing.assert_allclose(np.asarray(arms)[same_branch], np.asarray(warm_arms)[same_branch], atol=1e-9)
    # The contact set changes in the range (a touchdown is exercised). Every cold path
    # wraps the distal humerus: the straight line from origin to termination goes through
    # it at every angle (up to 0.15 rad an earlier version reported that line as converged;
    # docs/cable.md#touchdown-and-liftoff).
    changes = np.flatnonzero(np.any(np.diff(np.asarray(contact), axis=0), axis=1))
    assert len(changes) >= 1
    assert bool(jnp.all(contact[:, 0]))

    h = 1e-6
    (plus, _, contact_plus, _), (minus, _, contact_minus, _) = (
        cold(MODEL, CABLE, ANGLES + h),
        cold(MODEL, CABLE, ANGLES - h),
    )
    same = np.all(np.asarray(contact_plus == contact), axis=1) & np.all(np.asarray(contact_minus == contact), axis=1)
    np.testing.assert_allclose(arms[same], (-(plus - minus) / (2 * h))[same], atol=1e-6)

    # Continuous between contact changes: neighbouring angles differ by O(step).
    step = float(ANGLES[1] - ANGLES[0])
    jumps = np.abs(np.diff(np.asarray(arms)))
    smooth = np.ones(len(jumps), bool)
    smooth[changes] = False
    assert float(jumps[smooth].max()) < 0.05 * step
