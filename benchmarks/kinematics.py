"""Forward kinematics + one body Jacobian: jaxwrap ``jit(vmap)`` at batch 4096 versus
pinocchio called once per configuration, same robots, same run.

    pip install -e '.[bench]'
    python benchmarks/kinematics.py [--batch 4096] [--repeats 15]

Prints median times per configuration and their ratio (pinocchio / jaxwrap: above 1 means
jaxwrap is faster per configuration). pinocchio is timed through its Python bindings
(``forwardKinematics`` + ``computeFrameJacobian`` per configuration), so its figure
includes the binding overhead a Python user pays; jaxwrap's includes nothing but the
batched XLA call. Without pinocchio only the jaxwrap figures are printed.
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import statistics
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402
from jaxwrap._kinematics import jacobian_from_poses  # noqa: E402

ROBOTS = pathlib.Path(__file__).parents[1] / "tests" / "reference" / "robots"
CASES = [
    # (label, urdf, floating base, body for the Jacobian)
    ("UR5 (fixed base, nv=6)", "ur5_robot.urdf", False, "tool0"),
    ("Solo12 (free flyer, nv=18)", "solo12.urdf", True, "FL_FOOT"),
    ("ANYmal B (free flyer, nv=18)", "anymal_b.urdf", True, "LF_FOOT"),
]


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_jaxwrap(model: jw.RobotModel, body: str, qs: jnp.ndarray, repeats: int) -> tuple[float, float]:
    b = model.body_index(body)

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, 0))
    def fk_and_jacobian(model, q):
        X = jw.forward_kinematics(model, q)
        return X.translation, jacobian_from_poses(model, X, b, jnp.zeros(3))

    start = time.perf_counter()
    jax.block_until_ready(fk_and_jacobian(model, qs))
    compile_time = time.perf_counter() - start
    per_batch = _median_time(lambda: jax.block_until_ready(fk_and_jacobian(model, qs)), repeats)
    return per_batch / len(qs), compile_time


def bench_pinocchio(urdf: str, floating: bool, body: str, qs: np.ndarray, repeats: int) -> float | None:
    try:
        import pinocchio as pin
    except ImportError:
        return None
    path = str(ROBOTS / urdf)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    data = model.createData()
    frame = model.getFrameId(body, pin.FrameType.BODY)
    world_aligned = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    sample = qs[:512]

    def run():
        for q in sample:
            pin.forwardKinematics(model, data, q)
            pin.computeFrameJacobian(model, data, q, frame, world_aligned)

    run()
    return _median_time(run, repeats) / len(sample)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, batch {args.batch}, medians of {args.repeats}")
    header = f"{'robot':<30} {'jaxwrap/config':>15} {'pinocchio/call':>15} {'ratio':>7} {'compile':>8}"
    print(header)
    print("-" * len(header))
    for label, urdf, floating, body in CASES:
        model = jw.load_urdf(str(ROBOTS / urdf), floating_base=floating)
        qs = jax.vmap(model.random_configuration)(jax.random.split(jax.random.PRNGKey(0), args.batch))
        t_jw, t_compile = bench_jaxwrap(model, body, qs, args.repeats)
        t_pin = bench_pinocchio(urdf, floating, body, np.asarray(qs), args.repeats)
        pin_text = f"{t_pin * 1e6:12.2f} us" if t_pin else f"{'n/a':>15}"
        ratio = f"{t_pin / t_jw:7.2f}" if t_pin else f"{'n/a':>7}"
        print(f"{label:<30} {t_jw * 1e6:12.3f} us {pin_text} {ratio} {t_compile:7.2f}s")
    print("\nratio = pinocchio time per call / jaxwrap time per configuration (> 1: jaxwrap faster)")


if __name__ == "__main__":
    main()
