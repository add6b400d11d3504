"""OpenSim models (``.osim``) as a `RobotModel` and a `CableSet` (docs/opensim.md).

The file is read by the ``opensim`` package (an optional dependency, ``pip install
'jaxwrap[opensim]'``), which also upgrades old file versions; jaxwrap reads the loaded
model's components through its API, never the XML.

*Bodies and joints.* A jaxwrap body frame is its OpenSim joint's child frame (the
mobilized frame M); the OpenSim body frame is M times the inverse of the child offset,
and that *offset* is applied to every path point, wrap object, contact geometry and the
inertia, as for MJCF. Every joint (Weld, Pin, Slider, Planar, Universal, Gimbal, Ball,
Free, Custom) is a list of transform axes, translations in the parent frame then
body-fixed rotations, each a function of at most one coordinate: each coordinate becomes
a revolute or prismatic joint on its first axis of slope ±1, every other axis that
depends on a coordinate a coupled joint (a `PiecewiseCubic` of it), constants fixed
placements. ``q`` keeps OpenSim's coordinate order (docs/opensim.md#bodies-and-joints).

*Paths.* Each muscle, path actuator or path spring becomes one cable. A ``GeometryPath``:
``PathPoint`` s are end and via points; a ``MovingPathPoint`` is a massless body moved by
coupled prismatic joints; ``ConditionalPathPoint`` s make one branch per combination,
with conditions on their coordinates; every ``PathWrap`` is an obstacle on the segments
of its ``range`` where OpenSim applies it (``WrapSphere``, ``WrapCylinder`` (infinite),
``WrapEllipsoid``, ``WrapTorus``; a ``quadrant`` other than ``all`` is the wrap side). A
``Scholz2015GeometryPath`` maps element for element onto a `CableSpan`. Anything else
raises naming the joint or path and the element.
"""

from __future__ import annotations

import itertools
import os
import warnings
from typing import NamedTuple

import numpy as np

from .._cable import CableSet, CableSettings, CableSpan
from .._kinematics import RobotModel
from .._kinematics._functions import CoordinateFunction, PiecewiseCubic, Polynomial
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


_FUNCTIONS = "Constant, LinearFunction, SimmSpline, PiecewiseLinearFunction, PolynomialFunction, MultiplierFunction"


def _function(osim, function, label: str) -> CoordinateFunction:
    """An OpenSim function of one variable as a `PiecewiseCubic` (a `Polynomial` for a
    ``PolynomialFunction``), checked against OpenSim's own ``calcValue`` at its knots,
    between them and beyond them (a polynomial over [-4, 4])."""
    kind = function.getConcreteClassName()
    if kind == "Constant":
        f = PiecewiseCubic.constant(osim.Constant.safeDownCast(function).getValue())
    elif kind == "LinearFunction":
        linear = osim.LinearFunction.safeDownCast(function)
        f = PiecewiseCubic.linear(linear.getSlope(), linear.getIntercept())
    elif kind in ("SimmSpline", "PiecewiseLinearFunction"):
        cast = getattr(osim, kind).safeDownCast(function)
        x = [cast.getX(i) for i in range(cast.getSize())]
        y = [cast.getY(i) for i in range(cast.getSize())]
        make = PiecewiseCubic.simm_spline if kind == "SimmSpline" else PiecewiseCubic.piecewise_linear
        try:
            f = make(x, y)
        except ValueError as error:
            raise ValueError(f"{label}: {error}") from None
    elif kind == "PolynomialFunction":
        # Highest order first, as OpenSim stores (and evaluates) them.
        coefficients = osim.PolynomialFunction.safeDownCast(function).getCoefficients()
        try:
            f = Polynomial.of([coefficients.get(i) for i in range(coefficients.size())])
        except ValueError as error:
            raise ValueError(f"{label}: {error}") from None
    elif kind == "MultiplierFunction":
        multiplier = osim.MultiplierFunction.safeDownCast(function)
        f = _function(osim, multiplier.getFunction(), label).scaled(multiplier.getScale())
    else:
        raise ValueError(f"{label}: a {kind} is not supported ({_FUNCTIONS} are)")
    if isinstance(f, Polynomial):
        samples = np.linspace(-4.0, 4.0, 17)
    else:
        knots = np.asarray(f.knots)
        samples = np.concatenate([knots, (knots[1:] + knots[:-1]) / 2, [knots[0] - 0.5, knots[-1] + 0.5]])
    ours = np.asarray(f(samples))
    theirs = np.array([function.calcValue(osim.Vector(1, float(x))) for x in samples])
    # To 1e-9, or to 64 ulp of the values where jaxwrap's arrays are float32.
    ulp = float(np.finfo(ours.dtype).eps) * max(1.0, float(np.max(np.abs(theirs))))
    if not np.allclose(ours, theirs, rtol=1e-9, atol=max(1e-12, 64 * ulp)):
        worst = float(np.max(np.abs(ours - theirs)))
        raise ValueError(f"{label}: jaxwrap's {kind} differs from OpenSim's by {worst:.3g}")
    return f


