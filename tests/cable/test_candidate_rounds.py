"""The candidate cold start's rounds (docs/cable.md#cold-start-candidates): the lifted
start alone first, settling a leg whose straight line clears its obstacles; the further
starts (hint, far side) run only where the first ones do not settle a leg, and the kept
path is still the shortest over every start, including a configuration where only a
quarter side reaches it while lifted, near side and hint agree on a longer wrap, and one
where only the far side gives a genuine path."""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._cable._candidates import _leg_starts, screen_accuracy, settled
from jaxwrap._cable._solver import run_solver
from jaxwrap._cable._state import IN_CONTACT, STALE, CurveState, build_scene

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / "benchmarks"))
import cable_starts  # noqa: E402
import cable_sweeps  # noqa: E402
import cable_trust as ct  # noqa: E402

INF = np.inf


def test_a_leg_without_hints_does_not_solve_its_lifted_start_twice():
    """Without any contact hint (OpenSim's wraps), Simbody's start is the lifted start
    again: it is left out, so the one path cannot count as two agreeing candidates."""
    T = jw.Transform.from_translation

    def leg(hint):
        return (
            jw.CableSpan(0, [-3.0, 0.2, 0.0], 0, [5.0, 0.3, 0.0])
            .add_obstacle(0, T([0.0, 0.0, 0.0]), jw.Sphere(1.0), contact_hint=hint)
            .add_obstacle(0, T([2.0, 0.0, 0.0]), jw.Ellipsoid(jnp.array([0.5, 0.8, 0.6])), contact_hint=hint)
        )

    X = jw.Transform(jnp.eye(3)[None], jnp.zeros((1, 3)))
    hinted, hintless = leg([0.0, 1.0, 0.0]), leg(None)
    first_hinted, further_hinted, _ = _leg_starts(hinted, build_scene(hinted, X), 0)
    first, further, _ = _leg_starts(hintless, build_scene(hintless, X), 0)
    assert len(first) == len(first_hinted) - 1 and len(further) == len(further_hinted)
    # Lifted, the hints, each obstacle's near side and the sphere's exact wrap first; the
    # sphere's far side and the ellipsoid's quarter turns and far side further.
    assert len(first_hinted) == 5 and len(further_hinted) == 4
    assert sum(start[1] is not None for start in first_hinted) == 2  # hints, near side
    lifted = [k for k, start in enumerate(first + further) if all(v is None for v in start.values())]
    assert lifted == [0]
    assert bool(jax.jit(jw.solve_cable)(hintless, X).converged)
    # A lone ellipsoid without a hint: no second lifted start among its further starts,
    # which are its three-quarter turn and its far side (no hint start).
    lone = jw.CableSpan(0, [-3.0, 0.2, 0.0], 0, [3.0, 0.3, 0.0]).add_obstacle(
        0, T([0.0, 0.0, 0.0]), jw.Ellipsoid(jnp.array([0.5, 0.8, 0.6]))
    )
    first, further, _ = _leg_starts(lone, build_scene(lone, X), 0)
    assert [k for k, start in enumerate(first + further) if all(v is None for v in start.values())] == [0]
    assert len(first) == 3 and len(further) == 2
    # A lone torus keeps both quarter turns among its first starts; its far side is its
    # only further start here.
    torus = jw.CableSpan(0, [-3.0, 0.2, 0.0], 0, [3.0, 0.3, 0.0]).add_obstacle(
        0, T([0.0, 0.0, 0.0]), jw.Torus(1.0, 0.3)
    )
    first, further, _ = _leg_starts(torus, build_scene(torus, X), 0)
    assert len(first) == 4 and len(further) == 1


def test_settled_needs_two_agreeing_genuine_candidates_where_asked():
    cable = jw.CableSpan(0, [0.0, 0.0, 0.0], 0, [1.0, 0.0, 0.0])  # default tolerance 0.1°
    tol2 = float(cable.settings.smoothness_tolerance) ** 2
    scores = jnp.array(
        [
            [2.0, 2.0, INF, 3.0, 5.0],
            [2.0 * (1 + 0.5 * tol2), 2.1, INF, INF, 5.0 * (1 + 3 * tol2)],
            [INF, 1.9, INF, INF, INF],
        ]
    )
    agree = np.array([True, True, True, False, True])
    # leg 0: two within the tolerance's slack; leg 1: the shortest (1.9) found once;
    # leg 2: nothing genuine; leg 3: one genuine path is enough without agreement;
    # leg 4: 3 tol² apart is two paths.
    assert settled(cable, scores, agree).tolist() == [True, False, False, True, False]
    assert settled(cable, jnp.full((4, 2), INF), np.array([True, False])).tolist() == [False, False]


