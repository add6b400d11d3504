"""Shared OpenSim helpers for the cable reference generator and the OpenSim benchmark.

Builds OpenSim models with a ``Scholz2015GeometryPath`` (OpenSim 4.6, which wraps
Simbody's ``CableSpan``) from a *library-neutral* scenario description, and reads the
underlying ``SimTK::CableSpan`` (contact flags, contact frames, arc lengths, solver
iterations, smoothness and settings) through ``ctypes``: the OpenSim 4.6 Python bindings
expose only ``getLength``/``getLengtheningSpeed``/``computeMomentArm`` of the path, while
``OpenSim::Scholz2015GeometryPath::getCableSpan()`` and the ``SimTK::CableSpan`` getters
are exported C++ symbols of the bundled shared libraries.

Importing this module never requires OpenSim; :func:`load_opensim` returns ``None`` when
it is missing.  Nothing here is used by CI.

Scenario description (plain dicts; lengths in metres, angles in radians):

``bodies``: list (body index = position + 1; index 0 is ground) of
    ``{"name", "joint": {"type": "free"}}``                      -- FreeJoint to ground, parent/child
                                                                     frames at the origins; coords
                                                                     ``<name>_rx, _ry, _rz, _tx, _ty, _tz``
    ``{"name", "joint": {"type": "weld", "parent", "xyz", "p"}}`` -- welded to ``parent`` at pose
                                                                     (Rx Ry Rz(xyz), p) in the parent
    ``{"name", "joint": {"type": "pin", "parent", "xyz", "p", "coordinate"}}``
                                                                  -- PinJoint: joint frame in parent =
                                                                     (Rx Ry Rz(xyz), p); child frame =
                                                                     child body origin; rotation about
                                                                     the joint frame's z axis
``obstacles``: list of ``{"body", "kind", params..., "xyz", "p", "hint"}``; X_BS =
    (Rx(x) Ry(y) Rz(z), p) -- OpenSim ``ContactGeometry`` location/orientation (body-fixed
    XYZ Euler); ``hint`` is the contact hint in the surface frame S.
``path``: ordered list of ``("point", body, station)`` / ``("obstacle", k)``; the first and
    last entries are points (origin, termination); inner points are via points.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np


def load_opensim():
    """Return the ``opensim`` module or ``None`` when it is not installed."""
    try:
        import opensim  # noqa: PLC0415
    except Exception:  # pragma: no cover - depends on the environment
        return None
    return opensim


# --------------------------------------------------------------------------------------
# small numpy helpers
# --------------------------------------------------------------------------------------
def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1.0, 0], [-s, 0, c]])


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def rot_xyz(xyz):
    """OpenSim/Simbody body-fixed X-Y-Z Euler angles: R = Rx(x) Ry(y) Rz(z)."""
    return rot_x(xyz[0]) @ rot_y(xyz[1]) @ rot_z(xyz[2])


# --------------------------------------------------------------------------------------
# ctypes access to SimTK::CableSpan
# --------------------------------------------------------------------------------------
_SYMS = {
    "getCableSpan": ("sim", "_ZNK7OpenSim22Scholz2015GeometryPath12getCableSpanEv"),
    "updCableSpan": ("sim", "_ZN7OpenSim22Scholz2015GeometryPath12updCableSpanEv"),
    "iters": ("sb", "_ZNK5SimTK9CableSpan22getNumSolverIterationsERKNS_5StateE"),
    "smooth": ("sb", "_ZNK5SimTK9CableSpan13getSmoothnessERKNS_5StateE"),
    "tol": ("sb", "_ZNK5SimTK9CableSpan22getSmoothnessToleranceEv"),
    "acc": ("sb", "_ZNK5SimTK9CableSpan23getCurveSegmentAccuracyEv"),
    "maxit": ("sb", "_ZNK5SimTK9CableSpan22getSolverMaxIterationsEv"),
    "contact": ("sb", "_ZNK5SimTK9CableSpan23isInContactWithObstacleERKNS_5StateENS_22CableSpanObstacleIndexE"),
    "arc": ("sb", "_ZNK5SimTK9CableSpan25calcCurveSegmentArcLengthERKNS_5StateENS_22CableSpanObstacleIndexE"),
    "frameP": (
        "sb",
        "_ZNK5SimTK9CableSpan34calcCurveSegmentInitialFrenetFrameERKNS_5StateENS_22CableSpanObstacleIndexE",
    ),
    "frameQ": ("sb", "_ZNK5SimTK9CableSpan32calcCurveSegmentFinalFrenetFrameERKNS_5StateENS_22CableSpanObstacleIndexE"),
    "XBS": ("sb", "_ZNK5SimTK9CableSpan33getObstacleTransformSurfaceToBodyENS_22CableSpanObstacleIndexE"),
    "hintS": ("sb", "_ZNK5SimTK9CableSpan27getObstacleContactPointHintENS_22CableSpanObstacleIndexE"),
    "setAlgorithm": ("sb", "_ZN5SimTK9CableSpan12setAlgorithmENS_18CableSpanAlgorithmE"),
}

ALGORITHMS = {"scholz2015": 0, "minimum_length": 1}  # enum class CableSpanAlgorithm


class CableProbe:
    """Reads a ``SimTK::CableSpan`` behind an OpenSim ``Scholz2015GeometryPath``."""

    def __init__(self, osim):
        d = os.path.dirname(osim.__file__)
        libs = {
            "sim": ctypes.CDLL(os.path.join(d, "libosimSimulation.so")),
            "sb": ctypes.CDLL(os.path.join(d, "libSimTKsimbody.so")),
        }
        vp, ci, cd, cb = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_bool
        sig = {
            "getCableSpan": (vp, [vp]),
            "updCableSpan": (vp, [vp]),
            "iters": (ci, [vp, vp]),
            "smooth": (cd, [vp, vp]),
            "tol": (cd, [vp]),
            "acc": (cd, [vp]),
            "maxit": (ci, [vp]),
            "contact": (cb, [vp, vp, ci]),
            "arc": (cd, [vp, vp, ci]),
            # Transform returned by value: hidden result pointer first (Itanium ABI)
            "frameP": (vp, [vp, vp, vp, ci]),
            "frameQ": (vp, [vp, vp, vp, ci]),
            # const Transform&
            "XBS": (vp, [vp, ci]),
            # Vec3 by value (hidden result pointer)
            "hintS": (vp, [vp, vp, ci]),
            "setAlgorithm": (None, [vp, ci]),
        }
        self.f = {}
        for key, (lib, name) in _SYMS.items():
            fn = getattr(libs[lib], name)
            fn.restype, fn.argtypes = sig[key]
            self.f[key] = fn

    # pointers -------------------------------------------------------------------------
    def span(self, path):
        return self.f["getCableSpan"](int(path.this))

    @staticmethod
    def _transform(buf):
        a = np.array(buf[:12], dtype=float)
        rot = a[:9].reshape(3, 3).T  # SimTK Mat33 is stored column by column
        return rot, a[9:12].copy()

    # settings -------------------------------------------------------------------------
    def settings(self, path):
        cs = self.span(path)
        return {
            "smoothness_tolerance": self.f["tol"](cs),
            "curve_segment_accuracy": self.f["acc"](cs),
            "max_iterations": self.f["maxit"](cs),
        }

    def set_algorithm(self, path, algorithm):
        self.f["setAlgorithm"](self.f["updCableSpan"](int(path.this)), ALGORITHMS[algorithm])

    def X_BS(self, path, k):
        ptr = self.f["XBS"](self.span(path), k)
        return self._transform((ctypes.c_double * 12).from_address(ptr))

    def hint_S(self, path, k):
        buf = (ctypes.c_double * 3)()
        self.f["hintS"](ctypes.addressof(buf), self.span(path), k)
        return np.array(buf[:])

    # per-state results (state must be realized to Position) ---------------------------
    def results(self, path, state, n_obstacles):
        cs, st = self.span(path), int(state.this)
        out = {
            "num_iterations": int(self.f["iters"](cs, st)),
            "smoothness": float(self.f["smooth"](cs, st)),
            "obstacles": [],
        }
        buf = (ctypes.c_double * 12)()
        for k in range(n_obstacles):
            rec = {"in_contact": bool(self.f["contact"](cs, st, k))}
            if rec["in_contact"]:
                rec["arc_length"] = float(self.f["arc"](cs, st, k))
                self.f["frameP"](ctypes.addressof(buf), cs, st, k)
                RP, pP = self._transform(buf)
                self.f["frameQ"](ctypes.addressof(buf), cs, st, k)
                RQ, pQ = self._transform(buf)
                rec["P"] = pP.tolist()
                rec["Q"] = pQ.tolist()
                rec["frame_P"] = {"rotation": RP.tolist(), "translation": pP.tolist()}
                rec["frame_Q"] = {"rotation": RQ.tolist(), "translation": pQ.tolist()}
            else:
                rec["arc_length"] = None
                rec["P"] = rec["Q"] = rec["frame_P"] = rec["frame_Q"] = None
            out["obstacles"].append(rec)
        return out


# --------------------------------------------------------------------------------------
# model building
# --------------------------------------------------------------------------------------
def _vec3(osim, v):
    return osim.Vec3(float(v[0]), float(v[1]), float(v[2]))


class BuiltScenario:
    """An OpenSim model built from a scenario description."""

    def __init__(self, osim, spec, algorithm=None, probe=None):
        self.osim, self.spec = osim, spec
        m = osim.Model()
        m.setName(spec["name"])
        m.setGravity(osim.Vec3(0, 0, 0))
        ground = m.getGround()
        frames = [ground]
        self.bodies, self.joints = [], []
        for b in spec["bodies"]:
            body = osim.Body(b["name"], 1.0, osim.Vec3(0), osim.Inertia(0.1, 0.1, 0.1))
            j = b["joint"]
            parent = frames[j.get("parent", 0)]
            if j["type"] == "free":
                joint = osim.FreeJoint(b["name"] + "_joint", parent, body)
            elif j["type"] == "weld":
                joint = osim.WeldJoint(
                    b["name"] + "_joint",
                    parent,
                    _vec3(osim, j["p"]),
                    _vec3(osim, j["xyz"]),
                    body,
                    osim.Vec3(0),
                    osim.Vec3(0),
                )
            elif j["type"] == "pin":
                joint = osim.PinJoint(
                    b["name"] + "_joint",
                    parent,
                    _vec3(osim, j["p"]),
                    _vec3(osim, j["xyz"]),
                    body,
                    osim.Vec3(0),
                    osim.Vec3(0),
                )
                joint.updCoordinate().setName(j["coordinate"])
            else:  # pragma: no cover
                raise ValueError(j["type"])
            if j["type"] == "free":
                nominal = b.get("nominal", [0.0] * 6)
                for i, c in enumerate(("rx", "ry", "rz", "tx", "ty", "tz")):
                    joint.upd_coordinates(i).setName(f"{b['name']}_{c}")
                    joint.upd_coordinates(i).setDefaultValue(float(nominal[i]))
            elif j["type"] == "pin" and "default" in j:
                joint.updCoordinate().setDefaultValue(float(j["default"]))
            m.addBody(body)
            m.addJoint(joint)
            frames.append(body)
            self.bodies.append(body)
            self.joints.append(joint)

        self.geoms = []
        for k, ob in enumerate(spec["obstacles"]):
            frame = frames[ob["body"]]
            loc, ori = _vec3(osim, ob["p"]), _vec3(osim, ob.get("xyz", (0, 0, 0)))
            kind = ob["kind"]
            if kind == "sphere":
                g = osim.ContactSphere()
                g.setRadius(float(ob["radius"]))
            elif kind == "cylinder":
                g = osim.ContactCylinder()
                g.setRadius(float(ob["radius"]))
            elif kind == "ellipsoid":
                g = osim.ContactEllipsoid()
                g.setRadii(_vec3(osim, ob["radii"]))
            elif kind == "torus":
                g = osim.ContactTorus()
                g.setTorusRadius(float(ob["ring_radius"]))
                g.setTubeRadius(float(ob["tube_radius"]))
            else:  # pragma: no cover
                raise ValueError(kind)
            g.setFrame(frame)
            g.set_location(loc)
            g.set_orientation(ori)
            g.setName(f"obstacle{k}_{kind}")
            m.addContactGeometry(g)
            self.geoms.append(g)

        act = osim.PathActuator()
        act.setName("cable")
        act.set_path(osim.Scholz2015GeometryPath())
        path = osim.Scholz2015GeometryPath.safeDownCast(act.updPath())
        for el in spec["path"]:
            if el[0] == "point":
                path.appendPathPoint(frames[el[1]], _vec3(osim, el[2]))
            else:
                ob = spec["obstacles"][el[1]]
                path.appendObstacle(self.geoms[el[1]], _vec3(osim, ob["hint"]))
        m.addForce(act)
        self.act = act
        self.model = m

        m.buildSystem()
        self.path = osim.Scholz2015GeometryPath.safeDownCast(act.getPath())
        if algorithm is not None:
            probe.set_algorithm(self.path, algorithm)
        # The default state has never been realized past Instance: copying it gives a
        # solve that starts from the contact hints (no warm start).
        self.default_state = osim.State(m.initializeState())
        self.coords = {c.getName(): c for c in m.getCoordinateSet()}
        self.coord_names = list(self.coords)

    # ------------------------------------------------------------------------------
    def fresh_state(self):
        """A copy of the default state whose cable solve starts from the contact hints.

        Simbody 3.9 (bundled with OpenSim 4.6) always warm-starts: the last solution is an
        auto-update discrete variable whose update value depends on Stage::Instance.
        Invalidating Instance drops it, so the next realizePosition starts from the hints
        (equivalent to ``use_warm_start = false`` of Simbody PR #858 / OpenSim PR #4342).
        """
        s = self.osim.State(self.default_state)
        s.invalidateAllCacheAtOrAbove(self.osim.Stage(self.osim.Stage.Instance))
        return s

    def set_state(self, s, q=None, u=None):
        for name, v in (q or {}).items():
            self.coords[name].setValue(s, float(v), False)
        for name, v in (u or {}).items():
            self.coords[name].setSpeedValue(s, float(v))

    def body_pose(self, s, bi):
        frame = self.model.getGround() if bi == 0 else self.bodies[bi - 1]
        X = frame.getTransformInGround(s)
        M = X.R().asMat33()
        R = [[M.get(i, j) for j in range(3)] for i in range(3)]
        p = [X.p().get(i) for i in range(3)]
        return {"rotation": R, "translation": p}

    def body_velocity(self, s, bi):
        if bi == 0:
            return [[0.0] * 3, [0.0] * 3]
        V = self.bodies[bi - 1].getVelocityInGround(s)
        return [[V.get(0).get(i) for i in range(3)], [V.get(1).get(i) for i in range(3)]]


# --------------------------------------------------------------------------------------
# OpenSim side of benchmarks/cable.py
# --------------------------------------------------------------------------------------
_T225 = float(np.tan(np.pi / 8))

#: Benchmark scenarios, library-neutral: every obstacle on ground (body 0), origin on
#: ground, termination at ``station`` on body 1 whose ground pose is a pure translation
#: ``termination_nominal + U(-box, box)^3`` (random per evaluation).  ``xyz`` is the
#: body-fixed XYZ Euler orientation of S in ground (R = Rx Ry Rz), ``p`` its origin, ``hint``
#: the contact hint in S.  "chain" is Simbody's testSimpleCable / ExampleCableSpan
#: 4-obstacle set-up (torus, ellipsoid, torus, cylinder).
BENCH_SCENARIOS = {
    "sphere": {
        "obstacles": [{"kind": "sphere", "radius": 1.0, "xyz": (0, 0, 0), "p": (0, 0, 0), "hint": (0, 1, 0)}],
        "origin": (-2.0, 0.3, 0.1),
        "termination_nominal": (2.0, 0.2, -0.1),
        "box": 0.2,
    },
    "cylinder": {
        "obstacles": [{"kind": "cylinder", "radius": 1.0, "xyz": (0.3, 0, 0), "p": (0, 0, 0), "hint": (0, 1, 0)}],
        "origin": (-2.0, 0.3, 0.1),
        "termination_nominal": (2.0, 0.2, -0.1),
        "box": 0.2,
    },
    "ellipsoid": {
        "obstacles": [
            {"kind": "ellipsoid", "radii": (1.2, 0.7, 0.9), "xyz": (0, 0, 0.2), "p": (0, 0, 0), "hint": (0, 0.7, 0)}
        ],
        "origin": (-2.0, 0.3, 0.1),
        "termination_nominal": (2.0, 0.2, -0.1),
        "box": 0.2,
    },
    "torus": {
        "obstacles": [
            {
                "kind": "torus",
                "ring_radius": 0.6,
                "tube_radius": 0.4,
                "xyz": (0, 0, 0),
                "p": (0, 0, 0),
                "hint": (1.0, 0, 0),
            }
        ],
        "origin": (0.8, -1.15, 0.04),
        "termination_nominal": (0.8, 1.15, -0.04),
        "box": 0.05,
    },
    "chain": {
        "obstacles": [
            {
                "kind": "torus",
                "ring_radius": 10.0,
                "tube_radius": 1.0,
                "xyz": (0, np.pi / 2, 0),
                "p": (1, 11, 0),
                "hint": (0, -9, 0),
            },
            {"kind": "ellipsoid", "radii": (1, 1, 6), "xyz": (0, 0, 0), "p": (4.5, 1, 0), "hint": (1, 1, 0.5)},
            {
                "kind": "torus",
                "ring_radius": 10.0,
                "tube_radius": 1.5,
                "xyz": (0, np.pi / 2, 0),
                "p": (4, -12, 0),
                "hint": (0, 1, 0),
            },
            {"kind": "cylinder", "radius": 2.0, "xyz": (0, 0, 0), "p": (-2, -1.5, 0), "hint": (0, -1, 0)},
        ],
        "origin": (0.0, 0.0, 0.0),
        "termination_nominal": (-4.0, 0.0, 0.0),
        "box": 0.1,
    },
}


def _bench_spec(name, sc):
    obstacles = [dict(ob, body=0) for ob in sc["obstacles"]]
    path = [("point", 0, sc["origin"])] + [("obstacle", k) for k in range(len(obstacles))]
    path.append(("point", 1, (0.0, 0.0, 0.0)))
    nominal = [0.0, 0.0, 0.0] + list(sc["termination_nominal"])
    return {
        "name": name,
        "bodies": [{"name": "end", "joint": {"type": "free"}, "nominal": nominal}],
        "obstacles": obstacles,
        "path": path,
    }


def opensim_cable_timings(n_evals=2000, scenarios=None, seed=0, modes=("cold", "warm")):
    """Median seconds per OpenSim ``Scholz2015GeometryPath`` length evaluation.

    For each scenario of :data:`BENCH_SCENARIOS` the termination body is moved to a fresh
    random position before every evaluation (so the path is re-solved each call).  What is
    timed per evaluation: setting the 3 translation coordinates, ``Model.realizePosition``
    (which solves the cable) and ``getLength``, i.e. Python-call overhead included (a few
    microseconds).  "cold": each evaluation starts from a copy of the default state with its
    Instance cache invalidated (solve from the contact hints; the copy is made outside the
    timer) -- OpenSim's documented default ``use_warm_start = false``.  "warm": one state is
    reused, so Simbody starts from the previous solution (the bundled Simbody 3.9 always
    warm-starts; there is no toggle in OpenSim 4.6).  OpenSim settings: algorithm Scholz2015,
    smoothness tolerance 1e-5, curve accuracy 1e-10, max 50 iterations.

    Returns ``{scenario: {mode: {"median_s", "mean_iterations", "converged_fraction",
    "n_evals"}}}``, or ``None`` when opensim is not installed.
    """
    osim = load_opensim()
    if osim is None:
        return None
    import time  # noqa: PLC0415

    osim.Logger.setLevelString("error")
    probe = CableProbe(osim)
    rng = np.random.default_rng(seed)
    out = {}
    for name in scenarios or list(BENCH_SCENARIOS):
        sc = BENCH_SCENARIOS[name]
        B = BuiltScenario(osim, _bench_spec(name, sc), probe=probe)
        tol = probe.settings(B.path)["smoothness_tolerance"]
        coords = [B.coords[f"end_t{c}"] for c in "xyz"]
        offsets = np.asarray(sc["termination_nominal"]) + rng.uniform(-sc["box"], sc["box"], size=(n_evals, 3))
        res = {}
        for mode in modes:
            times, iters, conv = np.empty(n_evals), np.empty(n_evals), np.empty(n_evals, bool)
            s = B.fresh_state()
            for i in range(n_evals):
                if mode == "cold":
                    s = B.fresh_state()
                x, y, z = (float(v) for v in offsets[i])
                t0 = time.perf_counter()
                coords[0].setValue(s, x, False)
                coords[1].setValue(s, y, False)
                coords[2].setValue(s, z, False)
                B.model.realizePosition(s)
                B.path.getLength(s)
                times[i] = time.perf_counter() - t0
                r = probe.results(B.path, s, 0)
                iters[i], conv[i] = r["num_iterations"], r["smoothness"] <= tol
            res[mode] = {
                "median_s": float(np.median(times)),
                "mean_iterations": float(iters.mean()),
                "converged_fraction": float(conv.mean()),
                "n_evals": int(n_evals),
            }
        out[name] = res
    return out


if __name__ == "__main__":  # pragma: no cover
    import json as _json

    print(_json.dumps(opensim_cable_timings(500), indent=1))
