"""MJCF tendons against MuJoCo: `jw.load_mjcf`, `jw.CableSet`, `jw.cable_lengths`,
`jw.moment_arms` on the MyoSuite elbows and MuJoCo's own tendon test models.

The numbers are MuJoCo 3.17's (``ten_length``, ``ten_J``, which geoms each path wrapped),
stored with the models by tests/reference/generate_mjcf_fixtures.py; ``mujoco`` is needed
only to compile the XML (``jw.load_mjcf``). With the default ``wrap="mujoco"`` every
number is MuJoCo's, everywhere. ``wrap="shortest"`` solves the shortest path on the side
site's side instead; it agrees with MuJoCo wherever MuJoCo's path is that one
(docs/cable-sets.md#mujoco-rule), which the last tests check and count.
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

pytest.importorskip("mujoco")

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "mjcf")
FIXTURES = np.load(os.path.join(HERE, "..", "reference", "mjcf_tendons.npz"))
LENGTH_TOL = 1e-9  # m
JACOBIAN_TOL = 1e-7

pytestmark = pytest.mark.xdist_group("mjcf")


def _load(name, wrap="mujoco"):
    return jw.load_mjcf(os.path.join(DATA, f"{name}.xml"), wrap=wrap)


def _evaluate(model, cables, q):
    """Lengths, ten_J (= dL/dq = -moment arms), result codes and per-obstacle contact."""
    solution = jw.solve_cables(cables, jw.forward_kinematics(model, q), q)
    length, arms = solution.length, jw.moment_arms_from_paths(model, cables, q, solution)
    contact = [_stack_flags(solution.obstacle_contact(n)) for n in cables.names]
    return length, -arms, solution.converged, contact


def _stack_flags(flags):
    return jnp.stack(flags) if flags else jnp.zeros(0, bool)


@pytest.fixture(scope="module")
def results():
    """Every fixture model, evaluated at every stored configuration (one compile each)."""
    out = {}
    for name in ("myoelbow_2dof6muscles", "mujoco_tendon", "mujoco_pulley_fixed_site_wrap", "mujoco_wrap_sidesite"):
        model, cables = _load(name)
        qpos = FIXTURES[f"{name}/qpos"]
        evaluate = jax.jit(jax.vmap(_evaluate, (None, None, 0)))
        length, jac, ok, contact = evaluate(model, cables, qpos)
        out[name] = dict(
            model=model,
            cables=cables,
            length=np.asarray(length),
            J=np.asarray(jac),
            ok=np.asarray(ok),
            contact=[np.asarray(c) for c in contact],
            evaluate=evaluate,
        )
    return out


def _geom_wrap_flags(name, cables):
    """MuJoCo's `wrapped` flags split per tendon, geom elements only, in definition order."""
    import mujoco

    m = mujoco.MjModel.from_xml_path(os.path.join(DATA, f"{name}.xml"))
    wrapped = FIXTURES[f"{name}/wrapped"]
    per_tendon = []
    for t in range(m.ntendon):
        adr, num = m.tendon_adr[t], m.tendon_num[t]
        kinds = (int(mujoco.mjtWrap.mjWRAP_SPHERE), int(mujoco.mjtWrap.mjWRAP_CYLINDER))
        geoms = [w for w in range(adr, adr + num) if int(m.wrap_type[w]) in kinds]
        per_tendon.append(wrapped[:, geoms])
    return per_tendon


def test_myosuite_elbow_matches_mujoco_everywhere(results):
    """The MyoSuite elbow (2 dof, 6 muscles, sphere and cylinder wraps with side sites):
    every tendon length to 1e-9 m and every ten_J entry to 1e-7 at all 90 configurations
    (a sweep of each joint over its range and 40 random ones); every path successful."""
    name = "myoelbow_2dof6muscles"
    r = results[name]
    assert r["ok"].all()
    np.testing.assert_allclose(r["length"], FIXTURES[f"{name}/ten_length"], rtol=0, atol=LENGTH_TOL)
    np.testing.assert_allclose(r["J"], FIXTURES[f"{name}/ten_J"], rtol=0, atol=JACOBIAN_TOL)
    # Which geoms each muscle wraps, as MuJoCo: the path touches exactly those.
    for t, flags in enumerate(_geom_wrap_flags(name, r["cables"])):
        np.testing.assert_array_equal(r["contact"][t], flags)


