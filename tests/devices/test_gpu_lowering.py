"""Cable programs lowered for a CUDA GPU call only batched device kernels
(docs/performance.md#small-dense-algebra-on-a-gpu), checked without a GPU: JAX lowers
for a platform it does not run on.

On a GPU, JAX runs a column-pivoted QR (`geqp3`) as a "hybrid" kernel, a copy to the
host and LAPACK there, and cuSolver's `ormqr`/`orgqr` loop over the batch one matrix at
a time. The solver's least-squares step takes the SVD there instead (`gesvdj`, one
batched Jacobi SVD), so no program of the benchmark scenes may hold those calls. The
contact and modular programs of the benchmarks are held to the same rule."""

from __future__ import annotations

import pathlib
import re
import sys

import jax
import jax.numpy as jnp
import pytest

import jaxwrap as jw

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_scenarios as scenarios  # noqa: E402

pytestmark = pytest.mark.xdist_group("devices")

# Kernels that run on the host or once per matrix of a batch on a GPU.
HOST_OR_PER_MATRIX = re.compile(r"hybrid|geqp3|ormqr|orgqr")


def _custom_calls(fn, *args, platform):
    # Tracing runs jaxwrap's code, so its errors fail the test; only the lowering for
    # another platform may be missing from a jaxlib and skip it.
    traced = jax.jit(fn).trace(*args)
    try:
        text = traced.lower(lowering_platforms=(platform,)).as_text()
    except Exception as error:  # a jaxlib built without the GPU lowering rules
        pytest.skip(f"cannot lower for {platform} here: {type(error).__name__}: {error}")
    return re.findall(r"custom_call @(\w+)", text)


@pytest.fixture(scope="module")
def chain():
    # The four-obstacle chain in the default mode holds every kind of small solve: the
    # Gauss-Newton polish and the multiplier system of several curves (`_pinv_solve`),
    # the minimum-length step's eigh and inverse, the geodesic shots' LU solves.
    defaults = jw.CableSettings()
    cable = scenarios.build("chain", algorithm=defaults.algorithm, cold_start=defaults.cold_start)
    return cable, scenarios.terminations("chain", 2)


def _lengths(cable, terminations):
    return jax.vmap(lambda t: jw.solve_cable(cable, scenarios.body_poses(t)).length)(terminations)


def test_cable_solve_on_a_gpu_has_no_host_or_per_matrix_kernels(chain):
    cable, terminations = chain
    calls = _custom_calls(_lengths, cable, terminations, platform="cuda")
    assert calls, "expected cuSolver calls in the CUDA program"
    assert not [c for c in calls if HOST_OR_PER_MATRIX.search(c)], calls
    assert any("gesvdj" in c for c in calls), calls
    # On CPU the same program keeps LAPACK's pivoted QR (the faster choice there).
    cpu = _custom_calls(_lengths, cable, terminations, platform="cpu")
    assert any("geqp3" in c for c in cpu) and not any("gesdd" in c or "gesvd" in c for c in cpu), cpu


def test_cable_gradient_on_a_gpu_has_no_host_or_per_matrix_kernels(chain):
    cable, terminations = chain

    def total(cable, terminations):
        return jnp.sum(_lengths(cable, terminations))

    calls = _custom_calls(jax.grad(total, argnums=1), cable, terminations, platform="cuda")
    assert not [c for c in calls if HOST_OR_PER_MATRIX.search(c)], calls


def test_contact_and_modular_programs_on_a_gpu_have_no_host_or_per_matrix_kernels():
    import contact as contact_bench  # noqa: PLC0415  (benchmarks/contact.py's set-ups)

    from jaxwrap.modular import _reach_example as reach  # noqa: PLC0415

    hold = contact_bench.build("A")
    q = contact_bench.configurations(hold.model, 2)
    programs = {
        "hold": (jax.vmap(lambda q: jw.constraint_value_and_jacobian(hold, q)), (q,)),
        "projection": (jax.vmap(lambda q: jw.project(hold.contact, q).q), (q,)),
    }
    config = reach.reach_arm()
    space = reach.reach_space(config)

    def design(config, z, q):
        c = space.apply(config, z)
        mass, cg = jw.modular.compute_cg(c, q)
        return jw.modular.compute_jacobian(c, q), mass, cg, jw.modular.compute_energy_stability(c, q)

    z = space.random(jax.random.PRNGKey(0), 2)
    programs["modular"] = (jax.vmap(design, in_axes=(None, 0, 0)), (config, z, jnp.zeros((2, 3))))
    for name, (fn, args) in programs.items():
        calls = _custom_calls(fn, *args, platform="cuda")
        assert not [c for c in calls if HOST_OR_PER_MATRIX.search(c)], (name, calls)
