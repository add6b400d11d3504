"""Pin-joint sweeps, like for like with OpenSim: the 16 sweeps of
tests/reference/cable_sweeps_opensim.json (sphere, cylinder, ellipsoid, torus: one obstacle
on the moving link; the chain: two obstacles on ground, one on the link, a via point),
each a link on a PinJoint swept over its 2.3 rad range.

- cold: ``batch`` random angles of the sweep's range, every path solved from scratch
  (jaxwrap ``jit(vmap)``; OpenSim: a fresh state per evaluation, i.e. from the contact hints);
- warm: ``trajectories`` x ``steps`` angles, each trajectory starting at a random angle and
  stepping by ``step`` rad, every solve warm-started from the previous path (jaxwrap
  ``vmap`` over trajectories of a ``lax.scan``; OpenSim: one state carried along each
  trajectory). The first solve of each trajectory is cold in both;
- step: the warm figures without those first solves, i.e. the time per warm-started step
  (jaxwrap: the warm batch's time less that of its first solves alone, per remaining
  path; OpenSim: the mean of its evaluations after the first of each trajectory).

OpenSim's tolerances everywhere (smoothness 1e-5, accuracy 1e-10, 50 iterations). jaxwrap
runs in two modes: ``simbody`` (Scholz2015 step, start from the hints: OpenSim's own
algorithm) and ``default`` (jaxwrap's defaults: minimum-length step with the Gauss-Newton
polish, candidate cold start).

Used by ``benchmarks/cable.py --pin`` and runnable alone:

    python benchmarks/cable_pin.py [--batch 4096] [--kinds sphere torus] [--opensim-evals 300] [--max-sweeps 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "reference"))
import _cpu_threads  # noqa: E402
import cable_sweeps as sweeps_mod  # noqa: E402
from _opensim_cable import BuiltScenario, CableProbe, load_opensim  # noqa: E402
from cable import timed  # noqa: E402

KINDS = ("sphere", "cylinder", "ellipsoid", "torus", "chain")
# "default" takes jaxwrap's defaults from `CableSettings` itself: `cable_from` starts from
# OpenSim's algorithm and hints, so an empty dict would run the Simbody mode twice.
_DEFAULTS = dict(algorithm=jw.CableSettings().algorithm, cold_start=jw.CableSettings().cold_start)
MODES = {
    "simbody": dict(algorithm="scholz2015", cold_start="hints"),
    "default": _DEFAULTS,
}


def angle_sets(sweep, batch, trajectories, steps, step, seed):
    """Random cold angles and warm trajectories (trajectories x steps) inside the sweep's range."""
    lo, hi = min(sweep["angles"]), max(sweep["angles"])
    rng = np.random.default_rng(seed)
    cold = rng.uniform(lo, hi, batch)
    span = step * (steps - 1)
    starts = rng.uniform(lo, hi - span, trajectories)
    direction = np.where(rng.uniform(size=trajectories) < 0.5, 1.0, -1.0)
    starts = np.where(direction > 0, starts, starts + span)
    warm = starts[:, None] + direction[:, None] * step * np.arange(steps)[None, :]
    return cold, warm


def _outputs(path):
    return path.length, path.converged, path.num_iterations


def jaxwrap_times(sweep, cold_angles, warm_angles, mode, repeats):
    """Per-path seconds of the cold batch and the warm trajectories, and the outputs."""
    cable = sweeps_mod.cable_from(sweep, **MODES[mode])
    poses_at = sweeps_mod.pose_of_angle(sweep)

    @jax.jit
    def cold(cable, angles):
        return jax.vmap(lambda a: _outputs(jw.solve_cable(cable, poses_at(a))))(angles)

    @jax.jit
    def warm(cable, angles):
        def trajectory(thetas):
            first = jw.solve_cable(cable, poses_at(thetas[0]))

            def step(state, theta):
                path = jw.solve_cable(cable, poses_at(theta), warm_start=state)
                return path.state, _outputs(path)

            _, rest = jax.lax.scan(step, first.state, thetas[1:])
            return jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), _outputs(first), rest)

        return jax.vmap(trajectory)(angles)

    cold_out, t_cold, c_cold = timed(cold, cable, jnp.asarray(cold_angles), repeats=repeats)
    warm_out, t_warm, c_warm = timed(warm, cable, jnp.asarray(warm_angles), repeats=repeats)
    # The warm batch's first solves (one cold solve per trajectory) alone, as they run
    # in it: a batch of one angle per trajectory.
    _, t_first, _ = timed(cold, cable, jnp.asarray(warm_angles[:, 0]), repeats=repeats)
    steps = warm_angles.size - warm_angles.shape[0]
    return dict(
        cold=t_cold / cold_angles.size,
        warm=t_warm / warm_angles.size,
        step=max(t_warm - t_first, 0.0) / steps if steps else float("nan"),
        compile=(c_cold, c_warm),
        cold_out=jax.tree.map(np.asarray, cold_out),
        warm_out=jax.tree.map(np.asarray, warm_out),
    )


