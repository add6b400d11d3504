"""More OpenSim models through `jaxwrap.load_osim`, against OpenSim 4.6's numbers stored by
tests/reference/generate_osim_fixtures.py:

- ``joints.osim`` (written by the script): Ball, Free, Universal, Gimbal, Planar, Pin and
  Slider joints at random offsets; body poses, a muscle's length and moment arms;
- ``gait9dof18musc.osim`` (osim-rl, CC BY 3.0): a PlanarJoint pelvis, spline-coupled
  CustomJoint knees, MovingPathPoints and ConditionalPathPoints, over knee sweeps through
  every conditional point's switch and random configurations;
- ``scholz_obstacles.osim`` (written by the script): Scholz2015GeometryPath muscles over a
  sphere, a cylinder, a torus ring, an ellipsoid on the moving forearm, and a
  sphere-via-cylinder chain, each configuration solved cold from the contact hints.
"""

from __future__ import annotations

import functools
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from shortest_paths import outside_ellipsoid, outside_torus, shortest_polyline_length

import jaxwrap as jw
from jaxwrap._results import RESULTS

opensim = pytest.importorskip("opensim")
pytestmark = pytest.mark.xdist_group("test_osim_models")

HERE = pathlib.Path(__file__).parents[1]
DATA = HERE / "data" / "osim"


def fixture(name: str):
    return np.load(HERE / "reference" / f"osim_{name}.npz")


def evaluate(model, cables, qs):
    def one(q):
        poses = jw.forward_kinematics(model, q)
        paths = jw.solve_cables(cables, poses, q)
        return poses, paths.length, jw.moment_arms_from_paths(model, cables, q, paths), paths.result._value

    return jax.jit(jax.vmap(one))(jnp.asarray(qs))


def assert_body_poses(model, poses, data, path, atol):
    """OpenSim's body frames against jaxwrap's (which differ by the constant child
    offset): each body's centre of mass in ground, and a constant relative pose."""
    reference = opensim.Model(str(path))  # kept alive while its bodies are read
    bodies = reference.getBodySet()
    for b, name in enumerate(data["body_names"]):
        k = model.body_index(str(name))
        R, p = np.asarray(poses.rotation[:, k]), np.asarray(poses.translation[:, k])
        com = np.array([bodies.get(str(name)).getMassCenter().get(i) for i in range(3)])
        theirs = np.einsum("nij,j->ni", data["body_R"][:, b], com) + data["body_p"][:, b]
        ours = np.einsum("nij,j->ni", R, np.asarray(model.body_coms[k])) + p
        np.testing.assert_allclose(ours, theirs, atol=atol, err_msg=str(name))
        offset_R = np.einsum("nji,njk->nik", R, data["body_R"][:, b])
        offset_p = np.einsum("nji,nj->ni", R, data["body_p"][:, b] - p)
        np.testing.assert_allclose(offset_R, np.broadcast_to(offset_R[0], offset_R.shape), atol=atol)
        np.testing.assert_allclose(offset_p, np.broadcast_to(offset_p[0], offset_p.shape), atol=atol)


# ---------------------------------------------------------------------------- joints
def test_every_standard_joint_matches_opensim():
    data = fixture("joints")
    model, cables = jw.load_osim(str(DATA / "joints.osim"))
    assert model.joint_names == tuple(
        f"{kind}_coord_{i}"
        for kind, n in [
            ("BallJoint", 3),
            ("FreeJoint", 6),
            ("UniversalJoint", 2),
            ("GimbalJoint", 3),
            ("PlanarJoint", 3),
            ("PinJoint", 1),
            ("SliderJoint", 1),
        ]
        for i in range(n)
    )
    poses, lengths, arms, codes = evaluate(model, cables, data["q"])
    assert_body_poses(model, poses, data, DATA / "joints.osim", atol=1e-13)
    np.testing.assert_allclose(np.asarray(lengths), data["lengths"], rtol=1e-13)
    np.testing.assert_allclose(np.asarray(arms), data["moment_arms"], atol=1e-12)
    assert np.all(np.asarray(codes) == 0)


# ---------------------------------------------------------------------------- gait model
@pytest.fixture(scope="module")
def gait():
    return jw.load_osim(str(DATA / "gait9dof18musc.osim"))


@pytest.fixture(scope="module")
def gait_solved(gait):
    return evaluate(*gait, fixture("gait9dof")["q"])


