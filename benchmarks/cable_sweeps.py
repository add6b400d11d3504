"""jaxwrap vs OpenSim on the pin-joint sweeps of tests/reference/cable_sweeps_opensim.json (issue 9).

For every sweep, every angle is solved COLD from the contact hints (batched with vmap over
the angles) with OpenSim's settings, and optionally warm along the sweep; each angle is
counted as: matching OpenSim's cold solve (length rel. err <= --rel and same contact
flags), silently wrong (converged but off) or not converged.

    python benchmarks/cable_sweeps.py [--algorithm scholz2015|minimum_length] [--warm] [--rel 1e-6]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from cable_scenarios import surface_from_spec  # noqa: E402

FIXTURE = pathlib.Path(__file__).parents[1] / "tests" / "reference" / "cable_sweeps_opensim.json"


def load(path=FIXTURE):
    return json.loads(pathlib.Path(path).read_text())["sweeps"]


def transform(spec):
    return jw.Transform(jnp.asarray(spec["rotation"], float), jnp.asarray(spec["translation"], float))


def cable_from(sweep, algorithm="scholz2015", cold_start="hints", **settings):
    """The sweep's cable with OpenSim's settings; ``cold_start="hints"`` is Simbody's start
    (what OpenSim's cold records are), ``"candidates"`` jaxwrap's default."""
    cable = jw.CableSpan(
        sweep["origin"]["body"],
        sweep["origin"]["station"],
        sweep["termination"]["body"],
        sweep["termination"]["station"],
    )
    for element in sweep["path_order"][1:-1]:
        kind, index = element.split(":")
        if kind == "obstacle":
            o = sweep["obstacles"][int(index)]
            cable = cable.add_obstacle(
                o["body"], transform(o["X_BS"]), surface_from_spec(o["surface"]), contact_hint=o["contact_hint"]
            )
        else:
            v = sweep["via_points"][int(index)]
            cable = cable.add_via_point(v["body"], v["station"])
    s = sweep["settings"]
    return cable.with_settings(
        algorithm=algorithm,
        smoothness_tolerance=s["smoothness_tolerance"],
        curve_segment_accuracy=s["curve_segment_accuracy"],
        max_iterations=s["max_iterations"],
        cold_start=cold_start,
        **settings,
    )


def poses(sweep):
    R = jnp.asarray([[p["rotation"] for p in ps] for ps in sweep["body_poses"]], float)
    p = jnp.asarray([[p["translation"] for p in ps] for ps in sweep["body_poses"]], float)
    return jw.Transform(R, p)


def line_depth(path, num=64):
    """The deepest any straight line of the path goes into any obstacle (max of the
    implicit function over points along every line; < 0 means every line stays outside):
    an independent check that a path is not cutting through an obstacle."""
    ev, cable = path.evaluation, path.cable
    ts = jnp.linspace(0.0, 1.0, num)[1:-1, None]
    active = ev.neighbours.active
    lines = [(ev.lines.prev_point[i], ev.curves.P[i], active[i]) for i in range(len(active))]
    lines += [(ev.lines.last_point[k], path.scene.leg_end[k], True) for k in range(len(cable.legs()))]
    depth = -jnp.inf
    for a, b, used in lines:
        points = a + ts * (b - a)
        for i, obstacle in enumerate(cable.obstacles):
            f = jax.vmap(obstacle.surface.implicit)(path.scene.X_GS[i].inverse().apply(points))
            depth = jnp.where(used, jnp.maximum(depth, jnp.max(f)), depth)
    return depth


def outputs(path):
    return dict(
        length=path.length,
        converged=path.converged,
        not_taut=path.result == jw.RESULTS.not_taut,
        in_contact=path.in_contact,
        iterations=path.num_iterations,
        smoothness=path.smoothness,
        line_depth=line_depth(path),
    )


def _cold(cable, X):
    return jax.vmap(lambda x: outputs(cable.solve(x)))(X)


def _warm(cable, X):
    def step(prev, x):
        path = cable.solve(x, warm_start=prev)
        return path.state, outputs(path)

    first = cable.solve(X[0])  # the first warm solve is cold, as in OpenSim
    _, rest = jax.lax.scan(step, first.state, X[1:])
    return jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), outputs(first), rest)


_batched_cold = jax.jit(jax.vmap(_cold))
_batched_warm = jax.jit(jax.vmap(_warm))


def pose_of_angle(sweep):
    """theta -> body poses [ground, link]: X_GB = X_PF Rz(theta) (the pin's child frame is
    the body origin), as OpenSim's PinJoint; differentiable in theta."""
    R_PF = jnp.asarray(sweep["joint"]["X_PF"]["rotation"], float)
    p_PF = jnp.asarray(sweep["joint"]["X_PF"]["translation"], float)

    def poses_at(theta):
        c, s = jnp.cos(theta), jnp.sin(theta)
        zero, one = jnp.zeros_like(c), jnp.ones_like(c)
        Rz = jnp.stack([jnp.stack([c, -s, zero]), jnp.stack([s, c, zero]), jnp.stack([zero, zero, one])])
        R = jnp.stack([jnp.eye(3, dtype=R_PF.dtype), R_PF @ Rz])
        return jw.Transform(R, jnp.stack([jnp.zeros(3, p_PF.dtype), p_PF]))

    return poses_at


def moment_arms(sweep, algorithm="scholz2015"):
    """-dL/dtheta by implicit differentiation of jaxwrap's cold solves and of its warm
    sweep (each warm solve differentiated at fixed warm-start state)."""
    cable, poses_at = cable_from(sweep, algorithm), pose_of_angle(sweep)
    angles = jnp.asarray(sweep["angles"], float)

    def cold(theta):
        return -jax.grad(lambda t: cable.solve(poses_at(t)).length)(theta)

    def step(prev, theta):
        def length(t):
            path = cable.solve(poses_at(t), warm_start=prev)
            return path.length, path.state

        g, state = jax.grad(length, has_aux=True)(theta)
        return state, -g

    @jax.jit
    def warm(angles):
        first = cable.solve(poses_at(angles[0]))
        _, rest = jax.lax.scan(step, first.state, angles[1:])
        return jnp.concatenate([cold(angles[0])[None], rest])

    return np.asarray(jax.jit(jax.vmap(cold))(angles)), np.asarray(warm(angles))


def _stack(trees):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def solve_groups(sweeps, algorithm, warm, cold_start="hints"):
    """Solve every sweep (all angles cold, and warm along the sweep if asked), batching
    sweeps whose cables share their structure in one vmap.  Returns {name: {mode: outputs}}."""
    groups = {}
    for sw in sweeps:
        cable = cable_from(sw, algorithm, cold_start)
        key = jax.tree.structure(cable)
        groups.setdefault(key, []).append((sw, cable))
    results = {}
    for members in groups.values():
        cables = _stack([c for _, c in members])
        X = _stack([poses(sw) for sw, _ in members])
        outs = {"cold": _batched_cold(cables, X)}
        if warm:
            outs["warm"] = _batched_warm(cables, X)
        for n, (sw, _) in enumerate(members):
            results[sw["name"]] = {m: jax.tree.map(lambda a, n=n: np.asarray(a[n]), o) for m, o in outs.items()}
    return results


def classify(out, ref, rel):
    L, Lr = np.asarray(out["length"]), np.array([r["length"] for r in ref])
    contact_ok = np.array([list(map(bool, c)) == r["in_contact"] for c, r in zip(np.asarray(out["in_contact"]), ref)])
    conv = np.asarray(out["converged"])
    match = conv & (np.abs(L - Lr) <= rel * Lr) & contact_ok
    return match, conv & ~match, ~conv


def report_moment_arms(sweeps, algorithm):
    print(
        "max |jaxwrap moment arm - reference| over angles whose OpenSim solve converged and whose central "
        "difference kept the contact flags; (count > 1e-6)"
    )
    print(
        f"{'sweep':12s} {'cold vs fd':>20s} {'cold vs computeMA':>20s} {'warm vs fd':>20s} {'warm vs computeMA':>20s}"
    )
    for sw in sweeps:
        ma_cold, ma_warm = moment_arms(sw, algorithm)
        cells = []
        for ma, recs in ((ma_cold, sw["cold"]), (ma_warm, sw["warm"])):
            ok = np.array([r["converged"] and r["fd_same_contact"] for r in recs])
            for key in ("moment_arm_fd", "moment_arm"):
                err = np.abs(ma - np.array([r[key] for r in recs]))[ok]
                cells.append(f"{err.max():.1e} ({(err > 1e-6).sum():2d})")
        print(f"{sw['name']:12s} " + " ".join(f"{c:>20s}" for c in cells))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithm", default="scholz2015")
    ap.add_argument("--warm", action="store_true", help="also solve warm along the sweep (vs OpenSim warm)")
    ap.add_argument("--rel", type=float, default=1e-6)
    ap.add_argument("--only", default=None, help="comma-separated sweep names")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--fixture", default=str(FIXTURE))
    ap.add_argument("--summary", action="store_true", help="print totals only")
    ap.add_argument("--save", default=None, help="pickle jaxwrap's outputs per sweep to this file")
    ap.add_argument(
        "--moment-arms",
        action="store_true",
        help="instead: compare jaxwrap's moment arms (implicit differentiation, cold and warm) with "
        "central differences of OpenSim's lengths and with OpenSim computeMomentArm",
    )
    args = ap.parse_args(argv)
    sweeps = load(args.fixture)
    if args.only:
        sweeps = [s for s in sweeps if s["name"] in args.only.split(",")]
    if args.moment_arms:
        return report_moment_arms(sweeps, args.algorithm)
    # (jaxwrap mode, OpenSim reference): OpenSim's own algorithm is Scholz2015 ("cold", "warm");
    # "minimum_length" is OpenSim's cold solve with CableSpanAlgorithm::MinimumLength.
    same = "minimum_length" if args.algorithm == "minimum_length" else "cold"
    columns = [("cold", same)] + [("cold", r) for r in ("cold", "warm", "minimum_length") if r != same]
    if args.warm:
        columns.append(("warm", "warm"))
    print(
        f"jaxwrap algorithm {args.algorithm}; per column 'jaxwrap mode vs OpenSim record': "
        f"match / silently wrong (converged, |dL|/L > {args.rel:g} or other contact flags) / not converged"
    )
    head = " ".join(f"{jm + ' vs ' + r:>26s}" for jm, r in columns)
    print(f"{'sweep':12s} {head}   max |dL|/L (col 1)   max longer than col-1 ref")
    totals = [np.zeros(3, int) for _ in columns]
    results = solve_groups(sweeps, args.algorithm, args.warm)
    if args.save:
        import pickle  # noqa: PLC0415

        with open(args.save, "wb") as f:
            pickle.dump(results, f)
    for sw in sweeps:
        outs = results[sw["name"]]
        cells = []
        for n, (jm, ref) in enumerate(columns):
            out = outs[jm]
            match, wrong, nc = classify(out, sw[ref], args.rel)
            counts = np.array([match.sum(), wrong.sum(), nc.sum()])
            totals[n] += counts
            cells.append(f"{counts[0]:>14d} /{counts[1]:>3d} /{counts[2]:>3d}")
            if n == 0:
                Lr = np.array([r["length"] for r in sw[ref]])
                dL = (np.asarray(out["length"]) - Lr) / Lr
                worst, longest = float(np.max(np.abs(dL))), float(np.max(dL))
            if args.verbose:
                for i in np.flatnonzero(~match):
                    r = sw[ref][i]
                    print(
                        f"   {jm} vs {ref} [{i:2d}] jaxwrap L={float(out['length'][i]):.10g} contact="
                        f"{np.asarray(out['in_contact'][i]).astype(int).tolist()} it={int(out['iterations'][i])} "
                        f"conv={bool(out['converged'][i])} | OpenSim L={r['length']:.10g} "
                        f"contact={[int(c) for c in r['in_contact']]} it={r['num_iterations']}"
                    )
        if not args.summary:
            print(f"{sw['name']:12s} " + " ".join(cells) + f"   {worst:.2e}            {longest:+.1%}")
    print(f"{'total':12s} " + " ".join(f"{t[0]:>14d} /{t[1]:>3d} /{t[2]:>3d}" for t in totals))


if __name__ == "__main__":
    main()
