"""jaxwrap: differentiable cable wrapping, convex-shape contact and modular robots in JAX.

The public API (see ``shared/reference/api-contract.md``) is re-exported here; the
implementation lives in private modules, one concept per file.
"""

from ._spatial import (
    Transform as Transform,
    rotation_x as rotation_x,
    rotation_y as rotation_y,
    rotation_z as rotation_z,
)
from ._kinematics import RobotModel as RobotModel, RobotModelBuilder as RobotModelBuilder

# --- surfaces and geodesics (jaxwrap/_surfaces) ---
# --- end surfaces ---

__version__ = "0.1.0"
