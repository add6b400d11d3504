"""`benchmarks/opensim_models.py --warm`'s trajectories: every configuration in its
coordinate's range, locked coordinates at their default, and each step at most
``step`` times its coordinate's range (reflected at the bounds, never jumping)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "benchmarks"))
import opensim_models  # noqa: E402


class _Coordinate:
    def __init__(self, lo, hi, locked=False, default=0.0):
        self.lo, self.hi, self.locked, self.default = lo, hi, locked, default

    def getRangeMin(self):  # noqa: N802 (OpenSim's names)
        return self.lo

    def getRangeMax(self):  # noqa: N802
        return self.hi

    def getDefaultLocked(self):  # noqa: N802
        return self.locked

    def getDefaultValue(self):  # noqa: N802
        return self.default


class _CoordinateSet:
    def __init__(self, coordinates):
        self.coordinates = coordinates

    def getSize(self):  # noqa: N802
        return len(self.coordinates)

    def get(self, i):
        return self.coordinates[i]


def test_trajectories_stay_in_range_and_move_by_small_steps():
    coordinates = _CoordinateSet(
        [_Coordinate(-1.5, 2.0), _Coordinate(0.0, 0.3), _Coordinate(-1.0, 1.0, locked=True, default=0.25)]
    )
    step = 0.05
    q = opensim_models._trajectories(coordinates, trajectories=32, steps=80, step=step)
    assert q.shape == (32, 80, 3)
    lo, hi = np.array([-1.5, 0.0, -1.0]), np.array([2.0, 0.3, 1.0])
    assert np.all(q[..., :2] >= lo[:2] - 1e-12) and np.all(q[..., :2] <= hi[:2] + 1e-12)
    np.testing.assert_array_equal(q[..., 2], 0.25)
    moves = np.abs(np.diff(q, axis=1))
    assert np.all(moves[..., :2] <= step * (hi - lo)[:2] + 1e-12)
    assert np.all(moves[..., :2].max(axis=1) > 0.4 * step * (hi - lo)[:2])  # every coordinate moves
    # 80 steps of up to 5 % of the narrow range reach its bounds and come back.
    assert q[..., 1].min() < 0.02 and q[..., 1].max() > 0.28
