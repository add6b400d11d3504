"""RobotModel properties that need no reference library: Jacobians equal autodiff through
``integrate``, Lie-group round trips, closed-form arms, parameter gradients, batching over
model parameters, float32, and the errors raised for bad input."""

from __future__ import annotations

import pathlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._misc import unskew

ROBOTS = pathlib.Path(__file__).parents[1] / "reference" / "robots"


@pytest.fixture(scope="module")
def all_joints():
    """Branching tree with floating, prismatic, continuous, revolute, fixed and planar joints."""
    return jw.load_urdf(str(ROBOTS / "all_joints.urdf"), floating_base=True)


@pytest.fixture(scope="module")
def configurations(all_joints):
    keys = jax.random.split(jax.random.PRNGKey(0), 16)
    return jax.vmap(all_joints.random_configuration)(keys)


def _two_link_arm(l1=0.7, l2=0.4):
    b = jw.RobotModelBuilder("two_link")
    b = b.add_body("link1", mass=1.0, com=(l1 / 2, 0, 0)).add_body("link2", mass=0.5, com=(l2 / 2, 0, 0))
    b = b.add_body("tip")
    b = b.add_joint("j1", "revolute", "world", "link1", axis=(0, 0, 1), lower=-3, upper=3)
    b = b.add_joint("j2", "revolute", "link1", "link2", placement=jw.Transform.from_translation([l1, 0, 0]), axis=(0, 0, 1))
    b = b.add_joint("tip_weld", "fixed", "link2", "tip", placement=jw.Transform.from_translation([l2, 0, 0]))
    return b.build()


def test_jacobian_equals_jacfwd_through_integrate(all_joints, configurations):
    model = all_joints
    point = jnp.array([0.05, -0.02, 0.1])
    bodies = [model.body_index(n) for n in ("wheel", "tool", "puck", "drone", "slider")]

    def autodiff_jacobian(q, b):
        def pose(v):
            X = model.forward_kinematics(model.integrate(q, v))[b]
            return X.apply(point), X.rotation

        R = pose(jnp.zeros(model.nv))[1]
        J_lin = jax.jacfwd(lambda v: pose(v)[0])(jnp.zeros(model.nv))
        dR = jax.jacfwd(lambda v: pose(v)[1])(jnp.zeros(model.nv))  # (3, 3, nv)
        J_ang = jax.vmap(lambda dRi: unskew(dRi @ R.T), in_axes=2, out_axes=1)(dR)
        return jnp.concatenate([J_lin, J_ang])

    @jax.jit
    def compare(q):
        return jnp.stack([jnp.max(jnp.abs(model.jacobian(q, b, point) - autodiff_jacobian(q, b))) for b in bodies])

    errors = jax.vmap(compare)(configurations)
    assert float(jnp.max(errors)) < 1e-12


def test_body_velocities_equal_jacobian_times_v(all_joints, configurations):
    model = all_joints
    v = jax.random.normal(jax.random.PRNGKey(3), (len(configurations), model.nv))

    @jax.jit
    @jax.vmap
    def error(q, v):
        V = model.body_velocities(q, v)
        J = jnp.stack([model.jacobian(q, b) for b in range(model.num_bodies)])
        Jv = J @ v
        return jnp.max(jnp.abs(V - jnp.stack([Jv[:, 3:], Jv[:, :3]], axis=1)))

    assert float(jnp.max(error(configurations, v))) < 1e-12


def test_integrate_difference_round_trips(all_joints, configurations):
    model = all_joints
    targets = jnp.roll(configurations, 1, axis=0)
    steps = 0.5 * jax.random.normal(jax.random.PRNGKey(4), (len(configurations), model.nv))

    @jax.jit
    @jax.vmap
    def errors(q, q1, v):
        reached = model.integrate(q, model.difference(q, q1))
        pose_error = jnp.max(jnp.abs(model.forward_kinematics(reached).as_matrix() - model.forward_kinematics(q1).as_matrix()))
        velocity_error = jnp.max(jnp.abs(model.difference(q, model.integrate(q, v)) - v))
        return pose_error, velocity_error, reached

    pose_error, velocity_error, reached = errors(configurations, targets, steps)
    assert float(jnp.max(pose_error)) < 1e-12
    assert float(jnp.max(velocity_error)) < 1e-12
    # Coordinates agree too, except that a quaternion may come back as its antipode.
    mask = np.ones(model.nq, bool)
    for body in ("base", "drone"):  # root_joint and g_free: quaternions at q[start + 3 : start + 7]
        start = model.body_q_starts[model.body_index(body)] + 3
        mask[start : start + 4] = False
        a, b = reached[:, start : start + 4], targets[:, start : start + 4]
        sign = jnp.sign(jnp.sum(a * b, axis=1, keepdims=True))
        np.testing.assert_allclose(a * sign, b, atol=1e-12)
    np.testing.assert_allclose(reached[:, mask], targets[:, mask], atol=1e-12)


