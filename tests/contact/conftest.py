"""Session fixtures of the contact tests (jitted functions shared across files)."""

from __future__ import annotations

import jax
import pytest
from contact_setups import VALUES, build_setup


@pytest.fixture(scope="session")
def values():
    return VALUES


@pytest.fixture(scope="session")
def holds():
    """Hold functions of every set-up with jitted value / Jacobian / selection."""
    out = {}
    for name in VALUES["setups"]:
        hold = build_setup(name)
        out[name] = dict(
            hold=hold,
            value=jax.jit(lambda q, h=hold: h.value(q)),
            jacobian=jax.jit(lambda q, h=hold: h.jacobian(q)),
            select=jax.jit(lambda q, h=hold: h.select(q)),
            fd=jax.jit(lambda q, h=hold: h.finite_difference_central(q, 1e-6)),
        )
    return out