def _moved_lengths(cables, poses, q, R, t):
    """The lengths with every body moved by the rigid motion ``x -> R x + t``."""
    moved = jw.Transform(R @ poses.rotation, poses.translation @ R.T + t)
    return jw.solve_cables(cables, moved, q).length


def test_cable_lengths_are_invariant_under_rigid_motions_of_the_world(results):
    """Moving every body by one rigid motion, rotations drawn uniformly on SO(3), leaves
    every tendon's length as it was, to rounding: end points placed body by body, wrap
    geoms and side sites all move together (docs/performance.md#closed-form-legs)."""
    import jaxlie

    for name in ("myoelbow_2dof6muscles", "mujoco_pulley_fixed_site_wrap"):
        r = results[name]
        model, cables = r["model"], r["cables"]
        q = jnp.asarray(FIXTURES[f"{name}/qpos"][-1])
        poses = jw.forward_kinematics(model, q)
        keys = jax.random.split(jax.random.PRNGKey(7), 8)
        R = jax.vmap(lambda k: jaxlie.SO3.sample_uniform(k).as_matrix())(keys)
        t = jax.random.normal(jax.random.PRNGKey(8), (8, 3))

        moved = jax.jit(jax.vmap(_moved_lengths, (None, None, None, 0, 0)))(cables, poses, q, R, t)
        reference = jw.solve_cables(cables, poses, q).length
        assert np.all(np.isfinite(moved))
        np.testing.assert_allclose(moved, np.broadcast_to(reference, moved.shape), rtol=0, atol=1e-12)


def test_one_dof_elbow_shortest_paths_match_mujoco():
    """The 1-dof elbow (the shoulder fixed: a body with no joint) at its 65 configurations,
    solved as shortest paths with the general solver (``wrap="shortest"``): on this model
    MuJoCo's rule always gives the shortest path on the side, so the lengths agree."""
    name = "myoelbow_1dof6muscles"
    model, cables = _load(name, wrap="shortest")
    assert model.nq == 1 and model.joint_names[-1] == "r_elbow_flex"
    lengths = jax.jit(jax.vmap(jw.cable_lengths, (None, None, 0)))(model, cables, FIXTURES[f"{name}/qpos"])
    np.testing.assert_allclose(np.asarray(lengths), FIXTURES[f"{name}/ten_length"], rtol=0, atol=LENGTH_TOL)


def test_pulleys_fixed_tendons_side_and_inside_wraps_match_mujoco(results):
    """MuJoCo's test models: tendon.xml (a slide joint, pulleys, side sites),
    pulley_fixed_site_wrap (pulleys with divisors 0.2 to 7, a fixed tendon, branches of
    three wraps, end points inside wrap circles when the chain folds) and wrap_sidesite
    (side sites inside the geoms, MuJoCo's inside wrap, and outside): every length to
    1e-9 m and every ten_J entry to 1e-7 at all 140 configurations of each, and the same
    geoms wrapped."""
    for name in ("mujoco_tendon", "mujoco_pulley_fixed_site_wrap", "mujoco_wrap_sidesite"):
        r = results[name]
        assert r["ok"].all(), name
        np.testing.assert_allclose(r["length"], FIXTURES[f"{name}/ten_length"], rtol=0, atol=LENGTH_TOL)
        np.testing.assert_allclose(r["J"], FIXTURES[f"{name}/ten_J"], rtol=0, atol=JACOBIAN_TOL)
        for t, flags in enumerate(_geom_wrap_flags(name, r["cables"])):
            np.testing.assert_array_equal(r["contact"][t], flags)
    inside = results["mujoco_wrap_sidesite"]["contact"]
    inside_touches = np.concatenate([inside[0][:, [0, 2]].ravel(), inside[1][:, 1]])
    assert inside_touches.any() and not inside_touches.all()  # both branches of the inside wrap


