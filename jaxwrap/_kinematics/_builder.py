"""`RobotModelBuilder`: programmatic construction of a `RobotModel`.

The builder is an immutable `ModelSpec`: ``add_body`` and ``add_joint`` return a new
builder, so partial robots can be shared and extended. ``build()`` validates the whole
tree and freezes it into a `RobotModel`.
"""

from __future__ import annotations

import dataclasses

from ._model import RobotModel
from ._spec import ModelSpec


@dataclasses.dataclass(frozen=True)
class RobotModelBuilder(ModelSpec):
    """Build a `RobotModel` body by body.

    Example::

        b = jw.RobotModelBuilder("arm")
        b = b.add_body("upper", mass=1.0, com=(0, 0, 0.15))
        b = b.add_joint("shoulder", "revolute", parent="world", child="upper",
                        axis=(0, 1, 0), lower=-2.0, upper=2.0)
        model = b.build()
    """

    def build(self) -> RobotModel:
        """Validate and freeze into a `RobotModel`.

        **Raises:** `ValueError` for a missing parent or child, a link with two parents,
        a cycle, a body not connected to the world, or no body at all.
        """
        return RobotModel.from_spec(self)