class OpenSimSweep:
    """OpenSim's model of one sweep, timed per evaluation (set the angle, realizePosition,
    getLength: Python-call overhead included, a few microseconds)."""

    def __init__(self, osim, probe, sweep):
        import generate_cable_sweeps as gen  # noqa: PLC0415

        self.osim, self.probe = osim, probe
        self.B = BuiltScenario(osim, gen.spec_from_sweep(sweep), probe=probe)
        self.coord = self.B.coords["pin_angle"]
        self.tol = probe.settings(self.B.path)["smoothness_tolerance"]

    def _eval(self, s, theta):
        t0 = time.perf_counter()
        self.coord.setValue(s, float(theta), False)
        self.B.model.realizePosition(s)
        length = self.B.path.getLength(s)
        dt = time.perf_counter() - t0
        ok = self.probe.results(self.B.path, s, 0)["smoothness"] <= self.tol
        return dt, length, ok

    def cold(self, angles):
        out = []
        for theta in angles:
            try:
                out.append(self._eval(self.B.fresh_state(), theta))
            except RuntimeError:  # a path point inside an obstacle
                out.append((np.nan, np.nan, False))
        return np.asarray(out, dtype=float)

    def warm(self, trajectories):
        """Rows (time, length, converged, first of its trajectory)."""
        out = []
        for thetas in trajectories:
            s = self.B.fresh_state()
            for k, theta in enumerate(thetas):
                try:
                    out.append((*self._eval(s, theta), k == 0))
                except RuntimeError:
                    out.append((np.nan, np.nan, False, k == 0))
                    s = self.B.fresh_state()
        return np.asarray(out, dtype=float)


def run(
    kinds=KINDS,
    batch=4096,
    trajectories=64,
    steps=64,
    step=0.01,
    repeats=3,
    opensim_evals=300,
    opensim_trajectories=8,
    seed=0,
    fixture=None,
    report=None,
    max_sweeps=None,
    modes=tuple(MODES),
):
    """One row per (kind, jaxwrap mode): jaxwrap's time per path (batch time / batch
    size, median of `repeats`, averaged over the kind's sweeps) and OpenSim's mean time
    per evaluation (total / count over the same kind's sweeps)."""
    sweeps = sweeps_mod.load(fixture or sweeps_mod.FIXTURE)
    osim = load_opensim()
    probe = CableProbe(osim) if osim else None
    if osim:
        osim.Logger.setLevelString("error")
    rows = []
    for kind in kinds:
        members = [s for s in sweeps if s["kind"] == kind][:max_sweeps]
        acc = {m: dict(cold=[], warm=[], step=[], conv_cold=[], conv_warm=[], iters=[], compile=[]) for m in modes}
        os_cold, os_warm, os_step, agree = [], [], [], {m: [] for m in modes}
        for n, sw in enumerate(members):
            cold_angles, warm_angles = angle_sets(sw, batch, trajectories, steps, step, seed + n)
            os_rec = None
            if osim:
                o = OpenSimSweep(osim, probe, sw)
                os_rec = o.cold(cold_angles[:opensim_evals])
                os_cold.extend(os_rec[:, 0])
                os_rec_warm = o.warm(warm_angles[:opensim_trajectories])
                os_warm.extend(os_rec_warm[:, 0])
                os_step.extend(os_rec_warm[os_rec_warm[:, 3] == 0, 0])
            for mode in modes:
                r = jaxwrap_times(sw, cold_angles, warm_angles, mode, repeats)
                a = acc[mode]
                a["cold"].append(r["cold"])
                a["warm"].append(r["warm"])
                a["step"].append(r["step"])
                a["conv_cold"].append(r["cold_out"][1].mean())
                a["conv_warm"].append(r["warm_out"][1].mean())
                a["iters"].append((r["cold_out"][2].mean(), r["warm_out"][2].mean()))
                a["compile"].append(r["compile"])
                if os_rec is not None:
                    L, ok = r["cold_out"][0][: len(os_rec)], r["cold_out"][1][: len(os_rec)]
                    both = ok & (os_rec[:, 2] > 0)
                    same = np.abs(L - os_rec[:, 1]) <= 1e-6 * np.abs(os_rec[:, 1])
                    agree[mode].append((int(np.sum(both & same)), int(np.sum(both))))
        for mode in modes:
            a = acc[mode]
            rows.append(
                dict(
                    kind=kind,
                    mode=mode,
                    sweeps=len(members),
                    cold=float(np.mean(a["cold"])),
                    warm=float(np.mean(a["warm"])),
                    step=float(np.mean(a["step"])),
                    # Mean time per evaluation (total / count), as jaxwrap's batch time per
                    # path: a few 50-iteration evaluations count in both.
                    os_cold=float(np.nanmean(os_cold)) if os_cold else None,
                    os_warm=float(np.nanmean(os_warm)) if os_warm else None,
                    os_step=float(np.nanmean(os_step)) if os_step else None,
                    conv_cold=float(np.mean(a["conv_cold"])),
                    conv_warm=float(np.mean(a["conv_warm"])),
                    iters=tuple(np.mean(a["iters"], axis=0)),
                    compile=tuple(np.max(a["compile"], axis=0)),
                    agree=tuple(np.sum(agree[mode], axis=0)) if agree[mode] else None,
                )
            )
            if report:
                report(rows[-1])
    return rows


