"""Checks of a raw URDF XML tree, run before yourdfpy parses it.

yourdfpy converts attributes with bare ``float()`` calls, so a malformed number surfaces as
``could not convert string to float: 'abc'`` (or as a numpy shape error, or not at all:
``<origin xyz="1 2">`` or a missing ``<inertia ixx>`` are silently accepted), with no hint of
which joint or link is at fault. `validate_urdf` checks every attribute that jaxwrap's importer
reads, plus the numbers yourdfpy converts on the way, and raises a `ValueError` of the form::

    <label>: <owner>[ has <problem>]: <element attr="raw value">: <what is wrong>; expected <what>

for example ``robot.urdf: joint 'elbow': <origin xyz="1 2">: xyz has 2 values; expected 3
finite floats``. Tree-level checks (unknown joint types, links that are not defined, cycles,
several roots, planar axes) stay with the importer, which runs after this.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
_AXIS_TYPES = ("revolute", "continuous", "prismatic")
_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_ZERO_AXIS = 1e-12  # same threshold as the importer's zero-axis check
_PSD_RTOL = 1e-9  # eigenvalues down to -1e-9 * max|I| are rounding, not a physical error

# Numbers that jaxwrap ignores but yourdfpy still converts with float(): (element under the
# joint, attributes). Checked only so that yourdfpy cannot fail on them without context.
_JOINT_SCALARS = (
    ("mimic", ("multiplier", "offset")),
    ("safety_controller", ("soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity")),
    ("calibration", ("rising", "falling")),
)


def _fmt(value: float) -> str:
    """Short form of a float that still tells apart close values (1 and 1.00000001)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def _tag(element: ET.Element, attrs=None) -> str:
    """Render ``<tag a="v" ...>`` with the given attributes (all present ones by default)."""
    names = element.attrib if attrs is None else [a for a in attrs if a in element.attrib]
    return "<" + " ".join([element.tag, *(f'{a}="{element.attrib[a]}"' for a in names)]) + ">"


class _Reporter:
    """Formats the messages for one owner (a joint, a link or the robot)."""

    def __init__(self, label: str, owner: str):
        self.label = label
        self.owner = owner

    def fail(self, where: str, detail: str, problem: str = "") -> None:
        owner = f"{self.owner} has {problem}" if problem else self.owner
        raise ValueError(f"{self.label}: {owner}: {where}: {detail}")

    def floats(self, element: ET.Element, attr: str, count: int, expected: str, prefix: str = ""):
        """Parse ``element.attrib[attr]`` as ``count`` finite floats; None when it is absent."""
        raw = element.get(attr)
        if raw is None:
            return None
        where = prefix + _tag(element, [attr])
        tokens = raw.split()
        if len(tokens) != count:
            self.fail(where, f"{attr} has {len(tokens)} value{'s' * (len(tokens) != 1)}; expected {expected}")
        values = []
        for token in tokens:
            try:
                if "_" in token:  # float() accepts "1_000"; URDF parsers do not
                    raise ValueError
                value = float(token)
            except ValueError:
                self.fail(where, f"{attr} has {token!r}, which is not a number; expected {expected}")
            if not math.isfinite(value):
                self.fail(where, f"{attr} has {token!r}, which is not finite; expected {expected}")
            values.append(value)
        return values

    def vector3(self, element: ET.Element, attr: str, prefix: str = ""):
        return self.floats(element, attr, 3, "3 finite floats", prefix)

    def scalar(self, element: ET.Element, attr: str, expected: str = "one finite float", prefix: str = ""):
        values = self.floats(element, attr, 1, expected, prefix)
        return None if values is None else values[0]

    def origins(self, parent: ET.Element, prefix: str = "") -> None:
        for origin in parent.findall("origin"):
            self.vector3(origin, "xyz", prefix)
            self.vector3(origin, "rpy", prefix)


def _owner(kind: str, element: ET.Element, index: int) -> str:
    name = element.get("name")
    return f"{kind} {name!r}" if name else f"{kind} #{index} (unnamed)"


def _check_names(label: str, elements: list[ET.Element], kind: str) -> None:
    first: dict[str, int] = {}
    for index, element in enumerate(elements, start=1):
        name = element.get("name")
        if not name:
            _Reporter(label, _owner(kind, element, index)).fail(
                _tag(element), f"missing attribute name; expected a non-empty {kind} name"
            )
        if name in first:
            raise ValueError(
                f"{label}: {kind} {name!r} is defined twice ({kind}s #{first[name]} and #{index}); "
                f"expected unique {kind} names"
            )
        first[name] = index


