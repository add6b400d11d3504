"""Moment arms of one cable: `jw.moment_arms` (from the solved path's forces) against
reverse mode through the implicit derivative of the length (``-grad(length)``, what it
computed until stop 51), on the demo elbow, in one run.

    python benchmarks/moment_arms.py [--batch 256] [--repeats 5]

Per route: trace, XLA compile and median run time of ``jit(vmap)`` over ``--batch``
angles (default settings), and of the design gradient of 16 angles' summed moment arms
in the cylinder's radius (forward mode for the implicit route: reverse mode cannot pass
the ellipsoid's integrator loop twice; both modes for the forces). Prints the largest
difference between the two routes' moment arms (docs/cable.md#moment-arms).
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax

jax.config.update("jax_enable_x64", True)

import equinox as eqx  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402
from jaxwrap.cli import elbow_model_and_cable  # noqa: E402


def implicit_arms(model, cable, q):
    def length(v):
        return jw.solve_cable(cable, jw.forward_kinematics(model, jw.integrate(model, q, v))).length

    return -jax.grad(length)(jnp.zeros(model.nv, q.dtype))


ROUTES = {"forces": jw.moment_arms, "implicit": implicit_arms}


def measure(fn, args, repeats):
    start = time.perf_counter()
    lowered = jax.jit(fn).lower(*args)
    traced = time.perf_counter()
    compiled = lowered.compile()
    compiled_at = time.perf_counter()
    out = jax.block_until_ready(compiled(*args))
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        runs.append(time.perf_counter() - t)
    return out, traced - start, compiled_at - traced, statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    model, cable = elbow_model_and_cable()
    angles = jnp.linspace(0.0, 1.8, args.batch)
    radius = cable.obstacles[1].surface.radius
    arms = {}
    print(f"demo elbow, {args.batch} angles, default settings; s, and run per angle / per gradient")
    print("| route | arms: trace / compile / run µs per angle | design gradient: mode, trace / compile / run ms |")
    print("|---|---|---|")
    for name, route in ROUTES.items():

        def sweep(model, cable, angles, route=route):
            return jax.vmap(lambda a: route(model, cable, a[None])[0])(angles)

        def total(r, cable, route=route):
            thicker = eqx.tree_at(lambda c: c.obstacles[1].surface.radius, cable, r)
            return jnp.sum(jax.vmap(lambda a: route(model, thicker, a[None])[0])(angles[:: max(1, args.batch // 16)]))

        arms[name], tr, co, run = measure(sweep, (model, cable, angles), args.repeats)
        cells = [f"{tr:.2f} / {co:.2f} / {1e6 * run / args.batch:.0f}"]
        for mode in ("reverse", "forward") if name == "forces" else ("forward",):
            diff = jax.grad(total) if mode == "reverse" else jax.jacfwd(total)
            _, tr, co, run = measure(diff, (radius, cable), args.repeats)
            cells.append(f"{mode} {tr:.2f} / {co:.2f} / {1e3 * run:.1f}")
        print(f"| {name} | {cells[0]} | {'; '.join(cells[1:])} |")
    gap = float(np.max(np.abs(np.asarray(arms["forces"]) - np.asarray(arms["implicit"]))))
    print(f"largest difference between the routes: {gap:.2e} m")


if __name__ == "__main__":
    main()
