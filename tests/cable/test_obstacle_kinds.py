"""Obstacles of one kind share one geodesic loop (`map_by_kind`,
docs/performance.md#obstacles-of-one-kind): a cable's surfaces are grouped by type and
structure, each group is stacked and shot as one `vmap`, and every obstacle gets the
geodesic it gets alone, together with its derivatives."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxwrap as jw
from jaxwrap._cable._solver import apply_correction
from jaxwrap._misc import map_by_kind, same_kind_groups

SURFACES = [
    jw.Torus(2.0, 0.5),
    jw.Ellipsoid(jnp.array([1.0, 0.7, 0.9])),
    jw.Torus(1.5, 0.4),
    jw.Sphere(1.0),
    jw.Ellipsoid(jnp.array([0.5, 0.8, 1.2])),
    jw.Sphere(0.3),
    jw.Cylinder(0.7),
]


def test_groups_by_type_and_structure_in_path_order():
    assert same_kind_groups(SURFACES) == [[0, 2], [1, 4], [3, 5], [6]]
    # Leaves of another dtype do not stack with the others.
    mixed = [jw.Sphere(1.0), jw.Sphere(jnp.asarray(1.0, jnp.float32))]
    assert same_kind_groups(mixed) == [[0], [1]]


def _starts():
    """A geodesic of each surface, started at a surface point with a tangent direction."""
    out = []
    for k, surface in enumerate(SURFACES):
        point = surface.project(jnp.array([0.3, 1.8, 0.4 + 0.1 * k]))
        normal = surface.gradient(point)
        tangent = jnp.cross(normal, jnp.array([0.0, 0.0, 1.0]) + 0.2 * k)
        out.append(jw.shoot_geodesic(surface, point, tangent / jnp.linalg.norm(tangent), 0.6 + 0.1 * k))
    return out


def test_grouped_corrections_equal_one_at_a_time_with_derivatives():
    geodesics = _starts()
    rng = np.random.default_rng(0)
    c = jnp.asarray(rng.normal(scale=0.05, size=(len(SURFACES), 4)))

    def one_at_a_time(c, scale):
        surfaces = [jax.tree.map(lambda x: x * scale, s) for s in SURFACES]
        return [apply_correction(s, g, c[i], 1e-10) for i, (s, g) in enumerate(zip(surfaces, geodesics))]

    def grouped(c, scale):
        surfaces = [jax.tree.map(lambda x: x * scale, s) for s in SURFACES]
        return map_by_kind(lambda s, g, c_i: apply_correction(s, g, c_i, 1e-10), surfaces, geodesics, c)

    def run(step):
        # The end points' values and derivatives in the corrections and the surfaces' size.
        def end_points(c, scale):
            shot = step(c, scale)
            return jnp.stack([g.p_SQ for g in shot]), shot

        return jax.jit(jax.jacfwd(end_points, argnums=(0, 1), has_aux=True))(c, 1.0)

    (dc_alone, ds_alone), alone = run(one_at_a_time)
    (dc_grouped, ds_grouped), together = run(grouped)
    for a, b in zip(alone, together):
        assert a.result == jw.RESULTS.successful and b.result == jw.RESULTS.successful
        np.testing.assert_allclose(b.p_SQ, a.p_SQ, rtol=0, atol=1e-13)
        np.testing.assert_allclose(b.R_SQ, a.R_SQ, rtol=0, atol=1e-13)
        np.testing.assert_allclose(b.arc_length, a.arc_length, rtol=0, atol=1e-13)
    np.testing.assert_allclose(dc_grouped, dc_alone, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ds_grouped, ds_alone, rtol=0, atol=1e-10)
    assert np.abs(dc_alone).max() > 0.1 and np.abs(ds_alone).max() > 0.1


def test_grouped_initial_states_equal_one_obstacle_at_a_time():
    """`initial_states` builds the hinted and lifted starts of obstacles of one kind in
    one `vmap`; every obstacle's starts equal those of a cable holding it alone."""
    from jaxwrap._cable._state import build_scene, initial_states  # noqa: PLC0415

    rng = np.random.default_rng(3)
    placements = [jnp.asarray(rng.uniform(-0.3, 0.3, 3)) + jnp.array([0.0, 3.0 * k, 0.0]) for k in range(7)]
    hints = [jnp.asarray(rng.normal(size=(5, 3))) for _ in SURFACES]
    # Start 0 lifts every obstacle, start 1 lifts the odd ones, the rest are hinted;
    # obstacle 3 (a sphere) is lifted in every start, so it computes no foot point.
    lifted = np.zeros((5, len(SURFACES)), bool)
    lifted[0] = True
    lifted[1, 1::2] = True
    lifted[:, 3] = True

    def cable_of(indices):
        cable = jw.CableSpan(0, [-2.0, -1.0, 0.0], 1, [0.0, 0.0, 0.0])
        for i in indices:
            X = jw.Transform(jnp.asarray(jw.rotation_x(0.3 * i)), placements[i])
            cable = cable.add_obstacle(0, X, SURFACES[i], contact_hint=jnp.array([0.0, 0.0, 1.0]))
        return cable

    poses = jw.Transform(jnp.broadcast_to(jnp.eye(3), (2, 3, 3)), jnp.array([[0.0, 0.0, 0.0], [1.0, 22.0, 0.5]]))
    cable = cable_of(range(len(SURFACES)))
    together = initial_states(cable, build_scene(cable, poses), hints, lifted)
    for i in range(len(SURFACES)):
        alone_cable = cable_of([i])
        alone = initial_states(alone_cable, build_scene(alone_cable, poses), [hints[i]], lifted[:, i : i + 1])
        for name in ("p_SP", "R_SP", "curvatures_P", "torsion_P", "arc_length"):
            a, b = getattr(alone.geodesics[0], name), getattr(together.geodesics[i], name)
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-13, err_msg=f"obstacle {i}: {name}")
        np.testing.assert_array_equal(together.status[:, i], alone.status[:, 0])
        np.testing.assert_array_equal(together.tracking[:, i], alone.tracking[:, 0])
