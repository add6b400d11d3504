"""Cable wrapping after Simbody's CableSpan (Scholz et al. 2015, natural geodesic variations).

Layers, each importing only those above it in this list: `_definition.py` (settings,
path elements, the abstract cable), `_state.py` (scene and curve state),
`_geometry.py` (path error, its Jacobian, length derivatives), `_solver.py` (the loop:
touchdown and liftoff, both algorithms), `_path.py` (the outputs), `_solve.py` (the
entry point `solve_cable` and implicit differentiation), `_span.py` (the concrete
`CableSpan`), `_set.py` (`CableSet`: many cables, solved leg structure by leg
structure), `_moment_arms.py`.
"""

from ._definition import CableSettings as CableSettings
from ._moment_arms import moment_arms as moment_arms
from ._path import CablePath as CablePath
from ._set import (
    CableSet as CableSet,
    CableSetPath as CableSetPath,
    cable_lengths as cable_lengths,
    cable_lengths_and_moment_arms as cable_lengths_and_moment_arms,
    moment_arms_from_paths as moment_arms_from_paths,
    solve_cables as solve_cables,
)
from ._solve import solve_cable as solve_cable
from ._span import CableSpan as CableSpan
