"""The tendon co-design example: link lengths, tube diameters, base footprint and joint
pulley radii of a tendon-driven 3-joint arm, found together (docs/modular.md#tendon-co-design).

Shared by ``jaxwrap demo tendon-design``, the notebook and the tests, so all of them run the
same problem:

- the arm: a fixed base with a vertical column, three elbow joints with horizontal axes
  (the arm moves in the base's y-z plane, against gravity), three hollow aluminium tubes
  and a 1 kg tool;
- the drive: each joint is pulled by an antagonistic pair of tendons, one on each side of
  the links (``+`` and ``-``), anchored ``STATION`` from the joint axis on the link before
  and the link after, 5 mm outside the joint's pulley (a cylinder on the joint axis, turning
  with the joint, of the module's ``pulley_radius``). The six tendons are one `CableSet` of
  one leg structure, solved by one vmapped solver; their moment arms ``-dL/dq`` come from
  the solved paths, and their design derivatives by implicit differentiation;
- the design: the three tube lengths and outer diameters, the three pulley radii and the
  footprint's sides;
- per target, the three joint angles (found together with the design);
- the loss: reach every target (squared error over 1 cm^2); at every target hold the arm
  against gravity with tendon tensions at most ``max_tension`` (the gravity torque of each
  joint inside ``[T_max r_-, T_max r_+]``, the reach of its two tendons' moment arms), keep
  the tip-over energy above ``min_energy``, the TCP deflection under ``max_deflection`` and
  the joints inside their limits (quadratic penalties); while keeping mass, footprint area
  and pulley size small and the energy margin large.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from .._cable import CableSet, CableSpan, cable_lengths_and_moment_arms
from ._catalog import FixedBase, HollowTube, SimpleTool
from ._codesign import joint_pulley
from ._configuration import Configuration, ConfigurationBuilder
from ._deflection import compute_deflections
from ._design import DesignSpace
from ._joints import ElbowRevolute
from ._kinematics import compute_cg, compute_mass, end_point_poses, module_placements, to_robot_model
from ._metrics import compute_energy_stability

JOINTS = ("j1", "j2", "j3")
# Targets (y, z) in the arm's plane, metres: out to the side, high, low and across.
TARGETS = np.array([[0.70, 0.80], [0.30, 1.20], [-0.55, 0.60], [0.60, 0.25]])
STATION = 0.12  # m from the joint axis along the links
CLEARANCE = 0.005  # m between a tendon at q = 0 and its pulley
GRAVITY = 9.81
VARIABLES = (
    ("l1", "length"),
    ("l2", "length"),
    ("l3", "length"),
    ("l1", "outer_diameter"),
    ("l2", "outer_diameter"),
    ("l3", "outer_diameter"),
    ("j1", "pulley_radius"),
    ("j2", "pulley_radius"),
    ("j3", "pulley_radius"),
    ("base", "footprint_length"),
    ("base", "footprint_width"),
)
BOUNDS = {
    ("l1", "length"): (0.1, 0.6),
    ("l2", "length"): (0.1, 0.6),
    ("l3", "length"): (0.05, 0.3),
    ("l1", "outer_diameter"): (0.012, 0.08),
    ("l2", "outer_diameter"): (0.012, 0.08),
    ("l3", "outer_diameter"): (0.012, 0.06),
    ("j1", "pulley_radius"): (0.005, 0.04),
    ("j2", "pulley_radius"): (0.005, 0.04),
    ("j3", "pulley_radius"): (0.005, 0.04),
    ("base", "footprint_length"): (0.1, 1.2),
    ("base", "footprint_width"): (0.1, 1.2),
}


NUM_STEPS = 2000
# Adam with a cosine-decayed step (0.05 to 0.0025 over NUM_STEPS): the large early steps
# cross the landscape, the small late ones settle the stiff penalties. Module-level, so
# repeated searches reuse one compiled program.
OPTIMIZER = optax.adam(optax.cosine_decay_schedule(0.05, NUM_STEPS, alpha=0.05))


def tendon_arm() -> Configuration:
    """The arm, with a starting design inside the bounds."""
    b = ConfigurationBuilder("tendon_arm")
    b = b.add_module("base", FixedBase(), height=0.05, mass=8.0, footprint_length=0.5, footprint_width=0.5)
    b = b.add_module("column", HollowTube(), length=0.3, outer_diameter=0.06, wall_thickness=0.003)
    for joint, mass in zip(JOINTS, (0.6, 0.5, 0.4)):
        b = b.add_module(joint, ElbowRevolute(), radius=0.045, lower=-2.3, upper=2.3, mass=mass, pulley_radius=0.02)
    b = b.add_module("l1", HollowTube(), length=0.4, wall_thickness=0.002)
    b = b.add_module("l2", HollowTube(), length=0.3, wall_thickness=0.002)
    b = b.add_module("l3", HollowTube(), length=0.15, wall_thickness=0.002, outer_diameter=0.03)
    b = b.add_module("tool", SimpleTool(), length=0.05, mass=1.0)
    b = b.attach("base", 0, "column").attach("column", 1, "j1").attach("j1", 1, "l1").attach("l1", 1, "j2")
    b = b.attach("j2", 1, "l2").attach("l2", 1, "j3").attach("j3", 1, "l3").attach("l3", 1, "tool")
    return b.build()


def tendon_space(config: Configuration) -> DesignSpace:
    return DesignSpace.from_config(config, VARIABLES, BOUNDS)


def tendon_data(
    targets=TARGETS,
    max_tension: float = 600.0,
    min_energy: float = 4.0,
    max_deflection: float = 1.5e-3,
) -> dict:
    """Targets (k, 2) as (y, z) in the arm's plane and the limits, as arrays."""
    dtype = jnp.result_type(float)
    return {
        "targets": jnp.asarray(targets, dtype=dtype),
        "max_tension": jnp.asarray(max_tension, dtype=dtype),
        "min_energy": jnp.asarray(min_energy, dtype=dtype),
        "max_deflection": jnp.asarray(max_deflection, dtype=dtype),
    }


