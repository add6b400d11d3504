"""The design-search example: link lengths, tube diameters and base footprint of a 3-joint
arm that reaches a set of targets, stays stable and stiff (docs/modular.md#design-search).

Shared by ``jaxwrap demo design``, ``examples/design_search.py``, the notebook and the
tests, so all of them run the same problem:

- the arm: a fixed base, a vertical-axis shoulder, two elbows (all axes vertical), three
  hollow aluminium tubes and a 1 kg tool, so the task is planar, at the TCP's height;
- the design: the three tube lengths and outer diameters, and the footprint's sides;
- per target, the three joint angles (auxiliary variables, found together with the design);
- the loss: reach every target (squared error over 1 cm^2), keep the tip-over energy
  above ``min_energy`` and the TCP deflection under ``max_deflection`` at every target
  (quadratic penalties), while keeping mass and footprint area small and the energy
  margin large.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._catalog import FixedBase, HollowTube, SimpleTool
from ._configuration import Configuration, ConfigurationBuilder
from ._deflection import compute_deflections
from ._design import DesignSpace
from ._joints import ElbowRevolute, RightAngleRevolute
from ._kinematics import compute_mass, end_point_poses
from ._metrics import compute_energy_stability

TARGETS = np.array([[0.85, 0.10], [0.45, 0.60], [-0.30, 0.70], [0.60, -0.45]])
VARIABLES = (
    ("l1", "length"),
    ("l2", "length"),
    ("l3", "length"),
    ("l1", "outer_diameter"),
    ("l2", "outer_diameter"),
    ("l3", "outer_diameter"),
    ("base", "footprint_length"),
    ("base", "footprint_width"),
)
BOUNDS = {
    ("l1", "length"): (0.1, 0.7),
    ("l2", "length"): (0.1, 0.7),
    ("l3", "length"): (0.05, 0.4),
    ("l1", "outer_diameter"): (0.012, 0.08),
    ("l2", "outer_diameter"): (0.012, 0.08),
    ("l3", "outer_diameter"): (0.012, 0.06),
    ("base", "footprint_length"): (0.1, 1.0),
    ("base", "footprint_width"): (0.1, 1.0),
}


def reach_arm() -> Configuration:
    """The arm, with a starting design inside the bounds."""
    b = ConfigurationBuilder("reach_arm")
    b = b.add_module("base", FixedBase(), height=0.1, mass=6.0, footprint_length=0.4, footprint_width=0.4)
    b = b.add_module("j1", RightAngleRevolute(), radius=0.04, lower=-3.0, upper=3.0, mass=0.8)
    b = b.add_module("l1", HollowTube(), length=0.4, wall_thickness=0.002)
    b = b.add_module("j2", ElbowRevolute(), radius=0.035, lower=-2.8, upper=2.8, mass=0.6)
    b = b.add_module("l2", HollowTube(), length=0.3, wall_thickness=0.002)
    b = b.add_module("j3", ElbowRevolute(), radius=0.03, lower=-2.8, upper=2.8, mass=0.4)
    b = b.add_module("l3", HollowTube(), length=0.15, wall_thickness=0.002, outer_diameter=0.03)
    b = b.add_module("tool", SimpleTool(), length=0.05, mass=1.0)
    b = b.attach("base", 0, "j1").attach("j1", 1, "l1").attach("l1", 1, "j2").attach("j2", 1, "l2")
    b = b.attach("l2", 1, "j3").attach("j3", 1, "l3").attach("l3", 1, "tool")
    return b.build()


def reach_space(config: Configuration) -> DesignSpace:
    return DesignSpace.from_config(config, VARIABLES, BOUNDS)


def reach_data(targets=TARGETS, min_energy: float = 3.0, max_deflection: float = 1.0e-3) -> dict:
    """Targets (k, 2) in the arm's plane and the constraint limits, as arrays."""
    dtype = jnp.result_type(float)
    return {
        "targets": jnp.asarray(targets, dtype=dtype),
        "min_energy": jnp.asarray(min_energy, dtype=dtype),
        "max_deflection": jnp.asarray(max_deflection, dtype=dtype),
    }


def task_metrics(config: Configuration, q: jnp.ndarray) -> dict:
    """Per target pose (q: (k, 3)): TCP xy, energy stability (J), summed TCP deflection (m)."""

    def one(q):
        tip = end_point_poses(config, q).translation[0, :2]
        linear, _ = compute_deflections(config, q)
        return tip, compute_energy_stability(config, q), linear

    tip, energy, deflection = jax.vmap(one)(q)
    return {"tip": tip, "energy": energy, "deflection": deflection, "mass": compute_mass(config)}


def reach_loss(config: Configuration, q: jnp.ndarray, data: dict) -> jnp.ndarray:
    """The example's loss (see the module docstring); ``q`` holds one row per target."""
    m = task_metrics(config, q)
    reach = jnp.sum((m["tip"] - data["targets"]) ** 2) / 0.01**2
    stability = jnp.sum(jax.nn.relu(data["min_energy"] - m["energy"]) ** 2)
    stiffness = jnp.sum(jax.nn.relu(m["deflection"] / data["max_deflection"] - 1.0) ** 2)
    base = config.params["base"]
    area = base["footprint_length"] * base["footprint_width"]
    objective = 0.2 * m["mass"] + 4.0 * area - 0.05 * jnp.mean(m["energy"])
    return reach + 100.0 * stability + 100.0 * stiffness + objective


def random_starts(space: DesignSpace, key, num: int, num_targets: int = len(TARGETS)):
    """``num`` random designs (uniform in the box) and joint angles (uniform in +-1.5 rad)."""
    k1, k2 = jax.random.split(key)
    q0 = jax.random.uniform(k2, (num, num_targets, 3), minval=-1.5, maxval=1.5, dtype=space.lower.dtype)
    return space.random(k1, num), q0
