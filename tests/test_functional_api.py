"""The functional API: every entry point takes its model, cable or surface as an argument,
so `jax.jit` applies directly and new parameter values never retrace; one `RESULTS`
enumeration reports outcomes, per lane under `vmap`, and `throw=True` raises instead."""

from __future__ import annotations

import ast
import pathlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

T = jw.Transform


def _elbow():
    model = (
        jw.RobotModelBuilder("elbow")
        .add_body("upper", mass=1.0, com=(0, -0.15, 0))
        .add_body("lower", mass=0.8, com=(0, -0.12, 0))
        .add_joint("shoulder", "revolute", "world", "upper", axis=(0, 0, 1))
        .add_joint("elbow", "revolute", "upper", "lower", placement=T.from_translation([0, -0.3, 0]), axis=(0, 0, 1))
        .build()
    )
    return model


def _cable(radius=0.5, station=(-2.0, 0.5, 0.0)):
    return jw.CableSpan(0, station, 1, [2.0, 0.5, 0.0]).add_obstacle(
        0, T.identity(), jw.Sphere(radius), contact_hint=[0.0, 1.0, 0.0]
    )


POSES = T.identity((2,))


# ---------------------------------------------------------------------------- jit directly
def test_every_entry_point_jits_with_the_object_as_argument():
    model = _elbow()
    q = jnp.array([0.3, 0.7])
    X = jax.jit(jw.forward_kinematics)(model, q)
    np.testing.assert_allclose(X.translation, model.forward_kinematics(q).translation, atol=1e-15)
    # A traced body index: one program serves every body, and vmap over bodies works.
    J = jax.jit(jw.jacobian)(model, q, 2, jnp.array([0.0, -0.25, 0.0]))
    np.testing.assert_allclose(J, model.jacobian(q, "lower", (0.0, -0.25, 0.0)), atol=1e-15)
    every = jax.vmap(lambda b: jw.jacobian(model, q, b))(jnp.arange(3))
    np.testing.assert_allclose(every[1], model.jacobian(q, "upper"), atol=1e-15)
    np.testing.assert_allclose(every[0], 0.0)
    np.testing.assert_allclose(jax.jit(jw.center_of_mass)(model, q), model.center_of_mass(q), atol=1e-15)

    path = jax.jit(jw.solve_cable)(_cable(), POSES)
    assert bool(path.converged) and path.result == jw.RESULTS.successful

    g = jax.jit(jw.shoot_geodesic)(jw.Ellipsoid(jnp.array([1.0, 2.0, 3.0])), jnp.array([1.0, 0, 0]),
                                  jnp.array([0.0, 1, 0]), 1.0)
    assert bool(g.converged)

    cable = jw.CableSpan(1, [0.0, 0.1, 0.0], 2, [0.0, -0.2, 0.0]).add_obstacle(
        1, T.from_translation([0, -0.3, 0]), jw.Cylinder(0.05), contact_hint=[-0.05, 0, 0]
    )
    r = jax.jit(jw.moment_arms)(model, cable, jnp.array([0.0, 1.0]))
    assert r.shape == (2,) and bool(jnp.all(jnp.isfinite(r)))


