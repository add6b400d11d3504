"""Regenerate the OpenSim fixtures: ``osim_arm26.npz``, ``osim_gait9dof.npz``, and the models
``scholz_obstacles.osim`` and ``joints.osim`` with ``osim_scholz.npz`` and ``osim_joints.npz``.

``arm26.osim`` and ``gait9dof18musc.osim`` come from the osim-rl source distribution
(``osim/models/``, github.com/stanfordnmbl/osim-rl), CC BY 3.0: see
``tests/data/osim/README.md``.

With OpenSim 4.6 (``pip install opensim``) the script stores, per model, over its
configurations (arm26: an elbow sweep at three shoulder angles and random
configurations; gait: knee sweeps through every conditional path point's switch and
random configurations, locked coordinates read back; Scholz2015 model: an elbow sweep
and random configurations, each solved cold from the contact hints; joints: random):

- ``q`` (configurations, coordinates), in OpenSim's coordinate order;
- ``body_R``, ``body_p``: every body's pose in ground (``getTransformInGround``);
- ``lengths`` (configurations, paths): every path's length (``getLength``);
- ``moment_arms`` (configurations, paths, coordinates): ``computeMomentArm``, NaN where
  OpenSim throws;
- Scholz2015 model only: ``length_differences``, ``-dL/dq`` by central differences of
  OpenSim's lengths (h = 1e-6).

    python tests/reference/generate_osim_fixtures.py

Takes about 20 seconds. CI reads the npz; the live cross-check in the tests needs only the
``opensim`` package.
"""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "data", "osim", "arm26.osim")
OUT = os.path.join(HERE, "osim_arm26.npz")
GAIT = os.path.join(HERE, "..", "data", "osim", "gait9dof18musc.osim")
GAIT_OUT = os.path.join(HERE, "osim_gait9dof.npz")
SCHOLZ = os.path.join(HERE, "..", "data", "osim", "scholz_obstacles.osim")
SCHOLZ_OUT = os.path.join(HERE, "osim_scholz.npz")
JOINTS = os.path.join(HERE, "..", "data", "osim", "joints.osim")
JOINTS_OUT = os.path.join(HERE, "osim_joints.npz")


def configurations(coordinate_set, seed: int = 0) -> np.ndarray:
    lo = np.array([coordinate_set.get(i).getRangeMin() for i in range(coordinate_set.getSize())])
    hi = np.array([coordinate_set.get(i).getRangeMax() for i in range(coordinate_set.getSize())])
    sweep = [(s, e) for s in np.linspace(lo[0], hi[0], 3) for e in np.linspace(lo[1], hi[1], 25)]
    rng = np.random.default_rng(seed)
    return np.concatenate([np.array(sweep), rng.uniform(lo, hi, size=(50, len(lo)))])


def locked_aware(model, state, q):
    """Set ``q`` and read back what OpenSim holds (a locked coordinate keeps its value)."""
    coordinates = model.getCoordinateSet()
    for i in range(coordinates.getSize()):
        coordinates.get(i).setValue(state, float(q[i]), False)
    return np.array([coordinates.get(i).getValue(state) for i in range(coordinates.getSize())])


def gait_configurations(coordinate_set, seed: int = 0) -> np.ndarray:
    """Right and left knee sweeps over their whole range (through every conditional path
    point's switch) at three hip angles, then random configurations."""
    names = [coordinate_set.get(i).getName() for i in range(coordinate_set.getSize())]
    lo = np.array([coordinate_set.get(i).getRangeMin() for i in range(coordinate_set.getSize())])
    hi = np.array([coordinate_set.get(i).getRangeMax() for i in range(coordinate_set.getSize())])
    default = np.array([coordinate_set.get(i).getDefaultValue() for i in range(coordinate_set.getSize())])
    rows = []
    for side in "rl":
        knee, hip, ankle = (names.index(f"{j}_{side}") for j in ("knee_angle", "hip_flexion", "ankle_angle"))
        for h in np.linspace(lo[hip], hi[hip], 3):
            for k in np.linspace(lo[knee], hi[knee], 41):
                q = default.copy()
                q[hip], q[knee], q[ankle] = h, k, 0.3 * hi[ankle]
                rows.append(q)
    rng = np.random.default_rng(seed)
    return np.concatenate([np.array(rows), rng.uniform(lo, hi, size=(60, len(lo)))])


