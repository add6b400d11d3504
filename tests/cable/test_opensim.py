"""Golden values from OpenSim 4.6's Scholz2015GeometryPath (which wraps Simbody's CableSpan):
tests/reference/cable_opensim.json, written by tests/reference/generate_cable_opensim.py
(see tests/reference/CABLE_OPENSIM.md). Every scenario is solved in one batched call over
its configurations, with OpenSim's settings (Scholz2015, tolerance 1e-5, accuracy 1e-10).
"""

from __future__ import annotations

import json
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
from cable_scenarios import surface_from_spec  # noqa: E402

# One worker runs the whole module, so its module-scoped solves are computed once.
pytestmark = pytest.mark.xdist_group("test_opensim")


FIXTURE = pathlib.Path(__file__).parents[1] / "reference" / "cable_opensim.json"
DATA = json.loads(FIXTURE.read_text())
SCENARIOS = {s["name"]: s for s in DATA["scenarios"]}


def transform(spec):
    return jw.Transform(jnp.asarray(spec["rotation"]), jnp.asarray(spec["translation"]))


def cable_from(scenario, **settings):
    cable = jw.CableSpan(
        scenario["origin"]["body"], scenario["origin"]["station"],
        scenario["termination"]["body"], scenario["termination"]["station"],
    )
    for element in scenario["path_order"][1:-1]:
        kind, index = element.split(":")
        if kind == "obstacle":
            o = scenario["obstacles"][int(index)]
            cable = cable.add_obstacle(o["body"], transform(o["X_BS"]), surface_from_spec(o["surface"]), contact_hint=o["contact_hint"])
        else:
            v = scenario["via_points"][int(index)]
            cable = cable.add_via_point(v["body"], v["station"])
    s = scenario["settings"]
    return cable.with_settings(
        algorithm=s["algorithm"], smoothness_tolerance=s["smoothness_tolerance"],
        curve_segment_accuracy=s["curve_segment_accuracy"], max_iterations=s["max_iterations"],
        cold_start="hints", **settings,  # OpenSim's cold records start from the hints only
    )


def batched_poses(scenario):
    configs = scenario["configurations"]
    rotations = jnp.asarray([[b["rotation"] for b in c["body_poses"]] for c in configs])
    translations = jnp.asarray([[b["translation"] for b in c["body_poses"]] for c in configs])
    return jw.Transform(rotations, translations), jnp.asarray([c["body_velocities"] for c in configs])


@pytest.fixture(scope="module", params=list(SCENARIOS))
def solved(request):
    scenario = SCENARIOS[request.param]
    cable = cable_from(scenario)
    poses, velocities = batched_poses(scenario)

    @jax.jit
    @jax.vmap
    def run(X, V):
        path = cable.solve(X)
        frames = [path.curve_segment_frames(i) for i in range(cable.num_obstacles)]
        return dict(
            length=path.length, length_dot=path.length_dot(V), converged=path.converged, in_contact=path.in_contact,
            not_taut=path.result == jw.RESULTS.not_taut,
            P=jnp.stack([f[0].translation for f in frames]), Q=jnp.stack([f[1].translation for f in frames]),
            R_P=jnp.stack([f[0].rotation for f in frames]),
            iterations=path.num_iterations,
        )

    return scenario, run(poses, velocities)


def test_lengths_and_speeds_match_opensim(solved):
    scenario, out = solved
    configs = scenario["configurations"]
    if scenario is SCENARIOS["upstream_simple_cable"]:
        # Smooth, as OpenSim says, but not taut: the straight lines between the neighbours of
        # the ellipsoid and the second torus miss them (test_upstream.test_simple_cable_lengths).
        assert bool(jnp.all(out["not_taut"]))
    else:
        assert bool(jnp.all(out["converged"]))
    np.testing.assert_allclose(out["length"], [c["length"] for c in configs], atol=1e-8, rtol=0)
    # Both paths are converged to smoothness 1e-5 rad: line directions, and with them the
    # lengthening speed, agree to about that times the end-point speeds (~1 m/s).
    np.testing.assert_allclose(out["length_dot"], [c["lengthening_speed"] for c in configs], atol=1e-5, rtol=0)


def test_iteration_counts_match_opensim(solved):
    """Same algorithm, same step limiter, same start: the same number of corrections."""
    scenario, out = solved
    np.testing.assert_array_equal(out["iterations"], [c["num_iterations"] for c in scenario["configurations"]])


def test_contact_points_match_opensim(solved):
    scenario, out = solved
    for k, config in enumerate(scenario["configurations"]):
        for i, expected in enumerate(config["obstacles"]):
            assert bool(out["in_contact"][k, i]) == expected["in_contact"]
            if expected["in_contact"]:
                np.testing.assert_allclose(out["P"][k, i], expected["P"], atol=2e-5)
                np.testing.assert_allclose(out["Q"][k, i], expected["Q"], atol=2e-5)
                np.testing.assert_allclose(out["R_P"][k, i], np.asarray(expected["frame_P"]["rotation"]), atol=1e-4)


def test_moment_arms_match_opensim():
    """Moment arm = -dL/dθ by implicit differentiation of the solved path, where θ turns the
    forearm about the elbow axis; against OpenSim's computeMomentArm over the sweep."""
    scenario = SCENARIOS["arm_sweep"]
    cable = cable_from(scenario)
    child = scenario["joint"]["child_body"]
    poses, _ = batched_poses(scenario)
    axes = jnp.asarray([c["joint_axis_in_ground"] for c in scenario["configurations"]])
    pivots = jnp.asarray([c["joint_point_in_ground"] for c in scenario["configurations"]])

    @jax.jit
    @jax.vmap
    def moment_arm(X, axis, pivot):
        def length(delta):
            R = jw.Transform.from_axis_angle(axis * delta)
            turn = jw.Transform(R.rotation, pivot - R.rotation @ pivot)
            X_child = turn @ X[child]
            moved = jw.Transform(X.rotation.at[child].set(X_child.rotation), X.translation.at[child].set(X_child.translation))
            return cable.solve(moved).length

        return -jax.grad(length)(jnp.zeros(()))

    expected = np.array([c["moment_arm"] for c in scenario["configurations"]])
    np.testing.assert_allclose(moment_arm(poses, axes, pivots), expected, atol=1e-7, rtol=0)
