"""`CableSettings.geodesic_integrator`: the solver shoots every numerical curve with it, in
the loop and in the derivatives (docs/cable.md#default-settings)."""

from __future__ import annotations

import pathlib
import sys

import diffrax
import jax
import numpy as np
import pytest

import jaxwrap as jw

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_scenarios as scenarios  # noqa: E402


@jax.jit
def _lengths_and_gradients(cable, ends):
    def length(end):
        path = jw.solve_cable(cable, scenarios.body_poses(end))
        return path.length, (path.result._value, path.num_iterations)

    (lengths, (results, iterations)), grads = jax.vmap(jax.value_and_grad(length, has_aux=True))(ends)
    return lengths, results, iterations, grads


@pytest.fixture(scope="module")
def ends():
    return scenarios.terminations("ellipsoid", 6, seed=11)


def _cable(**settings):
    return scenarios.build("ellipsoid", algorithm="scholz2015", cold_start="hints", **settings)


def test_tsit5_gives_the_same_paths_and_derivatives(ends):
    """Tsit5 instead of the ellipsoid's Dopri8: same results and iterations, lengths to
    1e-9 and length gradients to 1e-6 relative (both integrate to the cable's accuracy,
    1e-9)."""
    assert isinstance(jw.Ellipsoid.geodesic_solver, diffrax.Dopri8)
    lengths, results, iterations, grads = _lengths_and_gradients(_cable(), ends)
    tsit5 = _cable(geodesic_integrator=jw.GeodesicIntegrator(solver=diffrax.Tsit5()))
    lengths8, results8, iterations8, grads8 = _lengths_and_gradients(tsit5, ends)
    assert (np.asarray(results) == 0).all()
    np.testing.assert_array_equal(results8, results)
    np.testing.assert_array_equal(iterations8, iterations)
    np.testing.assert_allclose(lengths8, lengths, rtol=1e-9)
    np.testing.assert_allclose(grads8, grads, rtol=1e-6, atol=1e-9)


def test_the_solver_uses_the_setting(ends):
    """A step budget of 2 cannot reach the accuracy: every lane reports geodesic_failed
    with NaN lengths and gradients, never a plausible number, and the batch's `grad`
    does not abort (the implicit derivative's linear solve sees NaN there)."""
    starved = _cable(geodesic_integrator=jw.GeodesicIntegrator(max_steps=2))
    lengths, results, _, grads = _lengths_and_gradients(starved, ends)
    assert (np.asarray(results) == 3).all()  # geodesic_failed
    assert np.isnan(np.asarray(lengths)).all()
    assert np.isnan(np.asarray(grads)).all(axis=-1).all()


def test_a_wrong_type_is_rejected(library_checks_only):
    with pytest.raises(ValueError, match="geodesic_integrator must be a jaxwrap.GeodesicIntegrator"):
        _cable(geodesic_integrator=diffrax.Dopri8())


def test_the_default_is_the_surface_default():
    settings = jw.CableSettings()
    assert settings.geodesic_integrator is None
    assert settings.integrator() == jw.GeodesicIntegrator()