def tendons(config: Configuration) -> CableSet:
    """The six tendons ``j1+``, ``j1-``, ... : per joint, one on each side of the links,
    from the link before the joint to the link after it, over the joint's pulley. Built
    from the traced design, so stations and pulleys follow it."""
    placements = module_placements(config)
    cables = {}
    for joint in JOINTS:
        i = config.instance_index(joint)
        housing_body = config.structure.instances[i].body
        body, X_BS, pulley = joint_pulley(config, joint)
        offset = pulley.radius + CLEARANCE
        for sign, side in ((1.0, "+"), (-1.0, "-")):
            # Joint frame: x along the links at q = 0, z the axis, y across the links.
            before = placements[i].apply(jnp.stack([-STATION, sign * offset, 0.0 * offset]))
            after = jnp.stack([STATION + 0.0 * offset, sign * offset, 0.0 * offset])
            cable = CableSpan(housing_body, before, body, after).add_obstacle(
                body, X_BS, pulley, contact_hint=(0.0, sign, 0.0), side=(0.0, sign, 0.0)
            )
            cables[joint + side] = cable
    return CableSet.from_cables(cables)


def tendon_metrics(config: Configuration, q: jnp.ndarray, data: dict) -> dict:
    """Per target pose (q: (k, 3)): TCP (y, z), energy stability (J), TCP deflection (m),
    the gravity torque per joint (N m, what the tendons must hold), the tendons' moment
    arms about their joints (k, 3, 2: the ``+`` and ``-`` tendon), and the torque shortfall
    per joint (N m, 0 when tensions up to ``max_tension`` hold the arm)."""
    model = to_robot_model(config)
    cables = tendons(config)

    def one(q):
        tip = end_point_poses(config, q).translation[0, 1:]
        linear, _ = compute_deflections(config, q)

        # Holding torque: the gradient of the potential energy m g z_cg.
        def potential(q):
            mass, cg = compute_cg(config, q)
            return mass * GRAVITY * cg[2]

        torque = jax.grad(potential)(q)
        _, arms = cable_lengths_and_moment_arms(model, cables, q)
        arms = jnp.stack([arms[2 * j : 2 * j + 2, j] for j in range(len(JOINTS))])  # (3, 2)
        reach_up = data["max_tension"] * jnp.max(arms, axis=1)
        reach_down = data["max_tension"] * jnp.min(arms, axis=1)
        shortfall = jax.nn.relu(torque - reach_up) + jax.nn.relu(reach_down - torque)
        return tip, compute_energy_stability(config, q), linear, torque, arms, shortfall

    tip, energy, deflection, torque, arms, shortfall = jax.vmap(one)(q)
    return {
        "tip": tip,
        "energy": energy,
        "deflection": deflection,
        "torque": torque,
        "arms": arms,
        "shortfall": shortfall,
        "mass": compute_mass(config),
    }


def tendon_loss(config: Configuration, q: jnp.ndarray, data: dict) -> jnp.ndarray:
    """The example's loss (see the module docstring); ``q`` holds one row per target."""
    m = tendon_metrics(config, q, data)
    reach = jnp.sum((m["tip"] - data["targets"]) ** 2) / 0.01**2
    torque = jnp.sum(m["shortfall"] ** 2)
    stability = jnp.sum(jax.nn.relu(data["min_energy"] - m["energy"]) ** 2)
    stiffness = jnp.sum(jax.nn.relu(m["deflection"] / data["max_deflection"] - 1.0) ** 2)
    limits = jnp.sum(jax.nn.relu(jnp.abs(q) - 2.2) ** 2)
    p = config.params
    area = p["base"]["footprint_length"] * p["base"]["footprint_width"]
    pulleys = sum(p[j]["pulley_radius"] for j in JOINTS)
    objective = 0.2 * m["mass"] + 4.0 * area + 20.0 * pulleys - 0.05 * jnp.mean(m["energy"])
    return reach + 100.0 * (torque + stability + stiffness) + 1.0e4 * limits + objective


def random_starts(space: DesignSpace, key, num: int, num_targets: int = len(TARGETS)):
    """``num`` random designs (uniform in the box) and joint angles (uniform in +-1 rad)."""
    k1, k2 = jax.random.split(key)
    q0 = jax.random.uniform(k2, (num, num_targets, 3), minval=-1.0, maxval=1.0, dtype=space.lower.dtype)
    return space.random(k1, num), q0
