"""URDF validation at load time: every malformed attribute the importer reads is reported with
the file label, the joint or link, the element and attribute, and what was expected."""

import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

import jaxwrap as jw
from jaxwrap._io._urdf_validation import validate_urdf

REFERENCE_ROBOTS = pathlib.Path(__file__).parents[1] / "reference" / "robots"
PACKAGE_DATA = pathlib.Path(jw.__file__).parent / "data"
S = "<URDF string>: "  # the label of a URDF given as text


def _link(name="a", inertial=""):
    return f'<link name="{name}">{inertial}</link>' if inertial else f'<link name="{name}"/>'


def _inertial(mass='<mass value="1"/>', inertia='ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"', origin=""):
    return f"<inertial>{origin}{mass}<inertia {inertia}/></inertial>"


def _joint(extra="", kind="revolute", name="elbow", parent='<parent link="a"/>', child='<child link="b"/>'):
    head = "<joint" + (f' name="{name}"' if name is not None else "") + (f' type="{kind}"' if kind is not None else "")
    return f"{head}>{parent}{child}{extra}</joint>"


def _robot(*parts, name="bad"):
    head = f'<robot name="{name}">' if name is not None else "<robot>"
    return head + "".join(parts) + "</robot>"


def _arm(joint_extra="", kind="revolute", b_inertial=""):
    """Two links a -> b joined by joint 'elbow'."""
    return _robot(_link("a"), _link("b", b_inertial), _joint(joint_extra, kind))


def _link_only(inertial):
    return _robot(_link("a", inertial))


LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'

