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
from ._surfaces import (
    AbstractSurface as AbstractSurface,
    BicubicHeightMap as BicubicHeightMap,
    Cylinder as Cylinder,
    Ellipsoid as Ellipsoid,
    Geodesic as Geodesic,
    GeodesicIntegrator as GeodesicIntegrator,
    ImplicitSurface as ImplicitSurface,
    NearestPointOnLine as NearestPointOnLine,
    Sphere as Sphere,
    Torus as Torus,
)
# --- end surfaces ---

from ._cable import (
    CablePath as CablePath,
    CableSettings as CableSettings,
    CableSpan as CableSpan,
    moment_arms as moment_arms,
)

# --- convex-shape contact (jaxwrap/_contact) ---
from ._contact import (
    AbstractDifferentiableFunction as AbstractDifferentiableFunction,
    ContactType as ContactType,
    ConvexShape as ConvexShape,
    ConvexShapeContact as ConvexShapeContact,
    ConvexShapeContactComplement as ConvexShapeContactComplement,
    ConvexShapeContactHold as ConvexShapeContactHold,
    ForceData as ForceData,
    ProjectionSolution as ProjectionSolution,
    project as project,
)
# --- end contact ---

__version__ = "0.1.0"