def test_shortest_paths_differ_from_mujoco_only_where_mujoco_is_not_shortest():
    """``wrap="shortest"`` on MuJoCo's side-site model: where both touch the same geoms
    the lengths agree to 1e-9 m, but at four forced wraps of the last tendon's cylinder
    (its straight segment misses the cylinder on the side away from the side site; both
    wrap it, in opposite directions: MuJoCo the way its tangent points' midpoint faces
    the side site, jaxwrap the way of ``s × u``, docs/cable.md#wrap-side). Elsewhere
    MuJoCo's rule is not the shortest path on the side: it takes a tangent pair whose
    lines cross for the other one, or runs a straight line through a geom an end point
    is inside (jaxwrap: `endpoint_inside_obstacle`)."""
    name = "mujoco_wrap_sidesite"
    model, cables = _load(name, wrap="shortest")
    qpos = FIXTURES[f"{name}/qpos"]

    def evaluate(q):
        solution = jw.solve_cables(cables, jw.forward_kinematics(model, q), q)
        return solution.length, solution.converged, [_stack_flags(solution.obstacle_contact(n)) for n in cables.names]

    length, ok, contact = jax.jit(jax.vmap(evaluate))(qpos)
    length, ok = np.asarray(length), np.asarray(ok)
    flags = _geom_wrap_flags(name, cables)
    same = np.stack([np.all(np.asarray(contact[t]) == flags[t], axis=1) for t in range(len(flags))], axis=1)
    agree = ok & same
    reference = FIXTURES[f"{name}/ten_length"]
    turned = agree & (np.abs(length - reference) > LENGTH_TOL)
    assert turned.sum() <= 4 and not turned[:, :2].any(), np.argwhere(turned)
    assert np.all((length - reference)[turned] > 0.03) and np.all((length - reference)[turned] < 0.06)
    np.testing.assert_allclose(length[agree & ~turned], reference[agree & ~turned], rtol=0, atol=LENGTH_TOL)
    assert (agree & ~turned).sum() >= 400, agree.sum()  # of 420 tendon evaluations


def test_cable_set_compiles_one_program_per_leg_structure():
    """60 cables of 3 structures (sphere leg, cylinder leg, straight leg, through via
    points) solve in one trace; the set has 3 leg structures whatever the cable count."""
    cables = {}
    for k in range(60):
        kind = k % 3
        c = jw.CableSpan(0, [-2.0, 0.1 * k, 0.0], 1, [2.0, 0.3, 0.0])
        if kind == 0:
            c = c.add_obstacle(0, jw.Transform.identity(), jw.Sphere(1.0 + 0.01 * k))
        elif kind == 1:
            c = c.add_via_point(0, [0.0, 3.0, 0.0]).add_obstacle(1, jw.Transform.identity(), jw.Cylinder(0.5))
        cables[f"c{k}"] = c
    cable_set = jw.CableSet.from_cables(cables)
    assert cable_set.num_structures() == 3
    poses = jw.Transform.stack([jw.Transform.identity(), jw.Transform.from_translation([0.0, -0.5, 0.0])])
    solve = jax.jit(jw.solve_cables)
    solution = solve(cable_set, poses)
    assert solution.length.shape == (60,) and bool(jnp.all(solution.converged))
    # New numbers, same structure: no recompilation.
    moved = jax.tree.map(lambda x: x * 1.01 if eqx_is_float(x) else x, cable_set)
    solve(moved, poses)
    assert solve._cache_size() == 1
    # Each length equals the cable solved on its own.
    for k in (0, 1, 2, 31):
        single = jw.solve_cable(cables[f"c{k}"], poses)
        np.testing.assert_allclose(float(solution.length[k]), float(single.length), rtol=1e-12)


def eqx_is_float(x):
    return isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jnp.floating)


