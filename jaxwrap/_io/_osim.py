"""OpenSim models (``.osim``) as a `RobotModel` and a `CableSet` (docs/opensim.md).

The file is read by the ``opensim`` package (an optional dependency, ``pip install
'jaxwrap[opensim]'``), which also upgrades old file versions; jaxwrap reads the loaded
model's components through its API, never the XML.

*Bodies and joints.* A jaxwrap body frame is its OpenSim joint's child frame (the
mobilized frame M); the OpenSim body frame is M times the inverse of the child offset,
and that *offset* is applied to every path point, wrap object and the inertia, as for
MJCF. Joints: ``WeldJoint`` (fixed), ``PinJoint`` (about the parent frame's z),
``SliderJoint`` (along x), and ``CustomJoint`` whose transform axes are each a constant,
or a linear function of slope ±1 of one coordinate, every coordinate driving one axis:
translations along the parent frame's axes then body-fixed rotations in order. Coupled
functions (splines, a coordinate on several axes) raise naming the joint and axis.

*Paths.* Each muscle, path actuator or path spring with a ``GeometryPath`` becomes one
cable: ``PathPoint`` s are the end and via points; every ``PathWrap`` is an obstacle on
every segment of its ``range`` of path points (jaxwrap solves the exact shortest path,
the obstacles of a segment jointly). ``WrapSphere``, ``WrapCylinder`` (infinite),
``WrapEllipsoid`` and ``WrapTorus`` map onto the jaxwrap surfaces; a ``quadrant`` other
than ``all`` becomes the wrap side. ``ConditionalPathPoint``, ``MovingPathPoint`` and
``Scholz2015GeometryPath`` raise naming the path and element (not yet supported).
"""

from __future__ import annotations

import os

import numpy as np

from .._cable import CableSet, CableSettings, CableSpan
from .._kinematics import RobotModel
from .._kinematics._spec import WORLD, ModelSpec
from .._spatial import Transform
from .._surfaces import Cylinder, Ellipsoid, Sphere, Torus
from ._mjcf import _axis_angle, _pose


def _opensim():
    try:
        import opensim
    except ImportError as error:
        raise ImportError("jaxwrap.load_osim needs the 'opensim' package: pip install 'jaxwrap[opensim]'") from error
    return opensim


def _vec(v) -> np.ndarray:
    return np.array([v.get(i) for i in range(3)], dtype=float)


def _matrix(rotation) -> np.ndarray:
    m = rotation.asMat33()
    return np.array([[m.get(i, j) for j in range(3)] for i in range(3)], dtype=float)


def _simtk_pose(transform) -> np.ndarray:
    return _pose(_matrix(transform.R()), _vec(transform.p()))


def _inverse(X: np.ndarray) -> np.ndarray:
    R, p = X[:3, :3], X[:3, 3]
    return _pose(R.T, -R.T @ p)


def _frame_in_body(frame) -> tuple[str, np.ndarray]:
    """(OpenSim body name, pose of ``frame`` in that body's frame)."""
    return frame.findBaseFrame().getName(), _simtk_pose(frame.findTransformInBaseFrame())


def _coordinate_axes(osim, joint, name: str) -> list[tuple[str, str | None, np.ndarray, float]]:
    """A CustomJoint's transform axes as (kind, coordinate or None, axis, function)."""
    custom = osim.CustomJoint.safeDownCast(joint)
    transform = custom.getSpatialTransform()
    axes = []
    for k in range(6):
        ta = transform.getTransformAxis(k)
        kind = "rotation" if k < 3 else "translation"
        coords = [ta.get_coordinates(c) for c in range(ta.getCoordinateNamesInArray().getSize())]
        function = ta.get_function()
        axis = _vec(ta.getAxis())
        label = f"joint {name!r}, {ta.getName()}"
        constant = osim.Constant.safeDownCast(function)
        linear = osim.LinearFunction.safeDownCast(function)
        if constant is not None:
            axes.append((kind, None, axis, float(constant.getValue())))
        elif linear is not None and len(coords) == 1 and abs(abs(linear.getSlope()) - 1.0) < 1e-15:
            slope, intercept = float(linear.getSlope()), float(linear.getIntercept())
            axes.append((kind, coords[0], slope * axis, slope * intercept))
        else:
            raise ValueError(
                f"{label}: a {function.getConcreteClassName()} of {coords or 'no coordinate'} is a coupled "
                "coordinate function; jaxwrap's OpenSim import takes constants and linear functions of slope ±1 "
                "of one coordinate (not yet splines or couplings)"
            )
    return axes


