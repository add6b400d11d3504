"""Regenerate the MJCF tendon fixtures: ``tests/data/mjcf/*.xml`` and ``mjcf_tendons.npz``.

Models (see ``tests/data/mjcf/README.md`` for their sources and licences):

- the MyoSuite elbows from ``myo_sim`` (``elbow/myoelbow_{1,2}dof6muscles.xml``), with
  their mesh geoms, meshes, textures and materials removed through ``mujoco.MjSpec`` so
  that they compile without the mesh files (tendons use sites, wrap geoms and joints
  only; the stripped and the full models have the same kinematics and tendons);
- MuJoCo's own tendon test models (``mjx/mujoco/mjx/test_data/tendon``): pulleys, fixed
  tendons, side sites, several wraps per tendon.

For every model the script stores MuJoCo's ``ten_length``, ``ten_J`` and which wrap
geoms the path touched (``wrapped``, one flag per ``wrap_type`` entry) after ``mj_forward`` over a sweep of each joint across its range (the others at the middle of
theirs) and random configurations in the joint ranges.

    python tests/reference/generate_mjcf_fixtures.py --myo-sim PATH/TO/myo_sim --mujoco PATH/TO/mujoco

Takes a few seconds. CI does not need MuJoCo's sources: the XML and the npz carry
everything (the live cross-check in the tests needs only the ``mujoco`` package).
"""

from __future__ import annotations

import argparse
import os
import re

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "mjcf")
OUT = os.path.join(HERE, "mjcf_tendons.npz")

MYO = {
    "myoelbow_1dof6muscles": "elbow/myoelbow_1dof6muscles.xml",
    "myoelbow_2dof6muscles": "elbow/myoelbow_2dof6muscles.xml",
}
MUJOCO = {
    "mujoco_tendon": "mjx/mujoco/mjx/test_data/tendon/tendon.xml",
    "mujoco_pulley_fixed_site_wrap": "mjx/mujoco/mjx/test_data/tendon/pulley_fixed_site_wrap.xml",
    "mujoco_wrap_sidesite": "mjx/mujoco/mjx/test_data/tendon/wrap_sidesite.xml",
}
NUM_SWEEP = 25
NUM_RANDOM = 40
UNLIMITED = (-2.0, 2.0)  # sampling range of joints without limits (rad or m)


def strip_meshes(path: str) -> str:
    import mujoco

    spec = mujoco.MjSpec.from_file(path)
    for geom in list(spec.geoms):
        if geom.type == mujoco.mjtGeom.mjGEOM_MESH:
            spec.delete(geom)
        else:
            geom.material = ""
    for collection in (spec.meshes, spec.materials, spec.textures, spec.skins):
        for element in list(collection):
            spec.delete(element)
    xml = spec.to_xml()
    return re.sub(r' material="[^"]*"', "", xml)


def sample_configurations(m, rng) -> np.ndarray:
    lo = np.where(m.jnt_limited, m.jnt_range[:, 0], UNLIMITED[0])
    hi = np.where(m.jnt_limited, m.jnt_range[:, 1], UNLIMITED[1])
    hi = np.minimum(hi, lo + (UNLIMITED[1] - UNLIMITED[0]))
    middle = 0.5 * (lo + hi)
    configs = []
    for j in range(m.njnt):
        for value in np.linspace(lo[j], hi[j], NUM_SWEEP):
            q = middle.copy()
            q[j] = value
            configs.append(q)
    configs.extend(rng.uniform(lo, hi, size=(NUM_RANDOM, m.njnt)))
    return np.asarray(configs)


def dense_tendon_jacobian(m, d) -> np.ndarray:
    """``ten_J`` as an (ntendon, nv) array (MuJoCo stores it sparse, rows by
    ``ten_J_rowadr``/``ten_J_rownnz``, columns ``ten_J_colind``)."""
    J = np.zeros((m.ntendon, m.nv))
    if d.ten_J.size == m.ntendon * m.nv and not hasattr(m, "ten_J_rownnz"):
        return d.ten_J.reshape(m.ntendon, m.nv).copy()
    for i in range(m.ntendon):
        start, count = m.ten_J_rowadr[i], m.ten_J_rownnz[i]
        J[i, m.ten_J_colind[start : start + count]] = d.ten_J[start : start + count]
    return J


def wrapped_geoms(m, d) -> np.ndarray:
    """(nwrap,) whether each geom element of each spatial tendon's definition (in
    ``wrap_type`` order) was wrapped, read from ``wrap_obj``: a site gives one -1 entry, a
    pulley -2, a wrapped geom two entries with its id, an unwrapped geom none."""
    import mujoco

    wrapped = np.zeros(m.nwrap, bool)
    obj = np.asarray(d.wrap_obj).ravel()
    for t in range(m.ntendon):
        adr, num = m.tendon_adr[t], m.tendon_num[t]
        p, end = d.ten_wrapadr[t], d.ten_wrapadr[t] + d.ten_wrapnum[t]
        for w in range(adr, adr + num):
            kind = int(m.wrap_type[w])
            if kind in (int(mujoco.mjtWrap.mjWRAP_SPHERE), int(mujoco.mjtWrap.mjWRAP_CYLINDER)):
                if p < end and obj[p] == m.wrap_objid[w]:
                    wrapped[w] = True
                    p += 2
            elif kind in (int(mujoco.mjtWrap.mjWRAP_SITE), int(mujoco.mjtWrap.mjWRAP_PULLEY)):
                p += 1
    return wrapped


def mujoco_tendons(xml: str, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import mujoco

    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    lengths, jacobians, wrapped = [], [], []
    for q in qpos:
        d.qpos[:] = q
        mujoco.mj_forward(m, d)
        lengths.append(d.ten_length.copy())
        jacobians.append(dense_tendon_jacobian(m, d))
        wrapped.append(wrapped_geoms(m, d))
    return np.asarray(lengths), np.asarray(jacobians), np.asarray(wrapped)


def main() -> None:
    import mujoco

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--myo-sim", required=True, help="a checkout of github.com/MyoHub/myo_sim")
    parser.add_argument("--mujoco", required=True, help="a checkout of github.com/google-deepmind/mujoco")
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    os.makedirs(DATA, exist_ok=True)
    rng = np.random.default_rng(20261203)
    arrays = {}
    sources = [(name, os.path.join(args.myo_sim, rel), True) for name, rel in MYO.items()]
    sources += [(name, os.path.join(args.mujoco, rel), False) for name, rel in MUJOCO.items()]
    for name, path, strip in sources:
        xml = strip_meshes(path) if strip else open(path).read()
        with open(os.path.join(DATA, f"{name}.xml"), "w") as f:
            f.write(xml)
        m = mujoco.MjModel.from_xml_string(xml)
        assert m.nq == m.njnt, f"{name}: only hinge and slide joints are sampled here"
        qpos = sample_configurations(m, rng)
        lengths, jacobians, wrapped = mujoco_tendons(xml, qpos)
        arrays[f"{name}/qpos"] = qpos
        arrays[f"{name}/ten_length"] = lengths
        arrays[f"{name}/ten_J"] = jacobians
        arrays[f"{name}/wrapped"] = wrapped
        print(f"{name}: {m.ntendon} tendons, {m.njnt} joints, {len(qpos)} configurations")
    arrays["mujoco_version"] = np.asarray(mujoco.__version__)
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out} (MuJoCo {mujoco.__version__})")


if __name__ == "__main__":
    main()