def test_length_gradients_wrt_radius_and_site_match_differences():
    """d(length)/d(wrap radius) and d(length)/d(site position) of every elbow muscle
    against central differences, through `CableSet` leaves."""
    model, cables = _load("myoelbow_2dof6muscles")
    q = jnp.array([0.3, 1.1])

    def total(cable_set):
        return jnp.sum(jw.cable_lengths(model, cable_set, q) * jnp.arange(1.0, 7.0))

    total = jax.jit(total)
    grads = jax.jit(jax.grad(total))(cables)
    index = cables.index("TRIlong_tendon")
    branch = cables.branches[index][0]
    h = 1e-6
    checks = [
        (
            lambda c, d: _replace_leaf(c, index, lambda b: b.obstacles[1].surface.radius, d),
            grads.branches[index][0].obstacles[1].surface.radius,
        ),
        (
            lambda c, d: _replace_leaf(c, index, lambda b: b.origin_station, jnp.array([d, 0, 0])),
            grads.branches[index][0].origin_station[0],
        ),
    ]
    for perturb, analytic in checks:
        fd = (total(perturb(cables, h)) - total(perturb(cables, -h))) / (2 * h)
        np.testing.assert_allclose(float(analytic), float(fd), rtol=1e-6, atol=1e-9)
    assert branch.num_obstacles == 2


def _replace_leaf(cables, index, where, delta):
    import equinox as eqx

    return eqx.tree_at(lambda c: where(c.branches[index][0]), cables, where(cables.branches[index][0]) + delta)


def test_bad_input_and_errors(results):
    r = results["mujoco_pulley_fixed_site_wrap"]
    model, cables = r["model"], r["cables"]
    with pytest.raises(KeyError, match="no cable named"):
        cables.index("nope")
    with pytest.raises(FileNotFoundError):
        jw.load_mjcf(os.path.join(DATA, "missing.xml"))
    # NaN configurations: NaN lengths and moment arms, a failure code, for every cable
    # (spatial, pulley and fixed alike); same program as the fixture sweep.
    qpos = FIXTURES["mujoco_pulley_fixed_site_wrap/qpos"].copy()
    qpos[::2] = np.nan
    length, jac, ok, _ = r["evaluate"](model, cables, qpos)
    assert np.all(np.isnan(np.asarray(length)[::2])) and not np.any(np.asarray(ok)[::2])
    assert np.all(np.isnan(np.asarray(jac)[::2]))
    assert r["length"].shape == (140, 7)
    with pytest.raises(ValueError, match="must be alone between two path points"):
        c = jw.CableSpan(0, [2.0, 0, 0], 0, [-2.0, 0, 0])
        c = c.add_obstacle(0, jw.Transform.identity(), jw.Sphere(1.0), wrap="inside")
        c = c.add_obstacle(0, jw.Transform.from_translation([0, 0, 3.0]), jw.Sphere(1.0))
        jw.CableSet.from_cables({"x": c})
    with pytest.raises(ValueError, match="solve_cables"):
        jw.solve_cable(
            jw.CableSpan(0, [2.0, 0, 0], 0, [-2.0, 0, 0]).add_obstacle(
                0, jw.Transform.identity(), jw.Sphere(1.0), wrap="mujoco"
            ),
            jw.Transform.identity((1,)),
        )
    with pytest.raises(ValueError, match="spheres and cylinders"):
        jw.CableSpan(0, [2.0, 0, 0], 0, [-2.0, 0, 0]).add_obstacle(
            0, jw.Transform.identity(), jw.Ellipsoid([1.0, 1.0, 2.0]), wrap="inside"
        )
    with pytest.raises(ValueError, match="wrap must be"):
        jw.load_mjcf(os.path.join(DATA, "mujoco_tendon.xml"), wrap="nope")
    with pytest.raises(ValueError, match="unique"):
        jw.CableSet(["a", "a"], [(), ()], coefficients=np.ones((2, 1)))