def _joint_chain(osim, joint, name: str) -> list[tuple[str, str | None, np.ndarray, np.ndarray]]:
    """The joint as a chain of (kind, coordinate, axis, fixed pose before it) from the
    parent frame F to the mobilized frame M; kind ``fixed`` for the end."""
    kind = joint.getConcreteClassName()
    coordinates = [joint.get_coordinates(k).getName() for k in range(joint.numCoordinates())]
    if kind == "WeldJoint":
        return []
    end = ("fixed", None, np.zeros(3), np.eye(4))
    if kind == "PinJoint":
        return [("revolute", coordinates[0], np.array([0.0, 0.0, 1.0]), np.eye(4)), end]
    if kind == "SliderJoint":
        return [("prismatic", coordinates[0], np.array([1.0, 0.0, 0.0]), np.eye(4)), end]
    if kind != "CustomJoint":
        raise ValueError(
            f"joint {name!r}: {kind} is not supported yet (WeldJoint, PinJoint, SliderJoint and CustomJoint are)"
        )
    axes = _coordinate_axes(osim, joint, name)
    used = [c for _, c, _, _ in axes if c is not None]
    if len(set(used)) != len(used):
        raise ValueError(
            f"joint {name!r}: a coordinate drives several transform axes (a coupled joint, not yet supported)"
        )
    chain = []
    pending = np.eye(4)
    # X_FM = T(Σ f_i t_i) · R(a1, f1) R(a2, f2) R(a3, f3): translations in F, then body-fixed rotations.
    for _, coordinate, axis, value in axes[3:]:
        if coordinate is None:
            pending = pending @ _pose(translation=value * axis / np.linalg.norm(axis))
        else:
            pending = pending @ _pose(translation=value * axis / np.linalg.norm(axis))
            chain.append(("prismatic", coordinate, axis / np.linalg.norm(axis), pending))
            pending = np.eye(4)
    for _, coordinate, axis, value in axes[:3]:
        if coordinate is None:
            pending = pending @ _pose(_axis_angle(axis / np.linalg.norm(axis), value)) if value != 0.0 else pending
        else:
            pending = pending @ _pose(_axis_angle(axis / np.linalg.norm(axis), value))
            chain.append(("revolute", coordinate, axis / np.linalg.norm(axis), pending))
            pending = np.eye(4)
    chain.append(("fixed", None, np.zeros(3), pending))
    return chain


def _mass_properties(body, to_jaxwrap: np.ndarray) -> dict:
    """Mass, centre of mass and inertia about it, in the jaxwrap body frame."""
    R, p = to_jaxwrap[:3, :3], to_jaxwrap[:3, 3]
    moments, products = _vec(body.getInertia().getMoments()), _vec(body.getInertia().getProducts())
    inertia = np.diag(moments)
    inertia[0, 1] = inertia[1, 0] = products[0]
    inertia[0, 2] = inertia[2, 0] = products[1]
    inertia[1, 2] = inertia[2, 1] = products[2]
    inertia = R @ inertia @ R.T
    return dict(mass=float(body.getMass()), com=R @ _vec(body.getMassCenter()) + p, inertia=0.5 * (inertia + inertia.T))


def _model_spec(osim, m) -> tuple[ModelSpec, dict[str, tuple[str, np.ndarray]]]:
    spec = ModelSpec(name=m.getName() or "osim")
    ground = m.getGround().getName()
    frames: dict[str, tuple[str, np.ndarray]] = {ground: (WORLD, np.eye(4))}
    coordinate_set = m.getCoordinateSet()
    ranges = {
        coordinate_set.get(i).getName(): (coordinate_set.get(i).getRangeMin(), coordinate_set.get(i).getRangeMax())
        for i in range(coordinate_set.getSize())
    }
    bodies = {m.getBodySet().get(i).getName(): m.getBodySet().get(i) for i in range(m.getBodySet().getSize())}
    joints = [m.getJointSet().get(i) for i in range(m.getJointSet().getSize())]
    remaining = list(joints)
    while remaining:
        progressed = False
        for joint in list(remaining):
            name = joint.getName()
            parent, X_PF = _frame_in_body(joint.getParentFrame())
            if parent not in frames:
                continue
            child, X_CM = _frame_in_body(joint.getChildFrame())
            if child == ground or child in frames:
                raise ValueError(f"joint {name!r}: its child body {child!r} already has a joint (a closed loop)")
            parent_name, parent_offset = frames[parent]
            placement = parent_offset @ X_PF
            current = parent_name
            offset = _inverse(X_CM)
            chain = _joint_chain(osim, joint, name)
            moving = [link for link in chain if link[0] != "fixed"]
            # OpenSim body coordinates to the jaxwrap body frame: the child offset, and for
            # a CustomJoint the constant part after its last coordinate.
            to_jaxwrap = chain[-1][3] @ offset if moving else np.eye(4)
            mass = _mass_properties(bodies[child], to_jaxwrap)
            if not moving:
                end = chain[-1][3] if chain else np.eye(4)
                spec = spec.add_body(child, **mass)
                spec = spec.add_joint(name, "fixed", current, child, placement=placement @ end @ offset)
            else:
                for k, (kind, coordinate, axis, before) in enumerate(moving):
                    last = k == len(moving) - 1
                    link = child if last else f"{child}/{coordinate}"
                    spec = spec.add_body(link, **(mass if last else {}))
                    lower, upper = ranges[coordinate]
                    spec = spec.add_joint(
                        coordinate,
                        kind,
                        current,
                        link,
                        placement=placement @ before,
                        axis=axis,
                        lower=lower,
                        upper=upper,
                    )
                    current, placement = link, np.eye(4)
            frames[child] = (child, to_jaxwrap)
            remaining.remove(joint)
            progressed = True
        if not progressed:
            names = [j.getName() for j in remaining]
            raise ValueError(f"joints {names} do not connect to the ground")
    return spec, frames