def print_header(batch, trajectories, steps, step):
    print(
        f"\npin-joint sweeps (tests/reference/cable_sweeps_opensim.json), OpenSim's tolerances; cold: batch {batch} "
        f"random angles; warm: {trajectories} trajectories x {steps} steps of {step} rad. Times per path: jaxwrap "
        "batch time / paths, OpenSim total / evaluations; step: warm without the first (cold) solve of each "
        "trajectory. ratio = OpenSim / jaxwrap (> 1: jaxwrap faster per path); "
        "'same as OpenSim' counts cold angles where both converged and the lengths agree to 1e-6."
    )
    head = (
        f"{'kind':<10} {'jaxwrap':<8} {'cold/path':>10} {'OpenSim':>9} {'ratio':>6} {'warm/path':>10} {'OpenSim':>9} "
        f"{'ratio':>6} {'step/path':>10} {'OpenSim':>9} {'ratio':>6} {'iters c/w':>10} {'conv c/w':>12} "
        f"{'same as OpenSim':>16} {'compile c/w':>12}"
    )
    print(head)
    print("-" * len(head), flush=True)


def print_row(r):
    def us(x):
        return f"{x * 1e6:7.1f}us" if x else f"{'n/a':>9}"

    def ratio(a, b):
        return f"{a / b:6.2f}" if a else f"{'n/a':>6}"

    agree = f"{r['agree'][0]}/{r['agree'][1]}" if r["agree"] else "n/a"
    print(
        f"{r['kind']:<10} {r['mode']:<8} {us(r['cold']):>10} {us(r['os_cold'])} {ratio(r['os_cold'], r['cold'])} "
        f"{us(r['warm']):>10} {us(r['os_warm'])} {ratio(r['os_warm'], r['warm'])} "
        f"{us(r['step']):>10} {us(r['os_step'])} {ratio(r['os_step'], r['step'])} "
        f"{r['iters'][0]:4.1f}/{r['iters'][1]:4.1f} {r['conv_cold']:5.3f}/{r['conv_warm']:5.3f} {agree:>16} "
        f"{r['compile'][0]:5.1f}/{r['compile'][1]:4.1f}s",
        flush=True,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--trajectories", type=int, default=64)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--step", type=float, default=0.01)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--opensim-evals", type=int, default=300)
    parser.add_argument("--kinds", nargs="*", default=list(KINDS))
    parser.add_argument("--max-sweeps", type=int, default=None, help="at most this many sweeps per kind")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=list(MODES))
    _cpu_threads.add_argument(parser)
    args = parser.parse_args(argv)
    print(_cpu_threads.use_cpu_threads(args.cpu_threads))  # before the first device query
    print_header(args.batch, args.trajectories, args.steps, args.step)
    run(
        args.kinds,
        args.batch,
        args.trajectories,
        args.steps,
        args.step,
        args.repeats,
        args.opensim_evals,
        report=print_row,
        max_sweeps=args.max_sweeps,
        modes=tuple(args.modes),
    )


if __name__ == "__main__":
    main()