def test_contact_functions_jit_with_the_constraint_as_argument():
    box = jw.load_urdf('<robot name="box"><link name="box"/></robot>', floating_base=True)
    table = jw.ConvexShape([[-0.5, -0.4, 0.75], [0.5, -0.4, 0.75], [0.5, 0.4, 0.75], [-0.5, 0.4, 0.75]])
    bottom = jw.ConvexShape([[-0.05, 0.05, -0.05], [0.05, 0.05, -0.05], [0.05, -0.05, -0.05], [-0.05, -0.05, -0.05]],
                            body=1)
    contact = jw.ConvexShapeContact(box, floors=[table], objects=[bottom])
    q0 = jnp.array([0.1, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    value, J = jax.jit(jw.constraint_value_and_jacobian)(contact, q0)
    np.testing.assert_allclose(value, contact.value(q0), atol=1e-15)
    np.testing.assert_allclose(J, jax.jit(jw.constraint_jacobian)(contact, q0), atol=1e-15)
    solution = jax.jit(jw.project)(contact, q0)
    assert bool(solution.success) and float(solution.q[2]) == pytest.approx(0.8, abs=1e-12)


# ---------------------------------------------------------------------------- no retrace
def test_new_radius_station_pose_or_tolerance_does_not_retrace():
    @jax.jit
    @eqx.debug.assert_max_traces(max_traces=1)
    def length(cable, poses):
        return jw.solve_cable(cable, poses).length

    base = float(length(_cable(), POSES))
    bigger = float(length(_cable(radius=0.6), POSES))
    moved = float(length(_cable(station=(-2.0, 0.6, 0.1)), POSES))
    shifted_poses = T(POSES.rotation, POSES.translation.at[1, 1].set(0.2))
    shifted = float(length(_cable(), shifted_poses))
    tighter = float(length(_cable().with_settings(smoothness_tolerance=1e-9, curve_segment_accuracy=1e-11), POSES))
    assert bigger > base and moved != base and shifted != base
    assert tighter == pytest.approx(base, rel=1e-6)


def test_new_model_numbers_and_surfaces_do_not_retrace():
    @jax.jit
    @eqx.debug.assert_max_traces(max_traces=1)
    def tip(model, q):
        return jw.forward_kinematics(model, q).translation[-1]

    model = _elbow()
    tip(model, jnp.zeros(2))
    longer = eqx.tree_at(lambda m: m.joint_placements.translation, model,
                         model.joint_placements.translation.at[2, 1].set(-0.4))
    np.testing.assert_allclose(tip(longer, jnp.zeros(2)), [0.0, -0.4, 0.0], atol=1e-15)

    @jax.jit
    @eqx.debug.assert_max_traces(max_traces=1)
    def end(surface, length):
        return jw.shoot_geodesic(surface, jnp.array([1.0, 0, 0]), jnp.array([0.0, 1, 0]), length).p_SQ

    for radii in ([1.0, 2.0, 3.0], [1.5, 2.0, 3.0]):
        end(jw.Ellipsoid(jnp.asarray(radii)), 0.5)
    end(jw.Ellipsoid(jnp.array([1.0, 2.0, 3.0])), 0.7)


# ---------------------------------------------------------------------------- one result type
def test_a_failed_geodesic_marks_its_lane_only():
    surface = jw.Ellipsoid(jnp.array([1.0, 2.0, 3.0]))
    integrator = jw.GeodesicIntegrator(max_steps=16)
    shoot = jax.vmap(
        lambda length: jw.shoot_geodesic(surface, jnp.array([1.0, 0, 0]), jnp.array([0.0, 1, 0]), length,
                                         integrator=integrator)
    )
    g = shoot(jnp.array([0.5, 200.0]))
    assert g.converged.tolist() == [True, False]
    assert (g.result == jw.RESULTS.geodesic_failed).tolist() == [False, True]
    assert bool(jnp.all(jnp.isfinite(g.p_SQ[0]))) and bool(jnp.all(jnp.isnan(g.p_SQ[1])))
    with pytest.raises(Exception, match="geodesic integration failed"):
        jax.block_until_ready(
            jw.shoot_geodesic(surface, jnp.array([1.0, 0, 0]), jnp.array([0.0, 1, 0]), 200.0,
                              integrator=integrator, throw=True).p_SQ
        )


def test_cable_results_per_lane_and_throw():
    cable = _cable()
    stations = jnp.array([[-2.0, 0.5, 0.0], [-0.2, 0.1, 0.0], [jnp.nan, 0.5, 0.0]])

    def solve(station):
        return jw.solve_cable(eqx.tree_at(lambda c: c.origin_station, cable, station), POSES)

    paths = jax.jit(jax.vmap(solve))(stations)
    assert paths.converged.tolist() == [True, False, False]
    assert (paths.result == jw.RESULTS.endpoint_inside_obstacle).tolist() == [False, True, False]
    assert (paths.result == jw.RESULTS.invalid_input).tolist() == [False, False, True]
    lane = jax.tree.map(lambda x: x[1], paths.result)
    assert jw.RESULTS[lane].startswith("A path point next to an obstacle")
    with pytest.raises(Exception, match="lies inside that obstacle"):
        jax.block_until_ready(eqx.filter_jit(jw.solve_cable)(cable.add_via_point(0, [0.0, 0.2, 0.0]), POSES, throw=True).length)
    with pytest.raises(ValueError, match="lies inside"):
        eqx.tree_at(lambda c: c.origin_station, cable, jnp.array([-0.2, 0.1, 0.0])).check(POSES)


def test_projection_result_and_throw():
    box = jw.load_urdf('<robot name="box"><link name="box"/></robot>', floating_base=True)
    table = jw.ConvexShape([[-0.5, -0.4, 0.0], [0.5, -0.4, 0.0], [0.5, 0.4, 0.0], [-0.5, 0.4, 0.0]])
    contact = jw.ConvexShapeContact(box, [table], [jw.ConvexShape([[0.0, 0.0, 0.0]], body=1)])
    q0 = jnp.array([0.1, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    short = jw.project(contact, q0, max_steps=0)
    assert short.result == jw.RESULTS.max_iterations_reached and not bool(short.success)
    with pytest.raises(Exception, match="not satisfied"):
        jax.block_until_ready(jw.project(contact, q0, max_steps=0, throw=True).q)
    nan_start = jw.project(contact, q0.at[0].set(jnp.nan))
    assert nan_start.result == jw.RESULTS.invalid_input


# ---------------------------------------------------------------------------- clear errors
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: jw.Sphere(jnp.array([1.0, 2.0])), r"radius must be a scalar, got shape \(2,\)"),
        (lambda: jw.Cylinder(-1.0), "Cylinder radius must be finite and positive"),
        (lambda: jw.Ellipsoid([1.0, 2.0]), r"Ellipsoid radii must have shape \(3,\)"),
        (lambda: jw.Torus(1.0, 2.0), "tube_radius .* must be smaller than ring_radius"),
        (lambda: jw.Sphere(float("inf")), "Sphere radius must be finite and positive"),
        (lambda: jw.shoot_geodesic(jw.Sphere(1.0), [1.0, 0.0], [0.0, 1.0, 0.0], 1.0), r"point must have shape \(3,\)"),
        (lambda: jw.TouchdownSearch(tolerance=-1.0), "TouchdownSearch.tolerance must be finite and positive"),
        (lambda: jw.LevenbergMarquardt(increase=0.0), "LevenbergMarquardt.increase must be finite and positive"),
    ],
)
def test_bad_input_is_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("kwargs, message", [(dict(tolerance=-1.0), "tolerance must be finite and positive"),
                                             (dict(max_steps=-1), "max_steps must be an integer >= 0")])
def test_projector_settings_are_checked(kwargs, message):
    box = jw.load_urdf('<robot name="box"><link name="box"/></robot>', floating_base=True)
    table = jw.ConvexShape([[-0.5, -0.4, 0.0], [0.5, -0.4, 0.0], [0.5, 0.4, 0.0], [-0.5, 0.4, 0.0]])
    contact = jw.ConvexShapeContact(box, [table], [jw.ConvexShape([[0.0, 0.0, 0.0]], body=1)])
    with pytest.raises(ValueError, match=message):
        jw.project(contact, jnp.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]), **kwargs)


# ---------------------------------------------------------------------------- one-way layers
def _relative_imports() -> dict[str, set[str]]:
    root = pathlib.Path(jw.__file__).parent
    modules = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                if node.module:
                    deps.add(".".join([*base, node.module]))
                else:
                    deps.update(".".join([*base, alias.name]) for alias in node.names)
        modules[name] = deps
    return modules


def test_the_package_has_no_import_cycle():
    modules = _relative_imports()

    def reaches(a, b, seen):
        return any(d == b or (d in modules and d not in seen and reaches(d, b, seen | {d})) for d in modules.get(a, ()))

    cycles = sorted({tuple(sorted((a, d))) for a in modules for d in modules[a] if d in modules and d != a
                     and reaches(d, a, {d})})
    assert cycles == []