_QUADRANTS = {
    "x": (1.0, 0.0, 0.0),
    "+x": (1.0, 0.0, 0.0),
    "-x": (-1.0, 0.0, 0.0),
    "y": (0.0, 1.0, 0.0),
    "+y": (0.0, 1.0, 0.0),
    "-y": (0.0, -1.0, 0.0),
    "z": (0.0, 0.0, 1.0),
    "+z": (0.0, 0.0, 1.0),
    "-z": (0.0, 0.0, -1.0),
}


def _surface(osim, wrap, label: str):
    kind = wrap.getConcreteClassName()
    if kind == "WrapSphere":
        return Sphere(float(osim.WrapSphere.safeDownCast(wrap).get_radius()))
    if kind == "WrapCylinder":
        return Cylinder(float(osim.WrapCylinder.safeDownCast(wrap).get_radius()))
    if kind == "WrapEllipsoid":
        return Ellipsoid(_vec(osim.WrapEllipsoid.safeDownCast(wrap).get_dimensions()))
    if kind == "WrapTorus":
        torus = osim.WrapTorus.safeDownCast(wrap)
        return Torus(float(torus.get_outer_radius()), float(torus.get_inner_radius()))
    raise ValueError(f"{label}: wrap object {wrap.getName()!r} is a {kind}, not supported")


def _wrapped_segments(osim, m, state, paths, probes: int) -> dict[tuple[int, int], set[int]]:
    """Which segment (index of the path point before it) OpenSim wraps each path wrap on,
    over the default pose and ``probes`` configurations uniform in the coordinate ranges:
    ``{(path, wrap): {segment, ...}}`` (docs/opensim.md#which-segment)."""
    coordinates = m.getCoordinateSet()
    lo = np.array([coordinates.get(i).getRangeMin() for i in range(coordinates.getSize())])
    hi = np.array([coordinates.get(i).getRangeMax() for i in range(coordinates.getSize())])
    lo, hi = np.clip(lo, -np.pi, np.pi), np.clip(hi, -np.pi, np.pi)
    rng = np.random.default_rng(0)
    samples = [np.array([coordinates.get(i).getDefaultValue() for i in range(coordinates.getSize())])]
    samples += list(rng.uniform(lo, hi, size=(probes, len(lo))))
    found: dict[tuple[int, int], set[int]] = {}
    for q in samples:
        for i in range(coordinates.getSize()):
            coordinates.get(i).setValue(state, float(q[i]), False)
        m.realizePosition(state)
        for p, path in enumerate(paths):
            path.getLength(state)
            current = path.getCurrentPath(state)
            wraps = [path.getWrapSet().get(k).getWrapObject().getName() for k in range(path.getWrapSet().getSize())]
            names = [path.getPathPointSet().get(k).getName() for k in range(path.getPathPointSet().getSize())]
            segment = -1
            for k in range(current.getSize()):
                point = current.get(k)
                wrap_point = osim.PathWrapPoint.safeDownCast(point)
                if wrap_point is None:
                    segment = names.index(point.getName())
                else:
                    found.setdefault((p, wraps.index(wrap_point.getWrapObject().getName())), set()).add(segment)
    return found


