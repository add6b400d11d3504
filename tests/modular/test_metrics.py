"""Design metrics against the reference's numbers and hand derivations: energy stability
(3.3), hollow-tube deflection (3.5), the joint-limit gradient (3.4), the motor model
(3.8), components; and every metric's gradient with respect to module parameters against
central differences."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from modular_robots import cantilever, planar_3r

import jaxwrap as jw

M = jw.modular
SQUARE = jnp.array([[0.5, -0.5, 0.0], [0.5, 0.5, 0.0], [-0.5, 0.5, 0.0], [-0.5, -0.5, 0.0]])


# ---------------------------------------------------------------------------- 3.3 energy stability
def test_energy_stability_reference_numbers():
    # 1 m square support, 10 kg, g = 9.81: CG (0, 0, 0.5) -> h = 0.20711 m, 20.317 J.
    E = M.energy_stability(SQUARE, [0.0, 0.0, 0.5], 10.0, [0.0, 0.0, -9.81])
    assert float(E) == pytest.approx(10 * 9.81 * (np.sqrt(0.5) - 0.5), rel=1e-14)
    assert float(E) == pytest.approx(20.317, abs=5e-4)
    # CG at x = 0.3: h_min = 0.03852, 3.778 J.
    E = M.energy_stability(SQUARE, [0.3, 0.0, 0.5], 10.0, [0.0, 0.0, -9.81])
    assert float(E) == pytest.approx(3.778, abs=5e-4)
    # CG outside (0.1 beyond the +x edge): negative, -m g d.
    E = M.energy_stability(SQUARE, [0.6, 0.2, 0.5], 10.0, [0.0, 0.0, -9.81])
    assert float(E) == pytest.approx(-10 * 9.81 * 0.1, rel=1e-12)
    # The vertex order (clockwise or not) and a tilted gravity are handled; tilting gravity
    # towards an edge lowers the margin.
    E_cw = M.energy_stability(SQUARE[::-1], [0.3, 0.0, 0.5], 10.0, [0.0, 0.0, -9.81])
    assert float(E_cw) == pytest.approx(3.778, abs=5e-4)
    E_tilt = M.energy_stability(SQUARE, [0.0, 0.0, 0.5], 10.0, [1.0, 0.0, -9.81])
    assert float(E_tilt) < 20.317
    # Soft minimum: below the exact one, and converging to it.
    soft = [float(M.energy_stability(SQUARE, [0.3, 0.0, 0.5], 10.0, softness=s)) for s in (1.0, 0.01)]
    assert soft[0] < soft[1] < 3.7785 and soft[1] == pytest.approx(3.778, abs=1e-3)


def test_energy_stability_of_a_configuration():
    # A fixed base with a 1 m square footprint, its mass a uniform box of height 1: CG at 0.5.
    c = (
        M.ConfigurationBuilder("block")
        .add_module("base", M.FixedBase(), footprint_length=1.0, footprint_width=1.0, height=1.0, mass=10.0)
        .add_module("tool", M.SimpleTool(), mass=0.0)
        .attach("base", 0, "tool")
        .build()
    )
    assert float(M.compute_energy_stability(c, jnp.zeros(0))) == pytest.approx(20.317, abs=5e-4)
    # A planar base: the support polygon moves with it; the margin does not depend on where.
    arm = planar_3r(base=M.PlanarBase())
    q = jnp.array([3.0, -1.0, np.cos(0.7), np.sin(0.7), 0.3, -0.5, 0.8])
    q0 = jnp.array([0.0, 0.0, 1.0, 0.0, 0.3, -0.5, 0.8])
    f = jax.jit(M.compute_energy_stability)
    np.testing.assert_allclose(f(arm, q), f(arm, q0), rtol=1e-12)
    points, stable = M.support_polygon(arm, q)
    np.testing.assert_allclose(stable[:2], [3.0, -1.0], atol=1e-15)


# ---------------------------------------------------------------------------- 3.5 deflection
def _section(D, t, E=70e9):
    d = D - 2 * t
    return E * np.pi * (D**4 - d**4) / 64, E * np.pi * (D**2 - d**2) / 4


def test_cantilever_tube_reference_numbers():
    # 50 mm x 3 mm aluminium tube, 0.5 m, 100 N tip load: 0.485 mm and 1.45 mrad.
    c = M.set_tip_load(cantilever(), "tool", (100.0, 0.0, 0.0))
    linear, angular = M.compute_deflections(c, jnp.zeros(0), gravity=(0.0, 0.0, 0.0))
    EI, _ = _section(0.05, 0.003)
    assert EI / 70e9 == pytest.approx(1.228e-7, rel=1e-3)
    assert float(linear) == pytest.approx(100 * 0.5**3 / (3 * EI), rel=1e-13)
    assert float(angular) == pytest.approx(100 * 0.5**2 / (2 * EI), rel=1e-13)
    assert float(linear) == pytest.approx(0.485e-3, abs=5e-7) and float(angular) == pytest.approx(1.45e-3, abs=5e-6)
    dx, dtheta = M.end_point_deflections(c, jnp.zeros(0), gravity=(0.0, 0.0, 0.0))
    np.testing.assert_allclose(dx[0, 1:], 0.0, atol=1e-20)  # along the load
    assert float(dtheta[0, 1]) > 0  # the tip turns towards +x: about +y


def test_tube_under_its_own_weight():
    # Gravity across the tube: w L^4 / (8 EI) and w L^3 / (6 EI).
    c = cantilever(length=0.8)
    linear, angular = M.compute_deflections(c, jnp.zeros(0), gravity=(9.81, 0.0, 0.0))
    EI, _ = _section(0.05, 0.003)
    w = 2700 * np.pi * (0.05**2 - 0.044**2) / 4 * 9.81
    assert float(linear) == pytest.approx(w * 0.8**4 / (8 * EI), rel=1e-12)
    assert float(angular) == pytest.approx(w * 0.8**3 / (6 * EI), rel=1e-12)


def test_two_link_chain_against_a_hand_derivation():
    # Vertical tube L1 (section 1), a rigid elbow of leg a, horizontal tube L2 (section 2),
    # a vertical load P at the tip, no gravity. Tube 2 is a plain cantilever; tube 1 carries
    # the axial load P and the moment P (a + L2), which tilts everything above it.
    L1, L2, a, P = 0.6, 0.4, 0.05, 80.0
    b = M.ConfigurationBuilder("l_arm").add_module("base", M.FixedBase(), height=0.1)
    b = b.add_module("t1", M.HollowTube(), length=L1, outer_diameter=0.06, wall_thickness=0.004)
    b = b.add_module("bend", M.ElbowTube(), length=a)
    b = b.add_module("t2", M.HollowTube(), length=L2, outer_diameter=0.03, wall_thickness=0.002, youngs_modulus=200e9)
    b = b.add_module("tool", M.SimpleTool(), length=0.0, mass=0.0)
    c = b.attach("base", 0, "t1").attach("t1", 1, "bend").attach("bend", 1, "t2").attach("t2", 1, "tool").build()
    c = M.set_tip_load(c, "tool", (0.0, 0.0, -P))
    tip = M.end_point_poses(c, jnp.zeros(0)).translation[0]
    np.testing.assert_allclose(tip, [a + L2, 0.0, 0.1 + L1 + a], atol=1e-15)
    dx, dtheta = M.end_point_deflections(c, jnp.zeros(0), gravity=(0.0, 0.0, 0.0))
    EI1, EA1 = _section(0.06, 0.004)
    EI2, _ = _section(0.03, 0.002, 200e9)
    theta1 = P * (a + L2) * L1 / EI1
    expected_x = P * (a + L2) * L1**2 / (2 * EI1) + theta1 * a
    expected_z = -(P * L2**3 / (3 * EI2) + P * L1 / EA1 + theta1 * (a + L2))
    np.testing.assert_allclose(dx[0], [expected_x, 0.0, expected_z], rtol=1e-12, atol=1e-20)
    np.testing.assert_allclose(dtheta[0], [0.0, theta1 + P * L2**2 / (2 * EI2), 0.0], rtol=1e-12, atol=1e-20)


# ---------------------------------------------------------------------------- 3.4 joint limits
def test_limit_gradient_is_the_gradient_of_the_potential():
    lower, upper = jnp.array([-1.0, 0.0, -2.0]), jnp.array([1.0, 0.5, 3.0])
    q = jnp.array([0.7, 0.05, 0.5])
    H = lambda q: jnp.sum((upper - lower) ** 2 / (4 * (upper - q) * (q - lower)))  # noqa: E731
    np.testing.assert_allclose(M.limit_gradient(q, lower, upper), jax.grad(H)(q), rtol=1e-14)
    assert float(H((lower + upper) / 2)) == pytest.approx(3.0) and np.all(
        M.limit_gradient((lower + upper) / 2, lower, upper) == 0
    )
    # Threshold on the distance to the nearer limit over the range (0.15, 0.1, 0.5 here).
    np.testing.assert_array_equal(np.asarray(M.limit_gradient(q, lower, upper, 0.2)) != 0, [True, True, False])
    np.testing.assert_array_equal(np.asarray(M.limit_gradient(q, lower, upper, 0.12)) != 0, [False, True, False])
    np.testing.assert_array_equal(M.limit_gradient(q, -jnp.inf, upper), 0.0)
    # Configuration: base DOFs first (zeros), then the joints with their module limits.
    arm = planar_3r(base=M.PlanarBase())
    qc = jnp.array([0.0, 0.0, 1.0, 0.0, 2.0, -1.0, 0.1])
    g = M.compute_limit_gradient(arm, qc)
    assert g.shape == (6,)
    np.testing.assert_array_equal(g[:3], 0.0)
    np.testing.assert_allclose(g[3:], M.limit_gradient(qc[4:], [-3.0, -2.5, -2.5], [3.0, 2.5, 2.5]), rtol=1e-15)


# ---------------------------------------------------------------------------- 3.8 motors
def test_motor_model():
    c = planar_3r()
    # Defaults: stall 0.5 N m, no-load 600 rad/s, continuous 0.15 N m, ratio 100, efficiency 0.8.
    assert float(M.max_vel(c, "j2")) == pytest.approx(6.0)
    assert float(M.max_torque(c, "j2")) == pytest.approx(0.8 * 100 * 0.5)
    assert float(M.max_torque(c, "j2", velocity=3.0)) == pytest.approx(0.8 * 100 * 0.5 * 0.5)
    assert float(M.max_torque(c, "j2", velocity=-7.0)) == 0.0  # past the no-load speed
    assert float(M.max_torque(c, "j2", 0, True, 3.0)) == pytest.approx(100 * 0.5 * 1.5 / 0.8)
    assert float(M.cont_torque(c, 1)) == pytest.approx(0.8 * 100 * 0.15)
    # At stall, all of the electrical power is copper loss: (tau_s / k_t)^2 R.
    assert float(M.power(c, "j1", velocity=0.0, torque=40.0)) == pytest.approx((0.5 / 0.05) ** 2 * 1.0)
    # Driving at speed draws more than it would braking (regeneration).
    assert float(M.power(c, "j1", velocity=2.0, torque=10.0)) > 0 > float(M.power(c, "j1", velocity=2.0, torque=-10.0))
    assert not M.is_passive(c, "j1")
    passive = (
        M.ConfigurationBuilder()
        .add_module("base", M.FixedBase())
        .add_module("free", M.InlineRevolute(passive=True), max_speed=3.0)
        .attach("base", 0, "free")
        .build()
    )
    assert M.is_passive(passive, "free") and float(M.max_torque(passive, "free")) == 0.0
    assert float(M.max_vel(passive, "free")) == 3.0
    with pytest.raises(ValueError, match="one DOF"):
        M.max_vel(c, "j1", 1)
    with pytest.raises(ValueError, match="not a joint module"):
        M.max_vel(c, "l1")


def test_components_count_violations():
    c = M.with_params(planar_3r(), {"tool": {"mass": 1.0}})
    c = M.add_cfg_component(c, M.JointLimitMargin(0.1))
    c = M.add_cfg_component(c, M.StabilityLimit(0.0))
    c = M.add_cfg_component(c, M.DeflectionLimit(max_linear=1e-3))
    assert c.num_components() == 3
    count = jax.jit(M.update_components)
    folded, near_limit, straight = jnp.array([0.3, -2.0, 2.0]), jnp.array([2.95, -2.0, 2.0]), jnp.zeros(3)
    assert float(M.compute_energy_stability(c, folded)) > 0 > float(M.compute_energy_stability(c, straight))
    assert int(count(c, folded)) == 0
    assert int(count(c, near_limit)) == 1  # within 0.1 rad of j1's limit
    assert int(count(c, straight)) == 2  # straight out: tips over, and bends 1.2 mm
    assert int(count(M.remove_cfg_component(c, 1), straight)) == 1


# ---------------------------------------------------------------------------- gradients
def _metrics_of(x):
    """Mass, CG, energy stability, deflection and tip pose of a 3R arm on a planar base as
    functions of eight module parameters."""
    arm = planar_3r(base=M.PlanarBase())
    arm = M.set_tip_load(arm, "tool", (0.0, 0.0, -20.0))
    c = M.with_params(
        arm,
        {
            "l1": {"length": x[0], "outer_diameter": x[1]},
            "l2": {"length": x[2], "wall_thickness": x[3]},
            "j2": {"mass": x[4], "radius": x[5]},
            "base": {"footprint_length": x[6], "mass": x[7]},
        },
    )
    q = jnp.array([0.2, -0.1, np.cos(0.4), np.sin(0.4), 0.3, -0.5, 0.8])
    mass, cg = M.compute_cg(c, q)
    linear, angular = M.compute_deflections(c, q)
    tip = M.end_point_poses(c, q)
    return jnp.concatenate(
        [
            mass[None],
            cg,
            M.compute_energy_stability(c, q)[None],
            1e3 * linear[None],
            1e3 * angular[None],
            tip.translation[0],
            tip.rotation[0].ravel(),
        ]
    )


def test_metric_gradients_match_central_differences():
    x = jnp.array([0.4, 0.05, 0.3, 0.003, 1.0, 0.05, 0.5, 10.0])
    f = jax.jit(jax.vmap(_metrics_of))
    J, Jr = jax.jit(lambda x: (jax.jacfwd(_metrics_of)(x), jax.jacrev(_metrics_of)(x)))(x)
    np.testing.assert_allclose(Jr, J, rtol=1e-12, atol=1e-14)
    h = 1e-6 * jnp.abs(x)
    steps = jnp.diag(h)
    fd = ((f(x + steps) - f(x - steps)) / (2 * h[:, None])).T
    scale = jnp.max(jnp.abs(J), axis=1, keepdims=True)
    np.testing.assert_allclose(fd / scale, J / scale, atol=1e-6)
    assert np.all(np.isfinite(J))
