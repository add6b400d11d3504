"""Regenerate ``tests/reference/cable_opensim.json``: golden cable values from OpenSim.

OpenSim 4.6 (``pip install opensim``) wraps Simbody's ``CableSpan`` as
``Scholz2015GeometryPath``.  This script builds each scenario below as an OpenSim model,
solves the path from the contact hints at every configuration (no warm start), and writes
a library-neutral description of the scenario together with OpenSim's numbers.  See
``CABLE_OPENSIM.md`` for the schema and conventions.

    python tests/reference/generate_cable_opensim.py [--out PATH]

Takes about 10 s.  CI does not need OpenSim: the JSON carries the numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))
import _opensim_cable as oc  # noqa: E402

OUT = os.path.join(HERE, "cable_opensim.json")
T225 = math.tan(math.radians(22.5))


# --------------------------------------------------------------------------------------
# Scenarios.  Obstacles give their contact hint either in S ("hint") or as a ground point
# at the nominal configuration ("hint_G"), converted to S here.  Every free body has a
# "nominal" pose q = (rx, ry, rz, tx, ty, tz) (OpenSim FreeJoint coordinates).
# --------------------------------------------------------------------------------------
def free(name, rot=(0, 0, 0), trans=(0, 0, 0)):
    return {"name": name, "joint": {"type": "free"}, "nominal": list(rot) + list(trans)}


SCENARIOS = [
    {
        "name": "sphere",
        "description": "one sphere on a free body; origin on ground, termination on a second free body",
        "bodies": [free("carrier", (0.2, -0.1, 0.3)), free("end", (0, 0, 0.4), (1.5, 0.15, -0.1))],
        "obstacles": [{"body": 1, "kind": "sphere", "radius": 0.5, "xyz": (0.3, 0.5, -0.2),
                       "p": (0.05, -0.03, 0.02), "hint_G": (0.0, 0.5, 0.0)}],
        "path": [("point", 0, (-1.5, 0.25, 0.1)), ("obstacle", 0), ("point", 2, (0.1, 0.05, 0.0))],
        "perturb": (0.25, 0.1),
    },
    {
        "name": "cylinder",
        "description": "one tilted cylinder (helical wrap) on a free body",
        "bodies": [free("carrier", (0.1, 0.2, 0.0)), free("end", (0, 0, 0), (1.4, 0.1, -0.2))],
        "obstacles": [{"body": 1, "kind": "cylinder", "radius": 0.4, "xyz": (0.25, -0.3, 0.0),
                       "p": (0.02, 0.01, 0.0), "hint_G": (0.0, 0.4, 0.0)}],
        "path": [("point", 0, (-1.4, 0.2, 0.3)), ("obstacle", 0), ("point", 2, (0.0, 0.0, 0.05))],
        "perturb": (0.25, 0.1),
    },
    {
        "name": "ellipsoid",
        "description": "one rotated ellipsoid on a free body",
        "bodies": [free("carrier", (0.0, 0.0, 0.2)), free("end", (0.1, 0, 0), (1.5, 0.1, -0.05))],
        "obstacles": [{"body": 1, "kind": "ellipsoid", "radii": (0.6, 0.35, 0.45), "xyz": (0.3, 0.0, 0.5),
                       "p": (0.0, 0.0, 0.0), "hint_G": (0.0, 0.4, 0.0)}],
        "path": [("point", 0, (-1.5, 0.15, 0.1)), ("obstacle", 0), ("point", 2, (0.0, 0.0, 0.0))],
        "perturb": (0.25, 0.1),
    },
    {
        "name": "torus",
        "description": ("torus (axis ~ ground z) on a free body; the cable passes outside the tube centre "
                        "circle and drapes over the outer equator region of the tube"),
        "bodies": [free("carrier", (0.05, -0.05, 0.0)), free("end", (0, 0, 0), (0.8, 1.15, -0.04))],
        "obstacles": [{"body": 1, "kind": "torus", "ring_radius": 0.6, "tube_radius": 0.4,
                       "xyz": (0.0, 0.0, 0.3), "p": (0.0, 0.0, 0.0), "hint_G": (1.0, 0.0, 0.0)}],
        "path": [("point", 0, (0.8, -1.15, 0.04)), ("obstacle", 0), ("point", 2, (0.0, 0.0, 0.0))],
        "perturb": (0.1, 0.05),
    },
    {
        "name": "multi_obstacle",
        "description": ("zig-zag over a cylinder, a sphere, an ellipsoid (each on its own free body) and a "
                        "ground-fixed torus whose tube is wrapped on the inner side of the ring (groove-like, "
                        "as in Simbody's testSimpleCable).  Designed so that the planar-ish stationary path is "
                        "the unique shortest one (Scholz2015 and MinimumLength agree)"),
        "bodies": [free("b_cylinder", (0.1, 0.05, 0.0), (-2.0, -0.3, 0.0)),
                   free("b_sphere", (0, 0, 0), (-0.8, 0.45, 0.0)),
                   free("b_ellipsoid", (0.0, 0.0, 0.3), (0.4, -0.3, 0.0))],
        "obstacles": [
            {"body": 1, "kind": "cylinder", "radius": 0.4, "xyz": (0, 0, 0), "p": (0, 0, 0),
             "hint_G": (-2.0, 0.1, 0.0)},
            {"body": 2, "kind": "sphere", "radius": 0.6, "xyz": (0, 0, 0), "p": (0, 0, 0),
             "hint_G": (-0.8, -0.15, 0.0)},
            {"body": 3, "kind": "ellipsoid", "radii": (0.5, 0.4, 1.5), "xyz": (0, 0, 0), "p": (0, 0, 0),
             "hint_G": (0.4, 0.1, 0.0)},
            {"body": 0, "kind": "torus", "ring_radius": 3.0, "tube_radius": 0.45, "xyz": (0.0, math.pi / 2, 0.0),
             "p": (1.7, -2.7, 0.0), "hint_G": (1.7, -0.15, 0.0)},
        ],
        "path": [("point", 0, (-3.0, 0.0, 0.0)), ("obstacle", 0), ("obstacle", 1), ("obstacle", 2),
                 ("obstacle", 3), ("point", 0, (2.9, 0.0, 0.05))],
        "perturb": (0.1, 0.05),
    },
    {
        "name": "via_points",
        "description": "origin -> sphere -> via point (body 2) -> ellipsoid (body 2) -> via point (ground) -> termination",
        "bodies": [free("b_sphere", (0, 0, 0.1), (-1.0, -0.1, 0.0)), free("b_via", (0, 0.1, 0), (0.0, 0.5, 0.1))],
        "obstacles": [
            {"body": 1, "kind": "sphere", "radius": 0.5, "xyz": (0, 0, 0), "p": (0, 0, 0),
             "hint_G": (-1.0, 0.4, 0.0)},
            {"body": 2, "kind": "ellipsoid", "radii": (0.35, 0.3, 0.4), "xyz": (0.0, 0.0, 0.3),
             "p": (1.0, -0.2, -0.1), "hint_G": (1.0, 0.6, 0.0)},
        ],
        "path": [("point", 0, (-2.0, 0.1, 0.0)), ("obstacle", 0), ("point", 2, (0.0, 0.0, 0.0)),
                 ("obstacle", 1), ("point", 0, (2.0, 0.45, 0.0)), ("point", 0, (2.6, -0.2, 0.2))],
        "perturb": (0.1, 0.05),
    },
    {
        "name": "upstream_simple_cable",
        "description": ("Simbody TestCableSpan testSimpleCable geometry (torus, ellipsoid, torus, cylinder; "
                        "= the 4-obstacle benchmark chain), all obstacles on ground, OpenSim settings. "
                        "Upstream expects length 15 + 5.5*pi/2 and arcs (pi/2)*(1, 1, 1.5, 2)."),
        "bodies": [],
        "obstacles": [
            {"body": 0, "kind": "torus", "ring_radius": 10.0, "tube_radius": 1.0, "xyz": (0, math.pi / 2, 0),
             "p": (1.0, 11.0, 0.0), "hint": (0.0, -9.0, 0.0)},
            {"body": 0, "kind": "ellipsoid", "radii": (1.0, 1.0, 6.0), "xyz": (0, 0, 0),
             "p": (4.5, 1.0, 0.0), "hint": (1.0, 1.0, 0.5)},
            {"body": 0, "kind": "torus", "ring_radius": 10.0, "tube_radius": 1.5, "xyz": (0, math.pi / 2, 0),
             "p": (4.0, -12.0, 0.0), "hint": (0.0, 1.0, 0.0)},
            {"body": 0, "kind": "cylinder", "radius": 2.0, "xyz": (0, 0, 0),
             "p": (-2.0, -1.5, 0.0), "hint": (0.0, -1.0, 0.0)},
        ],
        "path": [("point", 0, (0.0, 0.0, 0.0)), ("obstacle", 0), ("obstacle", 1), ("obstacle", 2),
                 ("obstacle", 3), ("point", 0, (-4.0, 0.0, 0.0))],
        "expected": {"length": 15 + 5.5 * math.pi / 2,
                     "arc_lengths": [math.pi / 2 * a for a in (1, 1, 1.5, 2)],
                     "source": "Simbody TestCableSpan.cpp testSimpleCable"},
    },
    {
        "name": "upstream_single_obstacle_force",
        "description": ("Simbody TestCableSpan_Forces testCableForceOnSingleObstacle / testSolverOptimum "
                        "minimum-length path: unit sphere at the origin, hint (1, 0, 0)."),
        "bodies": [free("sphere_body")],
        "obstacles": [{"body": 1, "kind": "sphere", "radius": 1.0, "xyz": (0, 0, 0), "p": (0, 0, 0),
                       "hint": (1.0, 0.0, 0.0)}],
        "path": [("point", 0, (T225, 1.0, 0.0)), ("obstacle", 0), ("point", 0, (T225, -1.0, 0.0))],
        "speeds": {"sphere_body_rx": 1.0, "sphere_body_ry": 2.0, "sphere_body_rz": 3.0,
                   "sphere_body_tx": 4.0, "sphere_body_ty": 5.0, "sphere_body_tz": 6.0},
        "expected": {"length": 2 * T225 + math.pi / 2,
                     "P": [math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0],
                     "Q": [math.cos(math.pi / 4), -math.sin(math.pi / 4), 0.0],
                     "lengthening_speed": 4 * 2 * math.cos(math.pi / 4),
                     "source": "testCableForceOnSingleObstacle; TestCableSpan_LengthDot WithSingleObstacle "
                               "(u = (1,2,3; 4,5,6) -> 4*2cos45)"},
    },
    {
        "name": "upstream_solver_optimum",
        "description": ("Simbody testSolverOptimum: unit sphere, hint (-1, 0, 0.1).  OpenSim's Scholz2015 "
                        "algorithm converges to the LONGEST stationary path (2 tan22.5 + pi); the "
                        "minimum_length cross-check (setAlgorithm via ctypes) gives 2 tan22.5 + pi/2."),
        "bodies": [free("sphere_body")],
        "obstacles": [{"body": 1, "kind": "sphere", "radius": 1.0, "xyz": (0, 0, 0), "p": (0, 0, 0),
                       "hint": (-1.0, 0.0, 0.1)}],
        "path": [("point", 0, (T225, 1.0, 0.0)), ("obstacle", 0), ("point", 0, (T225, -1.0, 0.0))],
        "expected": {"length": 2 * T225 + math.pi, "length_minimum_length": 2 * T225 + math.pi / 2,
                     "P": [0.0, 1.0, 0.0], "Q": [0.0, -1.0, 0.0],
                     "source": "Simbody TestCableSpan.cpp testSolverOptimum"},
    },
]

# Pin-jointed arm: humerus welded to ground, forearm on a pin (elbow) about the humerus z
# axis; a cylinder on the humerus next to the elbow axis; origin on the humerus,
# insertion on the (posterior) olecranon.  An extensor: L grows with flexion.
ARM = {
    "name": "arm_sweep",
    "description": ("humerus welded to ground, forearm on a pin joint (elbow_flexion about the humerus z "
                    "axis); cable from the humerus over a cylinder (axis parallel to and offset from the "
                    "pin axis) to the forearm; swept over elbow_flexion with constant speed"),
    "bodies": [
        {"name": "humerus", "joint": {"type": "weld", "parent": 0, "xyz": (0.1, -0.2, 0.15),
                                      "p": (0.05, 1.2, -0.1)}},
        {"name": "forearm", "joint": {"type": "pin", "parent": 1, "xyz": (0.0, 0.0, 0.0),
                                      "p": (0.0, -0.3, 0.0), "coordinate": "elbow_flexion",
                                      "default": 1.0}},
    ],
    "obstacles": [{"body": 1, "kind": "cylinder", "radius": 0.02, "xyz": (0, 0, 0),
                   "p": (-0.004, -0.3, 0.0), "hint": (-0.015, -0.012, 0.0)}],
    "path": [("point", 1, (-0.025, -0.12, 0.01)), ("obstacle", 0), ("point", 2, (-0.022, -0.025, -0.008))],
    "angles": np.linspace(0.25, 2.2, 27).tolist(),
    "speed": 1.5,
}


# --------------------------------------------------------------------------------------
def _tolist(x):
    return np.asarray(x, dtype=float).tolist()


def resolve_hints(osim, probe, spec):
    """Convert ground-point hints at the nominal configuration into surface-frame hints."""
    if not any("hint_G" in ob for ob in spec["obstacles"]):
        return spec
    tmp = dict(spec, obstacles=[dict(ob, hint=ob.get("hint", (0, 0, 0))) for ob in spec["obstacles"]],
               path=[el for el in spec["path"] if el[0] == "point"])
    B = oc.BuiltScenario(osim, tmp, probe=probe)
    s = B.fresh_state()
    B.set_state(s, nominal_q(spec, B))
    B.model.realizePosition(s)
    obs = []
    for ob in spec["obstacles"]:
        ob = dict(ob)
        if "hint_G" in ob:
            X = B.body_pose(s, ob["body"])
            R_GB, p_GB = np.array(X["rotation"]), np.array(X["translation"])
            R_GS = R_GB @ oc.rot_xyz(ob["xyz"])
            p_GS = p_GB + R_GB @ np.asarray(ob["p"], float)
            ob["hint"] = tuple(R_GS.T @ (np.asarray(ob.pop("hint_G"), float) - p_GS))
        obs.append(ob)
    return dict(spec, obstacles=obs)


def nominal_q(spec, B):
    q = {}
    for b in spec["bodies"]:
        if b["joint"]["type"] == "free":
            for c, v in zip(("rx", "ry", "rz", "tx", "ty", "tz"), b.get("nominal", [0] * 6)):
                q[f"{b['name']}_{c}"] = v
    return q


def describe(spec, B, probe):
    """Library-neutral description of a scenario (bodies, obstacles, path elements)."""
    bodies = [{"index": 0, "name": "ground"}]
    for i, b in enumerate(spec["bodies"]):
        j = b["joint"]
        d = {"index": i + 1, "name": b["name"]}
        if j["type"] == "free":
            d["opensim_joint"] = ("FreeJoint to ground (parent/child frames at the origins); coordinates "
                                  + ", ".join(f"{b['name']}_{c}" for c in ("rx", "ry", "rz", "tx", "ty", "tz")))
        elif j["type"] == "weld":
            d["opensim_joint"] = {"type": "weld", "parent": j["parent"],
                                  "X_PB": {"rotation": _tolist(oc.rot_xyz(j["xyz"])), "translation": _tolist(j["p"])}}
        else:
            d["opensim_joint"] = {"type": "pin", "parent": j["parent"], "coordinate": j["coordinate"],
                                  "X_PF": {"rotation": _tolist(oc.rot_xyz(j["xyz"])), "translation": _tolist(j["p"])},
                                  "X_BM": "identity (child body origin on the axis)",
                                  "axis": "z axis of F (= of M); positive coordinate = right-handed rotation of the "
                                          "child about it"}
        bodies.append(d)
    obstacles = []
    for k, ob in enumerate(spec["obstacles"]):
        R_BS, p_BS = probe.X_BS(B.path, k)  # what Simbody actually uses
        R_exp = oc.rot_xyz(ob["xyz"])
        assert np.allclose(R_BS, R_exp, atol=1e-14) and np.allclose(p_BS, ob["p"], atol=1e-14), (k, R_BS, R_exp)
        hint = probe.hint_S(B.path, k)
        assert np.allclose(hint, ob["hint"], atol=1e-14)
        surf = {"kind": ob["kind"]}
        for key in ("radius", "radii", "ring_radius", "tube_radius"):
            if key in ob:
                surf[key] = _tolist(ob[key])
        obstacles.append({"body": ob["body"], "surface": surf,
                          "X_BS": {"rotation": R_BS.tolist(), "translation": p_BS.tolist()},
                          "contact_hint": hint.tolist()})
    pts = [el for el in spec["path"] if el[0] == "point"]
    order, vi = [], 0
    for el in spec["path"]:
        if el[0] == "obstacle":
            order.append(f"obstacle:{el[1]}")
        elif el is pts[0]:
            order.append("origin")
        elif el is pts[-1]:
            order.append("termination")
        else:
            order.append(f"via:{vi}")
            vi += 1
    return {
        "bodies": bodies,
        "origin": {"body": pts[0][1], "station": _tolist(pts[0][2])},
        "termination": {"body": pts[-1][1], "station": _tolist(pts[-1][2])},
        "via_points": [{"body": p[1], "station": _tolist(p[2])} for p in pts[1:-1]],
        "obstacles": obstacles,
        "path_order": order,
    }


def solve_config(B, probe, spec, q, u, algorithm_check=None):
    """Cold solve at (q, u); returns the record of one configuration."""
    s = B.fresh_state()
    B.set_state(s, q, u)
    B.model.realizeVelocity(s)
    n_body = len(spec["bodies"]) + 1
    rec = {
        "q": {k: float(v) for k, v in q.items()},
        "u": {k: float(v) for k, v in u.items()},
        "body_poses": [B.body_pose(s, i) for i in range(n_body)],
        "body_velocities": [B.body_velocity(s, i) for i in range(n_body)],
        "length": B.path.getLength(s),
        "lengthening_speed": B.path.getLengtheningSpeed(s),
    }
    rec.update(probe.results(B.path, s, len(spec["obstacles"])))
    rec["converged"] = rec["smoothness"] <= probe.settings(B.path)["smoothness_tolerance"]
    # finite-difference check of the lengthening speed along qdot (cold solves, central)
    qdot = np.array([s.getQDot().get(i) for i in range(s.getNQ())])
    q0 = np.array([s.getQ().get(i) for i in range(s.getNQ())])
    tol = probe.settings(B.path)["smoothness_tolerance"]
    for h in (1e-4, 3e-5, 3e-4, 1e-5):  # skip steps where a perturbed cold solve did not converge
        Ls = []
        for sign in (1, -1):
            s2 = B.fresh_state()
            qv = s2.updQ()
            for i in range(len(q0)):
                qv.set(i, float(q0[i] + sign * h * qdot[i]))
            B.model.realizePosition(s2)
            if probe.results(B.path, s2, 0)["smoothness"] > tol:
                break
            Ls.append(B.path.getLength(s2))
        if len(Ls) == 2:
            break
    rec["_fd_lengthening_speed"] = (Ls[0] - Ls[1]) / (2 * h)
    if algorithm_check is not None:
        s3 = algorithm_check.fresh_state()
        algorithm_check.set_state(s3, q, u)
        algorithm_check.model.realizePosition(s3)
        rec["length_minimum_length"] = algorithm_check.path.getLength(s3)
        rec["num_iterations_minimum_length"] = probe.results(algorithm_check.path, s3, 0)["num_iterations"]
    return rec


def settings_record(probe, B):
    st = probe.settings(B.path)
    return {
        "algorithm": "scholz2015",
        "smoothness_tolerance": st["smoothness_tolerance"],
        "curve_segment_accuracy": st["curve_segment_accuracy"],
        "max_iterations": st["max_iterations"],
        "use_warm_start": False,
        "warm_start_note": ("Simbody 3.9 in the OpenSim 4.6 wheel has no warm-start toggle (always warm); every "
                            "configuration here is solved from a state whose Instance-stage cache was "
                            "invalidated, i.e. from the contact hints, equivalent to use_warm_start = false"),
    }


def run_scenario(osim, probe, spec, rng):
    spec = resolve_hints(osim, probe, spec)
    B = oc.BuiltScenario(osim, spec, probe=probe)
    Bm = oc.BuiltScenario(osim, spec, algorithm="minimum_length", probe=probe)
    out = {"name": spec["name"], "description": spec["description"], "settings": settings_record(probe, B)}
    out.update(describe(spec, B, probe))
    q_nom = nominal_q(spec, B)
    configs = [q_nom]
    if "perturb" in spec:
        dr, dt = spec["perturb"]
        for _ in range(3):
            q = {}
            for k, v in q_nom.items():
                d = dr if k[-2] == "r" else dt
                q[k] = v + rng.uniform(-d, d)
            configs.append(q)
    recs = []
    for q in configs:
        if "speeds" in spec:
            u = dict(spec["speeds"])
        else:
            u = {k: rng.uniform(-1, 1) for k in B.coord_names}
        recs.append(solve_config(B, probe, spec, q, u, Bm))
    out["configurations"] = recs
    if "expected" in spec:
        out["expected"] = spec["expected"]
    return out


def run_arm(osim, probe, spec):
    spec = resolve_hints(osim, probe, spec)
    B = oc.BuiltScenario(osim, spec, probe=probe)
    Bm = oc.BuiltScenario(osim, spec, algorithm="minimum_length", probe=probe)
    out = {"name": spec["name"], "description": spec["description"], "settings": settings_record(probe, B)}
    out.update(describe(spec, B, probe))
    coord = B.coords["elbow_flexion"]
    recs = []
    for th in spec["angles"]:
        q, u = {"elbow_flexion": th}, {"elbow_flexion": spec["speed"]}
        rec = solve_config(B, probe, spec, q, u, Bm)
        s = B.fresh_state()
        B.set_state(s, q, u)
        B.model.realizeVelocity(s)
        rec["moment_arm"] = B.path.computeMomentArm(s, coord)
        # joint axis/point in ground: z axis of the pin frame F on the humerus
        X_GH = rec["body_poses"][1]
        R_GH, p_GH = np.array(X_GH["rotation"]), np.array(X_GH["translation"])
        j = spec["bodies"][1]["joint"]
        R_GF = R_GH @ oc.rot_xyz(j["xyz"])
        rec["joint_axis_in_ground"] = R_GF[:, 2].tolist()
        rec["joint_point_in_ground"] = (p_GH + R_GH @ np.asarray(j["p"], float)).tolist()
        h = 1e-4
        Ls = []
        for sign in (1, -1):
            s2 = B.fresh_state()
            B.set_state(s2, {"elbow_flexion": th + sign * h})
            B.model.realizePosition(s2)
            Ls.append(B.path.getLength(s2))
        rec["_fd_moment_arm"] = -(Ls[0] - Ls[1]) / (2 * h)
        recs.append(rec)
    out["joint"] = {"type": "pin", "coordinate": "elbow_flexion", "parent_body": 1, "child_body": 2,
                    "speed": spec["speed"],
                    "moment_arm_definition": "OpenSim computeMomentArm = -dL/d(elbow_flexion)"}
    out["configurations"] = recs
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    osim = oc.load_opensim()
    if osim is None:
        sys.exit("opensim is not installed: pip install opensim")
    osim.Logger.setLevelString("error")
    probe = oc.CableProbe(osim)
    rng = np.random.default_rng(20260801)
    t0 = time.perf_counter()
    scenarios = [run_scenario(osim, probe, spec, rng) for spec in SCENARIOS]
    scenarios.append(run_arm(osim, probe, ARM))

    # checks + strip private fields
    problems = []
    for sc in scenarios:
        for i, c in enumerate(sc["configurations"]):
            fd = c.pop("_fd_lengthening_speed")
            if abs(fd - c["lengthening_speed"]) > 1e-5 * max(1, abs(fd)):
                problems.append(f"{sc['name']}[{i}] lengthening speed {c['lengthening_speed']} vs fd {fd}")
            if "_fd_moment_arm" in c:
                fd = c.pop("_fd_moment_arm")
                if abs(fd - c["moment_arm"]) > 1e-6:
                    problems.append(f"{sc['name']}[{i}] moment arm {c['moment_arm']} vs fd {fd}")
            if not c["converged"]:
                problems.append(f"{sc['name']}[{i}] not converged (smoothness {c['smoothness']})")
            if not sc["name"].startswith("upstream_solver") and abs(c["length_minimum_length"] - c["length"]) > 1e-7:
                problems.append(f"{sc['name']}[{i}] minimum_length {c['length_minimum_length']} vs {c['length']}")
            if not all(o["in_contact"] for o in c["obstacles"]):
                problems.append(f"{sc['name']}[{i}] not all obstacles in contact")

    doc = {
        "schema_version": 1,
        "generator": "tests/reference/generate_cable_opensim.py",
        "opensim_version": osim.GetVersionAndDate(),
        "simbody": "SimTK 3.9 libraries bundled in the opensim 4.6 wheel",
        "units": "SI (metres, radians, seconds); lengthening speed in m/s; moment arm in m",
        "conventions": {
            "body_index": "0 = ground, then the bodies in the order of each scenario's 'bodies' list",
            "transform": "{'rotation': R (3x3, row-major nested lists), 'translation': p}: maps frame-local "
                         "coordinates to the parent/ground: x_G = R x_B + p",
            "body_poses": "X_GB of every body (ground included) at that configuration, from OpenSim's state",
            "body_velocities": "[angular velocity, linear velocity of the body ORIGIN], both in ground",
            "surfaces": "Simbody ContactGeometry in the surface frame S: sphere |x| = r; cylinder x^2+y^2 = r^2 "
                        "(axis = S z, infinite); ellipsoid sum (x_i/r_i)^2 = 1; torus ring radius R, tube radius "
                        "a, axis = S z -- identical to jaxwrap's conventions, so X_BS needs no conversion",
            "X_BS": "surface frame in the body frame, read back from SimTK::CableSpan "
                    "(OpenSim ContactGeometry location + body-fixed XYZ orientation)",
            "contact_hint": "point in the surface frame S",
            "path_order": "order of origin, obstacles, via points and termination along the cable "
                          "(jaxwrap: add_obstacle / add_via_point in this order)",
            "frame_P/frame_Q": "Darboux frames at first/last contact in ground: rotation columns = "
                               "(tangent, outward normal, binormal); translation = contact point",
            "num_iterations": "SimTK::CableSpan::getNumSolverIterations (corrections applied, summed over cable "
                              "segments)",
            "smoothness": "SimTK::CableSpan::getSmoothness (max path error, rad)",
            "length_minimum_length": "cross-check: the same cold solve with CableSpanAlgorithm::MinimumLength "
                                     "(set via ctypes; OpenSim itself always uses Scholz2015)",
            "arc_length/P/Q/frames": "null when the obstacle is not in contact",
        },
        "scenarios": scenarios,
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    dt = time.perf_counter() - t0
    for sc in scenarios:
        c = sc["configurations"][0]
        print(f"{sc['name']:32s} n_cfg={len(sc['configurations']):2d} L0={c['length']:.9f} "
              f"Ldot0={c['lengthening_speed']:+.6f} it0={c['num_iterations']} "
              f"contact={[o['in_contact'] for o in c['obstacles']]}")
    print(f"wrote {args.out} in {dt:.1f} s")
    if problems:
        print("PROBLEMS:\n  " + "\n  ".join(problems))
    return 0


if __name__ == "__main__":
    sys.exit(main())
