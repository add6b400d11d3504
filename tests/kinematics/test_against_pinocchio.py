"""RobotModel versus pinocchio on real robots (UR5, Panda, Solo12, ANYmal B) and on a
branching tree with every joint kind.

Golden values: tests/reference/kinematics_<robot>.npz, written by
tests/reference/generate_kinematics.py with pinocchio (24 random configurations each).
The live cross-check at the end recomputes fresh configurations when pinocchio is installed.
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._kinematics import jacobian_from_poses

REFERENCE = pathlib.Path(__file__).parents[1] / "reference"
ROBOTS = ["ur5", "panda", "solo12", "anymal_b", "all_joints"]
TOL = 1e-10


class Case:
    """A robot's fixture plus jitted, vmapped jaxwrap evaluations over its configurations."""

    def __init__(self, name: str):
        data = np.load(REFERENCE / f"kinematics_{name}.npz")
        self.data = data
        self.model = jw.load_urdf(
            str(REFERENCE / "robots" / str(data["urdf"])), floating_base=bool(data["floating_base"])
        )
        self.links = [str(link) for link in data["links"]]
        self.bodies = [self.model.body_index(link) for link in self.links]
        model, bodies = self.model, self.bodies

        def evaluate(q, v, q_other):
            X = model.forward_kinematics(q)
            jacobians = jnp.stack([jacobian_from_poses(model, X, b, jnp.zeros(3)) for b in bodies])
            return dict(
                poses=X.as_matrix()[jnp.array(bodies)],
                jacobians=jacobians,
                velocities=model.body_velocities(q, v)[jnp.array(bodies)],
                com=model.center_of_mass(q),
                q_next=model.integrate(q, v),
                difference=model.difference(q, q_other),
            )

        self.result = jax.jit(jax.vmap(evaluate))(data["q"], data["v"], data["q_other"])


@pytest.fixture(scope="module", params=ROBOTS)
def case(request):
    return Case(request.param)


def test_layout_matches_pinocchio(case):
    assert case.model.nq == int(case.data["nq"])
    assert case.model.nv == int(case.data["nv"])
    assert list(case.model.joint_names) == [str(n) for n in case.data["joint_names"]]
    assert len(case.data["q"]) >= 20


def test_forward_kinematics_every_link(case):
    np.testing.assert_allclose(case.result["poses"], case.data["poses"], atol=TOL, rtol=0)


def test_jacobians_every_link(case):
    np.testing.assert_allclose(case.result["jacobians"], case.data["jacobians"], atol=TOL, rtol=0)


def test_body_velocities(case):
    np.testing.assert_allclose(case.result["velocities"], case.data["velocities"], atol=TOL, rtol=0)


def test_center_of_mass_and_total_mass(case):
    np.testing.assert_allclose(case.result["com"], case.data["com"], atol=TOL, rtol=0)
    np.testing.assert_allclose(float(case.model.total_mass), float(case.data["total_mass"]), rtol=1e-14)


def test_integrate(case):
    np.testing.assert_allclose(case.result["q_next"], case.data["q_next"], atol=TOL, rtol=0)


def test_difference(case):
    np.testing.assert_allclose(case.result["difference"], case.data["difference"], atol=1e-9, rtol=0)


def test_live_cross_check_with_pinocchio(case):
    """Fresh random configurations, drawn by jaxwrap, evaluated by both libraries."""
    pin = pytest.importorskip("pinocchio")
    path = str(REFERENCE / "robots" / str(case.data["urdf"]))
    if bool(case.data["floating_base"]):
        pmodel = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    else:
        pmodel = pin.buildModelFromUrdf(path)
    pdata = pmodel.createData()
    model = case.model
    qs = jax.vmap(model.random_configuration)(jax.random.split(jax.random.PRNGKey(7), 8))
    fk = jax.jit(lambda q: model.forward_kinematics(q))
    for q in np.asarray(qs):
        pin.framesForwardKinematics(pmodel, pdata, q)
        X = fk(q)
        for link, b in zip(case.links, case.bodies):
            expected = pdata.oMf[pmodel.getFrameId(link, pin.FrameType.BODY)].homogeneous
            np.testing.assert_allclose(np.asarray(X.as_matrix()[b]), expected, atol=TOL)
        np.testing.assert_allclose(np.asarray(model.center_of_mass(q)), pin.centerOfMass(pmodel, pdata, q), atol=TOL)
