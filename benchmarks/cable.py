"""Cable solving: jaxwrap ``jit(vmap(solve))`` versus OpenSim's Scholz2015GeometryPath
(Simbody's CableSpan) on the same scenarios, in one run.

    pip install -e '.[bench]' opensim
    python benchmarks/cable.py [--batch 4096] [--repeats 3] [--robustness 10000]

Scenarios (benchmarks/cable_scenarios.py): a sphere, a cylinder, an ellipsoid, a torus
and the 4-obstacle chain of Simbody's testSimpleCable/ExampleCableSpan, the termination
moved randomly in a small box. Both libraries use OpenSim's settings (Scholz2015,
smoothness 1e-5, accuracy 1e-10, 50 iterations).

- cold: every path solved from the contact hints (OpenSim: use_warm_start = false; jaxwrap
  ``cold_start="hints"``, Simbody's start, for like-for-like timing);
- warm: every path seeded with the solution at a point 1 mm away (OpenSim: the
  previous evaluation's state, the way a simulation steps);
- grad: reverse-mode ``grad`` of the length w.r.t. the termination point (implicit
  differentiation), per path, and its ratio to the cold forward solve.

Times are medians over repeats, per path (jaxwrap: batch time / batch size). ratio =
OpenSim time per evaluation / jaxwrap time per path (> 1: jaxwrap faster per path).
A second table compares jaxwrap's default cold start (``cold_start="candidates"``: a
few starts in parallel, the shortest genuine path kept; docs/cable.md#cold-start-candidates) with the
hint-only one: time per path, the cost ratio, and the fraction of configurations where
each reached the shorter of the two paths. ``--robustness N`` also solves N random
configurations per scenario (cold and warm) and prints converged fractions and NaN counts.
``--pin`` adds the pin-joint sweeps of benchmarks/cable_pin.py (obstacles on a moving
link swept over 2.3 rad; cold random angles and warm-started trajectories, against
OpenSim's cold and warm evaluations).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import _cpu_threads  # noqa: E402
import cable_scenarios as scenarios  # noqa: E402
from _opensim_cable import opensim_cable_timings  # noqa: E402

# Like for like with OpenSim: its cold solves start from the contact hints only.
OPENSIM_SETTINGS = dict(
    algorithm="scholz2015",
    smoothness_tolerance=1e-5,
    curve_segment_accuracy=1e-10,
    max_iterations=50,
    cold_start="hints",
)


def timed(fn, *args, repeats):
    """(output, median seconds per call over `repeats`, compile seconds) of a jitted call."""
    start = time.perf_counter()
    out = jax.block_until_ready(fn(*args))
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    return out, median, max(first - median, 0.0)


def run_jaxwrap(name: str, batch: int, repeats: int, settings=OPENSIM_SETTINGS) -> dict:
    cable = scenarios.build(name, **settings)
    ends = scenarios.terminations(name, batch, seed=1)
    nearby = ends + 1e-3 * jax.random.normal(jax.random.PRNGKey(2), ends.shape) / np.sqrt(3)

    def stats(path):
        return path.length, path.num_iterations, path.converged, path.state

    # The cable is an argument of the compiled functions (not baked in as a constant).
    def solve(cable, t, warm_start=None):
        return jw.solve_cable(cable, scenarios.body_poses(t), warm_start=warm_start)

    cold = jax.jit(jax.vmap(lambda c, t: stats(solve(c, t)), in_axes=(None, 0)))
    warm = jax.jit(jax.vmap(lambda c, t, s: stats(solve(c, t, s)), in_axes=(None, 0, 0)))
    grad = jax.jit(jax.vmap(jax.grad(lambda t, c: solve(c, t).length), in_axes=(0, None)))

    (length, iterations, converged, state), t_cold, c_cold = timed(cold, cable, ends, repeats=repeats)
    (w_length, w_iterations, w_converged, _), t_warm, c_warm = timed(warm, cable, nearby, state, repeats=repeats)
    gradients, t_grad, c_grad = timed(grad, ends, cable, repeats=repeats)
    return dict(
        cold=t_cold / batch,
        warm=t_warm / batch,
        grad=t_grad / batch,
        compile=dict(cold=c_cold, warm=c_warm, grad=c_grad),
        iterations=dict(
            cold=(float(jnp.mean(iterations)), int(jnp.max(iterations))),
            warm=(float(jnp.mean(w_iterations)), int(jnp.max(w_iterations))),
        ),
        converged=dict(cold=float(jnp.mean(converged)), warm=float(jnp.mean(w_converged))),
        nan=int(jnp.sum(~jnp.isfinite(length)) + jnp.sum(~jnp.isfinite(w_length)) + jnp.sum(~jnp.isfinite(gradients))),
    )


def candidates_cost(name: str, batch: int, repeats: int) -> dict:
    """Cold solves with the default candidate start against the hint-only start (both with
    OpenSim's other settings): time per path, and how often each reaches the shorter path."""
    settings = dict(OPENSIM_SETTINGS)
    hints = scenarios.build(name, **settings)
    candidates = hints.with_settings(cold_start="candidates")
    ends = scenarios.terminations(name, batch, seed=1)
    solve = jax.jit(
        jax.vmap(
            lambda c, t: (lambda p: (p.length, p.converged))(jw.solve_cable(c, scenarios.body_poses(t))),
            in_axes=(None, 0),
        )
    )
    (L_h, ok_h), t_h, _ = timed(solve, hints, ends, repeats=repeats)
    (L_c, ok_c), t_c, _ = timed(solve, candidates, ends, repeats=repeats)
    shortest = jnp.minimum(jnp.where(ok_h, L_h, jnp.inf), jnp.where(ok_c, L_c, jnp.inf))
    return dict(
        hints=t_h / batch,
        candidates=t_c / batch,
        hints_shortest=float(jnp.mean(ok_h & (L_h <= shortest * (1 + 1e-9)))),
        candidates_shortest=float(jnp.mean(ok_c & (L_c <= shortest * (1 + 1e-9)))),
    )


def robustness(name: str, num: int, chunk: int = 2048) -> dict:
    """Default settings (minimum_length): converged fraction and NaNs over ``num`` random
    configurations, cold and warm (seeded 1 mm away)."""
    cable = scenarios.build(name)

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, 0, 0))
    def both(cable, t, t_near):
        first = jw.solve_cable(cable, scenarios.body_poses(t))
        second = jw.solve_cable(cable, scenarios.body_poses(t_near), warm_start=first)
        finite = jnp.isfinite(first.length) & jnp.isfinite(second.length)
        return first.converged, second.converged, finite

    cold = warm = finite = 0
    for start in range(0, num, chunk):
        size = min(chunk, num - start)
        ends = scenarios.terminations(name, chunk, seed=100 + start)
        near = ends + 1e-3 * jax.random.normal(jax.random.PRNGKey(start), ends.shape) / np.sqrt(3)
        c, w, f = both(cable, ends, near)
        cold += int(jnp.sum(c[:size]))
        warm += int(jnp.sum(w[:size]))
        finite += int(jnp.sum(f[:size]))
    return dict(cold=cold / num, warm=warm / num, nan=num - finite)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--opensim-evals", type=int, default=500)
    parser.add_argument("--robustness", type=int, default=0, help="also check N random configurations per scenario")
    parser.add_argument("--scenarios", nargs="*", default=list(scenarios.NAMES))
    parser.add_argument("--pin", action="store_true", help="also run the pin-joint sweeps (benchmarks/cable_pin.py)")
    parser.add_argument("--pin-batch", type=int, default=None, help="cold batch of the pin sweeps (default: --batch)")
    _cpu_threads.add_argument(parser)
    args = parser.parse_args()
    threads = _cpu_threads.use_cpu_threads(args.cpu_threads)  # before the first device query

    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; batch {args.batch}; medians of {args.repeats}")
    print(threads)
    opensim = opensim_cable_timings(n_evals=args.opensim_evals, scenarios=args.scenarios)
    if opensim is None:
        print("(opensim not installed: OpenSim columns show n/a)")
    header = (
        f"{'scenario':<10} {'mode':<5} {'jaxwrap/path':>13} {'OpenSim/eval':>13} {'ratio':>7} "
        f"{'iters mean/max':>15} {'conv.':>6} {'compile':>8}"
    )
    print(header)
    print("-" * len(header))
    for name in args.scenarios:
        r = run_jaxwrap(name, args.batch, args.repeats)
        for mode in ("cold", "warm"):
            os_time = opensim[name][mode]["median_s"] if opensim else None
            os_text = f"{os_time * 1e6:10.1f} us" if os_time else f"{'n/a':>13}"
            ratio = f"{os_time / r[mode]:7.2f}" if os_time else f"{'n/a':>7}"
            mean_it, max_it = r["iterations"][mode]
            print(
                f"{name:<10} {mode:<5} {r[mode] * 1e6:10.1f} us {os_text} {ratio} {mean_it:9.1f}/{max_it:<5d} "
                f"{r['converged'][mode]:6.3f} {r['compile'][mode]:7.1f}s"
            )
        print(
            f"{name:<10} {'grad':<5} {r['grad'] * 1e6:10.1f} us {'':>13} {'':>7} "
            f"grad/cold = {r['grad'] / r['cold']:.2f}{'':>2} NaN: {r['nan']}  compile {r['compile']['grad']:.1f}s"
        )
    print("\ncold start: candidates (default) vs hints only (Simbody's), OpenSim's settings otherwise")
    head = f"{'scenario':<10} {'hints/path':>11} {'candidates/path':>16} {'cost':>6}"
    print(f"{head} {'shortest: hints':>16} {'candidates':>11}")
    for name in args.scenarios:
        r = candidates_cost(name, args.batch, args.repeats)
        print(
            f"{name:<10} {r['hints'] * 1e6:8.1f} us {r['candidates'] * 1e6:13.1f} us "
            f"{r['candidates'] / r['hints']:5.2f}x "
            f"{100 * r['hints_shortest']:15.2f}% {100 * r['candidates_shortest']:10.2f}%"
        )
    if args.pin:
        import cable_pin  # noqa: PLC0415  (it imports this module's `timed`)

        batch = args.pin_batch or args.batch
        cable_pin.print_header(batch, 64, 64, 0.01)
        cable_pin.run(
            [k for k in cable_pin.KINDS if k in args.scenarios],
            batch=batch,
            repeats=args.repeats,
            report=cable_pin.print_row,
        )
    if args.robustness:
        print(f"\nrobustness, default settings (minimum_length), {args.robustness} random configurations each:")
        for name in args.scenarios:
            r = robustness(name, args.robustness)
            print(
                f"{name:<10} converged cold {r['cold'] * 100:7.3f} %   warm {r['warm'] * 100:7.3f} %   NaN {r['nan']}"
            )


if __name__ == "__main__":
    main()