def test_gait_model_structure(gait):
    model, cables = gait
    data = fixture("gait9dof")
    # q is OpenSim's coordinate order, though the planar pelvis joint is a chain tx, ty, rz.
    assert model.joint_names[:3] == ("pelvis_tilt", "pelvis_tx", "pelvis_ty")
    assert model.nq == data["q"].shape[1] == 10
    assert cables.names == tuple(data["path_names"])
    assert model.couplings, "the knees' spline translations and the moving path points are coupled joints"
    # Each muscle with a conditional path point has a branch per combination.
    assert len(cables["rect_fem_r"]) == 2 and any(cables.conditional)


def test_gait_model_equals_opensim(gait, gait_solved):
    model, cables = gait
    data = fixture("gait9dof")
    poses, lengths, arms, codes = gait_solved
    assert_body_poses(model, poses, data, DATA / "gait9dof18musc.osim", atol=1e-13)
    np.testing.assert_allclose(np.asarray(lengths), data["lengths"], atol=1e-12)
    np.testing.assert_allclose(np.asarray(arms), data["moment_arms"], atol=1e-12)
    assert np.all(np.asarray(codes) == 0)


def test_gait_sweeps_cross_every_conditional_switch(gait):
    _, cables = gait
    q = fixture("gait9dof")["q"]
    for name, per_branch in zip(cables.names, cables.conditions):
        for conditions in per_branch:
            for index, lower, upper, _ in conditions:
                within = (q[:, index] >= lower) & (q[:, index] <= upper)
                assert within.any() and (~within).any(), (name, index, lower, upper)


def test_conditional_switch_and_blend(gait):
    model, _ = gait
    blend = 0.05
    _, blended = jw.load_osim(str(DATA / "gait9dof18musc.osim"), blend=blend)
    _, switched = jw.load_osim(str(DATA / "gait9dof18musc.osim"))
    k = switched.index("rect_fem_r")
    index, lower, _, _ = switched.conditions[k][0][0]
    q0 = np.asarray(model.neutral()).copy()

    def at(knee):
        q = q0.copy()
        q[index] = knee
        return jnp.asarray(q)

    lengths = jax.jit(jax.vmap(lambda q: jw.cable_lengths(model, switched, q)))
    both = jax.jit(jax.vmap(lambda q: jw.cable_lengths_and_moment_arms(model, blended, q)))
    # The switch: a jump at the range's bound, of the two branches' difference.
    eps = 1e-9
    L = np.asarray(lengths(jnp.stack([at(lower - eps), at(lower + eps)])))[:, k]
    assert abs(L[1] - L[0]) > 1e-4
    # The blend: continuous across the bound, and the moment arm is -dL/dq there too.
    knees = np.array([lower - eps, lower + eps, lower + 0.01, lower + 0.01 + 1e-6, lower + 0.01 - 1e-6])
    Lb, Rb = both(jnp.stack([at(x) for x in knees]))
    Lb, Rb = np.asarray(Lb)[:, k], np.asarray(Rb)[:, k, index]
    assert abs(Lb[1] - Lb[0]) < 1e-9
    assert abs(Lb[2] - L[0]) > 1e-6 and abs(Lb[2] - L[1]) > 1e-6  # inside the blend: between
    fd = -(Lb[3] - Lb[4]) / 2e-6
    np.testing.assert_allclose(Rb[2], fd, atol=1e-7)


# ---------------------------------------------------------------------------- Scholz2015
SCHOLZ_SETTINGS = jw.CableSettings(smoothness_tolerance=1e-8, curve_segment_accuracy=1e-11)


@pytest.fixture(scope="module")
def scholz():
    return jw.load_osim(str(DATA / "scholz_obstacles.osim"), settings=SCHOLZ_SETTINGS)


@pytest.fixture(scope="module")
def scholz_solved(scholz):
    return evaluate(*scholz, fixture("scholz")["q"])


def test_scholz_paths_map_one_to_one(scholz):
    model, cables = scholz
    names = ("over_sphere", "over_cylinder", "through_ring", "over_ellipsoid", "chain", "classic_ring")
    assert cables.names == names
    kinds = [[type(o.surface).__name__ for o in cables[name][0].obstacles] for name in cables.names]
    assert kinds == [["Sphere"], ["Cylinder"], ["Torus"], ["Ellipsoid"], ["Sphere", "Cylinder"], ["Torus"]]
    assert len(cables["chain"][0].via_points) == 1
    assert model.joint_names == ("shoulder_angle", "elbow_angle")


