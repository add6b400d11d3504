"""Obstacle surfaces and geodesics, all in the surface frame S.

One file per surface, the common interface in `_base.py`, the numerical geodesic
shooter (diffrax) in `_geodesic_ode.py`, the touchdown line search in `_touchdown.py`.
"""

from ._base import (
    AbstractSurface as AbstractSurface,
    geodesic_points as geodesic_points,
    shoot_geodesic as shoot_geodesic,
)
from ._cylinder import Cylinder as Cylinder
from ._darboux import darboux_frame as darboux_frame
from ._ellipsoid import Ellipsoid as Ellipsoid
from ._geodesic import Geodesic as Geodesic
from ._geodesic_ode import GeodesicIntegrator as GeodesicIntegrator
from ._heightmap import BicubicHeightMap as BicubicHeightMap
from ._implicit import ImplicitSurface as ImplicitSurface
from ._sphere import Sphere as Sphere
from ._torus import Torus as Torus
from ._touchdown import NearestPointOnLine as NearestPointOnLine, TouchdownSearch as TouchdownSearch
