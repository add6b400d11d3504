"""Contact, complement and hold values and Jacobians against hpp-constraints 9.0.2.

Fixtures: tests/reference/contact_values.json (convex-shape-contact.md section 4.3, every
value confirmed and the full Jacobians written by tests/reference/generate_contact.py with
hpp-python 9.0.2).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

from contact_setups import VALUES, build_setup, free_flyers

CASES = [c for c in VALUES["cases"] if "hold" in c]
VALUE_TOL, JACOBIAN_TOL = 1e-12, 1e-9


def _hold(holds, case):
    if "normal_margin" in case:
        hold = build_setup(case["setup"], normal_margin=case["normal_margin"])
        return dict(hold=hold, value=hold.value, jacobian=hold.jacobian, select=hold.select)
    return holds[case["setup"]]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hold_value_matches_hpp(holds, case):
    h = _hold(holds, case)
    np.testing.assert_allclose(h["value"](jnp.array(case["q"])), case["hold"], rtol=0, atol=VALUE_TOL)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hold_jacobian_matches_hpp(holds, case):
    if case.get("jacobian_invalid"):
        pytest.skip("angle pi: hpp's Jacobian is invalid there (FD mismatch 3.1e6), see test_a5")
    h = _hold(holds, case)
    J = np.asarray(h["jacobian"](jnp.array(case["q"])))
    np.testing.assert_allclose(J[:5], case["hpp_contact_jacobian"], rtol=0, atol=JACOBIAN_TOL)
    np.testing.assert_allclose(J[5:], case["hpp_complement_jacobian"], rtol=0, atol=JACOBIAN_TOL)
    # the rows section 4.3 prints
    if "contact_jacobian" in case:
        np.testing.assert_allclose(J[:5], case["contact_jacobian"], rtol=0, atol=JACOBIAN_TOL)
        np.testing.assert_allclose(J[5:], case["complement_jacobian"], rtol=0, atol=JACOBIAN_TOL)
    for row, expected in case.get("contact_jacobian_rows", {}).items():
        np.testing.assert_allclose(J[int(row)], expected, rtol=0, atol=JACOBIAN_TOL)


def test_a5_angle_pi_jacobian_differs_from_finite_differences_like_hpp(holds):
    case = next(c for c in CASES if c["name"].startswith("A5"))
    h = holds["A"]
    q = jnp.array(case["q"])
    # our Jacobian is hpp's analytic one ...
    np.testing.assert_allclose(h["jacobian"](q)[:5], case["hpp_contact_jacobian"], atol=JACOBIAN_TOL)
    # ... and, as hpp's, it is meaningless at the log3 branch cut
    assert float(jnp.max(jnp.abs(h["jacobian"](q) - h["fd"](q)))) > 1e5


def test_object_below_the_floor_plane_is_still_inside(holds):
    case = next(c for c in VALUES["cases"] if c["name"] == "A below the floor plane")
    value = holds["A"]["value"](jnp.array(case["q"]))
    np.testing.assert_allclose(value[0], case["contact_value_0"], atol=VALUE_TOL)
    np.testing.assert_allclose(value[1:3], 0, atol=0)


def test_radius(holds):
    for name, setup in VALUES["setups"].items():
        if "radius" in setup:
            np.testing.assert_allclose(holds[name]["hold"].contact.radius, setup["radius"], atol=1e-15)
    assert float(holds["C"]["hold"].contact.radius) > np.sqrt(2)


def test_selection_of_two_box_test(holds):
    for case in CASES:
        if "decoded" in case or "selection" in case:
            expected = case.get("selection") or case["decoded"]
            s = holds["C"]["select"](jnp.array(case["q"]))
            assert (int(s.floor), int(s.object)) == (expected["floor"], expected["object"]), case["name"]
            assert int(s.type) == jw.ContactType.PLANE_ON_PLANE


def test_contact_types(holds):
    assert holds["B_point"]["hold"].contact.contact_types == (jw.ContactType.POINT_ON_PLANE,)
    assert holds["B_trapeze"]["hold"].contact.contact_types == (jw.ContactType.PLANE_ON_PLANE,)


def test_edge_crossing_and_pair_switch():
    # section 2.6: inside -> outside at a floor edge, and a pair switch between two squares
    edge = VALUES["edge_crossing"]
    hold = build_setup("A")
    for key in ("before", "after"):
        q = jnp.array([edge[key]["x"], 0.3, 0.5, 0, 0, 0, 1])
        np.testing.assert_allclose(hold.value(q), edge[key]["hold"], atol=VALUE_TOL)
    switch = VALUES["pair_switch"]
    model = free_flyers("obj")
    hold = jw.ConvexShapeContactHold(
        model, [jw.ConvexShape(f) for f in switch["floors"]], [jw.ConvexShape(switch["object"], body=1)]
    )
    for case in switch["cases"]:
        q = jnp.array([case["x"], 0.3, 0.5, 0, 0, 0, 1])
        np.testing.assert_allclose(hold.value(q), case["hold"], atol=1e-9)  # printed to 10 digits
    # at x = 0 both pairs tie at dp = 0: outside, and floor 0 (the first) wins
    s = hold.select(jnp.array([0.0, 0.3, 0.5, 0, 0, 0, 1]))
    assert (int(s.floor), bool(s.inside)) == (0, False)


def test_line_on_plane_value_matches_hpp_and_jacobian_is_its_derivative():
    line = VALUES["line_object"]
    model = free_flyers("obj")
    floor = jw.ConvexShape(VALUES["setups"]["A"]["floors"][0]["points"])
    contact = jw.ConvexShapeContact(model, [floor], [jw.ConvexShape(line["object"], body=1)])
    q = jnp.array(line["q"])
    assert int(contact.select(q).type) == jw.ContactType.LINE_ON_PLANE
    np.testing.assert_allclose(contact.value(q), line["contact"], atol=VALUE_TOL)
    # hpp throws here; we return the exact derivative of hpp's value
    J = contact.jacobian(q)
    np.testing.assert_allclose(J, contact.finite_difference_central(q, 1e-6), atol=1e-8)
    # rows 3-4 react to a rotation about the line (hpp's value pins the segment's normal)
    assert float(jnp.max(jnp.abs(J[3:, 3]))) > 0.5


def test_line_on_plane_free_rotation_mode():
    line = VALUES["line_object"]
    model = free_flyers("obj")
    floor = jw.ConvexShape(VALUES["setups"]["A"]["floors"][0]["points"])
    contact = jw.ConvexShapeContact(
        model, [floor], [jw.ConvexShape(line["object"], body=1)], line_on_plane="free_rotation"
    )
    q = jnp.array(line["q"])
    # a segment lying flat satisfies the rotation rows, and rotating about it is free
    np.testing.assert_allclose(contact.value(q), [-0.4, 0, 0, 0, 0], atol=VALUE_TOL)
    J = contact.jacobian(q)
    np.testing.assert_allclose(J[3:, 3], 0, atol=1e-15)  # angular velocity about the line (body x)
    assert abs(float(J[4, 4])) > 0.5  # tilting the line out of the plane is constrained
    q_tilted = model.integrate(q, jnp.array([0, 0, 0, 0.1, 0.2, 0.05]))
    np.testing.assert_allclose(
        contact.jacobian(q_tilted), contact.finite_difference_central(q_tilted, 1e-6), atol=1e-8
    )
    # row 4 is the elevation of the segment over the floor plane (floor normal -z after reversal)
    U = model.forward_kinematics(q_tilted)[1].rotate(jnp.array([1.0, 0, 0]))
    np.testing.assert_allclose(contact.value(q_tilted)[4], np.arcsin(-U[2]), atol=1e-12)


def test_floor_with_one_or_two_points_is_rejected():
    model = free_flyers("obj")
    obj = jw.ConvexShape([(0, 0, 0)], body="obj")
    with pytest.raises(ValueError, match=VALUES["two_point_floor"]["error"]):
        jw.ConvexShapeContact(model, [jw.ConvexShape([(0, 0, 0), (1, 0, 0)])], [obj])
    with pytest.raises(ValueError, match="Contact on points is currently unimplemented"):
        jw.ConvexShapeContact(model, [jw.ConvexShape([(0, 0, 0)])], [obj])


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(normal_margin=-0.1), "normal_margin"), (dict(smoothing=-1.0), "smoothing"),
     (dict(line_on_plane="other"), "line_on_plane")],
)
def test_bad_arguments_raise(kwargs, message):
    model = free_flyers("obj")
    floor = jw.ConvexShape([(0, 0, 0), (1, 0, 0), (0, 1, 0)])
    with pytest.raises(ValueError, match=message):
        jw.ConvexShapeContact(model, [floor], [jw.ConvexShape([(0, 0, 0)], body=1)], **kwargs)


def test_unknown_body_and_empty_lists_raise():
    model = free_flyers("obj")
    floor = jw.ConvexShape([(0, 0, 0), (1, 0, 0), (0, 1, 0)])
    with pytest.raises(ValueError, match="no body named"):
        jw.ConvexShapeContact(model, [floor], [jw.ConvexShape([(0, 0, 0)], body="nope")])
    with pytest.raises(ValueError, match="out of range"):
        jw.ConvexShapeContact(model, [floor], [jw.ConvexShape([(0, 0, 0)], body=5)])
    with pytest.raises(ValueError, match="at least one object"):
        jw.ConvexShapeContact(model, [floor], [])


def test_compute_contact_points(holds):
    # A1 -> one record (object, support world, normal (0,0,-1), the 4 bottom points); A2/A4 -> none;
    # C q_init[0] -> box2's UPPER face on box1's upper face (dn = -2 < 0; the touching face has dn = 0)
    for case in CASES:
        if "contact_points" not in case:
            continue
        contact = holds[case["setup"]]["hold"].contact
        records = contact.compute_contact_points(jnp.array(case["q"]), 0.0)
        assert [(contact.objects.index(next(o for o in contact.objects if o.body == r.body and np.array_equal(o.points, r.points))),) for r in records] == [
            (r["object"],) for r in case["contact_points"]
        ], case["name"]
        for r in records:
            np.testing.assert_allclose(r.normal, [0, 0, -1], atol=1e-15)
    a1 = holds["A"]["hold"].contact.compute_contact_points(jnp.array(CASES[0]["q"]), 0.0)[0]
    assert (a1.body, a1.support_body) == (1, 0)
    np.testing.assert_array_equal(a1.points, VALUES["setups"]["A"]["objects"][0]["points"])
    c0 = holds["C"]["hold"].contact.compute_contact_points(jnp.array(VALUES["cases"][14]["q"]), 0.0)
    assert len(c0) == 1 and (c0[0].body, c0[0].support_body) == (2, 1)
    np.testing.assert_array_equal(c0[0].points, VALUES["setups"]["C"]["objects"][0]["points"])  # upper face
    # the normal margin admits the touching face too
    assert len(holds["C"]["hold"].contact.compute_contact_points(jnp.array(VALUES["cases"][14]["q"]), 1e-9)) == 2


def test_sizes_and_active_parameters(holds):
    hold = holds["C"]["hold"]
    contact, complement = hold.contact, hold.complement
    assert (contact.input_size, contact.input_derivative_size, contact.output_size) == (14, 12, 5)
    assert (complement.output_size, hold.output_size, hold.output_derivative_size) == (3, 8, 8)
    assert contact.active_parameters.all() and contact.active_derivative_parameters.all()
    # a third, unrelated body is inactive for the contact; complement and hold keep all true
    model = free_flyers("obj", "other")
    floor = jw.ConvexShape([(0, 0, 0), (1, 0, 0), (0, 1, 0)])
    c = jw.ConvexShapeContact(model, [floor], [jw.ConvexShape([(0, 0, 0)], body="obj")])
    np.testing.assert_array_equal(c.active_parameters, [True] * 7 + [False] * 7)
    np.testing.assert_array_equal(c.active_derivative_parameters, [True] * 6 + [False] * 6)
    q = model.neutral().at[:3].set(jnp.array([0.2, 0.1, 0.3]))
    np.testing.assert_array_equal(c.finite_difference_forward(q)[:, 6:], 0)
    h = jw.ConvexShapeContactHold(model, [floor], [jw.ConvexShape([(0, 0, 0)], body="obj")])
    assert h.active_parameters.all()


def test_finite_difference_step_rule(holds):
    # hpp: step eps * |x[j]| (x = q indexed by the velocity index), eps where x[j] == 0
    hold = holds["A"]["hold"]
    q = jnp.array(CASES[3]["q"])
    steps = hold._steps(q, 1e-6)
    np.testing.assert_allclose(steps, 1e-6 * np.abs(np.asarray(q[:6])))
    np.testing.assert_array_equal(hold._steps(jnp.array(CASES[0]["q"]), 1e-6)[3:], 1e-6)
    forward = hold.finite_difference_forward(q)
    np.testing.assert_allclose(forward, hold.jacobian(q), atol=1e-6)