def test_random_configurations_respect_limits(all_joints):
    model = all_joints
    qs = jax.vmap(model.random_configuration)(jax.random.split(jax.random.PRNGKey(5), 500))
    lower, upper = model.lower_position_limit, model.upper_position_limit
    assert bool(jnp.all((qs >= lower) & (qs <= upper)))
    slide = model.body_q_starts[model.body_index("slider")]
    assert float(qs[:, slide].min()) < -0.3 and float(qs[:, slide].max()) > 0.4  # fills [-0.4, 0.5]
    np.testing.assert_allclose(jnp.linalg.norm(qs[:, 3:7], axis=1), 1.0, atol=1e-14)


def test_neutral_configuration(all_joints):
    model = all_joints
    q = model.neutral()
    assert q.shape == (model.nq,)
    np.testing.assert_allclose(q[3:7], [0, 0, 0, 1])
    X = model.forward_kinematics(q)
    np.testing.assert_allclose(X[1].as_matrix(), np.eye(4), atol=1e-15)


def test_two_link_arm_closed_form():
    l1, l2 = 0.7, 0.4
    model = _two_link_arm(l1, l2)
    q = jnp.array([0.3, -1.1])
    tip = model.forward_kinematics(q)[model.body_index("tip")].translation
    a, b = q[0], q[0] + q[1]
    np.testing.assert_allclose(tip, [l1 * np.cos(a) + l2 * np.cos(b), l1 * np.sin(a) + l2 * np.sin(b), 0], atol=1e-15)
    J = model.jacobian(q, "tip")
    expected = np.array(
        [
            [-l1 * np.sin(a) - l2 * np.sin(b), -l2 * np.sin(b)],
            [l1 * np.cos(a) + l2 * np.cos(b), l2 * np.cos(b)],
            [0, 0],
            [0, 0],
            [0, 0],
            [1, 1],
        ]
    )
    np.testing.assert_allclose(J, expected, atol=1e-15)
    com = model.center_of_mass(q)
    expected_com = (1.0 * np.array([l1 / 2 * np.cos(a), l1 / 2 * np.sin(a)]) + 0.5 * np.array(
        [l1 * np.cos(a) + l2 / 2 * np.cos(b), l1 * np.sin(a) + l2 / 2 * np.sin(b)]
    )) / 1.5
    np.testing.assert_allclose(com[:2], expected_com, atol=1e-15)
    assert float(model.total_mass) == 1.5


def test_gradients_with_respect_to_model_parameters():
    """Design gradients: tip position w.r.t. link lengths (joint placements) and COM w.r.t. masses,
    against central differences."""
    q = jnp.array([0.3, -1.1])

    model = _two_link_arm()
    tip = model.body_index("tip")

    def tip_from_model(m):
        return m.forward_kinematics(q)[tip].translation[0]

    grads = eqx.filter_grad(tip_from_model)(model)
    # d tip_x / d (placement x of joint j2) = cos(q1)
    j2 = model.body_index("link2")
    np.testing.assert_allclose(grads.joint_placements.translation[j2, 0], np.cos(0.3), atol=1e-14)

    def com_y(masses):
        return eqx.tree_at(lambda m: m.body_masses, model, masses).center_of_mass(q)[1]

    g = jax.grad(com_y)(model.body_masses)
    eps = 1e-6
    fd = np.array(
        [(com_y(model.body_masses.at[i].add(eps)) - com_y(model.body_masses.at[i].add(-eps))) / (2 * eps) for i in range(model.num_bodies)]
    )
    np.testing.assert_allclose(g[1:], fd[1:], atol=1e-9)


def test_vmap_over_model_parameters():
    """A batch of designs: vary the second link length through the joint placement leaf."""
    model = _two_link_arm()
    j2 = model.body_index("link2")
    lengths = jnp.linspace(0.5, 1.0, 6)
    models = jax.vmap(lambda l: eqx.tree_at(lambda m: m.joint_placements.translation, model, model.joint_placements.translation.at[j2, 0].set(l)))(lengths)
    q = jnp.array([0.0, 0.0])
    tips = eqx.filter_vmap(lambda m: m.forward_kinematics(q)[m.body_index("tip")].translation[0])(models)
    np.testing.assert_allclose(tips, lengths + 0.4, atol=1e-15)


