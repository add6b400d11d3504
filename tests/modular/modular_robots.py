"""Configurations shared by the modular tests (built fresh; each is a few milliseconds)."""

from __future__ import annotations

import jaxwrap as jw

M = jw.modular


def planar_3r(lengths=(0.5, 0.4, 0.3), r=0.05, base=None):
    """The reference's planar 3R arm: joint axes vertical, distances between axes (and from
    the last axis to the TCP) equal to ``lengths``."""
    b = M.ConfigurationBuilder("planar3r")
    b = b.add_module("base", base or M.FixedBase(), height=0.1, mass=5.0)
    b = b.add_module("j1", M.RightAngleRevolute(), radius=r, lower=-3.0, upper=3.0)
    b = b.add_module("l1", M.HollowTube(), length=lengths[0] - 2 * r)
    b = b.add_module("j2", M.ElbowRevolute(), radius=r, lower=-2.5, upper=2.5)
    b = b.add_module("l2", M.HollowTube(), length=lengths[1] - 2 * r)
    b = b.add_module("j3", M.ElbowRevolute(), radius=r, lower=-2.5, upper=2.5)
    b = b.add_module("l3", M.HollowTube(), length=lengths[2] - r)
    b = b.add_module("tool", M.SimpleTool(), length=0.0)
    b = b.attach("base", 0, "j1", 0).attach("j1", 1, "l1", 0).attach("l1", 1, "j2", 0)
    b = b.attach("j2", 1, "l2", 0).attach("l2", 1, "j3", 0).attach("j3", 1, "l3", 0).attach("l3", 1, "tool", 0)
    return b.build()


def two_arms(base=None, shared=True):
    """A torso joint, a tee and two arms. With ``shared`` the arm is one prototype attached
    twice (duplicated at instantiation); otherwise two prototypes with equal numbers."""
    b = M.ConfigurationBuilder("two_arms")
    b = b.add_module("base", base or M.PlanarBase(), height=0.3)
    b = b.add_module("torso", M.InlineRevolute(), lower=-2.0, upper=2.0)
    b = b.add_module("tee", M.TeeTube(), length=0.2)
    b = b.attach("base", 0, "torso", 0).attach("torso", 1, "tee", 0)
    sides = [("", 1, 0.3), ("", 2, -0.2)] if shared else [("_a", 1, 0.3), ("_b", 2, -0.2)]
    for suffix, connector, twist in sides:
        if not shared or connector == 1:
            b = b.add_module("shoulder" + suffix, M.ElbowRevolute(), lower=-2.0, upper=2.0)
            b = b.add_module("upper" + suffix, M.HollowTube(), length=0.3)
            b = b.add_module("elbow" + suffix, M.ElbowRevolute(), lower=-2.5, upper=2.5)
            b = b.add_module("fore" + suffix, M.HollowTube(), length=0.25, outer_diameter=0.04)
            b = b.add_module("hand" + suffix, M.SimpleTool(), mass=0.3)
            b = b.attach("shoulder" + suffix, 1, "upper" + suffix).attach("upper" + suffix, 1, "elbow" + suffix)
            b = b.attach("elbow" + suffix, 1, "fore" + suffix).attach("fore" + suffix, 1, "hand" + suffix)
        b = b.attach("tee", connector, "shoulder" + suffix, 0, twist=twist)
    return b.build()


def cantilever(length=0.5, outer_diameter=0.05, wall=0.003, youngs_modulus=70e9):
    """A fixed base, one vertical hollow tube and a massless tool at its end (TCP there)."""
    b = M.ConfigurationBuilder("cantilever")
    b = b.add_module("base", M.FixedBase(), height=0.1)
    b = b.add_module(
        "tube",
        M.HollowTube(),
        length=length,
        outer_diameter=outer_diameter,
        wall_thickness=wall,
        youngs_modulus=youngs_modulus,
    )
    b = b.add_module("tool", M.SimpleTool(), length=0.0, mass=0.0)
    return b.attach("base", 0, "tube").attach("tube", 1, "tool").build()