def path_forces(model):
    """The model's path actuators (muscles included), in force-set order."""
    import opensim

    forces = model.getForceSet()
    casts = [opensim.PathActuator.safeDownCast(forces.get(i)) for i in range(forces.getSize())]
    return [cast for cast in casts if cast is not None]


def evaluate_paths(model, state, q):
    """Body poses, path lengths and moment arms of every path actuator at ``q``."""
    q = locked_aware(model, state, q)
    model.realizePosition(state)
    coordinates = model.getCoordinateSet()
    bodies = model.getBodySet()
    R, p = [], []
    for b in range(bodies.getSize()):
        X = bodies.get(b).getTransformInGround(state)
        m = X.R().asMat33()
        R.append([[m.get(i, j) for j in range(3)] for i in range(3)])
        p.append([X.p().get(i) for i in range(3)])
    actuators = path_forces(model)
    lengths = [a.getLength(state) for a in actuators]
    arms = [[moment_arm(a, state, coordinates.get(i)) for i in range(coordinates.getSize())] for a in actuators]
    return q, np.array(R), np.array(p), np.array(lengths), np.array(arms)


def moment_arm(actuator, state, coordinate) -> float:
    """OpenSim's moment arm, NaN where its solver throws (Simbody's implicit geodesic
    shooting on a torus can exceed its 10,000-step limit while OpenSim's moment-arm
    solver realizes the perturbed state; the tests report how often)."""
    try:
        return actuator.getPath().computeMomentArm(state, coordinate)
    except RuntimeError:
        return float("nan")


def length_differences(model, qs, h: float = 1e-6) -> np.ndarray:
    """-dL/dq of every path by central differences of OpenSim's lengths, each length
    solved cold (from the contact hints), (configurations, paths, coordinates)."""
    out = []
    for q in qs:
        rows = []
        for i in range(len(q)):
            lengths = []
            for step in (h, -h):
                state = model.initSystem()
                shifted = np.array(q, dtype=float)
                shifted[i] += step
                locked_aware(model, state, shifted)
                model.realizePosition(state)
                lengths.append([a.getLength(state) for a in path_forces(model)])
            rows.append(-(np.array(lengths[0]) - np.array(lengths[1])) / (2 * h))
        out.append(np.array(rows).T)
    return np.array(out)


def save_paths(out: str, model, qs, cold: bool = False) -> None:
    """Evaluate ``qs`` in order; ``cold``: each from a fresh state, so a
    Scholz2015GeometryPath starts from its contact hints (not from the previous path)."""
    import opensim

    state = model.initSystem()
    rows = [evaluate_paths(model, model.initSystem() if cold else state, q) for q in qs]
    np.savez_compressed(
        out,
        q=np.array([r[0] for r in rows]),
        body_names=np.array([model.getBodySet().get(b).getName() for b in range(model.getBodySet().getSize())]),
        path_names=np.array([a.getName() for a in path_forces(model)]),
        body_R=np.array([r[1] for r in rows]),
        body_p=np.array([r[2] for r in rows]),
        lengths=np.array([r[3] for r in rows]),
        moment_arms=np.array([r[4] for r in rows]),
        opensim_version=np.array(opensim.__version__),
        **({"length_differences": length_differences(model, [r[0] for r in rows])} if cold else {}),
    )
    print(f"wrote {out}: {len(qs)} configurations")


