"""Regenerate ``gastrocnemius_rajagopal.npz``: the lateral gastrocnemii of the two Rajagopal
models at 64 configurations each (the default pose and 63 random ones), for
``tests/cable/test_stalled_step.py``.

The models come from opensim-models (github.com/opensim-org/opensim-models,
``Models/Rajagopal/Rajagopal2016.osim`` and ``RajagopalLaiUhlrich2023.osim``, Apache 2.0),
which is not vendored here; pass its ``Models/Rajagopal`` folder:

    python tests/reference/generate_gastrocnemius.py /path/to/opensim-models/Models/Rajagopal

Each muscle is a classic ``GeometryPath`` from the femur over two wrap cylinders (the
femoral condyles, on the femur, and the shank, on the tibia, with a wrap side) to the
calcaneus. Stored per muscle (``<model>/<muscle>/...``): its geometry as
``jaxwrap.load_osim`` reads it (stations, each cylinder's placement, radius and side, in
jaxwrap's body frames: each body's joint child frame), and per configuration those
three frames' poses in the femur's from OpenSim (``getTransformInGround``), so a cable built on bodies 0 = femur, 1 = tibia, 2 =
calcaneus reproduces the model's path at that configuration. OpenSim's reported lengths
(``getLength``) are stored for reference. Needs ``opensim`` (4.6) and takes about a minute.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gastrocnemius_rajagopal.npz")
MODELS = ("Rajagopal2016", "RajagopalLaiUhlrich2023")
MUSCLES = ("gaslat_l", "gaslat_r")
NUM = 64


def _child_frame(model, body: str):
    """The frame jaxwrap calls the body's frame: its joint's child frame (docs/opensim.md)."""
    joints = model.getJointSet()
    for i in range(joints.getSize()):
        frame = joints.get(i).getChildFrame()
        if frame.findBaseFrame().getName() == body:
            return frame
    raise ValueError(f"no joint moves {body}")


def _pose(frame, state):
    X = frame.getTransformInGround(state)
    m = X.R().asMat33()
    R = np.array([[m.get(i, j) for j in range(3)] for i in range(3)])
    p = np.array([X.p().get(i) for i in range(3)])
    return R, p


def main(folder: str) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    import opensim

    import jaxwrap as jw

    out = {}
    for name in MODELS:
        path = os.path.join(folder, f"{name}.osim")
        _, cables = jw.load_osim(path, constraints="ignore")
        model = opensim.Model(path)
        state = model.initSystem()
        coordinates = model.getCoordinateSet()
        n = coordinates.getSize()
        lo = np.array([coordinates.get(i).getRangeMin() for i in range(n)])
        hi = np.array([coordinates.get(i).getRangeMax() for i in range(n)])
        rng = np.random.default_rng(0)
        forces = model.getForceSet()
        for muscle in MUSCLES:
            side = muscle[-1]
            bodies = [_child_frame(model, f"{b}_{side}") for b in ("femur", "tibia", "calcn")]
            span = cables[muscle][0]
            assert len(span.obstacles) == 2, muscle
            key = f"{name}/{muscle}"
            out[f"{key}/origin_station"] = np.asarray(span.origin_station)
            out[f"{key}/termination_station"] = np.asarray(span.termination_station)
            # The condyles are on the femur (the origin's body), the shank on the tibia.
            assert span.obstacles[0].body == span.origin_body != span.obstacles[1].body, muscle
            out[f"{key}/obstacle_bodies"] = np.array([0, 1])
            out[f"{key}/obstacle_R"] = np.stack([np.asarray(o.X_BS.rotation) for o in span.obstacles])
            out[f"{key}/obstacle_p"] = np.stack([np.asarray(o.X_BS.translation) for o in span.obstacles])
            out[f"{key}/radius"] = np.array([float(o.surface.radius) for o in span.obstacles])
            out[f"{key}/side"] = np.stack(
                [np.full(3, np.nan) if o.side is None else np.asarray(o.side) for o in span.obstacles]
            )
            force = opensim.PathActuator.safeDownCast(forces.get(muscle))
            R_all, p_all, lengths = [], [], []
            for k in range(NUM):
                if k:
                    for i in range(n):
                        if not coordinates.get(i).getLocked(state):
                            coordinates.get(i).setValue(state, float(rng.uniform(lo[i], hi[i])), False)
                model.realizePosition(state)
                R0, p0 = _pose(bodies[0], state)
                Rs, ps = [], []
                for body in bodies:
                    R, p = _pose(body, state)
                    Rs.append(R0.T @ R)
                    ps.append(R0.T @ (p - p0))
                R_all.append(Rs)
                p_all.append(ps)
                lengths.append(force.getLength(state))
            out[f"{key}/body_R"] = np.array(R_all)
            out[f"{key}/body_p"] = np.array(p_all)
            out[f"{key}/opensim_length"] = np.array(lengths)
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT}: {len(MODELS) * len(MUSCLES)} muscles x {NUM} configurations")


if __name__ == "__main__":
    main(sys.argv[1])
