"""Modular configurations: designs evaluated per second, jaxwrap ``jit(vmap)`` against a plain
NumPy loop of the same formulas and against pinocchio, in one run.

    python benchmarks/modular.py [--batch 4096] [--repeats 7]

One evaluation = one design of the reaching arm (``jaxwrap.modular._reach_example``: eight
design variables) at one joint configuration: forward kinematics, the TCP Jacobian (6 x 3),
mass and CG, energy stability and the TCP deflection under gravity (hollow-tube beams).

- jaxwrap: everything from the design parameters, one batched XLA call for the batch;
- NumPy: the same formulas written out for this arm, one design at a time (checked against
  jaxwrap's numbers before timing);
- pinocchio (if installed): FK + frame Jacobian + centre of mass of the exported URDF per
  design, with the design's joint placements and inertias written into the model in place
  (pinocchio has no energy stability or deflection, so it does less work than the others).

Also printed: the compile times, and the time per step of ``design_search`` (8 starts x 4
targets, Adam). Medians of ``--repeats`` runs; the ratios are what to compare.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import jaxwrap as jw  # noqa: E402
from jaxwrap.modular import _reach_example as ex  # noqa: E402

M = jw.modular
G = np.array([0.0, 0.0, -9.81])


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ---------------------------------------------------------------------------- NumPy reference
def _numpy_constants(config):
    """The fixed (non-design) numbers of the reach arm, read once from the configuration."""
    return {m: {k: float(v) for k, v in d.items()} for m, d in config.params.items()}


def _tube(p, L, D):
    d = D - 2 * p["wall_thickness"]
    return p["density"] * np.pi * (D**2 - d**2) / 4 * L, np.pi * (D**4 - d**4) / 64, np.pi * (D**2 - d**2) / 4, d


def numpy_evaluate(c, values, q):
    """FK, Jacobian, mass/CG, energy stability and deflection of one design (``values``, the
    eight design variables) at ``q`` (3,), written out for the reach arm."""
    L1, L2, L3, D1, D2, D3, fl, fw = values
    base, j1, j2, j3, tool = c["base"], c["j1"], c["j2"], c["j3"], c["tool"]
    z0 = base["height"] + j1["length"] / 2
    r1, r2, r3, lt = j1["radius"], j2["radius"], j3["radius"], tool["length"]
    a = np.cumsum(q)
    e = np.stack([np.cos(a), np.sin(a), np.zeros(3)], axis=1)
    P1 = np.array([0.0, 0.0, z0])
    P2 = P1 + (r1 + L1 + r2) * e[0]
    P3 = P2 + (r2 + L2 + r3) * e[1]
    tcp = P3 + (r3 + L3 + lt) * e[2]
    # Jacobian (linear; angular) about the three vertical axes.
    z = np.array([0.0, 0.0, 1.0])
    J = np.zeros((6, 3))
    for k, P in enumerate((P1, P2, P3)):
        J[:3, k] = np.cross(z, tcp - P)
        J[3:, k] = z
    # Masses: base box, joint housings on their axes, tubes at their middles, the tool.
    tubes = [
        (c["l1"], L1, D1, P1 + r1 * e[0], e[0]),
        (c["l2"], L2, D2, P2 + r2 * e[1], e[1]),
        (c["l3"], L3, D3, P3 + r3 * e[2], e[2]),
    ]
    tube_props = [_tube(p, L, D) for p, L, D, _, _ in tubes]
    masses = [base["mass"], j1["mass"], j2["mass"], j3["mass"]] + [t[0] for t in tube_props] + [tool["mass"]]
    points = [np.array([0.0, 0.0, base["height"] / 2]), P1, P2, P3] + [s + L / 2 * u for (_, L, _, s, u) in tubes]
    points.append(P3 + (r3 + L3 + lt / 2) * e[2])
    masses, points = np.array(masses), np.array(points)
    mass = masses.sum()
    cg = masses @ points / mass
    # Energy stability over the footprint rectangle (vertices counter-clockwise).
    S = np.array([[fl / 2, -fw / 2, 0], [fl / 2, fw / 2, 0], [-fl / 2, fw / 2, 0], [-fl / 2, -fw / 2, 0]])
    up = np.array([0.0, 0.0, 1.0])
    h, outside = [], []
    for k in range(4):
        edge = S[(k + 1) % 4] - S[k]
        u = edge / np.linalg.norm(edge)
        r = cg - S[k]
        r_perp = r - (r @ u) * u
        u_perp = up - (up @ u) * u
        h.append(np.linalg.norm(r_perp) * np.linalg.norm(u_perp) - r_perp @ up)
        n = np.cross(u, up)
        side = np.sign(n @ (-S[k]))
        outside.append(max(-side * (n @ r) / np.linalg.norm(n), 0.0))
    energy = -mass * 9.81 * max(outside) if max(outside) > 0 else mass * 9.81 * min(h)
    # Deflection: each tube a cantilever loaded by everything beyond it.
    dx, dth = np.zeros(3), np.zeros(3)
    for k, ((p, L, _, start, t), (m_tube, I, A, _)) in enumerate(zip(tubes, tube_props)):
        p2 = start + L * t
        # Beyond tube k: the joints after it, the tubes after it, the tool.
        distal = [j for j in range(1, 4) if j > k + 1] + [4 + j for j in range(3) if j > k] + [7]
        F = masses[distal].sum() * G
        N = np.sum(np.cross(points[distal] - p2, masses[distal][:, None] * G), axis=0)
        E = p["youngs_modulus"]
        Gs = E / (2 * (1 + p["poisson_ratio"]))
        w = m_tube / L * G
        Fa, Na, wa = F @ t, N @ t, w @ t
        Fp, Np, wp = F - Fa * t, N - Na * t, w - wa * t
        EI = E * I
        delta = (
            L**3 / (3 * EI) * Fp
            + L**2 / (2 * EI) * np.cross(Np, t)
            + L**4 / (8 * EI) * wp
            + (Fa * L + wa * L**2 / 2) / (E * A) * t
        )
        theta = (
            L**2 / (2 * EI) * np.cross(t, Fp)
            + L / EI * Np
            + L**3 / (6 * EI) * np.cross(t, wp)
            + Na * L / (Gs * 2 * I) * t
        )
        dx += delta + np.cross(theta, tcp - p2)
        dth += theta
    return tcp, J, mass, cg, energy, np.linalg.norm(dx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    n = args.batch
    config = ex.reach_arm()
    space = ex.reach_space(config)
    z = space.random(jax.random.PRNGKey(0), n)
    q = jax.random.uniform(jax.random.PRNGKey(1), (n, 3), minval=-2.0, maxval=2.0)

    def evaluate(config, z, q):
        c = space.apply(config, z)
        tcp = M.end_point_poses(c, q).translation[0]
        mass, cg = M.compute_cg(c, q)
        linear, _ = M.compute_deflections(c, q)
        return tcp, M.compute_jacobian(c, q), mass, cg, M.compute_energy_stability(c, q), linear

    batched = jax.jit(jax.vmap(evaluate, in_axes=(None, 0, 0)))
    start = time.perf_counter()
    compiled = batched.lower(config, z, q).compile()
    compile_s = time.perf_counter() - start
    out = jax.block_until_ready(compiled(config, z, q))
    t_jax = _median(lambda: jax.block_until_ready(compiled(config, z, q)), args.repeats) / n

    consts = _numpy_constants(config)
    values = np.asarray(jax.vmap(space.values)(z))
    qn = np.asarray(q)
    worst = 0.0
    for k in range(0, n, max(1, n // 64)):
        ref = numpy_evaluate(consts, values[k], qn[k])
        for a, b in zip(ref, out):
            worst = max(worst, float(np.max(np.abs(np.asarray(b[k]) - a)) / max(1.0, float(np.max(np.abs(a))))))
    m = min(n, 512)
    t_np = _median(lambda: [numpy_evaluate(consts, values[k], qn[k]) for k in range(m)], max(3, args.repeats // 2)) / m

    print(f"reach arm (3 joints, 8 modules), batch {n}, float64, medians of {args.repeats}")
    print(
        f"  jaxwrap jit(vmap): compile {compile_s:.1f} s; {t_jax * 1e6:8.2f} us per design ({1 / t_jax:,.0f} designs/s)"
    )
    print(
        f"  NumPy loop       : {t_np * 1e6:8.2f} us per design ({1 / t_np:,.0f} designs/s); "
        f"NumPy / jaxwrap = {t_np / t_jax:.1f}x"
    )
    print(f"    (NumPy and jaxwrap agree to {worst:.1e} relative on 64 designs)")
    try:
        import pinocchio as pin
    except ImportError:
        print("  pinocchio        : not installed (pip install -e '.[bench]')")
    else:
        model = pin.buildModelFromXML(M.to_urdf(config))
        data = model.createData()
        tcp_in_body = np.asarray(M._kinematics._tcp_in_body(config, M.module_placements(config)).translation[0])
        frame = model.addFrame(
            pin.Frame("tcp", model.getJointId("j3"), 0, pin.SE3(np.eye(3), tcp_in_body), pin.FrameType.OP_FRAME)
        )
        data = model.createData()
        # Per design: placements and inertias from the design (computed before timing).
        models = jax.jit(jax.vmap(lambda z: M.to_robot_model(space.apply(config, z))))(z[:m])
        placements = np.asarray(models.joint_placements.translation)
        body_masses, coms = np.asarray(models.body_masses), np.asarray(models.body_coms)
        inertias = np.asarray(models.body_inertias)

        def run_pin():
            for k in range(m):
                for j in (2, 3, 4):
                    model.jointPlacements[j - 1].translation = placements[k, j]
                    model.inertias[j - 1] = pin.Inertia(body_masses[k, j], coms[k, j], inertias[k, j])
                pin.forwardKinematics(model, data, qn[k])
                pin.computeFrameJacobian(model, data, qn[k], frame, pin.LOCAL_WORLD_ALIGNED)
                pin.centerOfMass(model, data, qn[k])

        t_pin = _median(run_pin, max(3, args.repeats // 2)) / m
        print(
            f"  pinocchio        : {t_pin * 1e6:8.2f} us per design (FK + Jacobian + CoM only); "
            f"pinocchio / jaxwrap = {t_pin / t_jax:.1f}x"
        )

    # One design-search step: 8 starts x 4 targets, loss and gradient, Adam.
    data = ex.reach_data()
    z0, q0 = ex.random_starts(space, jax.random.PRNGKey(2), 8)
    start = time.perf_counter()
    M.design_search(ex.reach_loss, space, config, z0, q0, data, num_steps=100, steps_per_call=100, progress=False)
    first = time.perf_counter() - start
    t_step = (
        _median(
            lambda: M.design_search(
                ex.reach_loss, space, config, z0, q0, data, num_steps=100, steps_per_call=100, progress=False
            ),
            3,
        )
        / 100
    )
    print(
        f"  design_search    : {t_step * 1e3:.2f} ms per Adam step (8 starts x 4 targets); "
        f"first call (compile) {first:.1f} s"
    )


if __name__ == "__main__":
    main()