class _Axis(NamedTuple):
    """One transform axis of a joint: ``rotation`` or ``translation`` by ``function`` of
    ``coordinate`` (None: a constant) along the unit ``axis``; ``label`` names it."""

    kind: str
    label: str
    coordinate: str | None
    axis: np.ndarray
    function: CoordinateFunction
    slope: float | None  # ±1 when the function is q ↦ ±q + intercept
    intercept: float


def _identity(kind: str, label: str, coordinate: str, axis) -> _Axis:
    return _Axis(kind, label, coordinate, np.asarray(axis, float), PiecewiseCubic.linear(1.0, 0.0), 1.0, 0.0)


_X, _Y, _Z = np.eye(3)

# The standard joints as (translations, rotations) over their coordinates' positions,
# each in Simbody's order: translations in the parent frame, then body-fixed rotations.
_STANDARD = {
    "PinJoint": ((), (("rotation", 0, _Z),)),
    "SliderJoint": ((("translation", 0, _X),), ()),
    "PlanarJoint": ((("translation", 1, _X), ("translation", 2, _Y)), (("rotation", 0, _Z),)),
    "UniversalJoint": ((), (("rotation", 0, _X), ("rotation", 1, _Y))),
    "GimbalJoint": ((), (("rotation", 0, _X), ("rotation", 1, _Y), ("rotation", 2, _Z))),
    "BallJoint": ((), (("rotation", 0, _X), ("rotation", 1, _Y), ("rotation", 2, _Z))),
    "FreeJoint": (
        (("translation", 3, _X), ("translation", 4, _Y), ("translation", 5, _Z)),
        (("rotation", 0, _X), ("rotation", 1, _Y), ("rotation", 2, _Z)),
    ),
}


def _joint_axes(osim, joint, name: str) -> list[_Axis]:
    """The joint's transform axes in order: translations, then rotations."""
    kind = joint.getConcreteClassName()
    coordinates = [joint.get_coordinates(k).getName() for k in range(joint.numCoordinates())]
    if kind == "WeldJoint":
        return []
    if kind in _STANDARD:
        translations, rotations = _STANDARD[kind]
        return [_identity(k, f"{kind} axis {i}", coordinates[i], axis) for k, i, axis in (*translations, *rotations)]
    if kind != "CustomJoint":
        raise ValueError(
            f"joint {name!r}: {kind} is not supported (WeldJoint, CustomJoint and {', '.join(_STANDARD)} are)"
        )
    transform = osim.CustomJoint.safeDownCast(joint).getSpatialTransform()
    axes = []
    for k in [3, 4, 5, 0, 1, 2]:  # translations first (module docstring)
        ta = transform.getTransformAxis(k)
        kind = "rotation" if k < 3 else "translation"
        label = f"joint {name!r}, {ta.getName()}"
        coords = [ta.get_coordinates(c) for c in range(ta.getCoordinateNamesInArray().getSize())]
        if len(coords) > 1:
            raise ValueError(f"{label}: a function of several coordinates {coords} is not supported")
        function = ta.get_function()
        f = _function(osim, function, label)
        axis = _vec(ta.getAxis())
        norm = np.linalg.norm(axis)
        if norm == 0:
            raise ValueError(f"{label}: zero axis")
        coordinate = coords[0] if coords else None
        slope, intercept = None, 0.0
        linear = osim.LinearFunction.safeDownCast(function)
        if coordinate is not None and linear is not None and abs(abs(linear.getSlope()) - 1.0) < 1e-15:
            slope, intercept = float(linear.getSlope()), float(linear.getIntercept())
        if coordinate is None:  # a constant, whatever the function
            f = PiecewiseCubic.constant(float(function.calcValue(osim.Vector(1, 0.0))))
        axes.append(_Axis(kind, ta.getName(), coordinate, axis / norm, f, slope, intercept))
    return axes


