"""All tendon lengths plus the full moment-arm matrix per configuration, for MuJoCo
models: jaxwrap ``jit(vmap)`` versus MuJoCo's C engine and MJX, in one run.

    pip install -e '.[mujoco]'
    python benchmarks/tendons.py [--batch 4096] [--repeats 5] [--model PATH ...] [--myo-sim PATH]

Models: the MyoSuite elbow shipped with the tests, any ``--model`` given, and with
``--myo-sim`` (a checkout of github.com/MyoHub/myo_sim) its arm ``arm/myoarm.xml`` (67
tendons, 38 joints), meshes stripped as in tests/reference/generate_mjcf_fixtures.py.

Per configuration:

- jaxwrap: ``jw.cable_lengths_and_moment_arms`` (lengths, and each leg's pose gradient
  chained with the body Jacobians: ``-ten_J``), one ``jit(vmap)`` call over the batch;
- MuJoCo C: ``mj_kinematics`` + ``mj_comPos`` + ``mj_tendon`` per configuration through
  the Python bindings (their call overhead, about a microsecond each, is included);
- MJX (``mujoco.mjx``, JAX implementation): ``kinematics`` + ``com_pos`` + ``tendon``
  under one ``jit(vmap)``.

Prints the median time per configuration over at least ``--repeats`` runs (more, up to
101, while they add up to under 2 s), the compile time of
each compiled program, the ratios (MuJoCo / jaxwrap and MJX / jaxwrap: above 1 means
jaxwrap is faster), and the largest differences from MuJoCo's numbers over the batch
(on configurations where jaxwrap reports success). The machine is shared: rerun and
compare medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ELBOW = os.path.join(HERE, "..", "tests", "data", "mjcf", "myoelbow_2dof6muscles.xml")


def _median(fn, repeats, min_seconds=2.0, max_runs=101):
    """Median time of ``fn()`` over at least ``repeats`` runs, and over as many more (up to
    ``max_runs``) as fill ``min_seconds``: a batch of a small model takes milliseconds,
    and five of those are at the mercy of one busy moment of a shared machine."""
    times = []
    while len(times) < repeats or (sum(times) < min_seconds and len(times) < max_runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _configurations(m, batch, seed=0):
    rng = np.random.default_rng(seed)
    lo = np.where(m.jnt_limited, m.jnt_range[:, 0], -1.0)
    hi = np.where(m.jnt_limited, m.jnt_range[:, 1], 1.0)
    return rng.uniform(lo, hi, size=(batch, m.nq))


def _evaluate(model, cables, q):
    lengths, arms = jw.cable_lengths_and_moment_arms(model, cables, q)
    return lengths, -arms, jnp.isfinite(lengths)


def bench_jaxwrap(model, cables, qpos, repeats):
    # The model and cables are arguments, not constants of the program: new parameter
    # values reuse it.
    fn = jax.jit(jax.vmap(_evaluate, (None, None, 0)))
    q = jnp.asarray(qpos)
    start = time.perf_counter()
    compiled = fn.lower(model, cables, q).compile()
    compile_s = time.perf_counter() - start
    out = jax.block_until_ready(compiled(model, cables, q))
    run_s = _median(lambda: jax.block_until_ready(compiled(model, cables, q)), repeats)
    return compile_s, run_s / len(qpos), [np.asarray(x) for x in out]


def bench_mujoco(m, qpos, repeats):
    import mujoco
    from generate_mjcf_fixtures import dense_tendon_jacobian

    d = mujoco.MjData(m)

    def sweep(store=None):
        for q in qpos:
            d.qpos[:] = q
            mujoco.mj_kinematics(m, d)
            mujoco.mj_comPos(m, d)
            mujoco.mj_tendon(m, d)
            if store is not None:
                store[0].append(d.ten_length.copy())
                store[1].append(dense_tendon_jacobian(m, d))

    store = ([], [])
    sweep(store)
    run_s = _median(sweep, repeats)
    return run_s / len(qpos), np.asarray(store[0]), np.asarray(store[1])


def bench_mjx(m, qpos, repeats):
    try:
        from mujoco import mjx
    except ImportError as error:  # pragma: no cover
        return f"unavailable ({error})"
    try:
        mx = mjx.put_model(m, impl="jax")
        dx = mjx.make_data(mx, impl="jax")
    except Exception as error:  # MJX refuses some models (e.g. unsupported wraps)
        return f"refused the model: {type(error).__name__}: {str(error)[:120]}"

    def evaluate(q):
        d = dx.replace(qpos=q)
        d = mjx.kinematics(mx, d)
        d = mjx.com_pos(mx, d)
        d = mjx.tendon(mx, d)
        return d.ten_length, d.ten_J

    fn = jax.jit(jax.vmap(evaluate))
    q = jnp.asarray(qpos)
    try:
        start = time.perf_counter()
        compiled = fn.lower(q).compile()
        compile_s = time.perf_counter() - start
        jax.block_until_ready(compiled(q))
    except Exception as error:
        return f"failed: {type(error).__name__}: {str(error)[:120]}"
    run_s = _median(lambda: jax.block_until_ready(compiled(q)), repeats)
    return compile_s, run_s / len(qpos)


def main() -> None:
    import mujoco

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--model", action="append", default=[], help="an extra MJCF file")
    parser.add_argument("--myo-sim", default=None, help="a myo_sim checkout: adds arm/myoarm.xml")
    parser.add_argument("--no-mjx", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "reference"))

    models = [("MyoSuite elbow (2 dof, 6 tendons)", mujoco.MjModel.from_xml_path(ELBOW))]
    models += [(os.path.basename(p), mujoco.MjModel.from_xml_path(p)) for p in args.model]
    if args.myo_sim:
        from generate_mjcf_fixtures import strip_meshes

        arm = mujoco.MjModel.from_xml_string(strip_meshes(os.path.join(args.myo_sim, "arm", "myoarm.xml")))
        models.append(("MyoSuite arm (38 dof, 67 tendons)", arm))

    print(
        f"batch {args.batch}, median of >= {args.repeats} runs (>= 2 s), float64, {jax.devices()[0].platform.upper()}, "
        f"MuJoCo {mujoco.__version__}, jax {jax.__version__}"
    )
    for label, m in models:
        model, cables = jw.load_mjcf(m)
        qpos = _configurations(m, args.batch)
        compile_jw, t_jw, (L, J, ok) = bench_jaxwrap(model, cables, qpos, args.repeats)
        t_mj, L0, J0 = bench_mujoco(m, qpos, args.repeats)
        print(f"\n{label}: {m.ntendon} tendons, nv {m.nv}, {cables.num_structures()} leg structures")
        print(f"  jaxwrap jit(vmap)   {t_jw * 1e6:9.2f} us/config   compile {compile_jw:6.1f} s")
        print(f"  MuJoCo C            {t_mj * 1e6:9.2f} us/config   ratio MuJoCo/jaxwrap {t_mj / t_jw:5.2f}")
        if not args.no_mjx:
            mjx_result = bench_mjx(m, qpos, args.repeats)
            if isinstance(mjx_result, str):
                print(f"  MJX                 {mjx_result}")
            else:
                compile_mjx, t_mjx = mjx_result
                print(
                    f"  MJX jit(vmap)       {t_mjx * 1e6:9.2f} us/config   compile {compile_mjx:6.1f} s   "
                    f"ratio MJX/jaxwrap {t_mjx / t_jw:5.2f}"
                )
        good = np.asarray(ok)
        print(
            f"  successful {good.mean() * 100:.2f} % of tendon evaluations; where successful, max |L - ten_length| "
            f"{np.abs(L - L0)[good].max():.1e} m, max |dL/dq - ten_J| {np.abs(J - J0)[good].max():.1e}"
        )


if __name__ == "__main__":
    main()
