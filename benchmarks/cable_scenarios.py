"""The cable benchmark scenarios (the data in `_opensim_cable.BENCH_SCENARIOS`) built as
jaxwrap cables: bodies 0 = ground, 1 = a free "end" body carrying the termination; every
obstacle is fixed to ground. Shared by benchmarks/cable.py and tests/cable."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _opensim_cable import BENCH_SCENARIOS

import jaxwrap as jw

NAMES = tuple(BENCH_SCENARIOS)


def _rotation_xyz(angles) -> np.ndarray:
    # OpenSim's body-fixed XYZ orientation: R = Rx Ry Rz.
    a, b, c = angles
    return np.asarray(jw.rotation_x(a) @ jw.rotation_y(b) @ jw.rotation_z(c))


def surface_from_spec(spec) -> jw.AbstractSurface:
    """A surface from {"kind", "radius" | "radii" | "ring_radius" + "tube_radius"}."""
    kind = spec["kind"]
    if kind == "sphere":
        return jw.Sphere(spec["radius"])
    if kind == "cylinder":
        return jw.Cylinder(spec["radius"])
    if kind == "ellipsoid":
        return jw.Ellipsoid(jnp.asarray(spec["radii"], dtype=float))
    return jw.Torus(spec["ring_radius"], spec["tube_radius"])


def build(name: str, scale: float = 1.0, **settings) -> jw.CableSpan:
    """The scenario's cable with OpenSim's settings unless overridden; ``scale`` multiplies
    every length (stations, placements, radii, hints)."""
    spec = BENCH_SCENARIOS[name]
    cable = jw.CableSpan(0, np.multiply(spec["origin"], scale), 1, [0.0, 0.0, 0.0])
    for o in spec["obstacles"]:
        o = {k: (np.multiply(v, scale) if k in _LENGTHS else v) for k, v in o.items()}
        X_BS = jw.Transform(jnp.asarray(_rotation_xyz(o["xyz"]), dtype=float), jnp.asarray(o["p"], dtype=float))
        cable = cable.add_obstacle(0, X_BS, surface_from_spec(o), contact_hint=jnp.asarray(o["hint"], dtype=float))
    return cable.with_settings(**settings)


_LENGTHS = ("radius", "radii", "ring_radius", "tube_radius", "p", "hint")


def terminations(name: str, num: int, seed: int = 0) -> jnp.ndarray:
    """Random termination points: the nominal one plus a uniform offset in the scenario's box."""
    spec = BENCH_SCENARIOS[name]
    offsets = jax.random.uniform(jax.random.PRNGKey(seed), (num, 3), minval=-spec["box"], maxval=spec["box"])
    return jnp.asarray(spec["termination_nominal"]) + offsets


def body_poses(termination: jnp.ndarray) -> jw.Transform:
    """Ground and the end body at ``termination`` (identity rotations)."""
    translations = jnp.stack([jnp.zeros(3, termination.dtype), termination])
    return jw.Transform(jnp.broadcast_to(jnp.eye(3, dtype=termination.dtype), (2, 3, 3)), translations)