def _constant_motion(kind: str, axis: np.ndarray, value: float) -> np.ndarray:
    if value == 0.0:
        return np.eye(4)
    if kind == "rotation":
        return _pose(_axis_angle(axis, value))
    return _pose(translation=value * axis)


def _joint_chain(osim, joint, name: str) -> list[tuple]:
    """The joint as a chain ``(kind, joint name, axis, fixed pose before it, coupling)``
    from the parent frame F to the mobilized frame M, ending with a ``fixed`` link
    (docs/opensim.md#bodies-and-joints). Each coordinate of the joint becomes a revolute
    or prismatic joint (named after it) on its first axis of slope ±1; every other axis
    that follows a coordinate is a coupled joint ``(coordinate, function)``. A coordinate
    without such an axis is held by a massless body of its own (`_coordinate_holders`).
    Returns an empty chain for a joint without axes."""
    axes = _joint_axes(osim, joint, name)
    if not axes:
        return []
    own = [joint.get_coordinates(k).getName() for k in range(joint.numCoordinates())]
    primary: dict[str, int] = {}
    for i, a in enumerate(axes):
        if a.coordinate in own and a.slope is not None and a.coordinate not in primary:
            primary[a.coordinate] = i
    chain, pending = [], np.eye(4)
    for i, a in enumerate(axes):
        joint_kind = "revolute" if a.kind == "rotation" else "prismatic"
        if a.coordinate is None:
            pending = pending @ _constant_motion(a.kind, a.axis, float(a.function(0.0)))
        elif primary.get(a.coordinate) == i:
            pending = pending @ _constant_motion(a.kind, a.axis, a.intercept)
            chain.append((joint_kind, a.coordinate, a.slope * a.axis, pending, None))
            pending = np.eye(4)
        else:
            chain.append((joint_kind, f"{name}/{a.label}", a.axis, pending, (a.coordinate, a.function)))
            pending = np.eye(4)
    chain.append(("fixed", None, np.zeros(3), pending, None))
    return chain


