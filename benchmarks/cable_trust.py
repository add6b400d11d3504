"""Random configurations with uniformly random obstacle rotations (issue 9's class: the hint
turns with the obstacle): how often each cold start reaches the shortest path, and that no
path reported successful is longer than the shortest genuine candidate.

    python benchmarks/cable_trust.py [--num 100000] [--chunk 2048]

For every surface kind (sphere, cylinder, ellipsoid, torus) and a chain (sphere and
cylinder, a via point, then an ellipsoid), each configuration puts every obstacle at a
uniformly random rotation (a normalised Gaussian quaternion) near the origin, with the
contact hint fixed in the surface frame, and the end points at random on a shell around
it. Each is solved with the default candidate start and with Simbody's hint-only start;
a broader set of starts than the solver's own (`reference_states`) gives the reference
shortest genuine path, leg by leg, and on a sphere or cylinder the independent closed form
(tests/cable/shortest_paths.py) as well, since all of those starts can miss the shorter
side of a cylinder that the end points nearly straddle. Printed per scenario: the success rate of both
starts, the fraction of hint-only solves that reach the shortest genuine candidate, the
number of successful paths longer than that (must be 0) and of NaN lengths (must be 0).
tests/cable/test_random_rotations.py runs the same check at a reduced size.
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import sys
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import jaxlie  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402
from jaxwrap._cable._candidates import side_hints  # noqa: E402
from jaxwrap._cable._faults import leg_scores  # noqa: E402
from jaxwrap._cable._solver import run_solver  # noqa: E402
from jaxwrap._cable._state import build_scene, initial_state  # noqa: E402

# Independent closed forms (numpy, no jaxwrap code) from the test suite's references.
sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "tests" / "cable"))
from shortest_paths import cylinder_shortest, sphere_shortest  # noqa: E402

KINDS = ("sphere", "cylinder", "ellipsoid", "torus", "chain")
SURFACES = {
    "sphere": (jw.Sphere(0.4), [0.0, 0.4, 0.0]),
    "cylinder": (jw.Cylinder(0.3), [0.0, 0.3, 0.0]),
    "ellipsoid": (jw.Ellipsoid(jnp.array([0.5, 0.3, 0.4])), [0.0, 0.3, 0.0]),
    "torus": (jw.Torus(0.4, 0.15), [0.55, 0.0, 0.0]),
}
CLOSED_FORM = {"sphere": (0.4, sphere_shortest), "cylinder": (0.3, cylinder_shortest)}
CHAIN = (
    ("sphere", [-0.9, 0.0, 0.0]),
    ("cylinder", [-0.2, 0.1, 0.0]),
    ("via", [0.3, 0.6, 0.0]),
    ("ellipsoid", [0.9, 0.0, 0.1]),
)
# The chain without its via point: one leg over a sphere, a cylinder and an ellipsoid,
# like the pin-joint chain of the OpenSim sweeps (for `cable_starts.py --kind three`).
THREE = tuple(element for element in CHAIN if element[0] != "via")


def _elements(kind: str) -> tuple:
    return {"chain": CHAIN, "three": THREE}.get(kind, ((kind, [0.0, 0.0, 0.0]),))


def cable(kind: str, **settings) -> jw.CableSpan:
    """Bodies: 0 ground (end points, via point), 1.. one free body per obstacle."""
    c = jw.CableSpan(0, [-2.0, 0.0, 0.0], 0, [2.0, 0.0, 0.0])
    elements = _elements(kind)
    body = 1
    for name, where in elements:
        if name == "via":
            c = c.add_via_point(0, where)
        else:
            surface, hint = SURFACES[name]
            c = c.add_obstacle(body, jw.Transform.identity(), surface, contact_hint=hint)
            body += 1
    return c.with_settings(**settings)


def configuration(kind: str, key):
    """Body poses (random SO(3) rotations at the nominal places) and end points."""
    elements = _elements(kind)
    places = [jnp.asarray(w) for name, w in elements if name != "via"]
    k_rot, k_pos, k_end = jax.random.split(key, 3)
    quaternions = jax.random.normal(k_rot, (len(places), 4))
    rotations = jax.vmap(lambda q: jw.Transform.from_quaternion(q / jnp.linalg.norm(q)).rotation)(quaternions)
    positions = jnp.stack(places) + 0.05 * jax.random.normal(k_pos, (len(places), 3))
    poses = jw.Transform(
        jnp.concatenate([jnp.eye(3)[None], rotations]), jnp.concatenate([jnp.zeros((1, 3)), positions])
    )
    ends = jax.random.normal(k_end, (2, 3))
    ends = (
        ends / jnp.linalg.norm(ends, axis=-1, keepdims=True) * jax.random.uniform(k_end, (2, 1), minval=1.2, maxval=2.0)
    )
    ends = ends.at[0, 0].set(-jnp.abs(ends[0, 0]) - 0.8).at[1, 0].set(jnp.abs(ends[1, 0]) + 0.8)
    return poses, ends


def crossing(kind: str, key, t, duration):
    """A moving `configuration` of a one-obstacle `kind` at time ``t`` of ``duration``: the
    obstacle's body turned by ``t`` times a random angular velocity while its centre
    crosses the straight line between the end points along a random direction across it,
    so the path is lifted, touches down, wraps and lifts off on the other side. Body
    poses and end points, as `configuration`."""
    poses, ends = configuration(kind, key)
    k_w, k_n = jax.random.split(jax.random.fold_in(key, 1))
    omega = jax.random.normal(k_w, (3,))
    u = (ends[1] - ends[0]) / jnp.linalg.norm(ends[1] - ends[0])
    across = jax.random.normal(k_n, (3,))
    across = across - jnp.dot(across, u) * u
    across = across / jnp.linalg.norm(across)
    on_line = ends[0] + jnp.dot(poses.translation[1] - ends[0], u) * u
    centre = on_line + (t / duration - 0.5) * 1.6 * across
    rotation = poses.rotation[1] @ jaxlie.SO3.exp(t * omega).as_matrix()
    return jw.Transform(poses.rotation.at[1].set(rotation), poses.translation.at[1].set(centre)), ends


def _with_ends(c, ends):
    return jw.CableSpan(0, ends[0], 0, ends[1], c.obstacles, c.via_points, c.elements, c.settings)


def crossing_trajectories(kind: str, base: jw.CableSpan, keys, times, step):
    """Per key, a `crossing` trajectory over `times` (its last one the crossing's end): the
    default path (`base`'s settings, the key's end points) solved cold at the first time,
    then ``step(default, hints, poses, state) -> (next state, outputs)`` at each later
    one, from the previous state (`hints`: the same cable with ``cold_start="hints"``).
    Returns the outputs stacked per key and step."""

    @jax.jit
    @jax.vmap
    def run(key):
        poses, ends = crossing(kind, key, times[0], times[-1])
        default = _with_ends(base, ends)
        hints = default.with_settings(cold_start="hints")
        first = jw.solve_cable(default, poses)

        def scan_step(state, t):
            poses, _ = crossing(kind, key, t, times[-1])
            return step(default, hints, poses, state)

        return jax.lax.scan(scan_step, first.state, times[1:])[1]

    return run(keys)


def reference_states(c: jw.CableSpan, scene):
    """A broader set of starts than the solver's own, for the reference shortest path: the
    hints, every obstacle lifted, and for every obstacle 8 starts at equal angles around its
    leg's straight line with the others lifted (the solver tries 4): ``2 + 8n`` starts."""
    n = c.num_obstacles
    starts = [[o.contact_hint for o in c.obstacles], [None] * n]
    for i in range(n):
        for side in side_hints(c, scene, i, 8):
            starts.append([side if j == i else None for j in range(n)])
    states = [initial_state(c, scene, h) for h in starts]
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def shortest_reference(c: jw.CableSpan, poses) -> jnp.ndarray:
    """The shortest genuine length over the reference starts, chosen per leg (as the solver
    does)."""
    scene = build_scene(c, poses)
    carries = jax.vmap(run_solver, in_axes=(None, None, 0))(c, scene, reference_states(c, scene))
    lengths, genuine = jax.vmap(lambda carry: leg_scores(c, scene, carry))(carries)
    return jnp.sum(jnp.min(jnp.where(genuine, lengths, jnp.inf), axis=0))


def check(kind: str, num: int, chunk: int = 2048, seed: int = 0, extra_keys=None) -> dict:
    """The counts above over ``num`` configurations drawn from ``seed``, in chunks, and
    over the configurations of ``extra_keys`` (PRNG keys, added to the last chunk) if given."""
    base = cable(kind, smoothness_tolerance=1e-9, max_iterations=100)
    hints_only = base.with_settings(cold_start="hints")

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, None, 0))
    def run(c, c_hints, key):
        poses, ends = configuration(kind, key)
        c, c_hints = _with_ends(c, ends), _with_ends(c_hints, ends)
        best = jw.solve_cable(c, poses)
        simbody = jw.solve_cable(c_hints, poses)
        shortest = shortest_reference(c, poses)
        # An end point inside an obstacle (it happens: a randomly turned infinite cylinder
        # can pass through an end point) is no valid configuration; it is counted apart.
        inside = best.result == jw.RESULTS.endpoint_inside_obstacle
        ends_S = poses[1].inverse().apply(ends)  # for the closed form on a sphere or cylinder
        return best.length, best.converged, simbody.length, simbody.converged, shortest, inside, ends_S

    totals = dict(success=0, success_hints=0, hints_shortest=0, longer=0, nan=0, inside=0, num=num)
    start = time.perf_counter()
    chunks = [
        (min(chunk, num - offset), jax.random.split(jax.random.PRNGKey(seed + offset), chunk))
        for offset in range(0, num, chunk)
    ]
    if extra_keys is not None:  # appended after the last chunk's own configurations
        size, keys = chunks[-1]
        chunks[-1] = (size + len(extra_keys), jnp.concatenate([keys[:size], jnp.asarray(extra_keys)]))
        totals["num"] += len(extra_keys)
    for size, keys in chunks:
        L, ok, L_hints, ok_hints, shortest, inside, ends_S = (np.asarray(x[:size]) for x in run(base, hints_only, keys))
        if kind in CLOSED_FORM:
            # The starts can all miss the shortest side; the closed form cannot.
            radius, shortest_wrap = CLOSED_FORM[kind]
            exact = np.array([shortest_wrap(a, b, radius) if not i else np.inf for (a, b), i in zip(ends_S, inside)])
            shortest = np.minimum(shortest, exact)
        totals["inside"] += int(np.sum(inside))
        totals["success"] += int(np.sum(ok))
        totals["success_hints"] += int(np.sum(ok_hints))
        totals["hints_shortest"] += int(np.sum(ok_hints & (L_hints <= shortest * (1 + 1e-9))))
        totals["longer"] += int(np.sum(ok & (L > shortest * (1 + 1e-9))))
        totals["nan"] += int(np.sum(~np.isfinite(L)))
    totals["seconds"] = time.perf_counter() - start
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--kinds", nargs="*", default=list(KINDS))
    args = parser.parse_args()
    print(f"{args.num} random configurations per scenario, random SO(3) obstacle rotations, tolerance 1e-9")
    print("success rates are over the valid configurations (no end point inside an obstacle)")
    print(
        f"{'scenario':<10} {'invalid':>8} {'candidates ok':>14} {'hints ok':>9} {'hints shortest':>15} "
        f"{'longer':>7} {'NaN':>4}"
    )
    for kind in args.kinds:
        r = check(kind, args.num, args.chunk)
        n = r["num"] - r["inside"]
        print(
            f"{kind:<10} {r['inside']:8d} {100 * r['success'] / n:13.3f}% {100 * r['success_hints'] / n:8.3f}% "
            f"{100 * r['hints_shortest'] / n:14.3f}% {r['longer']:7d} {r['nan']:4d}   ({r['seconds']:.0f} s)"
        )


if __name__ == "__main__":
    main()
