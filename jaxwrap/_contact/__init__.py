"""Convex-shape contact (hpp-constraints' ConvexShapeContact family) and placement solving."""

from ._complement import (
    ConvexShapeContactComplement as ConvexShapeContactComplement,
    ConvexShapeContactHold as ConvexShapeContactHold,
)
from ._contact import (
    ContactType as ContactType,
    ConvexShapeContact as ConvexShapeContact,
    ForceData as ForceData,
    Selection as Selection,
)
from ._function import (
    AbstractDifferentiableFunction as AbstractDifferentiableFunction,
    constraint_jacobian as constraint_jacobian,
    constraint_value as constraint_value,
    constraint_value_and_jacobian as constraint_value_and_jacobian,
)
from ._projector import (
    LevenbergMarquardt as LevenbergMarquardt,
    ProjectionSolution as ProjectionSolution,
    project as project,
)
from ._shape import ConvexShape as ConvexShape