def _paths(osim, m, state, model: RobotModel, frames, settings, quadrants: bool, probes: int) -> CableSet:
    forces = m.getForceSet()
    found = []
    for i in range(forces.getSize()):
        force = forces.get(i)
        path = None
        for cls in (osim.PathActuator, osim.PathSpring):
            cast = cls.safeDownCast(force)
            if cast is not None:
                path = cast.getPath() if hasattr(cast, "getPath") else cast.getGeometryPath()
                break
        if path is None:
            continue
        label = f"{force.getConcreteClassName()} {force.getName()!r}"
        geometry = osim.GeometryPath.safeDownCast(path)
        if geometry is None:
            raise ValueError(f"{label}: a {path.getConcreteClassName()} is not supported yet (GeometryPath is)")
        found.append((force.getName(), label, geometry))
    segments_of = _wrapped_segments(osim, m, state, [g for _, _, g in found], probes)
    names, cables = [], []
    for p, (name, label, geometry) in enumerate(found):
        points = []
        point_set = geometry.getPathPointSet()
        for k in range(point_set.getSize()):
            point = point_set.get(k)
            kind = point.getConcreteClassName()
            if kind != "PathPoint":
                raise ValueError(
                    f"{label}: path point {point.getName()!r} is a {kind}, not supported yet (PathPoint is)"
                )
            body, X_BF = _frame_in_body(point.getParentFrame())
            jw_body, offset = frames[body]
            location = (offset @ X_BF @ np.append(_vec(osim.PathPoint.safeDownCast(point).get_location()), 1.0))[:3]
            points.append((model.body_index(jw_body), location))
        if len(points) < 2:
            raise ValueError(f"{label}: a path needs at least two path points, got {len(points)}")
        # Obstacles per segment (k, k + 1), in the path's wrap order: each path wrap on the
        # segments of its range where OpenSim wraps it in the probe configurations.
        segments: list[list] = [[] for _ in range(len(points) - 1)]
        wrap_set = geometry.getWrapSet()
        for k in range(wrap_set.getSize()):
            path_wrap = wrap_set.get(k)
            wrap = path_wrap.getWrapObject()
            where = f"{label}, wrap {wrap.getName()!r}"
            if not wrap.get_active():
                continue
            surface = _surface(osim, wrap, where)
            body, X_BF = _frame_in_body(wrap.getFrame())
            jw_body, offset = frames[body]
            X_BS = offset @ X_BF @ _simtk_pose(wrap.getTransform())
            quadrant = wrap.get_quadrant().strip().lower()
            if quadrant not in ("all", "") and quadrant not in _QUADRANTS:
                raise ValueError(f"{where}: unknown quadrant {quadrant!r}")
            side = _QUADRANTS.get(quadrant) if quadrants else None
            first, last = path_wrap.getStartPoint(), path_wrap.getEndPoint()
            first = 1 if first < 1 else first
            last = len(points) if last < 1 else min(last, len(points))
            for s in sorted(segments_of.get((p, k), set())):
                if first - 1 <= s < last - 1:
                    segments[s].append((model.body_index(jw_body), X_BS, surface, side))
        (b0, p0), (b1, p1) = points[0], points[-1]
        cable = CableSpan(b0, p0, b1, p1, settings=settings)
        for s, obstacles in enumerate(segments):
            if s > 0:
                cable = cable.add_via_point(*points[s])
            for body, X_BS, surface, side in obstacles:
                X = Transform(X_BS[:3, :3], X_BS[:3, 3])
                cable = cable.add_obstacle(body, X, surface, side=side)
        names.append(name)
        cables.append((cable,))
    return CableSet(names, cables)


def load_osim(
    source, settings: CableSettings | None = None, quadrants: bool = True, probes: int = 64
) -> tuple[RobotModel, CableSet]:
    """Load an OpenSim model's kinematic tree and muscle paths.

    **Arguments:**

    - `source`: a path to an ``.osim`` file or an ``opensim.Model``. OpenSim reads it
      (an optional dependency: ``pip install 'jaxwrap[opensim]'``) and upgrades old
      file versions.
    - `settings`: `CableSettings` for every path (default `CableSettings()`).

    **Returns:** ``(model, cables)``: a `RobotModel` whose ``q`` holds OpenSim's
    coordinates in its coordinate set's order (checked; `coordinate_names` on the
    model's joints), and a `CableSet` with one cable per path actuator, muscle or path
    spring, in force-set order (docs/opensim.md).

    **Raises:** `ImportError` without ``opensim``; `ValueError` naming the joint, path
    and element for what is not supported (see the module docstring).
    """
    osim = _opensim()
    if isinstance(source, (str, os.PathLike)):
        if not os.path.exists(source):
            raise ValueError(f"no OpenSim model file at {str(source)!r}")
        m = osim.Model(str(source))
    else:
        m = source
    state = m.initSystem()
    spec, frames = _model_spec(osim, m)
    model = RobotModel.from_spec(spec)
    coordinates = m.getCoordinateSet()
    expected = tuple(coordinates.get(i).getName() for i in range(coordinates.getSize()))
    if model.joint_names != expected:
        raise ValueError(
            f"jaxwrap's joint order {list(model.joint_names)} differs from OpenSim's coordinate order "
            f"{list(expected)} (not yet supported)"
        )
    return model, _paths(osim, m, state, model, frames, settings, quadrants, probes)