def test_invalid_pose_gives_nan_lengths_and_nan_derivatives(results):
    """A body pose that is not a rigid motion (its rotation scaled by 2): every tendon over
    that body gets NaN, a failure code and NaN derivatives with respect to that body's
    pose, not a plausible 0; the others keep their lengths, and their forward-mode
    derivatives stay finite. (In reverse mode a failed leg's NaN reaches the bodies it
    shares with other tendons: a zero cotangent times NaN is NaN.)"""
    r = results["myoelbow_2dof6muscles"]
    model, cables = r["model"], r["cables"]
    q = jnp.asarray(FIXTURES["myoelbow_2dof6muscles/qpos"][-1])
    poses = jw.forward_kinematics(model, q)
    used = [set().union(*(span.bodies for span in spans)) for spans in cables.branches]
    bad_body = next(b for b in sorted(set().union(*used)) if 0 < sum(b in u for u in used) < len(used))
    bad = jw.Transform(poses.rotation.at[bad_body].multiply(2.0), poses.translation)

    def lengths(translation, rotation):
        return jw.solve_cables(cables, jw.Transform(rotation, translation), q).length

    length = lengths(bad.translation, bad.rotation)
    failed = np.isnan(np.asarray(length))
    np.testing.assert_array_equal(failed, [bad_body in u for u in used])
    assert not np.any(np.asarray(jw.solve_cables(cables, bad, q).converged)[failed])
    np.testing.assert_allclose(length[~failed], r["length"][-1][~failed], rtol=0, atol=LENGTH_TOL)
    # d length / d body translation, (cable, body, 3)
    forward = np.asarray(jax.jacfwd(lengths)(bad.translation, bad.rotation))
    reverse = np.asarray(jax.jacrev(lengths)(bad.translation, bad.rotation))
    for jac in (forward, reverse):
        assert np.all(np.isnan(jac[failed, bad_body]))  # a where() would give a plausible 0 here
    assert np.all(np.isfinite(forward[~failed])) and np.any(forward[~failed] != 0)


def test_moment_arms_from_solved_paths_equal_the_one_pass_evaluation():
    """`jw.moment_arms_from_paths` takes the moment arms from paths already solved, cold or
    warm-started, without solving again: the same numbers as
    `jw.cable_lengths_and_moment_arms` (which is it, after `solve_cables`), and paths of
    another cable set are refused."""
    model, cables = _load("mujoco_pulley_fixed_site_wrap")
    qs = jnp.asarray(FIXTURES["mujoco_pulley_fixed_site_wrap/qpos"][:4])

    def both(q, previous_q):
        lengths, arms = jw.cable_lengths_and_moment_arms(model, cables, q)
        previous = jw.solve_cables(cables, jw.forward_kinematics(model, previous_q), previous_q)
        warm = jw.solve_cables(cables, jw.forward_kinematics(model, q), q, warm_start=previous)
        return lengths, arms, warm.length, jw.moment_arms_from_paths(model, cables, q, warm), warm.converged

    lengths, arms, warm_lengths, warm_arms, ok = jax.jit(jax.vmap(both))(qs, jnp.roll(qs, 1, axis=0) * 0.9 + 0.1 * qs)
    assert np.all(np.asarray(ok))
    np.testing.assert_allclose(np.asarray(warm_lengths), np.asarray(lengths), atol=1e-12)
    np.testing.assert_allclose(np.asarray(warm_arms), np.asarray(arms), atol=1e-9)
    assert np.abs(np.asarray(arms)).max() > 1e-3
    _, other = _load("mujoco_tendon")
    q = qs[0]
    with pytest.raises(ValueError, match="CableSetPath"):
        jw.moment_arms_from_paths(model, cables, q, jw.solve_cables(other, jw.forward_kinematics(model, q), q))


def test_a_model_without_tendons_has_an_empty_cable_set():
    """MyoSuite's head has joints but no tendon: its cable set is empty, and lengths and
    moment arms come back empty (shapes (0,) and (0, nv)), under jit and vmap, instead of
    failing while the set's legs are gathered."""
    xml = """<mujoco><worldbody><body name="a"><joint type="hinge" axis="0 0 1"/><geom size="0.1"/>
      <body name="b" pos="0.3 0 0"><joint type="slide" axis="1 0 0"/><geom size="0.1"/></body></body>
      </worldbody></mujoco>"""
    model, cables = jw.load_mjcf(xml)
    assert len(cables.names) == 0
    both = jax.jit(jax.vmap(jw.cable_lengths_and_moment_arms, in_axes=(None, None, 0)))
    lengths, arms = both(model, cables, jnp.zeros((3, 2)))
    assert lengths.shape == (3, 0) and arms.shape == (3, 0, 2)
    assert jw.cable_lengths(model, cables, jnp.zeros(2)).shape == (0,)