def test_a_candidate_on_the_straight_line_settles_its_leg_alone():
    """docs/cable.md#the-straight-line-certificate: no path is shorter than the distance
    between a leg's ends, so one genuine candidate of that length settles a leg that
    otherwise needs two agreeing ones; a longer one does not."""
    cable = jw.CableSpan(0, [0.0, 0.0, 0.0], 0, [1.0, 0.0, 0.0])
    tol2 = float(cable.settings.smoothness_tolerance) ** 2
    scores = jnp.array([[2.0, 2.0 * (1 + 0.5 * tol2), 2.0 * (1 + 3 * tol2), INF], [INF, INF, INF, INF]])
    straight = jnp.full(4, 2.0)
    agree = np.ones(4, bool)
    assert settled(cable, scores, agree).tolist() == [False, False, False, False]
    assert settled(cable, scores, agree, bound=straight).tolist() == [True, True, False, False]


@pytest.fixture(scope="module")
def torus_starts():
    """16 torus configurations of `benchmarks/cable_starts.py`'s class (seed 0): number
    276, where lifted, near side and hint agree on a wrap 0.17 % longer than the one a
    quarter side reaches; number 2951, where only the far side (a further start) ends on
    a genuine path; and 14 others. Every start solved alone, and the default solve."""
    keys = jnp.concatenate(
        [
            cable_starts.configuration_keys(0, 0, 512)[jnp.array([276])],
            cable_starts.configuration_keys(0, 2560, 512)[jnp.array([2951 - 2560])],
            cable_starts.configuration_keys(0, 0, 512)[:14],
        ]
    )
    cable = ct.cable("torus", smoothness_tolerance=1e-9, max_iterations=100)
    every, _, straight = cable_starts.every_start("torus")(cable, keys)

    @jax.jit
    @jax.vmap
    def solve(key):
        poses, ends = ct.configuration("torus", key)
        path = jw.solve_cable(ct._with_ends(cable, ends), poses)
        return path.length, path.converged

    length, converged = solve(keys)
    return np.asarray(every), np.asarray(straight), np.asarray(length), np.asarray(converged)


def test_the_kept_path_is_the_shortest_of_every_start(torus_starts):
    every, straight, length, converged = torus_starts
    names, num_first = cable_starts.start_names("torus")
    best = every.min(axis=1)
    # Configuration 276: the first starts disagree; the quarter side's path is kept.
    assert names[2] == "quarter" and every[0, 2] == best[0]
    assert every[0, 0] == pytest.approx(every[0, 1], rel=1e-12) and every[0, 0] > best[0] * (1 + 1e-3)
    # Configuration 2951: no first start is genuine, so the further ones run.
    assert names[5] == "far" and np.isinf(every[1, :num_first]).all() and np.isfinite(every[1, 5])
    ok = np.isfinite(best)
    assert ok.sum() >= 14
    np.testing.assert_array_equal(converged, ok)
    np.testing.assert_allclose(length[ok], best[ok], rtol=1e-9)
    # The solver's rule, replayed on the separate solves, keeps the same lengths.
    kept, _ = cable_starts.as_solved(every, np.zeros_like(every, dtype=int), num_first, straight)
    np.testing.assert_allclose(kept[ok], best[ok], rtol=1e-9)
    # Where the lifted start stays straight, it is the shortest path (the certificate).
    clear = every[:, 0] <= straight * (1 + 1e-9)
    assert 3 <= clear.sum() < len(clear)
    np.testing.assert_allclose(every[clear, 0], best[clear], rtol=1e-12)


def test_screen_accuracy_follows_the_tolerance():
    cable = jw.CableSpan(0, [0.0, 0.0, 0.0], 0, [1.0, 0.0, 0.0])
    assert float(screen_accuracy(cable)) == pytest.approx(1e-6)  # 0.1° / 100 is coarser: the cap
    assert float(screen_accuracy(cable.with_settings(smoothness_tolerance=1e-5))) == pytest.approx(1e-7)
    # Never finer than the cable's own accuracy.
    assert float(screen_accuracy(cable.with_settings(curve_segment_accuracy=1e-5))) == pytest.approx(1e-5)