# (id, urdf text, exact message expected after the "<URDF string>: " label)
BAD = [
    # <origin xyz rpy> of a joint
    ("joint-origin-xyz-count", _arm('<origin xyz="1 2"/>'),
     """joint 'elbow': <origin xyz="1 2">: xyz has 2 values; expected 3 finite floats"""),
    ("joint-origin-xyz-four", _arm('<origin xyz="1 2 3 4"/>'),
     """joint 'elbow': <origin xyz="1 2 3 4">: xyz has 4 values; expected 3 finite floats"""),
    ("joint-origin-rpy-not-number", _arm('<origin rpy="0 0 x"/>'),
     """joint 'elbow': <origin rpy="0 0 x">: rpy has 'x', which is not a number; expected 3 finite floats"""),
    ("joint-origin-comma", _arm('<origin xyz="1,2,3"/>'),
     """joint 'elbow': <origin xyz="1,2,3">: xyz has 1 value; expected 3 finite floats"""),
    ("joint-origin-nan", _arm('<origin xyz="0 nan 0"/>'),
     """joint 'elbow': <origin xyz="0 nan 0">: xyz has 'nan', which is not finite; expected 3 finite floats"""),
    # <origin> of an <inertial>
    ("inertial-origin-xyz", _link_only(_inertial(origin='<origin xyz="1 2"/>')),
     """link 'a': <inertial><origin xyz="1 2">: xyz has 2 values; expected 3 finite floats"""),
    ("inertial-origin-rpy-inf", _link_only(_inertial(origin='<origin rpy="0 -inf 0"/>')),
     """link 'a': <inertial><origin rpy="0 -inf 0">: rpy has '-inf', which is not finite; expected 3 finite floats"""),
    # <axis xyz>
    ("axis-count", _arm('<axis xyz="0 1"/>' + LIMIT),
     """joint 'elbow': <axis xyz="0 1">: xyz has 2 values; expected 3 finite floats"""),
    ("axis-not-number", _arm('<axis xyz="0 1 z"/>' + LIMIT),
     """joint 'elbow': <axis xyz="0 1 z">: xyz has 'z', which is not a number; expected 3 finite floats"""),
    ("axis-inf", _arm('<axis xyz="0 inf 0"/>' + LIMIT),
     """joint 'elbow': <axis xyz="0 inf 0">: xyz has 'inf', which is not finite; expected 3 finite floats"""),
    ("axis-zero-revolute", _arm('<axis xyz="0 0 0"/>' + LIMIT),
     """joint 'elbow' has a zero axis: <axis xyz="0 0 0">: xyz has zero length; expected a non-zero direction for a revolute joint"""),
    ("axis-zero-continuous", _arm('<axis xyz="0 0 0"/>', kind="continuous"),
     """joint 'elbow' has a zero axis: <axis xyz="0 0 0">: xyz has zero length; expected a non-zero direction for a continuous joint"""),
    ("axis-zero-prismatic", _arm('<axis xyz="0 0 0"/>' + LIMIT, kind="prismatic"),
     """joint 'elbow' has a zero axis: <axis xyz="0 0 0">: xyz has zero length; expected a non-zero direction for a prismatic joint"""),
    # <mass value>
    ("mass-not-number", _link_only(_inertial(mass='<mass value="abc"/>')),
     """link 'a': <inertial><mass value="abc">: value has 'abc', which is not a number; expected one finite float >= 0"""),
    ("mass-negative", _link_only(_inertial(mass='<mass value="-2"/>')),
     """link 'a' has negative mass: <inertial><mass value="-2">: value is -2; expected one finite float >= 0"""),
    ("mass-two-values", _link_only(_inertial(mass='<mass value="1 2"/>')),
     """link 'a': <inertial><mass value="1 2">: value has 2 values; expected one finite float >= 0"""),
    ("mass-nan", _link_only(_inertial(mass='<mass value="nan"/>')),
     """link 'a': <inertial><mass value="nan">: value has 'nan', which is not finite; expected one finite float >= 0"""),
    ("mass-missing-value", _link_only(_inertial(mass="<mass/>")),
     """link 'a': <inertial><mass>: missing attribute value; expected one finite float >= 0"""),
    # <inertia ixx ixy ixz iyy iyz izz>
    ("inertia-not-number", _link_only(_inertial(inertia='ixx="1" ixy="0" ixz="0" iyy="abc" iyz="0" izz="1"')),
     """link 'a': <inertial><inertia iyy="abc">: iyy has 'abc', which is not a number; expected one finite float"""),
    ("inertia-inf", _link_only(_inertial(inertia='ixx="inf" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"')),
     """link 'a': <inertial><inertia ixx="inf">: ixx has 'inf', which is not finite; expected one finite float"""),
    ("inertia-missing", _link_only(_inertial(inertia='ixx="1" ixy="0" ixz="0" iyy="1"')),
     """link 'a': <inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1">: missing attributes iyz, izz; expected all of ixx, ixy, ixz, iyy, iyz, izz"""),
    ("inertia-negative-moment", _link_only(_inertial(inertia='ixx="-1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"')),
     """link 'a' has a non-physical inertia: <inertial><inertia ixx="-1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1">: principal moments [-1.0, 1.0, 1.0] include a negative one; expected a positive semi-definite rotational inertia"""),
    ("inertia-indefinite", _link_only(_inertial(inertia='ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"')),
     """link 'a' has a non-physical inertia: <inertial><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1">: principal moments [-1.0, 1.0, 3.0] include a negative one; expected a positive semi-definite rotational inertia"""),
    # <limit lower upper velocity effort>
    ("limit-lower-not-number", _arm('<limit lower="low" upper="1" effort="1" velocity="1"/>'),
     """joint 'elbow': <limit lower="low">: lower has 'low', which is not a number; expected one finite float"""),
    ("limit-upper-inf", _arm('<limit lower="0" upper="inf" effort="1" velocity="1"/>'),
     """joint 'elbow': <limit upper="inf">: upper has 'inf', which is not finite; expected one finite float"""),
    ("limit-velocity-not-number", _arm('<limit lower="0" upper="1" effort="1" velocity="fast"/>'),
     """joint 'elbow': <limit velocity="fast">: velocity has 'fast', which is not a number; expected one finite float >= 0"""),
    ("limit-effort-two-values", _arm('<limit lower="0" upper="1" effort="1 2" velocity="1"/>'),
     """joint 'elbow': <limit effort="1 2">: effort has 2 values; expected one finite float >= 0"""),
    ("limit-inverted", _arm('<limit lower="1" upper="-1" effort="1" velocity="1"/>'),
     """joint 'elbow' has inverted limits: <limit lower="1" upper="-1">: lower 1 exceeds upper -1; expected lower <= upper"""),
    ("limit-inverted-close", _arm('<limit lower="1.00000001" upper="1" effort="1" velocity="1"/>'),
     """joint 'elbow' has inverted limits: <limit lower="1.00000001" upper="1">: lower 1.00000001 exceeds upper 1; expected lower <= upper"""),
    ("limit-negative-velocity", _arm('<limit lower="0" upper="1" effort="1" velocity="-1"/>'),
     """joint 'elbow' has a negative velocity limit: <limit velocity="-1">: velocity is -1; expected one finite float >= 0"""),
    ("limit-negative-effort", _arm('<limit effort="-5" velocity="1"/>', kind="continuous"),
     """joint 'elbow' has a negative effort limit: <limit effort="-5">: effort is -5; expected one finite float >= 0"""),
    # joints: name, type, <parent link>, <child link>
    ("joint-no-name", _robot(_link("a"), _link("b"), _joint(name=None)),
     """joint #1 (unnamed): <joint type="revolute">: missing attribute name; expected a non-empty joint name"""),
    ("joint-empty-name", _robot(_link("a"), _link("b"), _joint(name="")),
     """joint #1 (unnamed): <joint name="" type="revolute">: missing attribute name; expected a non-empty joint name"""),
    ("joint-no-type", _robot(_link("a"), _link("b"), _joint(kind=None)),
     """joint 'elbow': <joint name="elbow">: missing attribute type; expected one of revolute, continuous, prismatic, fixed, floating, planar"""),
    ("joint-no-parent", _robot(_link("a"), _link("b"), _joint(kind="fixed", parent="")),
     """joint 'elbow': <joint name="elbow" type="fixed">: missing <parent> element; expected a <parent link="..."/> child"""),
    ("joint-parent-without-link", _robot(_link("a"), _link("b"), _joint(kind="fixed", parent="<parent/>")),
     """joint 'elbow': <parent>: missing attribute link; expected the name of the parent link"""),
    ("joint-no-child", _robot(_link("a"), _link("b"), _joint(kind="fixed", child="")),
     """joint 'elbow': <joint name="elbow" type="fixed">: missing <child> element; expected a <child link="..."/> child"""),
    ("joint-child-empty-link", _robot(_link("a"), _link("b"), _joint(kind="fixed", child='<child link=""/>')),
     """joint 'elbow': <child link="">: missing attribute link; expected the name of the child link"""),
    # links and the robot
    ("link-no-name", _robot(_link("a"), "<link/>"),
     """link #2 (unnamed): <link>: missing attribute name; expected a non-empty link name"""),
    ("duplicate-link", _robot(_link("a"), _link("b"), _link("a")),
     """link 'a' is defined twice (links #1 and #3); expected unique link names"""),
    ("duplicate-joint", _robot(_link("a"), _link("b"), _link("c"), _joint(kind="fixed"), _joint(kind="fixed", child='<child link="c"/>')),
     """joint 'elbow' is defined twice (joints #1 and #2); expected unique joint names"""),
    ("robot-no-name", _robot(_link("a"), name=None),
     """robot: <robot>: missing attribute name; expected the robot's name"""),
    # numbers jaxwrap ignores but yourdfpy converts
    ("visual-origin", _link_only('<visual><origin xyz="0 0"/><geometry><sphere radius="1"/></geometry></visual>'),
     """link 'a': <visual><origin xyz="0 0">: xyz has 2 values; expected 3 finite floats"""),
    ("collision-origin", _link_only('<collision><origin rpy="a b c"/><geometry><sphere radius="1"/></geometry></collision>'),
     """link 'a': <collision><origin rpy="a b c">: rpy has 'a', which is not a number; expected 3 finite floats"""),
    ("mimic-multiplier", _robot(_link("a"), _link("b"), _link("c"), _joint(LIMIT), _joint(LIMIT + '<mimic joint="elbow" multiplier="twice"/>', name="wrist", parent='<parent link="b"/>', child='<child link="c"/>')),
     """joint 'wrist': <mimic multiplier="twice">: multiplier has 'twice', which is not a number; expected one finite float"""),
]


