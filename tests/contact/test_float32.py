"""Contact values, Jacobians and projection in float32 (no x64) agree with the hpp values
to float32 accuracy."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from contact_setups import VALUES, build_setup

import jaxwrap as jw


def test_hold_values_and_jacobians_in_float32():
    cases = [
        c for c in VALUES["cases"]
        if c["setup"] in ("A", "C") and "hold" in c and "hpp_contact_jacobian" in c
        and "normal_margin" not in c and "A5" not in c["name"]
    ]
    with jax.enable_x64(False):
        for setup in ("A", "C"):
            hold = build_setup(setup)
            assert hold.model.joint_axes.dtype == jnp.float32
            chosen = [c for c in cases if c["setup"] == setup]
            qs = jnp.asarray([c["q"] for c in chosen], jnp.float32)
            values = jax.jit(jax.vmap(hold.value))(qs)
            jacobians = jax.jit(jax.vmap(hold.jacobian))(qs)
            assert values.dtype == jnp.float32 and jacobians.dtype == jnp.float32
            np.testing.assert_allclose(values, [c["hold"] for c in chosen], atol=2e-6)
            for J, c in zip(jacobians, chosen):
                expected = np.concatenate([c["hpp_contact_jacobian"], c["hpp_complement_jacobian"]])
                np.testing.assert_allclose(J, expected, atol=2e-5)


def test_projection_in_float32():
    with jax.enable_x64(False):
        contact = build_setup("A", cls=jw.ConvexShapeContact)
        keys = jax.random.split(jax.random.PRNGKey(0), 64)
        starts = jax.vmap(contact.model.random_configuration)(keys)
        starts = starts.at[:, :3].multiply(jnp.array([0.5, 0.5, 0.3], jnp.float32))
        solution = jax.jit(jax.vmap(lambda q: jw.project(contact, q)))(starts)
        assert solution.q.dtype == jnp.float32
        assert float(jnp.mean(solution.success)) >= 0.99
        assert float(jnp.max(jnp.where(solution.success, solution.residual, 0.0))) <= 1e-5
