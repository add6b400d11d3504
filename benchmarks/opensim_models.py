"""All muscle lengths and the moment-arm matrix per configuration for OpenSim models:
jaxwrap ``jit(vmap)`` versus OpenSim 4.6 per call, in one run.

    pip install -e '.[opensim]'
    python benchmarks/opensim_models.py [--batch 4096] [--repeats 3] [--model PATH ...]
    python benchmarks/opensim_models.py --warm [--trajectories 64] [--steps 64] [--step 0.01]

Models: arm26 and gait9dof18musc (tests/data/osim), or the ``--model`` files given.
Locked coordinates stay at their default values.

- jaxwrap: ``jw.solve_cables`` (lengths and per-cable results) and
  ``jw.moment_arms_from_paths`` of its paths, one solve per path, in one ``jit(vmap)``
  call over the batch of random configurations in the coordinate ranges;
- OpenSim: per configuration, set the coordinates, ``realizePosition``, then
  ``getLength`` and ``computeMomentArm`` for every muscle and coordinate, through the
  Python bindings (their call overhead is included), over the first 256 configurations.

With ``--warm``, trajectories instead of random configurations: each starts at a random
configuration and moves every unlocked coordinate by ``step`` times its range per step,
in a random direction (reflected at the range's bounds). jaxwrap solves each
trajectory's first configuration cold and every later one warm-started from the
previous step's paths (``lax.scan`` inside ``vmap`` over trajectories), with the same
lengths and moment arms per step; OpenSim evaluates the first 4 trajectories step by
step. *step* is jaxwrap's time per configuration without the trajectories' first
(cold) solves: the scan's time less that of the first solves run alone.

Prints the median time per configuration, jaxwrap's compile time, the ratio (OpenSim /
jaxwrap: above 1 means jaxwrap is faster), and per muscle the largest length difference
from OpenSim and jaxwrap's converged fraction. The machine is shared: compare medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ARM26 = os.path.join(HERE, "..", "tests", "data", "osim", "arm26.osim")
GAIT = os.path.join(HERE, "..", "tests", "data", "osim", "gait9dof18musc.osim")


def _configurations(coordinates, batch: int, seed: int = 0) -> np.ndarray:
    lo = np.array([coordinates.get(i).getRangeMin() for i in range(coordinates.getSize())])
    hi = np.array([coordinates.get(i).getRangeMax() for i in range(coordinates.getSize())])
    lo, hi = np.clip(lo, -np.pi, np.pi), np.clip(hi, -np.pi, np.pi)
    for i in range(coordinates.getSize()):
        if coordinates.get(i).getDefaultLocked():
            lo[i] = hi[i] = coordinates.get(i).getDefaultValue()
    return np.random.default_rng(seed).uniform(lo, hi, size=(batch, len(lo)))


def bench_jaxwrap(model, cables, q, repeats):
    def evaluate(q):  # one solve gives the results and the moment arms
        paths = jw.solve_cables(cables, jw.forward_kinematics(model, q), q)
        return paths.length, jw.moment_arms_from_paths(model, cables, q, paths), paths.converged

    fn = jax.jit(jax.vmap(evaluate))
    q = jnp.asarray(q)
    start = time.perf_counter()
    compiled = fn.lower(q).compile()
    compile_s = time.perf_counter() - start
    out = jax.block_until_ready(compiled(q))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(compiled(q))
        times.append(time.perf_counter() - start)
    return compile_s, statistics.median(times) / len(q), [np.asarray(x) for x in out]


def _trajectories(coordinates, trajectories: int, steps: int, step: float, seed: int = 0) -> np.ndarray:
    """(trajectories, steps, nq): from random starts, every unlocked coordinate moves by
    ``step`` times its range per step in a random direction, reflected at its bounds."""
    lo = np.array([coordinates.get(i).getRangeMin() for i in range(coordinates.getSize())])
    hi = np.array([coordinates.get(i).getRangeMax() for i in range(coordinates.getSize())])
    lo, hi = np.clip(lo, -np.pi, np.pi), np.clip(hi, -np.pi, np.pi)
    start = _configurations(coordinates, trajectories, seed)
    rng = np.random.default_rng(seed + 1)
    direction = rng.choice([-1.0, 1.0], size=start.shape) * rng.uniform(0.5, 1.0, size=start.shape)
    locked = np.array([coordinates.get(i).getDefaultLocked() for i in range(coordinates.getSize())])
    direction[:, locked] = 0.0
    width = np.where(hi > lo, hi - lo, 1.0)
    raw = (start - lo)[:, None, :] + np.arange(steps)[None, :, None] * step * width * direction[:, None, :]
    folded = np.mod(raw, 2 * width)  # reflection at the bounds
    return lo + np.where(folded > width, 2 * width - folded, folded)


def bench_jaxwrap_warm(model, cables, q, repeats):
    """q: (trajectories, steps, nq). Returns compile s, s per configuration, s per warm
    step, and (lengths, moment arms, converged) per trajectory and step."""

    def evaluate(q, warm):
        paths = jw.solve_cables(cables, jw.forward_kinematics(model, q), q, warm_start=warm)
        return paths, (paths.length, jw.moment_arms_from_paths(model, cables, q, paths), paths.converged)

    def trajectory(qs):
        first, out0 = evaluate(qs[0], None)
        _, out = jax.lax.scan(lambda warm, q: evaluate(q, warm), first, qs[1:])
        return jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), out0, out)

    fn = jax.jit(jax.vmap(trajectory))
    firsts = jax.jit(jax.vmap(lambda q: evaluate(q, None)[1]))
    q = jnp.asarray(q)
    start = time.perf_counter()
    compiled = fn.lower(q).compile()
    compile_s = time.perf_counter() - start
    compiled_firsts = firsts.lower(q[:, 0]).compile()
    out = jax.block_until_ready(compiled(q))
    times, first_times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(compiled(q))
        times.append(time.perf_counter() - start)
        start = time.perf_counter()
        jax.block_until_ready(compiled_firsts(q[:, 0]))
        first_times.append(time.perf_counter() - start)
    total, first = statistics.median(times), statistics.median(first_times)
    count = q.shape[0] * q.shape[1]
    return compile_s, total / count, (total - first) / (count - q.shape[0]), [np.asarray(x) for x in out]


def bench_opensim(m, state, q, repeats):
    coordinates, muscles = m.getCoordinateSet(), m.getMuscles()
    nc, nm = coordinates.getSize(), muscles.getSize()

    def sweep(store=None):
        for row in q:
            for i in range(nc):
                coordinates.get(i).setValue(state, float(row[i]), False)
            m.realizePosition(state)
            lengths = [muscles.get(k).getLength(state) for k in range(nm)]
            arms = [[muscles.get(k).computeMomentArm(state, coordinates.get(i)) for i in range(nc)] for k in range(nm)]
            if store is not None:
                store[0].append(lengths)
                store[1].append(arms)

    store = ([], [])
    sweep(store)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        sweep()
        times.append(time.perf_counter() - start)
    return statistics.median(times) / len(q), np.array(store[0]), np.array(store[1])


def main() -> None:
    import opensim

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--warm", action="store_true", help="warm-started trajectories, not random configurations")
    parser.add_argument("--trajectories", type=int, default=64)
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--step", type=float, default=0.01, help="per step, as a fraction of each coordinate's range")
    args = parser.parse_args()
    what = (
        f"{args.trajectories} trajectories x {args.steps} steps of {args.step} of each range (OpenSim: the first 4)"
        if args.warm
        else f"batch {args.batch} (OpenSim: the first 256)"
    )
    print(
        f"{what}, median of {args.repeats}, float64, "
        f"{jax.devices()[0].platform.upper()}, OpenSim {opensim.__version__}, jax {jax.__version__}"
    )
    for path in args.model or [ARM26, GAIT]:
        m = opensim.Model(path)
        state = m.initSystem()
        model, cables = jw.load_osim(m)
        if args.warm:
            q = _trajectories(m.getCoordinateSet(), args.trajectories, args.steps, args.step)
            compile_s, t_jw, t_step, (L, R, ok) = bench_jaxwrap_warm(model, cables, q, args.repeats)
            q_os = q[:4].reshape(-1, q.shape[-1])
            L, ok = L[:4].reshape(-1, L.shape[-1]), ok.reshape(-1, ok.shape[-1])
        else:
            q = _configurations(m.getCoordinateSet(), args.batch)
            compile_s, t_jw, (L, R, ok) = bench_jaxwrap(model, cables, q, args.repeats)
            q_os = q[:256]
        t_os, L0, R0 = bench_opensim(m, state, q_os, args.repeats)
        structures = cables.num_structures()
        print(f"\n{os.path.basename(path)}: {len(cables)} muscles, nv {model.nv}, {structures} leg structures")
        print(f"  jaxwrap jit(vmap)   {t_jw * 1e6:9.2f} us/config   compile {compile_s:6.1f} s")
        if args.warm:
            print(f"  jaxwrap warm step   {t_step * 1e6:9.2f} us/config   (without each trajectory's first solve)")
        print(f"  OpenSim             {t_os * 1e6:9.2f} us/config   ratio OpenSim/jaxwrap {t_os / t_jw:8.3g}")
        if args.warm:
            print(f"  {'':20s}{'':22s}warm step ratio       {t_os / t_step:8.3g}")
        n_os = len(q_os)
        for k, name in enumerate(cables.names):
            good = ok[:n_os, k]
            diff = np.abs(L[:n_os, k] - L0[:, k])[good]
            worst = f"{diff.max():.1e} m" if good.any() else "-"
            share = ok[:, k].mean() * 100
            print(f"    {name:12s} converged {share:6.1f} %   max |L - OpenSim| where converged {worst}")


if __name__ == "__main__":
    main()
