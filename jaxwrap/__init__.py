"""jaxwrap: differentiable cable wrapping, convex-shape contact and modular robots in JAX.

The public API is re-exported here; the implementation lives in private modules, one
concept per file (docs/README.md). Every operation is a free function that takes its
model, cable or surface first (``jw.solve_cable(cable, body_poses)``), so `jax.jit`,
`jax.vmap` and `jax.grad` apply directly; methods of the same names are conveniences.
"""

from . import modular as modular
from ._cable import (
    CablePath as CablePath,
    CableSet as CableSet,
    CableSetPath as CableSetPath,
    CableSettings as CableSettings,
    CableSpan as CableSpan,
    cable_lengths as cable_lengths,
    cable_lengths_and_moment_arms as cable_lengths_and_moment_arms,
    moment_arms as moment_arms,
    moment_arms_from_paths as moment_arms_from_paths,
    solve_cable as solve_cable,
    solve_cables as solve_cables,
)
from ._contact import (
    AbstractDifferentiableFunction as AbstractDifferentiableFunction,
    ContactType as ContactType,
    ConvexShape as ConvexShape,
    ConvexShapeContact as ConvexShapeContact,
    ConvexShapeContactComplement as ConvexShapeContactComplement,
    ConvexShapeContactHold as ConvexShapeContactHold,
    ForceData as ForceData,
    LevenbergMarquardt as LevenbergMarquardt,
    ProjectionSolution as ProjectionSolution,
    constraint_jacobian as constraint_jacobian,
    constraint_value as constraint_value,
    constraint_value_and_jacobian as constraint_value_and_jacobian,
    project as project,
)
from ._io._load import load_urdf as load_urdf
from ._io._mjcf import (
    load_mjcf as load_mjcf,
    q_to_qpos as q_to_qpos,
    qpos_to_q as qpos_to_q,
    qvel_to_v as qvel_to_v,
    v_to_qvel as v_to_qvel,
)
from ._io._osim import load_osim as load_osim
from ._kinematics import (
    PiecewiseCubic as PiecewiseCubic,
    Polynomial as Polynomial,
    RobotModel as RobotModel,
    RobotModelBuilder as RobotModelBuilder,
    body_velocities as body_velocities,
    center_of_mass as center_of_mass,
    difference as difference,
    forward_kinematics as forward_kinematics,
    integrate as integrate,
    jacobian as jacobian,
    neutral as neutral,
    random_configuration as random_configuration,
)
from ._results import RESULTS as RESULTS
from ._sharding import batch_mesh as batch_mesh, sharded_vmap as sharded_vmap
from ._spatial import (
    Transform as Transform,
    rotation_x as rotation_x,
    rotation_y as rotation_y,
    rotation_z as rotation_z,
)
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
    TouchdownSearch as TouchdownSearch,
    geodesic_points as geodesic_points,
    shoot_geodesic as shoot_geodesic,
)

__version__ = "0.1.0"
