"""Geodesic shooting throughput: `jit(vmap(shoot))` at batch 1024.

Ellipsoid and torus (integrated with each surface's default loop and solver: the fused
loop in the surface's chart, Dopri8; default accuracy 1e-9) for a quarter and a half
turn, next to the closed-form sphere. Prints compile time and the median time per geodesic.

    python benchmarks/geodesics.py [--batch 1024] [--repeats 5]
"""

import argparse
import time

import jax

jax.config.update("jax_enable_x64", True)  # benchmark script only; the library never does this

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402


def start_data(surface, batch, length, seed=0):
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(batch, 3))
    points = jax.vmap(surface.project)(jnp.asarray(raw / np.linalg.norm(raw, axis=1, keepdims=True) * 2))
    tangents = jnp.asarray(rng.normal(size=(batch, 3)))  # projected onto the tangent plane by the shooter
    return points, tangents, jnp.full((batch,), length)


def bench(name, surface, length, batch, repeats):
    shoot = jax.jit(jax.vmap(jw.shoot_geodesic, in_axes=(None, 0, 0, 0)))
    args = (surface, *start_data(surface, batch, length))
    t0 = time.perf_counter()
    out = jax.block_until_ready(shoot(*args))
    compile_s = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(shoot(*args))
        times.append(time.perf_counter() - t0)
    per = np.median(times) / batch
    steps = int(jnp.max(out.num_steps))
    print(
        f"{name:<28} length {length:6.3f}  compile {compile_s:6.2f} s  "
        f"{per * 1e6:9.2f} us/geodesic  (max steps {steps})"
    )
    return per


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"jit(vmap(shoot_geodesic)), batch {args.batch}, median of {args.repeats}; backend {jax.default_backend()}")
    sphere = jw.Sphere(1.0)
    ellipsoid = jw.Ellipsoid(jnp.array([1.5, 2.6, 1.0]))
    torus = jw.Torus(2.0, 0.5)
    # A "turn" is measured on the curvature scale of each surface: 2π·r (sphere, r = 1),
    # 2π times the mean semi-axis (ellipsoid), 2π·a around the tube (torus).
    turns = {
        "sphere (closed form)": (sphere, 2 * np.pi),
        "ellipsoid (integrated)": (ellipsoid, 2 * np.pi * float(jnp.mean(ellipsoid.radii))),
        "torus (integrated)": (torus, 2 * np.pi * 0.5),
    }
    results = {}
    for name, (surface, turn) in turns.items():
        for fraction in (0.25, 0.5):
            results[name, fraction] = bench(name, surface, fraction * turn, args.batch, args.repeats)
    for fraction in (0.25, 0.5):
        base = results["sphere (closed form)", fraction]
        for name in ("ellipsoid (integrated)", "torus (integrated)"):
            print(f"{fraction:4.2f} turn: {name} / sphere closed form = {results[name, fraction] / base:8.1f}x")


if __name__ == "__main__":
    main()