def test_compare_models_script_on_the_myosuite_elbow(capsys):
    """benchmarks/compare_models.py on the MyoSuite elbow: every tendon length equals
    MuJoCo's at ``qpos0`` and at random joint angles."""
    import sys

    sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))
    import compare_models

    compare_models.compare(os.path.join(DATA, "myoelbow_2dof6muscles.xml"), num=4, seed=0, tol=1e-9, show=3)
    out = capsys.readouterr().out
    assert "6 paths, 4 configurations" in out and "0 paths beyond 1e-09 m, 0 NaN, 0 unsuccessful" in out, out


def test_qpos_conversion_round_trips_for_ball_and_free_joints():
    """Ball and free joints: MuJoCo's w-first quaternions to jaxwrap's w-last and back, and
    forward kinematics equal to MuJoCo's body poses."""
    import mujoco

    xml = """<mujoco><worldbody>
      <body name="a" pos="0 0 1"><freejoint/><geom size="0.1"/>
        <body name="b" pos="0.3 0 0"><joint type="ball" pos="0.05 0 0"/><geom size="0.1"/>
          <body name="c" pos="0.3 0 0"><joint type="hinge" axis="0 1 0" pos="0 0 0.02" ref="0.3"/><geom size="0.1"/>
            <site name="tip" pos="0.2 0.1 0"/></body></body></body></worldbody></mujoco>"""
    model, _ = jw.load_mjcf(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    for _ in range(3):
        qpos = np.concatenate(
            [rng.normal(size=3), _unit(rng.normal(size=4)), _unit(rng.normal(size=4)), rng.normal(size=1)]
        )
        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        q = jw.qpos_to_q(model, qpos)
        np.testing.assert_allclose(np.asarray(jw.q_to_qpos(model, q)), qpos, atol=0)
        poses = jw.forward_kinematics(model, q)
        for body in ("a", "b", "c"):
            # jaxwrap's body frame sits at the last joint's anchor of the MuJoCo body.
            b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, body)
            anchor = m.jnt_pos[m.body_jntadr[b]] if m.jnt_type[m.body_jntadr[b]] != 0 else np.zeros(3)
            X = poses[model.body_index(body)]
            np.testing.assert_allclose(np.asarray(X.rotation), d.xmat[b].reshape(3, 3), atol=1e-12)
            np.testing.assert_allclose(np.asarray(X.apply(-anchor)), d.xpos[b], atol=1e-12)


def _unit(x):
    return x / np.linalg.norm(x)


def test_tendons_command_prints_lengths_and_writes_the_plot(tmp_path):
    """`jaxwrap tendons MODEL.xml`: a row per tendon at the reference pose, and the plot."""
    import io

    from jaxwrap.cli import run_tendons

    out = io.StringIO()
    plot = tmp_path / "tendons.png"
    run_tendons(os.path.join(DATA, "mujoco_pulley_fixed_site_wrap.xml"), num=3, plot=str(plot), out=out)
    text = out.getvalue()
    rows = [line for line in text.splitlines() if line.startswith("  tendon")]
    assert len(rows) == 7 and plot.exists()
    # The fixed tendon's moment arms are its coefficients (-0.1, -0.2, -0.3 m about joints 0-2).
    assert "joint0 -100.000, joint1 -200.000, joint2 -300.000" in rows[2]


