"""Regenerate the hpp-constraints values of ``contact_values.json`` with hpp itself.

Requires hpp-python 9.0.2 (``pip install hpp-python==9.0.2``, a large install) and, as its
wheels need, ``LD_LIBRARY_PATH`` pointing at the environment's ``cmeel.prefix/lib``:

    P=$(python -c "import cmeel, os; print(os.path.join(cmeel.__path__[0], '..', 'cmeel.prefix'))")
    LD_LIBRARY_PATH=$P/lib python tests/reference/generate_contact.py [--write]

For every case of ``contact_values.json`` whose set-up hpp can express through SRDF contact
surfaces (floors on a fixed "table" or on the first box, objects on a free-flyer), the
script builds the robot in ``pyhpp``, creates hpp-manipulation's placement constraint
(``Graph.createPlacementConstraint``, whose implicit parts are hpp's ``ConvexShapeContact``
and ``ConvexShapeContactComplement``), evaluates values and Jacobians, and prints the
largest difference with the stored values. ``--write`` stores hpp's values instead (the
``hold`` vectors and the full Jacobians under ``hpp_contact_jacobian`` /
``hpp_complement_jacobian``). CI never runs this script.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).parent
FIXTURE = HERE / "contact_values.json"


def _urdf(name: str) -> str:
    return (
        f'<robot name="{name}"><link name="base"><collision><geometry><box size="2 2 2"/></geometry>'
        "</collision></link></robot>"
    )


def _srdf(name: str, contacts: dict[str, list[list[list[float]]]]) -> str:
    xml = [f'<robot name="{name}">']
    for contact, shapes in contacts.items():
        points = [p for shape in shapes for p in shape]
        indices, offset = [], 0
        for shape in shapes:
            indices += [len(shape), *range(offset, offset + len(shape))]
            offset += len(shape)
        xml.append(
            f'<contact name="{contact}"><link name="base"/>'
            f"<point>{' '.join(str(float(c)) for p in points for c in p)}</point>"
            f"<shape>{' '.join(map(str, indices))}</shape></contact>"
        )
    xml.append("</robot>")
    return "".join(xml)


def build(setup: dict, margin: float):
    """(device, contact function, complement function) of a set-up."""
    import pinocchio
    from pyhpp.manipulation import Device, Graph, Problem
    from pyhpp.manipulation.urdf import loadModelFromString

    device = Device("scene")
    floors, objects = setup["floors"], setup["objects"]
    floor_bodies = {f["body"] for f in floors}
    if floor_bodies == {"world"}:
        # The free-flyer first: pyhpp crashes loading an anchor into an empty device.
        loadModelFromString(device, 0, "obj", "freeflyer", _urdf("obj"), _srdf("obj", {"bottom": [o["points"] for o in objects]}), pinocchio.SE3.Identity())
        loadModelFromString(device, 0, "table", "anchor", _urdf("table"), _srdf("table", {"top": [f["points"] for f in floors]}), pinocchio.SE3.Identity())
        env, objs = ["table/top"], ["obj/bottom"]
    else:  # set-up C: floors on the first box, objects on the second
        loadModelFromString(device, 0, "box1", "freeflyer", _urdf("box1"), _srdf("box1", {"faces": [f["points"] for f in floors]}), pinocchio.SE3.Identity())
        loadModelFromString(device, 0, "box2", "freeflyer", _urdf("box2"), _srdf("box2", {"faces": [o["points"] for o in objects]}), pinocchio.SE3.Identity())
        env, objs = ["box1/faces"], ["box2/faces"]
    graph = Graph("graph", device, Problem(device))
    contact, complement, _hold = graph.createPlacementConstraint("place", objs, env, margin)
    return device, contact.function(), complement.function()


def evaluate(function, q: np.ndarray, nv: int):
    from pyhpp.pinocchio import LiegroupElement

    out = LiegroupElement(function.outputSpace())
    function.value(out, q)
    J = np.zeros((function.outputDerivativeSize(), nv), order="F")
    try:
        function.jacobian(J, q)
    except Exception:  # noqa: BLE001 -- hpp throws for LINE_ON_PLANE
        J = None
    return np.array(out.vector()), J


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store hpp's values in the fixture")
    args = parser.parse_args()
    try:
        import pyhpp  # noqa: F401
    except ImportError:
        print("hpp-python is not installed (pip install hpp-python==9.0.2); nothing to regenerate")
        return 1

    data = json.loads(FIXTURE.read_text())
    worst = 0.0
    for case in data["cases"]:
        if "hold" not in case:
            continue
        setup = data["setups"][case["setup"]]
        device, contact, complement = build(setup, case.get("normal_margin", 0.0))
        q = np.asarray(case["q"], dtype=float)
        nv = device.numberDof()
        value5, J5 = evaluate(contact, q, nv)
        value3, J3 = evaluate(complement, q, nv)
        hold = np.concatenate([value5, value3])
        error = float(np.max(np.abs(hold - np.asarray(case["hold"]))))
        worst = max(worst, error)
        print(f"{case['name']:40s} |hpp - stored| = {error:.3g}")
        if args.write:
            case["hold"] = hold.tolist()
            if J5 is not None:
                case["hpp_contact_jacobian"] = J5.tolist()
            case["hpp_complement_jacobian"] = J3.tolist()
    print(f"largest difference {worst:.3g}")
    if args.write:
        FIXTURE.write_text(json.dumps(data, indent=1))
        print(f"wrote {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
