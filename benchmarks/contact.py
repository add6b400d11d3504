"""Convex-shape contact: value + Jacobian per configuration and placement projection time.

    python benchmarks/contact.py

Set-ups A (box bottom on a table, nq = 7) and C (two boxes, two faces each, nq = 14) of
tests/reference/generate_contact.py. jaxwrap runs ``jit(vmap(value_and_jacobian))``
at batch 4096 and ``jit(vmap(project))`` from 1024 starts near the table; medians of
repeated runs, per configuration. If hpp-python is importable (with its LD_LIBRARY_PATH,
see tests/reference/generate_contact.py) the same value + Jacobian go through hpp's
ConvexShapeContact and ConvexShapeContactComplement one configuration at a time and the
ratio is printed.
"""

from __future__ import annotations

import json
import pathlib
import statistics
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402

ROOT = pathlib.Path(__file__).parents[1]
VALUES = json.loads((ROOT / "tests" / "reference" / "contact_values.json").read_text())
BATCH, STARTS, REPEATS = 4096, 1024, 7


def build(name: str) -> jw.ConvexShapeContactHold:
    setup = VALUES["setups"][name]
    builder = jw.RobotModelBuilder("scene")
    for body in setup["bodies"]:
        builder = builder.add_body(body, mass=1.0).add_joint(f"{body}/root_joint", "floating", "world", body)
    model = builder.build()
    floors = [jw.ConvexShape(f["points"], body=0 if f["body"] == "world" else f["body"]) for f in setup["floors"]]
    objects = [jw.ConvexShape(o["points"], body=o["body"]) for o in setup["objects"]]
    return jw.ConvexShapeContactHold(model, floors, objects)


def configurations(model, n, seed=0):
    return jax.vmap(model.random_configuration)(jax.random.split(jax.random.PRNGKey(seed), n))


def median_time(fn, *args) -> float:
    jax.block_until_ready(fn(*args))  # compile
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def hpp_time(name: str, q: np.ndarray) -> float | None:
    try:
        sys.path.insert(0, str(ROOT / "tests" / "reference"))
        import generate_contact  # noqa: PLC0415

        _, contact, complement = generate_contact.build(VALUES["setups"][name], 0.0)
    except Exception:  # noqa: BLE001 -- hpp-python missing or not loadable
        return None
    nv = q.shape[1] - q.shape[1] // 7
    start = time.perf_counter()
    for qk in q:
        generate_contact.evaluate(contact, qk, nv)
        generate_contact.evaluate(complement, qk, nv)
    return (time.perf_counter() - start) / len(q)


def main() -> None:
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, float64, batch {BATCH}")
    for name in ("A", "C"):
        hold = build(name)
        q = configurations(hold.model, BATCH)
        f = jax.jit(jax.vmap(lambda q, hold=hold: jw.constraint_value_and_jacobian(hold, q)))
        per = median_time(f, q) / BATCH
        line = f"set-up {name}: hold value + Jacobian (8 x {hold.model.nv}) {per * 1e6:8.3f} us/config"
        reference = hpp_time(name, np.asarray(q[:256]))
        if reference is not None:
            line += f" | hpp {reference * 1e6:8.3f} us/config | ratio hpp/jaxwrap {reference / per:6.1f}"
        print(line)

    contact = build("A").contact
    k1, k2 = jax.random.split(jax.random.PRNGKey(1))
    pos = jax.random.uniform(k1, (STARTS, 3), minval=jnp.array([-1.5, -1.5, 0.0]), maxval=jnp.array([1.5, 1.5, 1.0]))
    quat = jax.vmap(lambda w: jw.Transform.from_axis_angle(w).as_quaternion())(jax.random.normal(k2, (STARTS, 3)) * 0.5)
    q0 = jnp.concatenate([pos, quat], axis=1)
    project = jax.jit(jax.vmap(lambda q: jw.project(contact, q)))
    per = median_time(project, q0) / STARTS
    solution = project(q0)
    print(
        f"set-up A: placement projection {per * 1e6:8.3f} us/start ({STARTS} starts, "
        f"success {float(jnp.mean(solution.success)) * 100:.1f}%, median steps "
        f"{float(jnp.median(solution.num_steps)):.0f}, max residual {float(jnp.max(solution.residual)):.1e})"
    )


if __name__ == "__main__":
    main()
