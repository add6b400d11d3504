"""Ellipsoid and torus wraps against an independent reference: the shortest polyline outside
the obstacle found by scipy (tests/cable/shortest_paths.py, no jaxwrap code), for
obstacles at uniformly random rotations, every path solved cold with the default start.
The reference itself is checked against the closed-form sphere wrap first."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from shortest_paths import (
    outside_ellipsoid,
    outside_sphere,
    outside_torus,
    shortest_polyline_length,
    sphere_shortest,
)

import jaxwrap as jw

RADII = (0.5, 0.3, 0.4)
RING, TUBE = 0.45, 0.2
SURFACES = {
    "sphere": (jw.Sphere(0.5), [0.0, 0.5, 0.0], outside_sphere(0.5), 0.5),
    "ellipsoid": (jw.Ellipsoid(jnp.array(RADII)), [0.0, 0.3, 0.0], outside_ellipsoid(RADII), 0.5),
    "torus": (jw.Torus(RING, TUBE), [RING + TUBE, 0.0, 0.0], outside_torus(RING, TUBE), RING + TUBE),
}


def _cases(num: int, seed: int):
    """End points on either side (distance 0.9-1.4 from the obstacle's centre) and uniformly
    random obstacle rotations."""
    rng = np.random.default_rng(seed)
    rotations = Rotation.random(num, random_state=rng).as_matrix()
    ends = []
    for _ in range(num):
        pair = rng.normal(size=(2, 3))
        pair /= np.linalg.norm(pair, axis=1, keepdims=True)
        pair[0, 0], pair[1, 0] = -abs(pair[0, 0]) - 0.5, abs(pair[1, 0]) + 0.5
        pair /= np.linalg.norm(pair, axis=1, keepdims=True)
        ends.append(pair * rng.uniform(0.9, 1.4, size=(2, 1)))
    return rotations, np.stack(ends)


@pytest.fixture(scope="module")
def solve():
    """Default settings but a tight tolerance; ground (body 0) holds the end points, body 1
    the obstacle."""

    def run(kind, rotations, ends):
        surface, hint, _, _ = SURFACES[kind]

        def one(R, pair):
            cable = (
                jw.CableSpan(0, pair[0], 0, pair[1])
                .add_obstacle(1, jw.Transform.identity(), surface, contact_hint=hint)
                .with_settings(smoothness_tolerance=1e-10, max_iterations=100)
            )
            poses = jw.Transform(jnp.stack([jnp.eye(3), R]), jnp.zeros((2, 3)))
            path = jw.solve_cable(cable, poses)
            return path.length, path.converged

        return jax.jit(jax.vmap(one))(jnp.asarray(rotations), jnp.asarray(ends))

    return run


def _references(kind, rotations, ends):
    _, _, g, size = SURFACES[kind]
    out = []
    for R, (a, b) in zip(rotations, ends):
        # In the obstacle's frame: x_S = R^T x_G (the obstacle sits at the origin).
        # The torus tube is the tightest curvature: it needs the finer polyline.
        ref = shortest_polyline_length(R.T @ a, R.T @ b, g, size, n=64 if kind == "torus" else 32)
        assert ref["feasible"]
        out.append(ref["length"])
    return np.array(out)


def test_the_reference_reproduces_the_closed_form_sphere_wrap():
    rotations, ends = _cases(4, seed=3)
    ref = _references("sphere", rotations, ends)
    exact = np.array([sphere_shortest(a, b, 0.5) for a, b in ends])
    np.testing.assert_allclose(ref, exact, rtol=5e-6)


@pytest.mark.parametrize("kind", ["ellipsoid", "torus"])
def test_cold_solves_match_the_shortest_polyline(kind, solve):
    rotations, ends = _cases(6, seed={"ellipsoid": 11, "torus": 12}[kind])
    lengths, converged = solve(kind, rotations, ends)
    assert bool(jnp.all(converged))
    ref = _references(kind, rotations, ends)
    np.testing.assert_allclose(np.asarray(lengths), ref, rtol=1e-5)
    # Not a trivial check: half or more of these cables wrap.
    straight = np.linalg.norm(ends[:, 1] - ends[:, 0], axis=1)
    assert np.sum(np.asarray(lengths) > straight * (1 + 1e-6)) >= 3
