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
from ._function import AbstractDifferentiableFunction as AbstractDifferentiableFunction
from ._shape import ConvexShape as ConvexShape
from ._projector import ProjectionSolution as ProjectionSolution, project as project
