"""Modular configurations: the reference's planar 3R arm, prototype duplication, chains,
end points, locks and motion modes, URDF round trips (and pinocchio on the exported file),
and the errors for bad input."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from modular_robots import cantilever, planar_3r, two_arms

import jaxwrap as jw

M = jw.modular
Q_3R = jnp.array([0.3, -0.5, 0.8])


@pytest.fixture(scope="module")
def tip_and_jacobian():
    return jax.jit(lambda c, q: (M.end_point_poses(c, q).translation[0], M.compute_jacobian(c, q)))


# ---------------------------------------------------------------------------- reference 3.1
def test_planar_3r_tip_and_jacobian_match_the_reference(tip_and_jacobian):
    # modular-configuration.md 3.1: lengths (0.5, 0.4, 0.3), q = (0.3, -0.5, 0.8).
    tip, J = tip_and_jacobian(planar_3r(), Q_3R)
    np.testing.assert_allclose(tip[:2], [1.11730, 0.23769], atol=5e-6)
    expected = [[-0.237685, -0.089925, -0.169393], [1.117296, 0.639627, 0.247601], [1.0, 1.0, 1.0]]
    np.testing.assert_allclose(J[np.array([0, 1, 5])], expected, atol=5e-7)
    # The rest of the 6 rows: no z motion, no rotation about x or y.
    np.testing.assert_allclose(J[np.array([2, 3, 4])], 0.0, atol=1e-15)
    # Closed form, to rounding.
    a = np.cumsum(np.asarray(Q_3R))
    np.testing.assert_allclose(
        tip[:2], [np.sum([0.5, 0.4, 0.3] * np.cos(a)), np.sum([0.5, 0.4, 0.3] * np.sin(a))], atol=1e-14
    )
    # The linear rows are the derivative of the TCP position.
    dtip = jax.jit(jax.jacfwd(lambda c, q: M.end_point_poses(c, q).translation[0], argnums=1))(planar_3r(), Q_3R)
    np.testing.assert_allclose(J[:3], dtip, atol=1e-14)


def test_new_parameter_values_do_not_recompile(tip_and_jacobian):
    traces = []
    f = jax.jit(lambda c, q: (traces.append(1), M.compute_jacobian(c, q))[1])
    for lengths in [(0.5, 0.4, 0.3), (0.7, 0.2, 0.35)]:
        f(planar_3r(lengths), Q_3R)
    assert len(traces) == 1


def test_design_gradients_and_vmap_over_designs():
    config = planar_3r()

    def tip_x(l1, l2):
        c = M.with_params(config, {"l1": {"length": l1}, "l2": {"length": l2}})
        return M.end_point_poses(c, Q_3R).translation[0, 0]

    g = jax.jit(jax.grad(tip_x, argnums=(0, 1)))(0.4, 0.3)
    np.testing.assert_allclose(g, [np.cos(0.3), np.cos(-0.2)], rtol=1e-14)
    xs = jax.jit(jax.vmap(tip_x))(jnp.linspace(0.3, 0.6, 5), jnp.full(5, 0.3))
    assert xs.shape == (5,)
    np.testing.assert_allclose(np.diff(xs), 0.075 * np.cos(0.3), rtol=1e-12)


# ---------------------------------------------------------------------------- graph
def test_two_arms_duplicate_the_shared_prototype_with_its_subgraph():
    c = two_arms()
    names = [i.name for i in c.structure.instances]
    assert names == ["base", "torso", "tee"] + [
        f"{m}_{k}" for k in (0, 1) for m in ("shoulder", "upper", "elbow", "fore", "hand")
    ]
    assert (c.num_modules(), c.num_prototypes(), c.num_joints(), c.num_links(), c.num_chains(), c.num_end_points()) == (
        13,
        8,
        5,
        6,
        3,
        2,
    )
    assert c.num_dofs() == 3 + 5
    torso, left, right = c.structure.chains
    assert torso.joints == (0,) and torso.children == (1, 2) and torso.parent == -1
    assert left.joints == (1, 2) and right.joints == (3, 4) and left.parent == right.parent == 0
    assert left.end_points == (0,) and right.end_points == (1,)
    assert [c.get_joint(j) for j in range(5)] == ["torso", "shoulder_0", "elbow_0", "shoulder_1", "elbow_1"]
    assert [c.get_joint_by_dof(k) for k in (0, 2, 3, 7)] == [None, None, "torso", "elbow_1"]
    # Copies are the same prototype: the same parameter leaves.
    assert c.params_of(names.index("upper_0")) is c.params_of(names.index("upper_1"))


def test_shared_parameters_sum_the_gradients_of_their_copies():
    q = jnp.array([0.1, -0.2, 0.6, 0.8, 0.2, 0.4, -0.3, 0.9, 0.5])  # planar base: x, y, cos, sin

    def hands_x(config, length, names):
        c = M.with_params(config, {n: {"length": length} for n in names})
        return jnp.sum(M.end_point_poses(c, q).translation[:, 0])

    shared, separate = two_arms(), two_arms(shared=False)
    value = jax.jit(hands_x, static_argnums=2)
    np.testing.assert_allclose(value(shared, 0.3, ("upper",)), value(separate, 0.3, ("upper_a", "upper_b")), rtol=1e-14)
    grad = jax.jit(jax.grad(hands_x, argnums=1), static_argnums=2)
    g_shared = grad(shared, 0.3, ("upper",))
    g_a, g_b = grad(separate, 0.3, ("upper_a",)), grad(separate, 0.3, ("upper_b",))
    np.testing.assert_allclose(g_shared, g_a + g_b, rtol=1e-13)
    assert abs(g_a - g_b) > 1e-3  # the two arms point differently, so the copies' terms differ


# ---------------------------------------------------------------------------- locks, motion modes
def test_lock_recursion_zero_locks_the_chain_one_locks_everything_that_moves_the_end_point():
    c = two_arms()
    np.testing.assert_array_equal(M.lock_mask(c, "hand_0", 0), [False, True, True, False, False])
    np.testing.assert_array_equal(M.lock_mask(c, "hand_0", 1), [True, True, True, False, False])
    np.testing.assert_array_equal(M.lock_mask(c, 1, 1), [True, False, False, True, True])
    q = jnp.array([0.1, -0.2, np.cos(0.3), np.sin(0.3), 0.2, 0.4, -0.3, 0.9, 0.5])  # planar base: x, y, cos, sin
    J = M.compute_jacobian(c, q)
    locked0 = M.compute_jacobian(M.set_lock_from_endpoint(c, "hand_0", 1, 0), q)
    locked1 = M.compute_jacobian(M.set_lock_from_endpoint(c, "hand_0", 1, 1), q)
    cols = np.abs(np.asarray(locked0)).sum(axis=0) > 0
    np.testing.assert_array_equal(cols, [True] * 3 + [True, False, False, True, True])
    cols = np.abs(np.asarray(locked1)).sum(axis=0) > 0
    np.testing.assert_array_equal(cols, [True] * 3 + [False, False, False, True, True])
    np.testing.assert_array_equal(np.asarray(locked1)[:, 6:], np.asarray(J)[:, 6:])
    unlocked = M.set_lock_from_endpoint(M.set_lock_from_endpoint(c, "hand_0", 1, 1), "hand_0", 0, 0)
    np.testing.assert_array_equal(unlocked.locked, [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(M.clear_lock(unlocked).locked, 0)


def test_motion_modes_select_base_or_chain_columns():
    c = two_arms()
    q = jnp.array([0.1, -0.2, 1.0, 0.0, 0.2, 0.4, -0.3, 0.9, 0.5])
    assert M.base_is_mobile(c) and not M.base_is_mobile(planar_3r())
    J = M.compute_jacobian(c, q)
    for mode, keep in [(M.BASE_ONLY, slice(0, 3)), (M.CHAINS_ONLY, slice(3, 8)), (M.ALL, slice(0, 8))]:
        Jm = M.compute_jacobian(M.set_motion_mode(c, mode), q)
        assert M.get_motion_mode(M.set_motion_mode(c, mode)) is mode
        mask = np.zeros(8, bool)
        mask[keep] = True
        np.testing.assert_array_equal(np.asarray(Jm)[:, mask], np.asarray(J)[:, mask])
        np.testing.assert_array_equal(np.asarray(Jm)[:, ~mask], 0.0)
    # One chain's Jacobian of a point on one of its links: the chain's columns of the full one.
    Jc = M.compute_chain_jacobian(c, q, 1, "hand_0", (0.0, 0.0, 0.05))
    np.testing.assert_allclose(Jc, J[:6, M.chain_dofs(c, 1)], atol=1e-15)
    assert M.compute_chain_jacobian(c, q, 1, "hand_0", include_rotations=False).shape == (3, 2)
    assert M.compute_jacobian(c, q, include_rotations=False).shape == (6, 8)


def test_costs_and_velocity_limits_per_dof():
    c = M.set_chain_cost(M.set_base_cost(two_arms(), 5.0), 0.5)
    np.testing.assert_array_equal(M.get_cost_vector(c), [5.0] * 3 + [0.5] * 5)
    v = M.get_max_velocity_vector(c)
    np.testing.assert_allclose(v, [1.0, 1.0, 1.0] + [600.0 / 100.0] * 5)
    assert float(M.max_vel(c, "base", 2)) == 1.0


# ---------------------------------------------------------------------------- URDF round trips
@jax.jit
@jax.vmap
def _both_mechanisms(config, back, q):
    """What the configuration says, and what the model read back from its URDF says."""
    X, Xb = jw.forward_kinematics(M.to_robot_model(config), q), jw.forward_kinematics(back, q)
    pose = M.update_pose(config, q)
    bodies = np.array([config.structure.instances[i].body for i in config.structure.end_points])
    tcp_B = (X[bodies].inverse() @ pose.end_point_poses).translation
    Jb = jnp.concatenate([jw.jacobian(back, q, int(b), tcp_B[k]) for k, b in enumerate(bodies)])
    mass, cg = M.compute_cg(config, q)
    manual = jnp.sum(back.body_masses[:, None] * Xb.apply(back.body_coms), axis=0) / jnp.sum(back.body_masses)
    return (X.translation, X.rotation, M.compute_jacobian(config, q), cg, mass), (
        Xb.translation,
        Xb.rotation,
        Jb,
        manual,
        jnp.sum(back.body_masses),
    )


@pytest.mark.parametrize("base", [M.FixedBase(), M.PlanarBase(), M.FreeFlyingBase()], ids=lambda b: b.type_name)
def test_urdf_round_trip_reproduces_the_mechanism(base):
    c = two_arms(base)
    model = M.to_robot_model(c)
    back = jw.RobotModel.from_urdf(M.to_urdf(c), floating_base=base.motion == "spatial")
    assert back.body_names == model.body_names and back.joint_names == model.joint_names
    assert (back.nq, back.nv) == (model.nq, model.nv)
    assert [c.structure.instances[i].body for i in c.structure.end_points] == [4, 6]  # the elbows' outputs
    qs = jax.vmap(model.random_configuration)(jax.random.split(jax.random.PRNGKey(3), 8))
    batch = lambda tree: jax.tree.map(lambda x: jnp.broadcast_to(x, (8, *jnp.shape(x))), tree)  # noqa: E731
    ours, theirs = _both_mechanisms(batch(c), batch(back), qs)
    # FK, the end points' Jacobians, and Darwin2K's CG (every module, the base included).
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, atol=1e-12, rtol=1e-14)
    np.testing.assert_allclose(back.body_inertias, model.body_inertias, atol=1e-12)
    np.testing.assert_allclose(back.body_masses, model.body_masses, rtol=1e-15)
    np.testing.assert_allclose(back.lower_position_limit[-5:], model.lower_position_limit[-5:], atol=0)
    np.testing.assert_allclose(back.effort_limit[-5:], model.effort_limit[-5:], rtol=1e-15)


def test_exported_urdf_matches_pinocchio():
    pin = pytest.importorskip("pinocchio")
    c = planar_3r()
    pm = pin.buildModelFromXML(M.to_urdf(c))
    data = pm.createData()
    q = np.array([0.3, -0.5, 0.8])
    pin.forwardKinematics(pm, data, q)
    pin.updateFramePlacements(pm, data)
    X_j3 = data.oMi[pm.getJointId("j3")]
    pose = M.update_pose(c, q)
    np.testing.assert_allclose(X_j3.translation, pose.body_poses.translation[4], atol=1e-12)
    np.testing.assert_allclose(X_j3.rotation, pose.body_poses.rotation[4], atol=1e-12)
    tcp_B = (pose.body_poses[4].inverse() @ pose.end_point_poses[0]).translation
    frame = pm.addFrame(
        pin.Frame("tcp", pm.getJointId("j3"), 0, pin.SE3(np.eye(3), np.asarray(tcp_B)), pin.FrameType.OP_FRAME)
    )
    data = pm.createData()
    J = pin.computeFrameJacobian(pm, data, q, frame, pin.LOCAL_WORLD_ALIGNED)
    np.testing.assert_allclose(J, M.compute_jacobian(c, q), atol=1e-12)


# ---------------------------------------------------------------------------- payloads, equality
def test_payload_keeps_its_pose_relative_to_the_tool():
    c = planar_3r()
    q0, q1 = jnp.array([0.3, -0.5, 0.8]), jnp.array([-0.4, 0.9, 0.1])
    tcp0 = M.end_point_poses(c, q0)[0]
    box = M.Payload(2.0, com=(0.0, 0.0, 0.1), connectors=jw.Transform.stack([jw.Transform.identity()]))
    box = M.align_connector_to_pose(box, 0, tcp0)
    held = M.set_payload(c, "tool", box, q0)
    assert M.compute_mass(held) == pytest.approx(float(M.compute_mass(c)) + 2.0, rel=1e-14)
    # The payload's centre of mass, seen from the TCP, is the same at every q.
    for q in (q0, q1):
        tcp = M.end_point_poses(held, q)[0]
        m, cg = M.compute_cg(held, q)
        m0, cg0 = M.compute_cg(c, q)
        payload_com = (cg * m - cg0 * m0) / 2.0
        # Aligned connector: the payload frame is the TCP frame turned about y, com at -0.1 along TCP z.
        np.testing.assert_allclose(tcp.inverse().apply(payload_com), [0.0, 0.0, -0.1], atol=1e-14)
    np.testing.assert_allclose(M.compute_mass(M.remove_payload(held, "tool")), M.compute_mass(c), rtol=1e-15)


def test_equality_compares_structure_and_numbers():
    assert planar_3r() == planar_3r()
    assert planar_3r() != planar_3r((0.5, 0.4, 0.31))
    assert planar_3r() != two_arms()
    assert M.set_motion_mode(planar_3r(), M.BASE_ONLY) != planar_3r()


# ---------------------------------------------------------------------------- bad input
def _b():
    return M.ConfigurationBuilder().add_module("base", M.FixedBase()).add_module("tube", M.HollowTube())


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: (
                _b()
                .add_module("t2", M.HollowTube())
                .attach("base", 0, "tube")
                .attach("tube", 1, "t2")
                .attach("t2", 1, "tube", 0)
                .build()
            ),
            "cycle through modules",
        ),
        (lambda: _b().attach("base", 0, "tube", 2).build(), "'tube' \\(HollowTube\\) has connectors 0..1, not 2"),
        (lambda: _b().attach("base", 0, "tool").build(), "child module 'tool' does not exist"),
        (
            lambda: (
                _b()
                .add_module("x", M.HollowTube(), length=-1.0)
                .attach("base", 0, "tube")
                .attach("tube", 1, "x")
                .build()
            ),
            "module 'x' \\(HollowTube\\): parameter 'length'",
        ),
        (
            lambda: (
                _b()
                .add_module("x", M.HollowTube(), wall_thickness=0.03)
                .attach("base", 0, "tube")
                .attach("tube", 1, "x")
                .build()
            ),
            "module 'x': wall_thickness",
        ),
        (
            lambda: (
                _b()
                .add_module("j", M.InlineRevolute(), lower=1.0, upper=0.0)
                .attach("base", 0, "tube")
                .attach("tube", 1, "j")
                .build()
            ),
            "joint module 'j': lower limit",
        ),
        (lambda: _b().build(), "modules \\['tube'\\] are not connected to the base"),
        (lambda: _b().add_module("tube", M.HollowTube()), "module 'tube' is defined twice"),
        (lambda: _b().add_module("y", M.HollowTube(), lenght=0.3), "has no parameters \\['lenght'\\]"),
        (lambda: M.set_lock_from_endpoint(cantilever(), "tube", 1, 0), "'tube' is not a tool"),
        (lambda: M.set_lock_from_endpoint(cantilever(), 3, 1, 0), "end point 3 does not exist"),
        (
            lambda: M.with_params(cantilever(), {"tube": {"outer_diameter": 5.0}}),
            "parameter 'outer_diameter' = 5.0 is outside",
        ),
        (lambda: M.compute_jacobian(planar_3r(), jnp.zeros(4)), "q must have shape \\(3,\\)"),
    ],
)
def test_bad_input_raises_a_clear_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()