def scholz_model():
    """An arm of two pin joints with Scholz2015GeometryPath muscles over every obstacle
    kind: a sphere and a cylinder at the elbow and a ring (torus) on the upper arm, an
    ellipsoid on the forearm (an obstacle on a moving body), and a chain of a sphere at
    the shoulder, a via point and a cylinder (docs/opensim.md#scholz2015geometrypath);
    and a classic GeometryPath muscle through the same ring as a WrapTorus."""
    import opensim as osim

    V = osim.Vec3
    m = osim.Model()
    m.setName("scholz_obstacles")
    upper = osim.Body("upper", 2.0, V(0, -0.15, 0), osim.Inertia(0.02, 0.002, 0.02))
    fore = osim.Body("fore", 1.0, V(0, -0.12, 0), osim.Inertia(0.01, 0.001, 0.01))
    m.addBody(upper)
    m.addBody(fore)
    shoulder = osim.PinJoint("shoulder", m.getGround(), V(0), V(0), upper, V(0), V(0))
    elbow = osim.PinJoint("elbow", upper, V(0, -0.3, 0), V(0), fore, V(0), V(0))
    m.addJoint(shoulder)
    m.addJoint(elbow)
    shoulder.updCoordinate().setName("shoulder_angle")
    shoulder.updCoordinate().setRangeMin(-0.5)
    shoulder.updCoordinate().setRangeMax(1.0)
    elbow.updCoordinate().setName("elbow_angle")
    elbow.updCoordinate().setRangeMin(0.0)
    elbow.updCoordinate().setRangeMax(2.2)
    geometries = {
        "elbow_sphere": osim.ContactSphere(0.025, V(0, -0.3, 0), upper, "elbow_sphere"),
        "elbow_cylinder": osim.ContactCylinder(0.02, V(0, -0.3, 0), V(0, 0, 0), upper, "elbow_cylinder"),
        "arm_ring": osim.ContactTorus(0.03, 0.008, V(-0.03, -0.25, 0), V(-np.pi / 2, 0, 0), upper, "arm_ring"),
        "fore_ellipsoid": osim.ContactEllipsoid(
            V(0.03, 0.02, 0.04), V(0, 0, 0), V(0.2, -0.3, 0.4), fore, "fore_ellipsoid"
        ),
        "shoulder_sphere": osim.ContactSphere(0.03, V(0, 0, 0), m.getGround(), "shoulder_sphere"),
    }
    for g in geometries.values():
        m.addContactGeometry(g)
    ground = m.getGround()
    # Muscles from the back of the upper arm to the back of the forearm, each over one
    # obstacle at the elbow: flexion swings the insertion forward, so each path wraps its
    # obstacle and then, past about 0.6 rad, the other side of it. The torus is a ring
    # round the arm that the path runs through, pressed against its inner (saddle) side.
    muscles = [
        (
            "over_sphere",
            [(upper, (-0.035, -0.1, 0.01)), ("elbow_sphere", (-0.025, 0, 0)), (fore, (-0.035, -0.06, -0.01))],
        ),
        (
            "over_cylinder",
            [(upper, (-0.03, -0.12, 0.0)), ("elbow_cylinder", (-0.02, 0, 0)), (fore, (-0.03, -0.07, 0.02))],
        ),
        ("through_ring", [(upper, (-0.03, -0.1, 0.005)), ("arm_ring", (0.022, 0, 0)), (fore, (-0.03, -0.06, -0.004))]),
        (
            "over_ellipsoid",
            [(upper, (-0.04, -0.2, 0.0)), ("fore_ellipsoid", (-0.03, 0, 0)), (fore, (-0.02, -0.15, 0.01))],
        ),
        (
            "chain",
            [
                (ground, (-0.05, 0.06, 0.01)),
                ("shoulder_sphere", (-0.03, 0, 0)),
                (upper, (-0.04, -0.15, 0.0)),
                ("elbow_cylinder", (-0.02, 0, 0)),
                (fore, (-0.03, -0.1, 0.0)),
            ],
        ),
    ]
    for name, elements in muscles:
        actuator = osim.PathActuator()
        actuator.setName(name)
        actuator.set_path(osim.Scholz2015GeometryPath())
        m.addForce(actuator)
        path = osim.Scholz2015GeometryPath.safeDownCast(actuator.updPath())
        for where, xyz in elements:
            if isinstance(where, str):
                path.appendObstacle(geometries[where], V(*xyz))
            else:
                path.appendPathPoint(where, V(*xyz))
    # OpenSim's classic WrapTorus on the same ring, for a GeometryPath muscle: OpenSim
    # replaces the torus by a cylinder at the contact point.
    ring = osim.WrapTorus()
    ring.setName("classic_ring")
    ring.set_inner_radius(0.008)
    ring.set_outer_radius(0.03)
    ring.set_translation(V(-0.03, -0.25, 0))
    ring.set_xyz_body_rotation(V(-np.pi / 2, 0, 0))
    upper.addWrapObject(ring)
    classic = osim.PathActuator()
    classic.setName("classic_ring")
    m.addForce(classic)
    classic.addNewPathPoint("origin", upper, V(-0.03, -0.1, 0.005))
    classic.addNewPathPoint("insertion", fore, V(-0.03, -0.06, -0.004))
    classic.updGeometryPath().addPathWrap(ring)
    m.finalizeConnections()
    return m


