"""Public loaders of model files."""

from __future__ import annotations

import os

from .._kinematics import RobotModel
from ._urdf import read_urdf


def load_urdf(path_or_xml: str | os.PathLike, floating_base: bool = False) -> RobotModel:
    """Load a `RobotModel` from a URDF file path or XML string (meshes are never loaded).

    **Arguments:**

    - `path_or_xml`: a path to a ``.urdf`` file, or the XML text itself.
    - `floating_base`: attach the root link to the world with a free-flyer joint named
      ``root_joint`` (pinocchio's ``JointModelFreeFlyer``).

    Children of a link are ordered by joint name, as urdfdom (and so pinocchio) orders
    them, which makes ``q`` and ``v`` layouts identical to pinocchio's. Mimic tags are
    ignored (mimic joints get their own coordinates), as pinocchio does by default.

    **Raises:** `ValueError` naming the element and attribute for malformed XML, bad
    numbers, cycles, missing links, unknown joint types, zero axes, negative masses or
    inertias that are not positive semi-definite.
    """
    return RobotModel.from_spec(read_urdf(path_or_xml, floating_base=floating_base))