@pytest.fixture(scope="module")
def screened_ellipsoid():
    """The OpenSim pin sweep ellipsoid_0 at 16 angles, jaxwrap's default start with
    OpenSim's settings: solved cold (the screen at 1e-7, then the finish at 1e-10) and,
    from that path, warm."""
    sweep = next(s for s in cable_sweeps.load() if s["kind"] == "ellipsoid")
    cable = cable_sweeps.cable_from(sweep, algorithm="minimum_length", cold_start="candidates")
    poses_at = cable_sweeps.pose_of_angle(sweep)
    angles = jnp.asarray(sweep["angles"])[:: max(1, len(sweep["angles"]) // 16)][:16]

    @jax.jit
    @jax.vmap
    def solve(angle):
        poses = poses_at(angle)
        cold = jw.solve_cable(cable, poses)
        warm = jw.solve_cable(cable, poses, warm_start=cold)
        return cold, warm

    return cable, solve(angles)


def test_the_kept_candidate_is_finished_at_full_accuracy(screened_ellipsoid):
    cable, (cold, warm) = screened_ellipsoid
    surface = cable.obstacles[0].surface
    g = cold.state.geodesics[0]
    in_contact = np.asarray(cold.in_contact[:, 0])
    assert np.asarray(cold.converged).all() and in_contact.sum() >= 8, in_contact.sum()

    def shoot(p, R, length, accuracy):
        return jw.shoot_geodesic(surface, p, R[:, 0], length, accuracy=accuracy).p_SQ

    reference = jax.vmap(lambda p, R, s: shoot(p, R, s, 1e-13))(g.p_SP, g.R_SP, g.arc_length)
    screened = jax.vmap(lambda p, R, s: shoot(p, R, s, 1e-7))(g.p_SP, g.R_SP, g.arc_length)
    error = np.linalg.norm(np.asarray(g.p_SQ - reference), axis=-1)[in_contact]
    screen_error = np.linalg.norm(np.asarray(screened - reference), axis=-1)[in_contact]
    # The returned curves are the finish's, shot at 1e-10 (x the extent), not the screen's:
    # within the finish's accuracy, and 100x closer to the reference than the screen's
    # (Dopri8 at 1e-7 lands near 1e-9 x the extent already, 2e-10 here).
    extent = float(surface.extent())
    assert error.max() < 1e-9 * extent
    assert error.max() < 0.01 * screen_error.max()
    # A warm start from the result is already converged: the finish's path is the solver's.
    np.testing.assert_array_equal(np.asarray(warm.num_iterations), 0)
    np.testing.assert_allclose(np.asarray(warm.length), np.asarray(cold.length), rtol=1e-13)


def test_a_stale_curve_is_reshot_before_its_leg_is_evaluated(screened_ellipsoid):
    """The finish's mechanism alone: a converged path whose curve is shot again at 1e-6
    and marked `STALE` is reshot at the cable's accuracy by the solver's first iteration,
    which is not counted, and then found smooth: the curve is the full-accuracy one."""
    cable, (cold, _) = screened_ellipsoid
    k = int(np.argmax(np.asarray(cold.in_contact[:, 0])))
    path = jax.tree.map(lambda x: x[k], cold)
    surface = cable.obstacles[0].surface
    g = path.state.geodesics[0]
    coarse = surface.shoot_geodesic(g.p_SP, g.R_SP[:, 0], g.arc_length, accuracy=1e-6)
    assert float(jnp.linalg.norm(coarse.p_SQ - g.p_SQ)) > 1e-9
    stale = CurveState((coarse,), jnp.array([STALE], jnp.int32), path.state.tracking)
    carry = jax.jit(run_solver)(cable, build_scene(cable, path.body_poses), stale)
    assert int(carry.iterations[0]) == 0 and bool(carry.done[0])
    assert int(carry.state.status[0]) == IN_CONTACT
    assert float(carry.smoothness[0]) <= float(cable.settings.smoothness_tolerance)
    np.testing.assert_allclose(np.asarray(carry.state.geodesics[0].p_SQ), np.asarray(g.p_SQ), atol=1e-12)
