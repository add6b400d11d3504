"""Kinematic tree models: joints, `RobotModel` and its free functions, the builder."""

from ._builder import RobotModelBuilder as RobotModelBuilder
from ._functions import (
    CoordinateFunction as CoordinateFunction,
    PiecewiseCubic as PiecewiseCubic,
    Polynomial as Polynomial,
)
from ._model import (
    RobotModel as RobotModel,
    body_velocities as body_velocities,
    center_of_mass as center_of_mass,
    difference as difference,
    dof_twists as dof_twists,
    forward_kinematics as forward_kinematics,
    integrate as integrate,
    jacobian as jacobian,
    jacobian_from_poses as jacobian_from_poses,
    neutral as neutral,
    random_configuration as random_configuration,
)