@pytest.mark.parametrize("xml, message", [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_urdf_message_names_label_element_attribute_and_expectation(xml, message):
    with pytest.raises(ValueError, match="^" + re.escape(S + message) + "$"):
        jw.load_urdf(xml)


def test_message_names_the_file(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(_arm('<origin xyz="1 2"/>'))
    with pytest.raises(ValueError, match=re.escape(f"""{path}: joint 'elbow': <origin xyz="1 2">: xyz has 2 values""")):
        jw.load_urdf(str(path))


def test_validate_urdf_directly_uses_the_given_label():
    with pytest.raises(ValueError, match=re.escape("""my.urdf: link 'a': <inertial><mass value="abc">""")):
        validate_urdf(ET.fromstring(_link_only(_inertial(mass='<mass value="abc"/>'))), "my.urdf")
    validate_urdf(ET.fromstring(_arm(LIMIT)), "my.urdf")  # a valid tree passes silently


@pytest.mark.parametrize(
    "xml",
    [
        # The triangle inequality (ixx + iyy >= izz, ...) is deliberately not enforced.
        _link_only(_inertial(inertia='ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="3"')),
        # Singular (rank-1) inertias as in anymal_b.urdf, and rounding-size negative moments.
        _link_only(_inertial(inertia='ixx="1e-6" ixy="1e-6" ixz="1e-6" iyy="1e-6" iyz="1e-6" izz="1e-6"')),
        _link_only(_inertial(inertia='ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="-1e-12"')),
        _link_only(_inertial(mass='<mass value="0"/>', inertia='ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"')),
        # A zero axis is harmless on a fixed joint; whitespace of any kind separates numbers.
        _arm('<axis xyz="0 0 0"/>', kind="fixed"),
        _arm('<origin xyz=" 1\t2\n 3 " rpy="0 0 1e-3"/><axis xyz="+0 -1.5 .5E1"/>' + LIMIT),
        # Limits may omit attributes; lower == upper is allowed.
        _arm('<limit lower="0.5" upper="0.5"/>'),
        _arm('<limit effort="0" velocity="0"/>', kind="continuous"),
    ],
    ids=["triangle-violated", "rank-1", "rounding-negative", "all-zero", "zero-axis-fixed", "number-formats", "limit-partial", "limit-zero"],
)
def test_acceptable_urdf_loads(xml):
    jw.load_urdf(xml, floating_base=True)


@pytest.mark.parametrize(
    "path",
    sorted(REFERENCE_ROBOTS.glob("*.urdf")) + sorted(PACKAGE_DATA.glob("*.urdf")),
    ids=lambda p: p.name,
)
def test_reference_robots_load(path):
    validate_urdf(ET.parse(path).getroot(), str(path))
    model = jw.load_urdf(str(path))
    assert model.nq > 0


def test_reference_robots_are_all_covered():
    names = {p.name for p in REFERENCE_ROBOTS.glob("*.urdf")}
    assert {"all_joints.urdf", "anymal_b.urdf", "panda.urdf", "solo12.urdf", "ur5_robot.urdf"} <= names
