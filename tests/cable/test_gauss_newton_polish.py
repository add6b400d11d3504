"""`gauss_newton_below` (docs/cable.md#gauss-newton-polish): with the minimum-length
algorithm, legs already close to the path finish with Gauss-Newton steps. On a pin-joint
sweep over a triaxial ellipsoid (an obstacle on the moving link, OpenSim's tolerances),
the polish ends on the same paths, cold (candidate start) and warm-started along
trajectories, in fewer corrections; and the setting is validated."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_sweeps as sweeps_mod  # noqa: E402

SWEEP = next(s for s in sweeps_mod.load(sweeps_mod.FIXTURE) if s["kind"] == "ellipsoid")
POLISH = float(jw.CableSettings().gauss_newton_below)  # the default


@pytest.fixture(scope="module")
def solved():
    """Cold solves at 16 random angles and 4 trajectories of 12 warm-started steps of
    0.01 rad, without and with the polish (one compile: the setting is a traced leaf)."""
    poses_at = sweeps_mod.pose_of_angle(SWEEP)
    lo, hi = min(SWEEP["angles"]), max(SWEEP["angles"])
    rng = np.random.default_rng(3)
    cold = jnp.asarray(rng.uniform(lo, hi, 16))
    starts = rng.uniform(lo, hi - 0.12, 4)
    warm = jnp.asarray(starts[:, None] + 0.01 * np.arange(12)[None, :])

    @jax.jit
    def run(cable, cold, warm):
        def out(path):
            return path.length, path.converged, path.num_iterations

        cold_out = jax.vmap(lambda a: out(jw.solve_cable(cable, poses_at(a))))(cold)

        def trajectory(thetas):
            first = jw.solve_cable(cable, poses_at(thetas[0]))

            def step(state, theta):
                path = jw.solve_cable(cable, poses_at(theta), warm_start=state)
                return path.state, out(path)

            return jax.lax.scan(step, first.state, thetas[1:])[1]

        return cold_out, jax.vmap(trajectory)(warm)

    results = {}
    for polish in (0.0, POLISH):
        cable = sweeps_mod.cable_from(
            SWEEP, algorithm="minimum_length", cold_start="candidates", gauss_newton_below=jnp.asarray(polish)
        )
        results[polish] = jax.tree.map(np.asarray, run(cable, cold, warm))
    return results


def test_the_polish_ends_on_the_same_paths_in_fewer_corrections(solved):
    (cold_off, warm_off), (cold_on, warm_on) = solved[0.0], solved[POLISH]
    for off, on in ((cold_off, cold_on), (warm_off, warm_on)):
        assert off[1].all() and on[1].all()  # every path converged, both ways
        np.testing.assert_allclose(on[0], off[0], rtol=1e-8)
    # Warm-started steps start close to the path, where the halved minimum-length step
    # converges linearly: the polish needs at most half the corrections.
    assert warm_on[2].mean() <= 0.5 * warm_off[2].mean()
    assert cold_on[2].mean() < cold_off[2].mean()


def test_gauss_newton_below_is_validated():
    with pytest.raises(ValueError, match="gauss_newton_below"):
        jw.CableSettings(gauss_newton_below=-1e-3)
    with pytest.raises(ValueError, match="gauss_newton_below"):
        jw.CableSettings(gauss_newton_below=float("nan"))
    # On by default; 0 is Simbody's MinimumLength exactly.
    assert jw.CableSettings().gauss_newton_below == 5e-2
