"""OpenSim's arm26 (tests/data/osim, CC BY 3.0) through `jaxwrap.load_osim`, against OpenSim
4.6's numbers in tests/reference/osim_arm26.npz (written by
tests/reference/generate_osim_fixtures.py) and against independent shortest paths.

- body poses: equal to OpenSim's;
- BICshort (no wrap): lengths and moment arms equal to OpenSim's;
- TRIlat, TRImed, BRA (the TRI cylinder): jaxwrap's path is the exact shortest one
  (BRA against the developed-cylinder closed form to 1e-12), never longer than OpenSim's,
  which places its tangent points by an iteration to 1 degree and comes out up to
  2.4e-5 m longer;
- BIClong (humeral-head ellipsoid): the wrapped leg against a shortest-polyline minimiser
  to 1e-5, and the difference from OpenSim's approximate ellipsoid wrap reported;
- TRIlong (two cylinders and an ellipsoid, with quadrants): every configuration either
  converges or reports why (no taut path on the quadrants' sides, or no convergence).
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shortest_paths import cylinder_shortest, outside_ellipsoid, shortest_polyline_length

import jaxwrap as jw
from jaxwrap._results import RESULTS

opensim = pytest.importorskip("opensim")
pytestmark = pytest.mark.xdist_group("test_osim")

HERE = pathlib.Path(__file__).parents[1]
MODEL = HERE / "data" / "osim" / "arm26.osim"
FIXTURE = np.load(HERE / "reference" / "osim_arm26.npz")


@pytest.fixture(scope="module")
def arm26():
    return jw.load_osim(str(MODEL))


@pytest.fixture(scope="module")
def solved(arm26):
    model, cables = arm26

    def evaluate(q):
        poses = jw.forward_kinematics(model, q)
        paths = jw.solve_cables(cables, poses, q)
        return poses, paths.length, jw.moment_arms_from_paths(model, cables, q, paths), paths

    return jax.jit(jax.vmap(evaluate))(jnp.asarray(FIXTURE["q"]))


def test_structure_and_body_poses(arm26, solved):
    model, cables = arm26
    assert model.joint_names == ("r_shoulder_elev", "r_elbow_flex")
    assert cables.names == tuple(FIXTURE["path_names"])
    poses = solved[0]
    for b, name in enumerate(FIXTURE["body_names"]):
        k = model.body_index(str(name))
        np.testing.assert_allclose(np.asarray(poses.rotation[:, k]), FIXTURE["body_R"][:, b], atol=1e-14)
        np.testing.assert_allclose(np.asarray(poses.translation[:, k]), FIXTURE["body_p"][:, b], atol=1e-14)


def test_unwrapped_muscle_equals_opensim(arm26, solved):
    _, cables = arm26
    k = cables.index("BICshort")
    np.testing.assert_allclose(np.asarray(solved[1][:, k]), FIXTURE["lengths"][:, k], atol=1e-14)
    np.testing.assert_allclose(np.asarray(solved[2][:, k]), FIXTURE["moment_arms"][:, k], atol=1e-12)


def test_cylinder_muscles_are_exact_shortest_paths(arm26, solved):
    model, cables = arm26
    _, lengths, arms, paths = solved
    for name in ("TRIlat", "TRImed", "BRA"):
        k = cables.index(name)
        assert np.all(np.asarray(paths.converged[:, k])), name
        diff = np.asarray(lengths[:, k]) - FIXTURE["lengths"][:, k]
        assert diff.max() < 1e-12, (name, diff.max())  # never longer than OpenSim's
        assert np.abs(diff).max() < 3e-5, (name, np.abs(diff).max())
        assert np.abs(np.asarray(arms[:, k]) - FIXTURE["moment_arms"][:, k]).max() < 3e-4
    # BRA is one leg over the TRI cylinder: the developed-cylinder closed form.
    k = cables.index("BRA")
    span = cables["BRA"][0]
    obstacle = span.obstacles[0]
    poses = solved[0]
    wrapped = 0
    for i in range(len(FIXTURE["q"])):
        X = jax.tree.map(lambda x, i=i: x[i], poses)
        X_GS = X[obstacle.body] @ obstacle.X_BS
        a = X_GS.inverse().apply(X[span.origin_body].apply(span.origin_station))
        b = X_GS.inverse().apply(X[span.termination_body].apply(span.termination_station))
        reference = cylinder_shortest(np.asarray(a), np.asarray(b), float(obstacle.surface.radius))
        np.testing.assert_allclose(float(lengths[i, k]), reference, rtol=1e-12)
        wrapped += reference > float(np.linalg.norm(np.asarray(b - a))) + 1e-9
    assert wrapped > 20


def test_ellipsoid_muscle_against_a_polyline_minimiser(arm26, solved):
    """BIClong's second leg passes the humeral-head ellipsoid (quadrant -y, the wrap side).
    Where the leg's path point lies inside the ellipsoid the result says so (OpenSim drops
    the wrap there); elsewhere the solve converges. OpenSim's ellipsoid wrap is an
    approximation: the difference is reported (up to 6.6 mm). The solver's ellipsoid
    geodesics themselves are checked on this leg without the side against an independent
    shortest polyline, to 1e-5."""
    model, cables = arm26
    _, lengths, _, paths = solved
    k = cables.index("BIClong")
    ok = np.asarray(paths.converged[:, k])
    codes = np.asarray(paths.result._value[:, k])
    assert ok.mean() > 0.6
    assert set(codes[~ok].tolist()) <= {int(RESULTS.endpoint_inside_obstacle._value)}
    diff = np.abs(np.asarray(lengths[ok, k]) - FIXTURE["lengths"][ok, k])
    print(f"BIClong: |jaxwrap - OpenSim| up to {diff.max():.2e} m over {ok.sum()} converged configurations")
    assert diff.max() < 1e-2
    span = cables["BIClong"][0]
    obstacle = span.obstacles[0]
    first, second = span.via_points[0], span.via_points[1]
    poses = solved[0]
    radii = np.asarray(obstacle.surface.radii)
    for i in np.flatnonzero(ok)[::9][:3]:
        X = jax.tree.map(lambda x, i=i: x[i], poses)
        X_GS = X[obstacle.body] @ obstacle.X_BS
        a = np.asarray(X_GS.inverse().apply(X[first.body].apply(first.station)))
        b = np.asarray(X_GS.inverse().apply(X[second.body].apply(second.station)))
        reference = shortest_polyline_length(a, b, outside_ellipsoid(radii), size=float(radii.max()))
        leg = jw.solve_cable(
            jw.CableSpan(0, a, 0, b).add_obstacle(0, jw.Transform.identity(), obstacle.surface),
            jw.Transform.stack([jw.Transform.identity()]),
        )
        assert bool(leg.converged)
        np.testing.assert_allclose(float(leg.length), reference["length"], atol=1e-5)


def test_three_obstacle_muscle_converges_or_says_why(arm26, solved):
    """TRIlong converges or reports why. A converged path is within 1 cm of OpenSim's,
    or it is longer because it keeps to the quadrants' sides where OpenSim's quadrant
    logic lets its path pass elsewhere (docs/opensim.md#quadrants-the-side-constraint-against-opensims-quadrant-logic):
    then the same muscle without quadrants converges within 1 cm of OpenSim and shorter
    than the sided path."""
    model, cables = arm26
    _, lengths, _, paths = solved
    k = cables.index("TRIlong")
    ok = np.asarray(paths.converged[:, k])
    codes = set(np.asarray(paths.result._value[~ok, k]).tolist())
    reported = (RESULTS.max_iterations_reached, RESULTS.wrong_side, RESULTS.endpoint_inside_obstacle)
    assert codes <= {int(r._value) for r in reported}, codes
    diff = np.abs(np.asarray(lengths[:, k]) - FIXTURE["lengths"][:, k])
    sided = np.nonzero(ok & (diff >= 1e-2))[0]
    print(
        f"TRIlong: {ok.mean():.0%} converged; |jaxwrap - OpenSim| up to {diff[ok].max():.2e} m there, "
        f"{diff[ok & (diff < 1e-2)].max():.2e} m but for {len(sided)} paths held to the quadrants' sides"
    )
    assert ok.mean() > 0.3 and len(sided) <= 0.02 * len(ok)
    if len(sided):
        _, free = jw.load_osim(str(MODEL), quadrants=False)
        free = jw.CableSet(["TRIlong"], [free["TRIlong"]])
        solve = jax.jit(jax.vmap(jw.solve_cables, in_axes=(None, 0)))
        unsided = solve(
            free, jax.vmap(jw.forward_kinematics, in_axes=(None, 0))(model, jnp.asarray(FIXTURE["q"][sided]))
        )
        assert np.all(np.asarray(unsided.converged[:, 0]))
        np.testing.assert_allclose(np.asarray(unsided.length[:, 0]), FIXTURE["lengths"][sided, k], atol=1e-2)
        assert np.all(np.asarray(unsided.length[:, 0]) < np.asarray(lengths[sided, k]))


def test_unsupported_elements_and_missing_files_raise():
    with pytest.raises(ValueError, match="no OpenSim model file"):
        jw.load_osim(str(MODEL) + ".missing")
    model = opensim.Model()
    body = opensim.Body("b", 1.0, opensim.Vec3(0), opensim.Inertia(0.1))
    joint = opensim.EllipsoidJoint(
        "ellipsoid",
        model.getGround(),
        opensim.Vec3(0),
        opensim.Vec3(0),
        body,
        opensim.Vec3(0),
        opensim.Vec3(0),
        opensim.Vec3(0.1, 0.2, 0.3),
    )
    model.addBody(body)
    model.addJoint(joint)
    with pytest.raises(ValueError, match="joint 'ellipsoid': EllipsoidJoint is not supported"):
        jw.load_osim(model)