def scholz_configurations(coordinate_set, seed: int = 1) -> np.ndarray:
    lo = np.array([coordinate_set.get(i).getRangeMin() for i in range(coordinate_set.getSize())])
    hi = np.array([coordinate_set.get(i).getRangeMax() for i in range(coordinate_set.getSize())])
    sweep = [(s, e) for s in np.linspace(lo[0], hi[0], 3) for e in np.linspace(lo[1], hi[1], 23)]
    rng = np.random.default_rng(seed)
    return np.concatenate([np.array(sweep), rng.uniform(lo, hi, size=(40, 2))])


def joints_model():
    """A chain of the standard joints load_osim takes (Ball, Free, Universal, Gimbal,
    Planar, Pin, Slider; gait9dof18musc has the spline CustomJoints) at random offsets,
    with one GeometryPath muscle over it."""
    import opensim as osim

    V = osim.Vec3
    rng = np.random.default_rng(3)
    m = osim.Model()
    m.setName("joints")
    parent = m.getGround()
    kinds = [osim.BallJoint, osim.FreeJoint, osim.UniversalJoint, osim.GimbalJoint, osim.PlanarJoint, osim.PinJoint]
    kinds.append(osim.SliderJoint)
    bodies = []
    for k, kind in enumerate(kinds):
        body = osim.Body(f"b{k}", 1.0, V(*rng.normal(size=3) * 0.05), osim.Inertia(0.1, 0.2, 0.3))
        m.addBody(body)
        p1, o1, p2, o2 = (V(*rng.normal(size=3) * s) for s in (0.2, 0.5, 0.2, 0.5))
        joint = kind(f"{kind.__name__}", parent, p1, o1, body, p2, o2)
        m.addJoint(joint)
        bodies.append(body)
        parent = body
    muscle = osim.PathActuator()
    muscle.setName("across")
    m.addForce(muscle)
    muscle.addNewPathPoint("p0", bodies[4], V(0.02, 0.1, 0.03))
    muscle.addNewPathPoint("p1", bodies[5], V(0.05, -0.02, 0.0))
    muscle.addNewPathPoint("p2", parent, V(0.03, -0.1, 0.01))
    m.finalizeConnections()
    return m


def main() -> None:
    import opensim

    arm = opensim.Model(MODEL)
    arm.initSystem()
    save_paths(OUT, arm, configurations(arm.getCoordinateSet()))

    gait = opensim.Model(GAIT)
    gait.initSystem()
    save_paths(GAIT_OUT, gait, gait_configurations(gait.getCoordinateSet()))

    for make, path, out, configure in (
        (scholz_model, SCHOLZ, SCHOLZ_OUT, scholz_configurations),
        (joints_model, JOINTS, JOINTS_OUT, None),
    ):
        built = make()
        built.printToXML(path)
        reread = opensim.Model(path)
        reread.initSystem()
        coordinates = reread.getCoordinateSet()
        if configure is None:
            rng = np.random.default_rng(4)
            qs = rng.uniform(-1.2, 1.2, size=(40, coordinates.getSize()))
        else:
            qs = configure(coordinates)
        save_paths(out, reread, qs, cold=make is scholz_model)


if __name__ == "__main__":
    main()