def test_moment_arm_design_gradient_matches_differences():
    """d(moment arm)/d(wrap radius): differentiating the unit-tension moment arms again
    (the design gradient of a co-design loop) against central differences."""
    import equinox as eqx

    model, cables = _load("myoelbow_2dof6muscles")
    q = jnp.array([0.4, 0.3])
    index = cables.index("BRA_tendon")  # wraps TRI_wrap (a cylinder) at this pose

    def arm(radius):
        thicker = eqx.tree_at(lambda c: c.branches[index][0].obstacles[0].surface.radius, cables, radius)
        return jw.moment_arms(model, thicker, q)[index, 1]

    radius = cables.branches[index][0].obstacles[0].surface.radius
    analytic = jax.jit(jax.grad(arm))(radius)
    h = 1e-7
    arm = jax.jit(arm)
    fd = (arm(radius + h) - arm(radius - h)) / (2 * h)
    assert abs(float(fd)) > 0.1  # the wrap is engaged: the moment arm follows the radius
    np.testing.assert_allclose(float(analytic), float(fd), rtol=1e-6)


def test_free_joint_velocities_and_tendon_jacobian_match_mujoco():
    """`qvel_to_v`: the velocity of every site, moved along MuJoCo's ``mj_integratePos``
    (central differences) and along jaxwrap's ``integrate`` (forward mode), agree; and
    MuJoCo's ``ten_J`` of a tendon from the world to a free-floating chain equals
    ``-moment_arms @ dv/dqvel``."""
    import mujoco

    xml = """<mujoco><worldbody><site name="anchor" pos="0.4 -0.3 2"/>
      <body name="a" pos="0 0 1"><freejoint/><geom size="0.1"/><site name="sa" pos="0.1 0.2 -0.1"/>
        <body name="b" pos="0.3 0 0"><joint type="ball" pos="0.05 0 0"/><geom size="0.1"/>
          <body name="c" pos="0.3 0 0"><joint type="hinge" axis="0 1 0" pos="0 0 0.02" ref="0.3"/><geom size="0.1"/>
            <site name="tip" pos="0.2 0.1 0"/></body></body></body></worldbody>
      <tendon><spatial name="t"><site site="anchor"/><site site="sa"/><site site="tip"/></spatial></tendon></mujoco>"""
    model, cables = jw.load_mjcf(xml)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    sites = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, s) for s in ("sa", "tip")]
    arms_fn = jax.jit(lambda q: jw.moment_arms(model, cables, q))
    for _ in range(3):
        qpos = np.concatenate(
            [rng.normal(size=3), _unit(rng.normal(size=4)), _unit(rng.normal(size=4)), rng.normal(size=1)]
        )
        qvel = rng.normal(size=m.nv)
        q = jw.qpos_to_q(model, qpos)
        v = jw.qvel_to_v(model, q, qvel)
        np.testing.assert_allclose(np.asarray(jw.v_to_qvel(model, q, v)), qvel, atol=1e-14)

        def site_positions(qp):
            d.qpos[:] = qp
            mujoco.mj_kinematics(m, d)
            return np.array([d.site_xpos[s] for s in sites])

        h = 1e-6
        ahead, behind = qpos.copy(), qpos.copy()
        mujoco.mj_integratePos(m, ahead, qvel, h)
        mujoco.mj_integratePos(m, behind, qvel, -h)
        mj_velocity = (site_positions(ahead) - site_positions(behind)) / (2 * h)

        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        # The two tendon-free sites through jaxwrap's kinematics: positions in their bodies
        # from MuJoCo's world positions at this pose.
        poses = jw.forward_kinematics(model, q)
        local = [poses[model.body_index(body)].inverse().apply(d.site_xpos[s]) for body, s in zip(("a", "c"), sites)]

        def positions(t, q=q, v=v, local=local):
            moved = jw.forward_kinematics(model, model.integrate(q, t * v))
            return jnp.stack([moved[model.body_index(b)].apply(p) for b, p in zip(("a", "c"), local)])

        _, jw_velocity = jax.jvp(positions, (0.0,), (1.0,))
        np.testing.assert_allclose(np.asarray(jw_velocity), mj_velocity, atol=1e-8)
        dv_dqvel = jax.jacfwd(lambda u, q=q: jw.qvel_to_v(model, q, u))(jnp.zeros(m.nv))
        ten_J = -np.asarray(arms_fn(q)) @ np.asarray(dv_dqvel)
        np.testing.assert_allclose(ten_J, d.ten_J.reshape(m.ntendon, m.nv), atol=1e-9)
