"""Kinematic tree models: joints, `RobotModel`, its builder and URDF import."""

from ._builder import RobotModelBuilder as RobotModelBuilder
from ._model import RobotModel as RobotModel