def test_scholz_lengths_and_moment_arms_against_opensim(scholz, scholz_solved):
    """Sphere, cylinder and the chain: OpenSim's lengths to 1e-8 relative everywhere and
    jaxwrap's moment arms equal to -dL/dq of OpenSim's lengths (central differences) to
    1e-6. OpenSim's own computeMomentArm has the opposite sign wherever the path
    wraps the far side of its obstacle (opensim-core issue 4330): reported, not asserted."""
    _, cables = scholz
    data = fixture("scholz")
    _, lengths, arms, codes = scholz_solved
    lengths, arms, codes = np.asarray(lengths), np.asarray(arms), np.asarray(codes)
    differences = data["length_differences"]
    for name in ("over_sphere", "over_cylinder", "chain"):
        k = cables.index(name)
        assert np.all(codes[:, k] == 0), name
        np.testing.assert_allclose(lengths[:, k], data["lengths"][:, k], rtol=1e-8)
        np.testing.assert_allclose(arms[:, k], differences[:, k], atol=1e-6)
        theirs = data["moment_arms"][:, k]
        finite = np.isfinite(theirs)
        flipped = np.isclose(theirs, -differences[:, k], atol=1e-5) & ~np.isclose(theirs, 0.0, atol=1e-5)
        print(f"{name}: OpenSim computeMomentArm sign-flipped in {flipped[finite].mean():.0%} of entries")


