"""MJCF tendons against MuJoCo: `jw.load_mjcf`, `jw.CableSet`, `jw.cable_lengths`,
`jw.moment_arms` on the MyoSuite elbows and MuJoCo's own tendon test models.

The numbers are MuJoCo's (``ten_length``, ``ten_J``, which geoms each path wrapped),
stored with the models by tests/reference/generate_mjcf_fixtures.py; ``mujoco`` is needed
only to compile the XML (``jw.load_mjcf``). Where jaxwrap and MuJoCo answer different
questions the test says so and counts the cases (docs/cable-sets.md#mujoco-semantics):

- an end point inside a wrap circle: MuJoCo drops the wrap and runs a straight line
  through the geom; jaxwrap reports `RESULTS.endpoint_inside_obstacle`;
- a straight line that misses a sided geom on the side away from its side site: jaxwrap
  wraps round to the side (forced wrap); MuJoCo 4.0 keeps the straight line in some of
  these configurations.
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


def _load(name):
    return jw.load_mjcf(os.path.join(DATA, f"{name}.xml"))


def _evaluate(model, cables, q):
    """Lengths, ten_J (= dL/dq = -moment arms), result codes and per-obstacle contact."""

    def lengths(v):
        q_v = jw.integrate(model, q, v)
        solution = jw.solve_cables(cables, jw.forward_kinematics(model, q_v), q_v)
        return solution.length, solution

    v0 = jnp.zeros(model.nv)
    jacobian, solution = jax.jacfwd(lengths, has_aux=True)(v0)
    contact = [_stack_flags(solution.obstacle_contact(n)) for n in cables.names]
    return solution.length, jacobian, solution.converged, contact


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


def test_one_dof_elbow_lengths_match_mujoco():
    """The 1-dof elbow (the shoulder fixed: a body with no joint) at its 65 configurations."""
    name = "myoelbow_1dof6muscles"
    model, cables = _load(name)
    assert model.nq == 1 and model.joint_names[-1] == "r_elbow_flex"
    lengths = jax.jit(jax.vmap(jw.cable_lengths, (None, None, 0)))(model, cables, FIXTURES[f"{name}/qpos"])
    np.testing.assert_allclose(np.asarray(lengths), FIXTURES[f"{name}/ten_length"], rtol=0, atol=LENGTH_TOL)


def test_pulleys_fixed_tendons_and_several_wraps_match_mujoco(results):
    """MuJoCo's pulley/fixed/site/wrap test model (7 tendons: pulleys with divisors 0.2 to
    7, a fixed tendon, branches of three wraps each) and its tendon.xml (a slide joint,
    pulleys, side sites): wherever jaxwrap reports success the numbers are MuJoCo's to
    1e-9 m / 1e-7, and every failure is an end point inside a wrap circle, where MuJoCo
    drops the wrap (its straight line crosses the geom)."""
    for name, min_ok in (("mujoco_tendon", 1.0), ("mujoco_pulley_fixed_site_wrap", 0.95)):
        r = results[name]
        ok = r["ok"]
        assert ok.mean() >= min_ok, (name, ok.mean())
        L0, J0 = FIXTURES[f"{name}/ten_length"], FIXTURES[f"{name}/ten_J"]
        np.testing.assert_allclose(r["length"][ok], L0[ok], rtol=0, atol=LENGTH_TOL)
        np.testing.assert_allclose(r["J"][ok], J0[ok], rtol=0, atol=JACOBIAN_TOL)
        # Every failure: MuJoCo did not wrap some geom of that tendon (it dropped the wrap).
        for t, flags in enumerate(_geom_wrap_flags(name, r["cables"])):
            failed = ~ok[:, t]
            if flags.shape[1]:
                assert not np.any(np.all(flags[failed], axis=1)), (name, t)


def test_inside_wraps_and_side_sites_match_mujoco(results):
    """MuJoCo's wrap_sidesite model: side sites inside the geoms (the inside wrap) and
    outside. Inside wraps agree with MuJoCo wherever MuJoCo's path is the one jaxwrap
    solves; the configurations that differ are all forced side wraps that MuJoCo 4.0
    leaves straight (on the side away from the side site), counted here."""
    name = "mujoco_wrap_sidesite"
    r = results[name]
    L0, J0 = FIXTURES[f"{name}/ten_length"], FIXTURES[f"{name}/ten_J"]
    flags = _geom_wrap_flags(name, r["cables"])
    same = np.ones_like(r["ok"])
    for t in range(len(flags)):
        same[:, t] = np.all(r["contact"][t] == flags[t], axis=1)
    agree = r["ok"] & same
    assert agree.mean() > 0.95, agree.mean()
    np.testing.assert_allclose(r["length"][agree], L0[agree], rtol=0, atol=LENGTH_TOL)
    np.testing.assert_allclose(r["J"][agree], J0[agree], rtol=0, atol=JACOBIAN_TOL)
    # Where the contact sets differ, jaxwrap wrapped a sided (outside) geom that MuJoCo did
    # not: a forced wrap, longer than MuJoCo's straight line, never shorter.
    differ = r["ok"] & ~same
    assert np.all(r["length"][differ] > L0[differ])
    inside_touches = np.concatenate([r["contact"][0][:, [0, 2]].ravel(), r["contact"][1][:, [1]].ravel()])
    assert inside_touches.any() and not inside_touches.all()  # both branches of the inside wrap exercised


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
    with pytest.raises(ValueError, match="inside-wrap obstacle must be alone"):
        c = jw.CableSpan(0, [2.0, 0, 0], 0, [-2.0, 0, 0])
        c = c.add_obstacle(0, jw.Transform.identity(), jw.Sphere(1.0), inside=True)
        c = c.add_obstacle(0, jw.Transform.from_translation([0, 0, 3.0]), jw.Sphere(1.0))
        jw.CableSet.from_cables({"x": c})
    with pytest.raises(ValueError, match="solve_cables"):
        jw.solve_cable(
            jw.CableSpan(0, [2.0, 0, 0], 0, [-2.0, 0, 0]).add_obstacle(
                0, jw.Transform.identity(), jw.Sphere(1.0), inside=True
            ),
            jw.Transform.identity((1,)),
        )
    with pytest.raises(ValueError, match="spheres and cylinders"):
        jw.CableSpan(0, [2.0, 0, 0], 0, [-2.0, 0, 0]).add_obstacle(
            0, jw.Transform.identity(), jw.Ellipsoid([1.0, 1.0, 2.0]), inside=True
        )
    with pytest.raises(ValueError, match="unique"):
        jw.CableSet(["a", "a"], [(), ()], coefficients=np.ones((2, 1)))


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
