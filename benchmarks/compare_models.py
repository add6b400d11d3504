"""Check real model files against the library they come from: every path length of an
OpenSim model (``.osim``) against OpenSim, of a MuJoCo model (``.xml``) against MuJoCo's
``ten_length``, at the default pose and at random configurations.

    python benchmarks/compare_models.py Rajagopal2016.osim myolegs.xml --num 8

For each model: the number of paths, the largest length difference, the number of paths
that differ by more than ``--tol``, NaN lengths and unsuccessful results, and the paths
that differ most. OpenSim models load with ``constraints="ignore"``; where a model has
constraints (Rajagopal's patellae follow the knees) each random configuration is first
assembled by OpenSim, so jaxwrap gets a configuration that satisfies them. MuJoCo
configurations draw every hinge and slide uniformly in its range (a circle without one);
ball and free joints stay at ``qpos0``. ``--float32`` runs jaxwrap in float32 (the
reference stays in float64).

Differences are expected where the two libraries compute different paths on purpose:
OpenSim's classic wrap objects approximate the shortest path (docs/opensim.md), and
MuJoCo 4.0 chooses among the sides of a wrap geom differently from the 3.x rule jaxwrap
follows (docs/cable-sets.md#mujoco-rule). The script reports; it does not judge.
"""

from __future__ import annotations

import argparse
import functools
import time

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402

# jaxwrap's result codes by name (`jw.RESULTS`).
_RESULT_NAMES = {int(item._value): name for name, item in jw.RESULTS._name_to_item.items()}


def _opensim_reference(path: str, num: int, seed: int):
    """(names, configurations, lengths) from OpenSim: the default pose, then random ones."""
    import opensim

    model = opensim.Model(path)
    state = model.initSystem()
    coordinates = model.getCoordinateSet()
    n = coordinates.getSize()
    lo = np.array([coordinates.get(i).getRangeMin() for i in range(n)])
    hi = np.array([coordinates.get(i).getRangeMax() for i in range(n)])
    rng = np.random.default_rng(seed)
    forces = model.getForceSet()
    paths = [opensim.PathActuator.safeDownCast(forces.get(i)) for i in range(forces.getSize())]
    paths = [p for p in paths if p is not None]
    constrained = model.getConstraintSet().getSize() > 0
    qs, lengths = [], []
    for k in range(num):
        if k:
            for i in range(n):
                if not coordinates.get(i).getLocked(state):
                    coordinates.get(i).setValue(state, float(rng.uniform(lo[i], hi[i])), False)
            if constrained:
                model.assemble(state)
        model.realizePosition(state)
        qs.append([coordinates.get(i).getValue(state) for i in range(n)])
        lengths.append([p.getLength(state) for p in paths])
    return [p.getName() for p in paths], np.array(qs), np.array(lengths)


def _mujoco_reference(path: str, num: int, seed: int):
    import mujoco

    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    qs, lengths = [], []
    for k in range(num):
        q = m.qpos0.copy()
        for j in range(m.njnt):
            if k and m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE):
                lo, hi = m.jnt_range[j] if m.jnt_limited[j] else (-np.pi, np.pi)
                q[m.jnt_qposadr[j]] = rng.uniform(lo, hi)
        d.qpos[:] = q
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_tendon(m, d)
        qs.append(q)
        lengths.append(d.ten_length.copy())
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, i) for i in range(m.ntendon)]
    return names, np.array(qs), np.array(lengths)


def compare(path: str, num: int, seed: int, tol: float, show: int) -> None:
    start = time.perf_counter()
    if path.endswith(".osim"):
        model, cables = jw.load_osim(path, constraints="ignore")
        names, qs, reference = _opensim_reference(path, num, seed)
        q = jnp.asarray(qs)
    else:
        model, cables = jw.load_mjcf(path)
        names, qs, reference = _mujoco_reference(path, num, seed)
        q = jnp.stack([jw.qpos_to_q(model, jnp.asarray(x)) for x in qs])
    if list(cables.names) != names:
        raise SystemExit(f"{path}: jaxwrap's paths {list(cables.names)[:4]}... are not the reference's {names[:4]}...")
    loaded = time.perf_counter() - start

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, None, 0))
    def solve(model, cables, q):
        paths = jw.solve_cables(cables, jw.forward_kinematics(model, q), q)
        return paths.length, paths.result._value

    start = time.perf_counter()
    lengths, codes = (np.asarray(x) for x in solve(model, cables, q))
    solved = time.perf_counter() - start
    error = np.abs(lengths - reference)
    worst = np.nanmax(error, axis=0, initial=0.0) if len(names) else np.zeros(0)
    print(
        f"{path}: {len(names)} paths, {num} configurations, {lengths.dtype} (load {loaded:.1f} s, "
        f"compile + solve {solved:.1f} s); "
        f"largest difference {np.nanmax(worst, initial=0.0):.3g} m, {int(np.sum(worst > tol))} paths beyond {tol:g} m, "
        f"{int(np.isnan(lengths).sum())} NaN, {int(np.sum(codes != 0))} unsuccessful"
    )
    for k in np.argsort(-worst)[:show]:
        if worst[k] > tol:
            i = int(np.nanargmax(error[:, k]))
            ours, theirs = lengths[i, k], reference[i, k]
            print(f"    {names[k]:24s} {worst[k]:.3g} m at configuration {i}: {ours:.6f} against {theirs:.6f}")
    for i, k in list(zip(*np.nonzero(codes != 0)))[:show]:
        print(
            f"    {names[k]:24s} unsuccessful at configuration {i}: {_RESULT_NAMES[int(codes[i, k])]}, "
            f"length {lengths[i, k]:.6f} against {reference[i, k]:.6f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", help=".osim or MJCF .xml files")
    parser.add_argument("--num", type=int, default=8, help="configurations per model (the first: the default pose)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tol", type=float, default=1e-6, help="length difference (m) reported")
    parser.add_argument("--show", type=int, default=6, help="paths listed per model")
    parser.add_argument(
        "--float32", action="store_true", help="jaxwrap in float32 (x64 off); the reference stays float64"
    )
    args = parser.parse_args()
    if args.float32:
        jax.config.update("jax_enable_x64", False)
    for path in args.models:
        compare(path, args.num, args.seed, args.tol, args.show)


if __name__ == "__main__":
    main()