def test_float32_model():
    with jax.enable_x64(False):
        model = jw.load_urdf(str(ROBOTS / "all_joints.urdf"), floating_base=True)
        assert model.joint_axes.dtype == jnp.float32
        q = model.random_configuration(jax.random.PRNGKey(0))
        assert q.dtype == jnp.float32
        v = jnp.linspace(-1, 1, model.nv, dtype=jnp.float32)
        X = model.forward_kinematics(model.integrate(q, v))
        assert X.rotation.dtype == jnp.float32
        np.testing.assert_allclose(model.difference(q, model.integrate(q, v)), v, atol=2e-5)
        J = model.jacobian(q, "drone")
        assert J.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(J)))


# ------------------------------------------------------------------------ bad input
def _urdf(body: str) -> str:
    return f'<robot name="bad">{body}</robot>'


LINK = '<link name="{}"/>'


def _joint(name, kind, parent, child, extra=""):
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


@pytest.mark.parametrize(
    "xml, message",
    [
        (_urdf(LINK.format("a") + LINK.format("b") + _joint("j", "revolute", "a", "b", '<axis xyz="0 0 0"/><limit lower="0" upper="1" effort="1" velocity="1"/>')), "joint 'j' has a zero axis"),
        (_urdf(LINK.format("a") + LINK.format("b") + _joint("j", "screw", "a", "b")), "joint 'j' has unknown type 'screw'"),
        (_urdf(LINK.format("a") + _joint("j", "fixed", "a", "ghost")), "child link 'ghost'"),
        (_urdf(LINK.format("a") + _joint("j", "fixed", "ghost", "a")), "parent link 'ghost'"),
        (_urdf('<link name="a"><inertial><mass value="-2"/></inertial></link>'), "link 'a' has negative mass"),
        (_urdf(LINK.format("a") + LINK.format("b") + _joint("j1", "fixed", "a", "b") + _joint("j2", "fixed", "b", "a")), "cycle"),
        (_urdf(LINK.format("r") + LINK.format("a") + LINK.format("b") + _joint("j0", "fixed", "r", "a") + _joint("j1", "fixed", "a", "b") + _joint("j2", "fixed", "b", "a")), "child of two joints"),
        (_urdf(LINK.format("a") + LINK.format("b")), "several root links"),
        ('<robot name="x"><link name="a"', "malformed URDF XML"),
        ("<notarobot/>", "expected <robot>"),
        (_urdf(LINK.format("a") + LINK.format("b") + _joint("j", "planar", "a", "b", '<axis xyz="1 0 0"/>')), "planar joint 'j'"),
    ],
    ids=["zero-axis", "unknown-type", "missing-child", "missing-parent", "negative-mass", "cycle", "two-parents", "two-roots", "malformed", "not-robot", "planar-axis"],
)
def test_bad_urdf_raises_naming_the_element(xml, message):
    with pytest.raises(ValueError, match=message):
        jw.load_urdf(xml)


def test_missing_file_raises():
    with pytest.raises(ValueError, match="does not exist"):
        jw.load_urdf("/nonexistent/robot.urdf")


def test_wrong_configuration_length_raises_at_trace_time(all_joints):
    with pytest.raises(ValueError, match=r"nq\) must have shape \(23,\)"):
        all_joints.forward_kinematics(jnp.zeros(5))
    with pytest.raises(ValueError, match=r"nq\) must have shape \(23,\)"):
        jax.jit(lambda q: all_joints.forward_kinematics(q))(jnp.zeros(22))
    with pytest.raises(ValueError, match=r"v \(nv\) must have shape \(19,\)"):
        all_joints.integrate(all_joints.neutral(), jnp.zeros(23))


def test_builder_validation():
    b = jw.RobotModelBuilder("b").add_body("a")
    with pytest.raises(ValueError, match="body 'a' is defined twice"):
        b.add_body("a")
    with pytest.raises(ValueError, match="reserved"):
        b.add_body("world")
    with pytest.raises(ValueError, match="body 'c': mass"):
        b.add_body("c", mass=-1.0)
    with pytest.raises(ValueError, match="joint 'j': unknown joint type 'helical'"):
        b.add_joint("j", "helical", "world", "a")
    with pytest.raises(ValueError, match="joint 'j': axis"):
        b.add_joint("j", "prismatic", "world", "a", axis=(0, 0, 0))
    with pytest.raises(ValueError, match="lower limit"):
        b.add_joint("j", "revolute", "world", "a", lower=1.0, upper=0.0)
    with pytest.raises(ValueError, match="not connected to 'world'"):
        b.build()
    with pytest.raises(ValueError, match="no bodies"):
        jw.RobotModelBuilder("empty").build()
    with pytest.raises(ValueError, match="no body named 'nope'"):
        _two_link_arm().body_index("nope")