def test_scholz_surfaces_without_closed_form(scholz, scholz_solved):
    """Torus ring and moving ellipsoid: a path either converges or says so (98 % of the
    ellipsoid's, all of the ring's converge; the two failures lie where the path just
    touches down on the ellipsoid); a converged path is never longer than OpenSim's (whose
    Scholz2015 paths follow their contact hints into other, longer local paths in some
    configurations) and, where shorter, it is the shortest path by an independent
    polyline minimiser (1e-5 m)."""
    model, cables = scholz
    data = fixture("scholz")
    poses, lengths, _, codes = scholz_solved
    lengths, codes = np.asarray(lengths), np.asarray(codes)
    obstacles = {
        "through_ring": outside_torus(0.03, 0.008),
        "over_ellipsoid": outside_ellipsoid(np.array([0.03, 0.02, 0.04])),
    }
    for name, outside in obstacles.items():
        k = cables.index(name)
        ok = codes[:, k] == 0
        assert set(codes[~ok, k].tolist()) <= {int(RESULTS.max_iterations_reached._value)}
        assert ok.mean() > 0.97, (name, ok.mean())
        excess = (lengths[:, k] - data["lengths"][:, k]) / data["lengths"][:, k]
        assert excess[ok].max() < 1e-8, (name, excess[ok].max())
        shorter = np.flatnonzero(ok & (excess < -1e-6))
        print(f"{name}: {ok.mean():.1%} converge")
        print(
            f"{name}: jaxwrap shorter than OpenSim by up to {-excess.min():.2e} (relative) in {len(shorter)} configurations"
        )
        span = cables[name][0]
        obstacle = span.obstacles[0]
        for i in shorter[:: max(1, len(shorter) // 3)][:3]:
            X = jax.tree.map(lambda x, i=i: x[i], poses)
            X_GS = X[obstacle.body] @ obstacle.X_BS
            a = np.asarray(X_GS.inverse().apply(X[span.origin_body].apply(span.origin_station)))
            b = np.asarray(X_GS.inverse().apply(X[span.termination_body].apply(span.termination_station)))
            reference = shortest_polyline_length(a, b, outside, size=0.04)
            np.testing.assert_allclose(lengths[i, k], reference["length"], atol=1e-5)


def ring_leg(model, span, q):
    """The classic ring muscle's end points in the torus frame at ``q``."""
    obstacle = span.obstacles[0]
    X = jw.forward_kinematics(model, jnp.asarray(q))
    X_GS = X[obstacle.body] @ obstacle.X_BS
    a = np.asarray(X_GS.inverse().apply(X[span.origin_body].apply(span.origin_station)))
    b = np.asarray(X_GS.inverse().apply(X[span.termination_body].apply(span.termination_station)))
    return a, b


def test_classic_wrap_torus_against_the_exact_path(scholz, scholz_solved):
    """OpenSim's classic WrapTorus replaces the torus by a cylinder at the contact point:
    on the ring it comes out up to 2.5 cm (12 %) longer than the shortest path, which
    jaxwrap finds (equal to the polyline minimiser to 1e-5 m) and which is the straight
    line there."""
    model, cables = scholz
    data = fixture("scholz")
    k = cables.index("classic_ring")
    lengths, codes = np.asarray(scholz_solved[1]), np.asarray(scholz_solved[3])
    assert np.all(codes[:, k] == 0)
    excess = data["lengths"][:, k] - lengths[:, k]
    print(f"classic_ring: OpenSim longer than jaxwrap by up to {excess.max():.3e} m")
    assert excess.max() > 0.02
    for i in np.argsort(-excess)[:2]:
        a, b = ring_leg(model, cables["classic_ring"][0], data["q"][i])
        reference = shortest_polyline_length(a, b, outside_torus(0.03, 0.008), size=0.04)
        np.testing.assert_allclose(lengths[i, k], reference["length"], atol=1e-5)


def _grazing_ring_lengths(scholz, scholz_solved, elbow):
    """jaxwrap's and the polyline minimiser's lengths of the classic ring's path at every
    configuration of the fixture with this elbow angle."""
    model, cables = scholz
    data = fixture("scholz")
    k = cables.index("classic_ring")
    ours, shortest = [], []
    for i in np.flatnonzero(np.isclose(data["q"][:, 1], elbow)):
        a, b = ring_leg(model, cables["classic_ring"][0], data["q"][i])
        shortest.append(shortest_polyline_length(a, b, outside_torus(0.03, 0.008), size=0.04)["length"])
        ours.append(np.asarray(scholz_solved[1])[i, k])
    assert ours
    return np.array(ours), np.array(shortest)


def test_classic_ring_grazing_contact_finds_the_shortest_path(scholz, scholz_solved):
    """Where the path only grazes the ring's inner rim at elbow 0.7 rad the default
    algorithm finds the shortest path. With the Gauss-Newton polish below 1e-2 rad (the
    default until issue 13's stop 32) it kept a path round the rim 1 mm longer there: the
    minimum-length step needed about 146 iterations (docs/opensim.md)."""
    ours, shortest = _grazing_ring_lengths(scholz, scholz_solved, 0.7)
    np.testing.assert_allclose(ours, shortest, atol=1e-5)


@pytest.mark.xfail(
    strict=True,
    reason="known gap: at elbow 0.8 rad, where the path grazes the ring's inner rim, the default "
    "candidates keep a path round the rim 0.07 mm longer than the shortest; scholz2015 finds it "
    "(test_grazing_ring_with_scholz2015_finds_the_shortest_path, docs/opensim.md)",
)
def test_classic_ring_grazing_contact_at_0_8_rad_finds_the_shortest_path(scholz, scholz_solved):
    ours, shortest = _grazing_ring_lengths(scholz, scholz_solved, 0.8)
    np.testing.assert_allclose(ours, shortest, atol=1e-5)


def test_unsupported_osim_elements_raise():
    model = opensim.Model()
    body = opensim.Body("b", 1.0, opensim.Vec3(0), opensim.Inertia(0.1))
    joint = opensim.PinJoint(
        "pin", model.getGround(), opensim.Vec3(0), opensim.Vec3(0), body, opensim.Vec3(0), opensim.Vec3(0)
    )
    model.addBody(body)
    model.addJoint(joint)
    actuator = opensim.PathActuator()
    actuator.setName("rope")
    actuator.set_path(opensim.Scholz2015GeometryPath())
    model.addForce(actuator)
    plane = opensim.ContactHalfSpace(opensim.Vec3(0), opensim.Vec3(0), body, "floor")
    model.addContactGeometry(plane)
    path = opensim.Scholz2015GeometryPath.safeDownCast(actuator.updPath())
    path.appendPathPoint(model.getGround(), opensim.Vec3(-0.1, 0.1, 0))
    path.appendObstacle(plane, opensim.Vec3(0))
    path.appendPathPoint(body, opensim.Vec3(-0.1, -0.1, 0))
    model.finalizeConnections()
    with pytest.raises(ValueError, match="PathActuator 'rope': obstacle 'floor' is a ContactHalfSpace"):
        jw.load_osim(model)


def test_tendons_command_reads_osim_models(tmp_path):
    """`jaxwrap tendons MODEL.osim`: a row per muscle at the default pose, and the plot."""
    import io

    from jaxwrap.cli import run_tendons

    out = io.StringIO()
    plot = tmp_path / "muscles.png"
    with jax.enable_x64(True):
        run_tendons(str(DATA / "gait9dof18musc.osim"), num=3, plot=str(plot), out=out)
    text = out.getvalue()
    assert "reference pose (default coordinates)" in text
    for name in ("hamstrings_r", "rect_fem_l", "tib_ant_r"):
        assert f"  {name}" in text
    assert "knee_angle_r" in text and plot.exists()


def test_grazing_ring_with_scholz2015_finds_the_shortest_path(scholz):
    """With ``algorithm="scholz2015"`` the default cold start also finds the shortest path
    through the ring at the grazing configurations."""
    model, cables = scholz
    span = cables["classic_ring"][0]
    surface = span.obstacles[0].surface
    solve = jax.jit(jw.solve_cable)
    poses = jw.Transform.stack([jw.Transform.identity()])
    for elbow in (0.7, 0.8):
        a, b = ring_leg(model, span, np.array([0.0, elbow]))
        leg = jw.CableSpan(0, a, 0, b).add_obstacle(0, jw.Transform.identity(), surface)
        path = solve(leg.with_settings(algorithm="scholz2015"), poses)
        reference = shortest_polyline_length(a, b, outside_torus(0.03, 0.008), size=0.04)
        assert bool(path.converged)
        np.testing.assert_allclose(float(path.length), reference["length"], atol=1e-5)


def test_constraints_raise_unless_ignored():
    model = opensim.Model(str(DATA / "joints.osim"))
    coordinates = model.getCoordinateSet()
    coupler = opensim.CoordinateCouplerConstraint()
    coupler.setName("pin_follows_slider")
    independent = opensim.ArrayStr()
    independent.append(coordinates.get("SliderJoint_coord_0").getName())
    coupler.setIndependentCoordinateNames(independent)
    coupler.setDependentCoordinateName(coordinates.get("PinJoint_coord_0").getName())
    coupler.setFunction(opensim.LinearFunction(2.0, 0.0))
    model.addConstraint(coupler)
    with pytest.raises(ValueError, match="CoordinateCouplerConstraint 'pin_follows_slider'"):
        jw.load_osim(model)
    loaded, cables = jw.load_osim(model, constraints="ignore")
    assert loaded.nq == coordinates.getSize() and len(cables) == 1


def test_coordinate_without_a_unit_slope_axis_gets_a_holder_body(tmp_path):
    """A coordinate whose every axis has another slope than ±1 (MoBL-ARMS's wrist angles
    are split 0.5/0.5 over two joints) is held by a massless body of its own, and the axes
    are coupled to it: here the gait model's right knee turned by half its angle."""
    text = (DATA / "gait9dof18musc.osim").read_text()
    start = text.index('<CustomJoint name="knee_r">')
    end = text.index("</CustomJoint>", start)
    old = "<coefficients> 1 0</coefficients>"
    assert text[start:end].count(old) == 1  # rotation1, the knee angle itself
    path = tmp_path / "half_knee.osim"
    path.write_text(text[:start] + text[start:end].replace(old, "<coefficients> 0.5 0</coefficients>") + text[end:])
    model = opensim.Model(str(path))
    state = model.initSystem()
    loaded, cables = jw.load_osim(model)
    assert "tibia_r/knee_angle_r:coordinate" in loaded.body_names
    assert loaded.joint_names[4] == "knee_angle_r"
    coordinates = model.getCoordinateSet()
    coordinates.get(4).setValue(state, -1.1)
    model.realizePosition(state)
    q = np.array([coordinates.get(i).getValue(state) for i in range(coordinates.getSize())])
    poses = jw.forward_kinematics(loaded, jnp.asarray(q))
    tibia = model.getBodySet().get("tibia_r")
    X = tibia.getTransformInGround(state)
    com = np.array([tibia.getMassCenter().get(i) for i in range(3)])
    theirs = np.array([[X.R().asMat33().get(i, j) for j in range(3)] for i in range(3)]) @ com
    theirs = theirs + np.array([X.p().get(i) for i in range(3)])
    k = loaded.body_index("tibia_r")
    np.testing.assert_allclose(np.asarray(poses[k].apply(loaded.body_coms[k])), theirs, atol=1e-13)
    lengths, arms = jax.jit(jw.cable_lengths_and_moment_arms)(loaded, cables, jnp.asarray(q))
    r = cables.index("vasti_r")
    muscle = opensim.PathActuator.safeDownCast(model.getForceSet().get("vasti_r")).getPath()
    np.testing.assert_allclose(float(lengths[r]), muscle.getLength(state), atol=1e-12)
    np.testing.assert_allclose(float(arms[r, 4]), muscle.computeMomentArm(state, coordinates.get(4)), atol=1e-10)


def test_polynomial_knee_functions_match_opensim(tmp_path):
    """OpenSim's ``PolynomialFunction`` (Rajagopal, Lai and Uhlrich's 2023 knee: quartics of
    the knee angle) becomes a `jw.Polynomial`: the gait model's right knee with its two
    spline translations replaced by quartics (fitted to the splines; the second one inside
    a ``MultiplierFunction``), its body poses, and the lengths and moment arms of the
    muscles crossing it against OpenSim over the knee's range."""
    text = (DATA / "gait9dof18musc.osim").read_text()
    start = text.index('<CustomJoint name="knee_r">')
    end = text.index("</CustomJoint>", start)
    block = text[start:end]
    quartics = {
        "translation1": "<PolynomialFunction><coefficients>0.001362 0.008246 0.008254 -0.006906 -0.00429"
        "</coefficients></PolynomialFunction>",
        "translation2": "<MultiplierFunction><function><PolynomialFunction><coefficients>0.001474 0.003872 "
        "-0.002636 0.003818 -0.395823</coefficients></PolynomialFunction></function><scale>1.01</scale>"
        "</MultiplierFunction>",
    }
    for axis, function in quartics.items():
        a = block.index(f'<TransformAxis name="{axis}">')
        s, e = block.index("<SimmSpline>", a), block.index("</SimmSpline>", a) + len("</SimmSpline>")
        block = block[:s] + function + block[e:]
    path = tmp_path / "polynomial_knee.osim"
    path.write_text(text[:start] + block + text[end:])
    model = opensim.Model(str(path))
    state = model.initSystem()
    loaded, cables = jw.load_osim(model)
    functions = [f for f in loaded.joint_functions if isinstance(f, jw.Polynomial)]
    assert len(functions) == 2 and functions[1].coefficients.shape == (5,)
    coordinates = model.getCoordinateSet()
    knee = [coordinates.get(i).getName() for i in range(coordinates.getSize())].index("knee_angle_r")
    muscles = ["vasti_r", "rect_fem_r", "hamstrings_r", "bifemsh_r", "gastroc_r"]
    tibia = model.getBodySet().get("tibia_r")
    com = np.array([tibia.getMassCenter().get(i) for i in range(3)])
    qs, theirs, lengths, arms = [], [], [], []
    for angle in np.linspace(-2.0, 0.1, 6):
        coordinates.get(knee).setValue(state, float(angle))
        model.realizePosition(state)
        qs.append([coordinates.get(i).getValue(state) for i in range(coordinates.getSize())])
        X = tibia.getTransformInGround(state)
        R = np.array([[X.R().asMat33().get(i, j) for j in range(3)] for i in range(3)])
        theirs.append(R @ com + np.array([X.p().get(i) for i in range(3)]))
        paths = [opensim.PathActuator.safeDownCast(model.getForceSet().get(m)).getPath() for m in muscles]
        lengths.append([p.getLength(state) for p in paths])
        arms.append([p.computeMomentArm(state, coordinates.get(knee)) for p in paths])
    poses, ours, our_arms, codes = evaluate(loaded, cables, np.array(qs))
    k = loaded.body_index("tibia_r")
    ours_com = np.einsum("nij,j->ni", np.asarray(poses.rotation[:, k]), np.asarray(loaded.body_coms[k]))
    np.testing.assert_allclose(ours_com + np.asarray(poses.translation[:, k]), np.array(theirs), atol=1e-13)
    rows = [cables.index(m) for m in muscles]
    np.testing.assert_allclose(np.asarray(ours)[:, rows], np.array(lengths), atol=1e-12)
    np.testing.assert_allclose(np.asarray(our_arms)[:, rows, knee], np.array(arms), atol=1e-9)
    assert np.all(np.asarray(codes) == 0)


def test_compare_models_script_on_the_gait_model(capsys):
    """benchmarks/compare_models.py (real model files against their own library) on the
    gait model: every length equals OpenSim's at the default pose and random ones."""
    import sys

    sys.path.insert(0, str(HERE.parent / "benchmarks"))
    import compare_models

    compare_models.compare(str(DATA / "gait9dof18musc.osim"), num=3, seed=0, tol=1e-9, show=3)
    out = capsys.readouterr().out
    assert "18 paths, 3 configurations" in out and "0 paths beyond 1e-09 m, 0 NaN, 0 unsuccessful" in out, out


def _knee_with_two_wraps(shank_first: bool):
    """A femur and a tibia on a pin knee, and a gastrocnemius-like path from the femur to
    the tibia over two cylinders: the femoral condyles' (on the femur) and the shank's (on
    the tibia, quadrant ``-y``), with Rajagopal 2016's placements and radii. The path
    meets the condyles first; ``shank_first`` lists the shank first in its wrap set, as
    Rajagopal's gastrocnemii do."""
    model = opensim.Model()
    model.setName("knee_with_two_wraps")
    femur = opensim.Body("femur", 8.0, opensim.Vec3(0, -0.2, 0), opensim.Inertia(0.1, 0.02, 0.1))
    tibia = opensim.Body("tibia", 3.0, opensim.Vec3(0, -0.2, 0), opensim.Inertia(0.04, 0.005, 0.04))
    model.addBody(femur)
    model.addBody(tibia)
    origin = opensim.Vec3(0)
    model.addJoint(opensim.WeldJoint("hip", model.getGround(), opensim.Vec3(0, 1, 0), origin, femur, origin, origin))
    knee = opensim.PinJoint("knee", femur, opensim.Vec3(0, -0.41, 0), origin, tibia, origin, origin)
    knee.updCoordinate().setName("knee_angle")
    knee.updCoordinate().setRangeMin(-1.0)
    knee.updCoordinate().setRangeMax(0.2)
    model.addJoint(knee)
    condyles = opensim.WrapCylinder()
    condyles.setName("condyles")
    condyles.set_radius(0.026)
    condyles.set_length(0.1)
    condyles.set_translation(opensim.Vec3(0.005, -0.41, 0))
    femur.addWrapObject(condyles)
    shank = opensim.WrapCylinder()
    shank.setName("shank")
    shank.set_radius(0.055)
    shank.set_length(0.1)
    shank.set_xyz_body_rotation(opensim.Vec3(2.96723, -0.279725, -1.47812))
    shank.set_translation(opensim.Vec3(-0.0074, -0.074, -0.0033))
    shank.set_quadrant("-y")
    tibia.addWrapObject(shank)
    muscle = opensim.PathActuator()
    muscle.setName("gastrocnemius")
    muscle.addNewPathPoint("origin", femur, opensim.Vec3(0.002, -0.381, 0.02059))
    muscle.addNewPathPoint("insertion", tibia, opensim.Vec3(-0.0444, -0.4409, 0.0026))
    for wrap in [shank, condyles] if shank_first else [condyles, shank]:
        muscle.updGeometryPath().addPathWrap(wrap)
    model.addForce(muscle)
    return model


@jax.jit
@functools.partial(jax.vmap, in_axes=(None, None, 0))
def _solve_span(span, model, q):
    return jw.solve_cable(span, jw.forward_kinematics(model, q))


def _helix_length(a, b, R, t):
    """Length of the helix from a to b on the cylinder about the z axis of (R, t), the
    shorter way round."""
    a, b = (a - t) @ R, (b - t) @ R
    turn = np.angle(complex(b[0], b[1]) / complex(a[0], a[1]))
    return np.hypot(np.hypot(a[0], a[1]) * abs(turn), b[2] - a[2])


def test_wraps_of_one_segment_are_in_the_order_the_path_meets_them():
    """Two wrap objects on one segment become obstacles in the order OpenSim's path meets
    them, whatever the order of the wrap set (docs/opensim.md#which-segment-wrap-objects).
    In wrap-set order, Rajagopal's gastrocnemii went over the shank cylinder before the
    condyles: the shank's touchdown was looked for before the condyles, and the path
    from the condyles to the insertion went through the shank cylinder, reported as
    converged.

    Over the knee's range, with either wrap-set order: the same obstacle order and the
    same lengths, every path converged, where it wraps both cylinders its straight pieces
    clear of both, and no longer than the path through OpenSim's own wrap points
    (helices between each wrap's two points). OpenSim's reported length is shorter than
    that path by up to 1 cm: its shank wrap's length is not that of a curve between its
    wrap points."""
    angles = np.linspace(-1.0, 0.2, 7)
    lengths = {}
    for shank_first in (True, False):
        osim_model = _knee_with_two_wraps(shank_first)
        state = osim_model.initSystem()
        model, cables = jw.load_osim(osim_model)
        (span,) = cables["gastrocnemius"]
        assert [model.body_names[o.body] for o in span.obstacles] == ["femur", "tibia"]
        assert span.settings.scale_free_step  # a classic path's default (docs/opensim.md#solver-settings)
        paths = _solve_span(span, model, jnp.asarray(angles[:, None]))
        assert np.all(np.asarray(paths.result._value) == 0)
        lengths[shank_first] = np.asarray(paths.length)
        if not shank_first:
            continue
        coordinate = osim_model.getCoordinateSet().get(0)
        path = opensim.PathActuator.safeDownCast(osim_model.getForceSet().get(0)).getGeometryPath()
        R, t = np.asarray(paths.scene.X_GS.rotation), np.asarray(paths.scene.X_GS.translation)
        P, Q = np.asarray(paths.evaluation.curves.P), np.asarray(paths.evaluation.curves.Q)
        in_contact = np.asarray(paths.in_contact)
        both = 0
        for n, angle in enumerate(angles):
            coordinate.setValue(state, float(angle))
            osim_model.realizePosition(state)
            current = path.getCurrentPath(state)
            points = [current.get(i) for i in range(current.getSize())]
            where = [np.array([p.getLocationInGround(state).get(j) for j in range(3)]) for p in points]
            wraps = [opensim.PathWrapPoint.safeDownCast(p) for p in points]
            wraps = [w.getWrapObject().getName() if w is not None else None for w in wraps]
            through_theirs = 0.0
            for i in range(len(points) - 1):
                if wraps[i] is not None and wraps[i + 1] == wraps[i]:
                    o = ["condyles", "shank"].index(wraps[i])
                    through_theirs += _helix_length(where[i], where[i + 1], R[n, o], t[n, o])
                else:
                    through_theirs += np.linalg.norm(where[i + 1] - where[i])
            assert lengths[True][n] <= through_theirs + 1e-9, angle
            if not in_contact[n].all():
                continue
            both += 1
            ends = [paths.scene.origin[n], P[n, 0], Q[n, 0], P[n, 1], Q[n, 1], paths.scene.termination[n]]
            for a, b in zip(ends[::2], ends[1::2]):
                s = np.linspace(0, 1, 401)[:, None]
                line = np.asarray(a) + s * (np.asarray(b) - np.asarray(a))
                for o, radius in enumerate((0.026, 0.055)):
                    local = (line - t[n, o]) @ R[n, o]
                    assert np.hypot(local[:, 0], local[:, 1]).min() >= radius - 1e-9, (angle, o)
        assert both >= 3
    np.testing.assert_allclose(lengths[True], lengths[False], rtol=0, atol=1e-12)


def test_models_load_and_evaluate_in_float32():
    """Without x64, `load_osim` builds a float32 model: its check of each spline and
    polynomial against OpenSim's ``calcValue`` allows float32's rounding (it raised at
    1e-9 before stop 46). The gait model's lengths and moment arms (coupled knees, moving
    and conditional path points) and arm26's cylinder-wrapped muscles agree with
    OpenSim's in float32, every path successful."""
    gait = fixture("gait9dof")
    arm = np.load(HERE / "reference" / "osim_arm26.npz")
    wrapped = ["BICshort", "BRA", "TRIlat", "TRImed"]
    with jax.enable_x64(False):
        model, cables = jw.load_osim(str(DATA / "gait9dof18musc.osim"))
        assert model.body_coms.dtype == jnp.float32
        _, lengths, arms, codes = evaluate(model, cables, gait["q"][:32].astype(np.float32))
        arm_model, arm_cables = jw.load_osim(str(DATA / "arm26.osim"))
        arm_cables = jw.CableSet(wrapped, [arm_cables[name] for name in wrapped])
        _, arm_lengths, _, arm_codes = evaluate(arm_model, arm_cables, arm["q"].astype(np.float32))
    assert lengths.dtype == jnp.float32 and arm_lengths.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(lengths), gait["lengths"][:32], atol=1e-6)  # measured 1.6e-7 m
    np.testing.assert_allclose(np.asarray(arms), gait["moment_arms"][:32], atol=1e-6)  # 1.8e-7 m
    assert np.all(np.asarray(codes) == 0) and np.all(np.asarray(arm_codes) == 0)
    columns = [[str(n) for n in arm["path_names"]].index(name) for name in wrapped]
    # OpenSim's cylinder tangent points are up to 2.4e-5 m long (docs/opensim.md).
    np.testing.assert_allclose(np.asarray(arm_lengths), arm["lengths"][:, columns], atol=3e-5)


def test_wrap_order_follows_the_probes_and_warns_where_they_disagree():
    """The order of a segment's wraps is the probes' majority (wrap-set order where no
    probe saw two together), with a warning naming the wraps where some probe met them
    the other way round."""
    from jaxwrap._io._osim import _path_order

    names = ["shank", "condyles", "patella"]
    assert _path_order([0, 1, 2], {}, names, "m") == [0, 1, 2]
    votes = {(1, 0): 40, (2, 0): 12, (1, 2): 3}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _path_order([0, 1, 2], votes, names, "m") == [1, 2, 0]
    votes[0, 1] = 2
    with pytest.warns(
        UserWarning, match=r"m: OpenSim's path met wrap 'condyles' before 'shank' in 40 probes and after it in 2"
    ):
        assert _path_order([0, 1, 2], votes, names, "m") == [1, 2, 0]