def _check_link(label: str, link: ET.Element, index: int) -> None:
    report = _Reporter(label, _owner("link", link, index))
    for inertial in link.findall("inertial"):
        report.origins(inertial, "<inertial>")
        for mass in inertial.findall("mass"):
            if mass.get("value") is None:
                report.fail("<inertial>" + _tag(mass), "missing attribute value; expected one finite float >= 0")
            value = report.scalar(mass, "value", "one finite float >= 0", "<inertial>")
            if value < 0:
                report.fail(
                    f"<inertial>{_tag(mass, ['value'])}",
                    f"value is {_fmt(value)}; expected one finite float >= 0",
                    problem="negative mass",
                )
        for inertia in inertial.findall("inertia"):
            where = "<inertial>" + _tag(inertia, _INERTIA)
            # yourdfpy would silently put 1 on a missing diagonal entry and 0 elsewhere.
            missing = [a for a in _INERTIA if a not in inertia.attrib]
            if missing:
                report.fail(
                    where,
                    f"missing attribute{'s' * (len(missing) > 1)} {', '.join(missing)}; expected all of "
                    f"{', '.join(_INERTIA)}",
                )
            ixx, ixy, ixz, iyy, iyz, izz = (report.scalar(inertia, a, prefix="<inertial>") for a in _INERTIA)
            matrix = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
            moments = np.linalg.eigvalsh(matrix)
            scale = max(float(np.max(np.abs(matrix))), np.finfo(float).tiny)
            if moments[0] < -_PSD_RTOL * scale:
                report.fail(
                    where,
                    f"principal moments {[float(f'{m:.6g}') for m in moments]} include a negative one; "
                    "expected a positive semi-definite rotational inertia",
                    problem="a non-physical inertia",
                )
    for kind in ("visual", "collision"):  # ignored by jaxwrap, but parsed by yourdfpy
        for element in link.findall(kind):
            report.origins(element, f"<{kind}>")


def _check_joint(label: str, joint: ET.Element, index: int) -> None:
    report = _Reporter(label, _owner("joint", joint, index))
    kind = joint.get("type")
    if not kind:
        report.fail(_tag(joint), f"missing attribute type; expected one of {', '.join(JOINT_TYPES)}")
    for role in ("parent", "child"):
        element = joint.find(role)
        if element is None:
            report.fail(_tag(joint), f'missing <{role}> element; expected a <{role} link="..."/> child')
        if not element.get("link"):
            report.fail(_tag(element), f"missing attribute link; expected the name of the {role} link")

    report.origins(joint)

    for axis in joint.findall("axis"):
        xyz = report.vector3(axis, "xyz")
        if xyz is not None and kind in _AXIS_TYPES and float(np.linalg.norm(xyz)) < _ZERO_AXIS:
            report.fail(
                _tag(axis, ["xyz"]),
                f"xyz has zero length; expected a non-zero direction for a {kind} joint",
                problem="a zero axis",
            )

    for limit in joint.findall("limit"):
        values = {a: report.scalar(limit, a) for a in ("lower", "upper")}
        for attr in ("velocity", "effort"):
            value = report.scalar(limit, attr, "one finite float >= 0")
            if value is not None and value < 0:
                report.fail(
                    _tag(limit, [attr]),
                    f"{attr} is {_fmt(value)}; expected one finite float >= 0",
                    problem=f"a negative {attr} limit",
                )
        lower, upper = values["lower"], values["upper"]
        if lower is not None and upper is not None and lower > upper:
            report.fail(
                _tag(limit, ["lower", "upper"]),
                f"lower {_fmt(lower)} exceeds upper {_fmt(upper)}; expected lower <= upper",
                problem="inverted limits",
            )

    for tag, attrs in _JOINT_SCALARS:  # ignored by jaxwrap, but parsed by yourdfpy
        for element in joint.findall(tag):
            for attr in attrs:
                report.scalar(element, attr)


def validate_urdf(root: ET.Element, label: str) -> None:
    """Check a parsed URDF tree; raise `ValueError` naming the element and attribute at fault.

    **Arguments:**

    - `root`: the ``<robot>`` element, e.g. from ``xml.etree.ElementTree.fromstring``.
    - `label`: how the file is named in messages (its path, or ``"<URDF string>"``).

    **Raises:** `ValueError` for a non-``<robot>`` root; a robot, link or joint without a name;
    a duplicate link or joint name; a joint without a type, ``<parent link>`` or ``<child link>``;
    an ``<origin xyz/rpy>`` (of a joint, an ``<inertial>``, a ``<visual>`` or a ``<collision>``) or
    ``<axis xyz>`` that is not 3 finite floats; a zero axis on a revolute, continuous or prismatic
    joint; a ``<mass value>`` that is not one finite float >= 0; an ``<inertia>`` missing one of its
    six attributes, with a non-finite one, or that is not positive semi-definite (the principal
    moments are reported; the triangle inequality is *not* enforced, as many published URDFs
    violate it slightly); a ``<limit>`` whose lower/upper/velocity/effort is not a finite float,
    with lower > upper, or a negative velocity or effort; and a ``<mimic>``, ``<safety_controller>``
    or ``<calibration>`` attribute (which yourdfpy converts) that is not one finite float.
    """
    if root.tag != "robot":
        raise ValueError(f"{label}: the root element is <{root.tag}>, expected <robot>")
    if root.get("name") is None:  # yourdfpy needs it (an empty name is fine: the importer uses "robot")
        _Reporter(label, "robot").fail(_tag(root), "missing attribute name; expected the robot's name")
    links = root.findall("link")
    joints = root.findall("joint")
    _check_names(label, links, "link")
    _check_names(label, joints, "joint")
    for index, link in enumerate(links, start=1):
        _check_link(label, link, index)
    for index, joint in enumerate(joints, start=1):
        _check_joint(label, joint, index)