def _coordinate_holders(chain: list[tuple], joint) -> list[str]:
    """The joint's coordinates that no link of ``chain`` carries (every axis they drive has
    another slope than ±1, e.g. a wrist angle split 0.5/0.5 over two joints): each gets a
    massless body off the joint's parent, turned or slid by it and carrying nothing, so
    the coordinate has a joint and the axes it drives are coupled to it
    (docs/opensim.md#bodies-and-joints)."""
    carried = {link[1] for link in chain if link[0] != "fixed" and link[4] is None}
    own = [joint.get_coordinates(k).getName() for k in range(joint.numCoordinates())]
    return [c for c in own if c not in carried]


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
            for coordinate in _coordinate_holders(chain, joint):
                holder = f"{child}/{coordinate}:coordinate"
                translational = coordinate_set.get(coordinate).getMotionType() == 2  # OpenSim's Translational
                lower, upper = ranges[coordinate]
                spec = spec.add_body(holder)
                spec = spec.add_joint(
                    coordinate,
                    "prismatic" if translational else "revolute",
                    current,
                    holder,
                    placement=placement,
                    axis=(0.0, 0.0, 1.0),
                    lower=lower,
                    upper=upper,
                )
            # OpenSim body coordinates to the jaxwrap body frame: the child offset, and for
            # a CustomJoint the constant part after its last coordinate.
            to_jaxwrap = chain[-1][3] @ offset if moving else np.eye(4)
            mass = _mass_properties(bodies[child], to_jaxwrap)
            if not moving:
                end = chain[-1][3] if chain else np.eye(4)
                spec = spec.add_body(child, **mass)
                spec = spec.add_joint(name, "fixed", current, child, placement=placement @ end @ offset)
            else:
                for k, (kind, joint_name, axis, before, coupling) in enumerate(moving):
                    last = k == len(moving) - 1
                    link = child if last else f"{child}/{joint_name}"
                    spec = spec.add_body(link, **(mass if last else {}))
                    lower, upper = ranges[joint_name] if coupling is None else (None, None)
                    spec = spec.add_joint(
                        joint_name,
                        kind,
                        current,
                        link,
                        placement=placement @ before,
                        axis=axis,
                        lower=lower,
                        upper=upper,
                        coupling=coupling,
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


def _wrapped_segments(
    osim, m, state, paths, probes: int
) -> tuple[dict[tuple[int, int], set[int]], dict[tuple[int, int], dict[tuple[int, int], int]]]:
    """Which segment (index of the path point before it) OpenSim wraps each path wrap on,
    over the default pose and ``probes`` configurations uniform in the coordinate ranges:
    ``{(path, wrap): {segment, ...}}``; and, where OpenSim applied several wraps of a
    path on one segment, in which order its path met them: ``{(path, segment): {(wrap,
    later wrap): count}}`` (docs/opensim.md#which-segment-wrap-objects)."""
    coordinates = m.getCoordinateSet()
    lo = np.array([coordinates.get(i).getRangeMin() for i in range(coordinates.getSize())])
    hi = np.array([coordinates.get(i).getRangeMax() for i in range(coordinates.getSize())])
    lo, hi = np.clip(lo, -np.pi, np.pi), np.clip(hi, -np.pi, np.pi)
    rng = np.random.default_rng(0)
    samples = [np.array([coordinates.get(i).getDefaultValue() for i in range(coordinates.getSize())])]
    samples += list(rng.uniform(lo, hi, size=(probes, len(lo))))
    found: dict[tuple[int, int], set[int]] = {}
    before: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
    for q in samples:
        for i in range(coordinates.getSize()):
            coordinates.get(i).setValue(state, float(q[i]), False)
        m.realizePosition(state)
        for p, path in enumerate(paths):
            path.getLength(state)
            current = path.getCurrentPath(state)
            wraps = [path.getWrapSet().get(k).getWrapObject().getName() for k in range(path.getWrapSet().getSize())]
            names = [path.getPathPointSet().get(k).getName() for k in range(path.getPathPointSet().getSize())]
            segment, met = -1, []
            for k in range(current.getSize()):
                point = current.get(k)
                wrap_point = osim.PathWrapPoint.safeDownCast(point)
                if wrap_point is None:
                    segment, met = names.index(point.getName()), []
                    continue
                w = wraps.index(wrap_point.getWrapObject().getName())
                found.setdefault((p, w), set()).add(segment)
                if w not in met:
                    votes = before.setdefault((p, segment), {})
                    for earlier in met:
                        votes[earlier, w] = votes.get((earlier, w), 0) + 1
                    met.append(w)
    return found, before


def _path_order(wraps: list[int], votes: dict[tuple[int, int], int], names: list[str], label: str) -> list[int]:
    """The wraps of one segment in the order OpenSim's path meets them: by how many of
    the others each came after in the probes, then in wrap-set order. Where the probes
    saw two of them both ways round, a fixed order cannot follow OpenSim everywhere:
    warn, naming them."""
    later = {w: sum(votes.get((v, w), 0) > votes.get((w, v), 0) for v in wraps if v != w) for w in wraps}
    order = sorted(wraps, key=lambda w: (later[w], w))
    for i, v in enumerate(order):
        for w in order[i + 1 :]:
            if votes.get((w, v), 0):
                warnings.warn(
                    f"{label}: OpenSim's path met wrap {names[v]!r} before {names[w]!r} in {votes.get((v, w), 0)} "
                    f"probes and after it in {votes[w, v]}; jaxwrap keeps {names[v]!r} first on that segment "
                    "(docs/opensim.md#which-segment-wrap-objects)",
                    stacklevel=4,
                )
    return order


class _Point(NamedTuple):
    """A path point: on jaxwrap body ``body`` at ``location``; ``condition`` is
    ``(coordinate, lower, upper)`` for a `ConditionalPathPoint`."""

    name: str
    body: str
    location: np.ndarray
    condition: tuple[str, float, float] | None


def _moving_point(osim, point, label: str, frames, spec: ModelSpec) -> tuple[ModelSpec, _Point]:
    """A `MovingPathPoint` as a massless body on the point's frame, moved by up to three
    coupled prismatic joints along the frame's axes (docs/opensim.md#geometrypath)."""
    moving = osim.MovingPathPoint.safeDownCast(point)
    body, X_BF = _frame_in_body(point.getParentFrame())
    parent, offset = frames[body]
    placement = offset @ X_BF
    components = []
    for axis, which in zip(np.eye(3), "xyz"):
        where = f"{label}, point {point.getName()!r}, {which}_location"
        function = getattr(moving, f"get_{which}_location")()
        has = getattr(moving, f"has{which.upper()}Coordinate")()
        f = _function(osim, function, where)
        if not has or function.getConcreteClassName() == "Constant":
            value = float(function.calcValue(osim.Vector(1, 0.0)))
            placement = placement @ _pose(translation=value * axis)
        else:
            components.append((which, axis, getattr(moving, f"get{which.upper()}Coordinate")().getName(), f))
    current = parent
    for k, (which, axis, coordinate, f) in enumerate(components):
        link = f"{label}/{point.getName()}" + ("" if k == len(components) - 1 else f"/{which}")
        spec = spec.add_body(link)
        spec = spec.add_joint(
            f"{link}:{which}", "prismatic", current, link, placement=placement, axis=axis, coupling=(coordinate, f)
        )
        current, placement = link, np.eye(4)
    return spec, _Point(point.getName(), current, placement[:3, 3].copy(), None)


def _path_points(osim, m, spec: ModelSpec, frames) -> tuple[ModelSpec, list]:
    """Every path of the force set as ``(name, label, GeometryPath, [_Point])``; moving
    path points add their bodies to ``spec``."""
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
        scholz = osim.Scholz2015GeometryPath.safeDownCast(path)
        if scholz is not None:
            found.append((force.getName(), label, None, _scholz_elements(osim, scholz, label, frames)))
            continue
        geometry = osim.GeometryPath.safeDownCast(path)
        if geometry is None:
            raise ValueError(
                f"{label}: a {path.getConcreteClassName()} is not supported (GeometryPath and "
                "Scholz2015GeometryPath are)"
            )
        points = []
        point_set = geometry.getPathPointSet()
        for k in range(point_set.getSize()):
            point = point_set.get(k)
            kind = point.getConcreteClassName()
            if kind == "MovingPathPoint":
                spec, moving = _moving_point(osim, point, label, frames, spec)
                points.append(moving)
                continue
            if kind not in ("PathPoint", "ConditionalPathPoint"):
                raise ValueError(
                    f"{label}: path point {point.getName()!r} is a {kind}, not supported "
                    "(PathPoint, ConditionalPathPoint and MovingPathPoint are)"
                )
            body, X_BF = _frame_in_body(point.getParentFrame())
            jw_body, offset = frames[body]
            location = (offset @ X_BF @ np.append(_vec(osim.PathPoint.safeDownCast(point).get_location()), 1.0))[:3]
            condition = None
            if kind == "ConditionalPathPoint":
                conditional = osim.ConditionalPathPoint.safeDownCast(point)
                condition = (conditional.getCoordinate().getName(), conditional.get_range(0), conditional.get_range(1))
            points.append(_Point(point.getName(), jw_body, location, condition))
        found.append((force.getName(), label, geometry, points))
    return spec, found


def _contact_surface(osim, geometry, label: str):
    kind = geometry.getConcreteClassName()
    if kind == "ContactSphere":
        return Sphere(float(osim.ContactSphere.safeDownCast(geometry).getRadius()))
    if kind == "ContactCylinder":
        return Cylinder(float(osim.ContactCylinder.safeDownCast(geometry).getRadius()))
    if kind == "ContactEllipsoid":
        return Ellipsoid(_vec(osim.ContactEllipsoid.safeDownCast(geometry).getRadii()))
    if kind == "ContactTorus":
        torus = osim.ContactTorus.safeDownCast(geometry)
        return Torus(float(torus.getTorusRadius()), float(torus.getTubeRadius()))
    raise ValueError(
        f"{label}: obstacle {geometry.getName()!r} is a {kind} (ContactSphere, ContactCylinder, "
        "ContactEllipsoid and ContactTorus are supported)"
    )


def _scholz_elements(osim, path, label: str, frames) -> list[tuple]:
    """A `Scholz2015GeometryPath`'s elements in path order: ``("point", _Point)`` and
    ``("obstacle", body, X_BS, surface, hint)``, the hint in the surface frame
    (docs/opensim.md#scholz2015geometrypath)."""
    elements = []
    prop = path.getPropertyByName("path_elements")
    points = obstacles = 0
    for i in range(prop.size()):
        kind = prop.getValueAsObject(i).getConcreteClassName()
        if kind == "Scholz2015GeometryPathPoint":
            point = path.getPathPoint(points)
            points += 1
            if point.getConcreteClassName() != "PathPoint":
                raise ValueError(f"{label}: path point {point.getName()!r} is a {point.getConcreteClassName()}")
            body, X_BF = _frame_in_body(point.getParentFrame())
            jw_body, offset = frames[body]
            location = (offset @ X_BF @ np.append(_vec(point.get_location()), 1.0))[:3]
            elements.append(("point", _Point(point.getName(), jw_body, location, None)))
        elif kind == "Scholz2015GeometryPathObstacle":
            geometry = path.getContactGeometry(obstacles)
            hint = _vec(path.getContactHint(obstacles))
            obstacles += 1
            surface = _contact_surface(osim, geometry, label)
            body, X_BF = _frame_in_body(geometry.getFrame())
            jw_body, offset = frames[body]
            elements.append(("obstacle", jw_body, offset @ X_BF @ _simtk_pose(geometry.getTransform()), surface, hint))
        else:
            raise ValueError(f"{label}: path element {i} is a {kind}, not supported")
    if len(elements) < 2 or elements[0][0] != "point" or elements[-1][0] != "point":
        raise ValueError(f"{label}: a Scholz2015GeometryPath must start and end with path points")
    return elements


def _scholz_cable(model: RobotModel, elements: list[tuple], settings) -> CableSpan:
    a, b = elements[0][1], elements[-1][1]
    cable = CableSpan(model.body_index(a.body), a.location, model.body_index(b.body), b.location, settings=settings)
    for element in elements[1:-1]:
        if element[0] == "point":
            cable = cable.add_via_point(model.body_index(element[1].body), element[1].location)
        else:
            _, body, X_BS, surface, hint = element
            X = Transform(X_BS[:3, :3], X_BS[:3, 3])
            cable = cable.add_obstacle(model.body_index(body), X, surface, contact_hint=hint)
    return cable


# At most this many conditional points per path: a branch per combination.
_MAX_CONDITIONAL = 4


def _paths(osim, m, state, model: RobotModel, frames, found, settings, quadrants: bool, probes: int, blend) -> CableSet:
    classic = [g for _, _, g, _ in found if g is not None]
    segments_of, order_of = _wrapped_segments(osim, m, state, classic, probes)
    scholz_settings = settings
    if settings is None:
        # A classic path's obstacles are centimetres in a scene of metres, where Simbody's
        # minimum-length damping crawls (docs/opensim.md#solver-settings); a
        # Scholz2015GeometryPath keeps Simbody's settings, as OpenSim solves it.
        settings = CableSettings(scale_free_step=True)
    q_index = {name: model.q_slice(model.body_joint_names.index(name)).start for name in model.joint_names}
    names, cables, conditions = [], [], []
    p = -1
    for name, label, geometry, points in found:
        if geometry is None:  # a Scholz2015GeometryPath: one CableSpan, element for element
            names.append(name)
            cables.append((_scholz_cable(model, points, scholz_settings),))
            conditions.append(((),))
            continue
        p += 1
        if len(points) < 2:
            raise ValueError(f"{label}: a path needs at least two path points, got {len(points)}")
        conditional = [k for k, point in enumerate(points) if point.condition is not None]
        if len(conditional) > _MAX_CONDITIONAL:
            raise ValueError(
                f"{label}: {len(conditional)} conditional path points; jaxwrap takes at most {_MAX_CONDITIONAL} "
                "per path (one branch per combination)"
            )
        for k in (0, len(points) - 1):
            if points[k].condition is not None:
                raise ValueError(f"{label}: the end point {points[k].name!r} is conditional (not supported)")
        # The path's wraps: (obstacle, first and last path point of its range, the full
        # path's segments where OpenSim applies it, its index in the wrap set).
        wraps = []
        wrap_set = geometry.getWrapSet()
        wrap_names = [wrap_set.get(k).getWrapObject().getName() for k in range(wrap_set.getSize())]
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
            obstacle = (model.body_index(jw_body), X_BS, surface, side)
            wraps.append((obstacle, first, last, segments_of.get((p, k), set()), k))
        branches, branch_conditions = [], []
        for active in itertools.product((True, False), repeat=len(conditional)):
            on = dict(zip(conditional, active))
            kept = [k for k in range(len(points)) if on.get(k, True)]
            cable = None
            for s, (i, j) in enumerate(zip(kept[:-1], kept[1:])):
                if cable is None:
                    a, b = points[kept[0]], points[kept[-1]]
                    cable = CableSpan(
                        model.body_index(a.body), a.location, model.body_index(b.body), b.location, settings=settings
                    )
                if s > 0:
                    cable = cable.add_via_point(model.body_index(points[i].body), points[i].location)
                # Each wrap on the segments of its range where OpenSim applies it (a
                # segment from point i, whatever the points after it), in the order
                # OpenSim's path meets them there: a lifted obstacle is only looked for
                # between its neighbours in that order (docs/opensim.md#which-segment-wrap-objects).
                here = {
                    w: obstacle
                    for obstacle, first, last, segments, w in wraps
                    if i in segments and first - 1 <= i and j <= last - 1
                }
                for w in _path_order(
                    list(here), order_of.get((p, i), {}), wrap_names, f"{label}, segment from {points[i].name!r}"
                ):
                    body, X_BS, surface, side = here[w]
                    X = Transform(X_BS[:3, :3], X_BS[:3, 3])
                    cable = cable.add_obstacle(body, X, surface, side=side)
            branches.append(cable)
            branch_conditions.append(
                tuple(
                    (q_index[points[k].condition[0]], points[k].condition[1], points[k].condition[2], on[k])
                    for k in conditional
                )
            )
        names.append(name)
        cables.append(tuple(branches))
        conditions.append(tuple(branch_conditions))
    return CableSet(names, cables, conditions=conditions, blend=blend)


def load_osim(
    source,
    settings: CableSettings | None = None,
    quadrants: bool = True,
    probes: int = 64,
    blend: float = 0.0,
    constraints: str = "raise",
) -> tuple[RobotModel, CableSet]:
    """Load an OpenSim model's kinematic tree and muscle paths.

    **Arguments:**

    - `source`: a path to an ``.osim`` file or an ``opensim.Model``. OpenSim reads it
      (an optional dependency: ``pip install 'jaxwrap[opensim]'``) and upgrades old
      file versions.
    - `settings`: `CableSettings` for every path. By default a `Scholz2015GeometryPath`
      gets `CableSettings()` (Simbody's, as in OpenSim) and a classic `GeometryPath`
      ``CableSettings(scale_free_step=True)`` (docs/opensim.md#solver-settings).
    - `quadrants`: honour wrap quadrants as wrap sides (default True).
    - `probes`: configurations at which OpenSim is asked which segment each wrap is on.
    - `blend`: 0 (default) switches a `ConditionalPathPoint` on and off at its range as
      OpenSim does; a width > 0 (in the coordinate's units) blends the two paths over
      that width around each bound, so lengths and moment arms stay continuous
      (`CableSet`'s ``blend``).
    - `constraints`: what to do with the model's enforced constraints
      (``CoordinateCouplerConstraint``, ``WeldConstraint``, ...), which jaxwrap does not
      read: ``"raise"`` (default) names them; ``"ignore"`` loads the tree without them,
      every coordinate independent, so ``q`` must satisfy them on the caller's side and
      moment arms are partial derivatives per coordinate, not OpenSim's constrained ones.

    **Returns:** ``(model, cables)``: a `RobotModel` whose ``q`` holds OpenSim's
    coordinates in its coordinate set's order (`model.joint_names` are the coordinate
    names), and a `CableSet` with one cable per path actuator, muscle or path spring, in
    force-set order (docs/opensim.md).

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
    if constraints not in ("raise", "ignore"):
        raise ValueError(f"constraints must be 'raise' or 'ignore', got {constraints!r}")
    constraint_set = m.getConstraintSet()
    enforced = [
        f"{constraint_set.get(i).getConcreteClassName()} {constraint_set.get(i).getName()!r}"
        for i in range(constraint_set.getSize())
        if constraint_set.get(i).isEnforced(state)
    ]
    if enforced and constraints == "raise":
        raise ValueError(
            f"the model has {len(enforced)} enforced constraints ({', '.join(enforced[:4])}"
            f"{', ...' if len(enforced) > 4 else ''}), which jaxwrap does not read: its coordinates would be "
            "independent and its moment arms not OpenSim's constrained ones; pass constraints='ignore' to load "
            "the tree without them (docs/opensim.md#constraints)"
        )
    spec, frames = _model_spec(osim, m)
    coordinates = m.getCoordinateSet()
    spec = spec.with_coordinate_order([coordinates.get(i).getName() for i in range(coordinates.getSize())])
    spec, found = _path_points(osim, m, spec, frames)
    model = RobotModel.from_spec(spec)
    return model, _paths(osim, m, state, model, frames, found, settings, quadrants, probes, blend)
