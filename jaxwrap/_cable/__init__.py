"""Cable wrapping after Simbody's CableSpan (Scholz et al. 2015, natural geodesic variations).

`_span.py` defines the cable, `_geometry.py` the path error/Jacobian/length derivatives,
`_solver.py` the iteration (both algorithms, touchdown and liftoff), `_implicit.py` the
implicit differentiation of the converged path, `_path.py` the outputs.
"""

from ._moment_arms import moment_arms as moment_arms
from ._path import CablePath as CablePath
from ._span import CableSettings as CableSettings, CableSpan as CableSpan
