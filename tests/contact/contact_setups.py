"""Set-ups of the contact tests: the hpp fixtures and the models built from them."""

from __future__ import annotations

import json
import pathlib

import jaxwrap as jw

REFERENCE = pathlib.Path(__file__).parents[1] / "reference"
VALUES = json.loads((REFERENCE / "contact_values.json").read_text())


def free_flyers(*names: str) -> jw.RobotModel:
    """One free-flying body per name, each jointed to the world (q = 7 per body)."""
    builder = jw.RobotModelBuilder("scene")
    for name in names:
        builder = builder.add_body(name, mass=1.0).add_joint(f"{name}/root_joint", "floating", "world", name)
    return builder.build()


def build_setup(name: str, cls=jw.ConvexShapeContactHold, **kwargs):
    """A contact function (hold by default) of a fixture set-up, and its model."""
    setup = VALUES["setups"][name]
    model = free_flyers(*setup["bodies"])
    floors = [jw.ConvexShape(f["points"], body=0 if f["body"] == "world" else f["body"]) for f in setup["floors"]]
    objects = [jw.ConvexShape(o["points"], body=o["body"]) for o in setup["objects"]]
    return cls(model, floors, objects, **kwargs)
