"""Regenerate the OpenSim fixtures: ``osim_arm26.npz`` from ``tests/data/osim/arm26.osim``.

``arm26.osim`` comes from the osim-rl source distribution (``osim/models/arm26.osim``,
github.com/stanfordnmbl/osim-rl), CC BY 3.0: see ``tests/data/osim/README.md``.

With OpenSim 4.6 (``pip install opensim``) the script stores, over a sweep of the elbow
at three shoulder angles and random configurations in the coordinate ranges:

- ``q`` (configurations, 2), in OpenSim's coordinate order;
- ``body_R``, ``body_p``: every body's pose in ground (``getTransformInGround``);
- ``lengths`` (configurations, 6): every muscle's path length (``getLength``);
- ``moment_arms`` (configurations, 6, 2): ``computeMomentArm`` per muscle and coordinate.

    python tests/reference/generate_osim_fixtures.py

Takes a few seconds. CI reads the npz; the live cross-check in the tests needs only the
``opensim`` package.
"""

from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "data", "osim", "arm26.osim")
OUT = os.path.join(HERE, "osim_arm26.npz")


def configurations(coordinate_set, seed: int = 0) -> np.ndarray:
    lo = np.array([coordinate_set.get(i).getRangeMin() for i in range(coordinate_set.getSize())])
    hi = np.array([coordinate_set.get(i).getRangeMax() for i in range(coordinate_set.getSize())])
    sweep = [(s, e) for s in np.linspace(lo[0], hi[0], 3) for e in np.linspace(lo[1], hi[1], 25)]
    rng = np.random.default_rng(seed)
    return np.concatenate([np.array(sweep), rng.uniform(lo, hi, size=(50, len(lo)))])


def evaluate(model, state, q):
    """OpenSim's body poses, muscle lengths and moment arms at configuration ``q``."""
    coordinates = model.getCoordinateSet()
    for i in range(coordinates.getSize()):
        coordinates.get(i).setValue(state, float(q[i]), False)
    model.realizePosition(state)
    bodies = model.getBodySet()
    R, p = [], []
    for b in range(bodies.getSize()):
        X = bodies.get(b).getTransformInGround(state)
        m = X.R().asMat33()
        R.append([[m.get(i, j) for j in range(3)] for i in range(3)])
        p.append([X.p().get(i) for i in range(3)])
    muscles = model.getMuscles()
    lengths = [muscles.get(k).getLength(state) for k in range(muscles.getSize())]
    arms = [
        [muscles.get(k).computeMomentArm(state, coordinates.get(i)) for i in range(coordinates.getSize())]
        for k in range(muscles.getSize())
    ]
    return np.array(R), np.array(p), np.array(lengths), np.array(arms)


def main() -> None:
    import opensim

    model = opensim.Model(MODEL)
    state = model.initSystem()
    q = configurations(model.getCoordinateSet())
    out = [evaluate(model, state, row) for row in q]
    np.savez_compressed(
        OUT,
        q=q,
        body_names=np.array([model.getBodySet().get(b).getName() for b in range(model.getBodySet().getSize())]),
        muscle_names=np.array([model.getMuscles().get(k).getName() for k in range(model.getMuscles().getSize())]),
        body_R=np.array([o[0] for o in out]),
        body_p=np.array([o[1] for o in out]),
        lengths=np.array([o[2] for o in out]),
        moment_arms=np.array([o[3] for o in out]),
        opensim_version=np.array(opensim.__version__),
    )
    print(f"wrote {OUT}: {len(q)} configurations")


if __name__ == "__main__":
    main()
