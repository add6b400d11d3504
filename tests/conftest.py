"""Test-wide settings: the suite runs in float64 (the library itself never flips this flag),
with every jaxtyping annotation of jaxwrap checked at run time (pyproject's
``--jaxtyping-packages``)."""

import jax
import jaxtyping
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.fixture
def library_checks_only():
    """Switch the runtime type checker off for one test: tests that pass arguments of the
    wrong *type* on purpose check jaxwrap's own error messages, which the checker would
    otherwise preempt with its generic one."""
    jaxtyping.config.update("jaxtyping_disable", True)
    try:
        yield
    finally:
        jaxtyping.config.update("jaxtyping_disable", False)
