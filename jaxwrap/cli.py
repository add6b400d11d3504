"""The ``jaxwrap`` command line: ``jaxwrap demo`` and ``jaxwrap tendons MODEL.xml|MODEL.osim``."""

from __future__ import annotations

import argparse
import functools
import sys
import time
from importlib import resources


def demo_arm_urdf() -> str:
    """The URDF text of the six-axis arm shipped with jaxwrap (``jaxwrap/data/demo_arm.urdf``)."""
    return resources.files("jaxwrap").joinpath("data/demo_arm.urdf").read_text(encoding="utf-8")


def run_kinematics_demo(joint: str = "elbow", num: int = 13, out=None) -> None:
    """Sweep one joint of the demo arm in a single batched (``jit(vmap)``) call and print the
    tool position and the conditioning of its 6 x 6 Jacobian at each angle."""
    import jax
    import jax.numpy as jnp

    import jaxwrap as jw

    out = sys.stdout if out is None else out
    model = jw.load_urdf(demo_arm_urdf())
    tool = model.body_index("tool")
    column = model.joint_names.index(joint)
    lower = float(model.lower_position_limit[column])
    upper = float(model.upper_position_limit[column])
    q0 = jnp.array([0.0, -0.6, 1.2, -0.6, 0.8, 0.0], dtype=model.joint_axes.dtype)

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, 0))
    def sweep(model, angle):
        q = q0.at[column].set(angle)
        X = jw.forward_kinematics(model, q)[tool]
        J = jw.jacobian(model, q, tool)
        singular_values = jnp.linalg.svd(J, compute_uv=False)
        return X.translation, singular_values[0] / singular_values[-1], jnp.prod(singular_values)

    angles = jnp.linspace(lower, upper, num, dtype=q0.dtype)
    start = time.perf_counter()
    tips, condition, manipulability = jax.block_until_ready(sweep(model, angles))
    elapsed = time.perf_counter() - start

    print(f"{model!r}", file=out)
    print(f"sweeping {joint!r} over [{lower:.2f}, {upper:.2f}] rad in one jit(vmap) call ({num} angles)\n", file=out)
    print(f"{'angle [rad]':>11} {'tool x':>9} {'tool y':>9} {'tool z':>9} {'cond(J)':>10} {'manip.':>9}", file=out)
    for a, p, c, m in zip(angles.tolist(), tips.tolist(), condition.tolist(), manipulability.tolist()):
        print(f"{a:11.3f} {p[0]:9.4f} {p[1]:9.4f} {p[2]:9.4f} {c:10.2f} {m:9.2e}", file=out)
    print(f"\ncompile + run: {elapsed * 1e3:.0f} ms", file=out)


def elbow_model_and_cable():
    """The demo's elbow: a humerus welded to the world, a forearm on a revolute elbow (z
    axis, 0 to 1.8 rad of flexion), and an extensor-like cable from the back of the
    humerus over an ellipsoid on the distal humerus and a cylinder at the elbow to the
    olecranon."""
    import jax.numpy as jnp

    import jaxwrap as jw

    b = jw.RobotModelBuilder("elbow")
    b = b.add_body("humerus", mass=2.0, com=(0, -0.15, 0)).add_body("forearm", mass=1.2, com=(0, -0.12, 0))
    b = b.add_joint("shoulder_weld", "fixed", "world", "humerus")
    b = b.add_joint(
        "elbow",
        "revolute",
        "humerus",
        "forearm",
        placement=jw.Transform.from_translation([0, -0.3, 0]),
        axis=(0, 0, 1),
        lower=0.0,
        upper=1.8,
    )
    model = b.build()
    humerus, forearm = model.body_index("humerus"), model.body_index("forearm")
    # Over the distal humerus (an ellipsoid) and the elbow (a cylinder on its axis) to the
    # olecranon, just behind the axis: flexion wraps the cable round the back of the elbow,
    # the side it keeps to (past about 1.5 rad the front is shorter, through the joint).
    cable = (
        jw.CableSpan(humerus, [-0.03, -0.08, 0.0], forearm, [-0.024, -0.005, 0.0])
        .add_obstacle(
            humerus,
            jw.Transform.from_translation([-0.028, -0.22, 0]),
            jw.Ellipsoid(jnp.array([0.01, 0.05, 0.02])),
            contact_hint=[-0.01, 0, 0],
        )
        .add_obstacle(
            humerus,
            jw.Transform.from_translation([0, -0.3, 0]),
            jw.Cylinder(0.022),
            contact_hint=[-0.022, 0, 0],
            side=[-0.05, 0, 0],
        )
    )
    return model, cable


def run_cable_demo(num: int = 13, plot: str | None = "jaxwrap_demo.png", out=None) -> None:
    """Sweep the elbow over its range in one batched call: solve the cable, take the moment
    arm (-dL/dq, from the path's forces), print a table and (with matplotlib) save a plot."""
    import jax
    import jax.numpy as jnp

    import jaxwrap as jw

    out = sys.stdout if out is None else out
    model, cable = elbow_model_and_cable()
    lower, upper = float(model.lower_position_limit[0]), float(model.upper_position_limit[0])
    angles = jnp.linspace(lower, upper, num)

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, None, 0))
    def sweep(model, cable, angle):
        q = angle[None]

        # The moment arm -dL/dv (what jw.moment_arms computes), from the same solve that
        # gives the path, so the program solves once.
        path = jw.solve_cable(cable, jw.forward_kinematics(model, q))
        arm = jw.moment_arms_from_paths(model, cable, q, path)
        return dict(
            length=path.length,
            moment_arm=arm[0],
            iterations=path.num_iterations,
            in_contact=path.in_contact,
            converged=path.converged,
            points=path.points(12),
        )

    start = time.perf_counter()
    result = jax.block_until_ready(sweep(model, cable, angles))
    elapsed = time.perf_counter() - start

    print(f"{model!r}\ncable: humerus -> ellipsoid (distal humerus) -> cylinder (elbow) -> olecranon", file=out)
    print(f"{num} elbow angles solved and differentiated in one jit(vmap) call\n", file=out)
    header = f"{'angle [deg]':>11} {'length [mm]':>12} {'moment arm [mm]':>16} {'iterations':>10} {'contact':>9}"
    print(f"{header} {'ok':>3}", file=out)
    for k, angle in enumerate(angles.tolist()):
        contact = "".join("C" if c else "-" for c in result["in_contact"][k].tolist())
        print(
            f"{angle * 180 / 3.141592653589793:11.1f} {float(result['length'][k]) * 1e3:12.3f} "
            f"{float(result['moment_arm'][k]) * 1e3:16.3f} {int(result['iterations'][k]):10d} {contact:>9} "
            f"{'yes' if bool(result['converged'][k]) else 'NO':>3}",
            file=out,
        )
    print(f"\ncompile + run: {elapsed:.1f} s (contact: C = in contact with ellipsoid, cylinder)", file=out)
    if plot:
        _plot_cable_demo(model, angles, result, plot, out)


def _plot_cable_demo(model, angles, result, path, out) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot written)", file=out)
        return
    import numpy as np

    fig = plt.figure(figsize=(10, 4.5))
    ax = fig.add_subplot(1, 2, 1)
    colors = plt.cm.viridis(np.linspace(0, 1, len(angles)))
    for k in range(0, len(angles), max(1, len(angles) // 6)):
        points = np.asarray(result["points"][k])
        ax.plot(points[:, 0] * 1e3, points[:, 1] * 1e3, "-", color=colors[k], label=f"{np.degrees(angles[k]):.0f} deg")
    circle = plt.Circle((0, -300), 22, fill=False, color="gray")
    ax.add_patch(circle)
    ax.set_aspect("equal")
    ax.set_xlabel("x [mm]")
    ax.set_ylabel("y [mm]")
    ax.set_title("cable path (elbow plane)")
    ax.legend(fontsize=7)
    ax2 = fig.add_subplot(1, 2, 2)
    ax2.plot(np.degrees(angles), np.asarray(result["moment_arm"]) * 1e3, "o-")
    ax2.set_xlabel("elbow flexion [deg]")
    ax2.set_ylabel("moment arm -dL/dq [mm]")
    ax2.set_title("moment arm -dL/dq")
    ax2.grid(True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot written to {path}", file=out)


def run_design_demo(
    num_starts: int = 8, num_steps: int = 1500, plot: str | None = "jaxwrap_design.png", seed: int = 0, out=None
) -> dict:
    """Design search on the 3-joint reaching arm (``jaxwrap.modular._reach_example``): link
    lengths, tube diameters and base footprint from ``num_starts`` random starts at once,
    with a progress bar; prints every start's result and writes a PNG (loss history, the
    arm before and after)."""
    import jax
    import numpy as np

    from jaxwrap import modular as M
    from jaxwrap.modular import _reach_example as ex

    out = out or sys.stdout
    config, data = ex.reach_arm(), ex.reach_data()
    space = ex.reach_space(config)
    z0, q0 = ex.random_starts(space, jax.random.PRNGKey(seed), num_starts)
    print(
        f"design search: {space.size} design variables ({', '.join(f'{m}.{n}' for m, n in space.variables)}), "
        f"{len(ex.TARGETS)} targets x 3 joint angles, {num_starts} random starts, {num_steps} Adam steps",
        file=out,
    )
    start = time.perf_counter()
    result = M.design_search(ex.reach_loss, space, config, z0, q0, data, num_steps=num_steps, steps_per_call=100)
    elapsed = time.perf_counter() - start
    metrics = jax.jit(jax.vmap(lambda z, q: ex.task_metrics(space.apply(config, z), q)))(result.z, result.aux)
    err = np.linalg.norm(np.asarray(metrics["tip"]) - np.asarray(data["targets"]), axis=-1)
    print(f"compile + run: {elapsed:.1f} s", file=out)
    print(" start    loss  max reach err [mm]  min energy [J]  max deflection [mm]  mass [kg]", file=out)
    for k in range(num_starts):
        print(
            f"{k:6d} {float(result.loss[k]):7.3f} {1e3 * err[k].max():19.3f} {float(metrics['energy'][k].min()):15.2f}"
            f" {1e3 * float(metrics['deflection'][k].max()):20.3f} {float(metrics['mass'][k]):10.2f}",
            file=out,
        )
    best = int(result.best)
    values = np.asarray(space.values(result.z[best]))
    print(
        f"best start {best}: " + ", ".join(f"{m}.{n} = {v:.4f}" for (m, n), v in zip(space.variables, values)), file=out
    )
    if plot:
        _plot_design_demo(M, ex, space, config, z0[best], q0[best], result, best, data, plot, out)
    return {"result": result, "metrics": metrics, "reach_error": err, "space": space, "config": config}


def _loss_history_figure(result, best, title, figsize, out):
    """A two-panel figure with every start's loss history on the left (the best in red);
    ``(pyplot, figure, right axes)``, or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot written)", file=out)
        return None
    import numpy as np

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=figsize)
    history = np.asarray(result.history)
    for k in range(history.shape[0]):
        ax.semilogy(history[k], lw=2.0 if k == best else 0.8, color="C3" if k == best else "gray")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("loss")
    ax.set_title(f"{title}, every start (best in red)")
    ax.grid(True, which="both", alpha=0.3)
    return plt, fig, ax2


def _plot_design_demo(M, ex, space, config, z_start, q_start, result, best, data, path, out) -> None:
    figure = _loss_history_figure(result, best, "design search", (11, 4.8), out)
    if figure is None:
        return
    plt, fig, ax2 = figure
    import numpy as np

    targets = np.asarray(data["targets"])
    for z, qs, style, label in [(z_start, q_start, "--", "start"), (result.z[best], result.aux[best], "-", "found")]:
        design = space.apply(config, z)
        p = design.params["base"]
        a, b = float(p["footprint_length"]) / 2, float(p["footprint_width"]) / 2
        ax2.plot([a, a, -a, -a, a], [-b, b, b, -b, -b], style, color="k", lw=1)
        for j, q in enumerate(np.asarray(qs)):
            pts = np.asarray(M.update_pose(design, q).module_poses.translation)
            tcp = np.asarray(M.end_point_poses(design, q).translation)
            line = np.vstack([pts, tcp])
            ax2.plot(
                line[:, 0],
                line[:, 1],
                style,
                color=f"C{j}",
                lw=1.5 if label == "found" else 0.8,
                label=f"{label}" if j == 0 else None,
            )
    ax2.plot(targets[:, 0], targets[:, 1], "kx", ms=9, label="targets")
    ax2.set_aspect("equal")
    ax2.set_title("arm at every target, top view (dashed: start)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot written to {path}", file=out)


def run_tendon_design_demo(
    num_starts: int = 8,
    num_steps: int | None = None,
    plot: str | None = "jaxwrap_tendon_design.png",
    seed: int = 0,
    out=None,
) -> dict:
    """Co-design of the tendon-driven 3-joint arm (``jaxwrap.modular._tendon_example``):
    link lengths, tube diameters, pulley radii and base footprint from ``num_starts``
    random starts at once, holding the arm against gravity with bounded tendon tensions;
    prints every start's result and writes a PNG (loss history, the arm before and after
    with its pulleys)."""
    import jax
    import numpy as np

    from jaxwrap import modular as M
    from jaxwrap.modular import _tendon_example as ex

    out = out or sys.stdout
    num_steps = num_steps or ex.NUM_STEPS
    config, data = ex.tendon_arm(), ex.tendon_data()
    space = ex.tendon_space(config)
    z0, q0 = ex.random_starts(space, jax.random.PRNGKey(seed), num_starts)
    print(
        f"tendon co-design: {space.size} design variables ({', '.join(f'{m}.{n}' for m, n in space.variables)}), "
        f"{len(ex.TARGETS)} targets x 3 joint angles, 6 tendons (max tension {float(data['max_tension']):.0f} N), "
        f"{num_starts} random starts, {num_steps} Adam steps",
        file=out,
    )
    start = time.perf_counter()
    result = M.design_search(
        ex.tendon_loss, space, config, z0, q0, data, optimizer=ex.OPTIMIZER, num_steps=num_steps, steps_per_call=100
    )
    elapsed = time.perf_counter() - start
    metrics = jax.jit(jax.vmap(lambda z, q: ex.tendon_metrics(space.apply(config, z), q, data)))(result.z, result.aux)
    err = np.linalg.norm(np.asarray(metrics["tip"]) - np.asarray(data["targets"]), axis=-1)
    print(f"compile + run: {elapsed:.1f} s", file=out)
    print(
        " start    loss  max reach err [mm]  max torque shortfall [N m]  min energy [J]  max deflection [mm]"
        "  pulley radii [mm]",
        file=out,
    )
    radii = np.asarray(jax.vmap(space.values)(result.z))[:, 6:9]
    for k in range(num_starts):
        print(
            f"{k:6d} {float(result.loss[k]):7.3f} {1e3 * err[k].max():19.3f}"
            f" {float(metrics['shortfall'][k].max()):27.2e} {float(metrics['energy'][k].min()):15.2f}"
            f" {1e3 * float(metrics['deflection'][k].max()):20.3f}   " + " ".join(f"{1e3 * r:5.1f}" for r in radii[k]),
            file=out,
        )
    best = int(result.best)
    values = np.asarray(space.values(result.z[best]))
    print(
        f"best start {best}: " + ", ".join(f"{m}.{n} = {v:.4f}" for (m, n), v in zip(space.variables, values)), file=out
    )
    if plot:
        _plot_tendon_design_demo(M, space, config, z0[best], q0[best], result, best, data, plot, out)
    return {"result": result, "metrics": metrics, "reach_error": err, "space": space, "config": config}


def _plot_tendon_design_demo(M, space, config, z_start, q_start, result, best, data, path, out) -> None:
    figure = _loss_history_figure(result, best, "tendon co-design", (11, 5), out)
    if figure is None:
        return
    plt, fig, ax2 = figure
    import numpy as np

    targets = np.asarray(data["targets"])
    for z, qs, style, label in [(z_start, q_start, "--", "start"), (result.z[best], result.aux[best], "-", "found")]:
        design = space.apply(config, z)
        a = float(design.params["base"]["footprint_width"]) / 2
        ax2.plot([-a, a], [0.0, 0.0], style, color="k", lw=3 if label == "found" else 1)
        for j, q in enumerate(np.asarray(qs)):
            pose = M.update_pose(design, q)
            pts = np.asarray(pose.module_poses.translation)
            line = np.vstack([pts, np.asarray(M.end_point_poses(design, q).translation)])
            width = 1.5 if label == "found" else 0.8
            ax2.plot(line[:, 1], line[:, 2], style, color=f"C{j}", lw=width, label=label if j == 0 else None)
            if label == "found":
                for joint in ("j1", "j2", "j3"):
                    i = design.instance_index(joint)
                    centre = pts[i]
                    r = float(design.params[joint]["pulley_radius"])
                    ax2.add_patch(plt.Circle((centre[1], centre[2]), r, fill=False, color=f"C{j}", lw=0.8))
    ax2.plot(targets[:, 0], targets[:, 1], "kx", ms=9, label="targets")
    ax2.set_aspect("equal")
    ax2.set_xlabel("y [m]")
    ax2.set_ylabel("z [m]")
    ax2.set_title("arm at every target, side view (circles: pulleys)")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot written to {path}", file=out)


def run_tendons(path: str, num: int = 25, plot: str | None = "jaxwrap_tendons.png", out=None) -> None:
    """Load a MuJoCo model's tendons (``.xml``) or an OpenSim model's muscles
    (``.osim``), print each one's length and moment arms at the model's reference pose
    (MuJoCo's ``qpos0``, OpenSim's default coordinate values), and plot every moment arm
    about each hinge or slide joint swept over its range (the others at the reference
    pose); all sweeps are solved in one ``jit(vmap)`` call."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxwrap as jw

    out = sys.stdout if out is None else out
    start = time.perf_counter()
    if str(path).endswith(".osim"):
        import opensim

        osim_model = opensim.Model(str(path))
        model, cables = jw.load_osim(osim_model)
        coordinates = osim_model.getCoordinateSet()
        q0 = jnp.asarray([coordinates.get(i).getDefaultValue() for i in range(coordinates.getSize())])
        pose = "default coordinates"
    else:
        import mujoco

        mj_model = mujoco.MjModel.from_xml_path(path)
        model, cables = jw.load_mjcf(mj_model)
        q0 = jw.qpos_to_q(model, jnp.asarray(mj_model.qpos0))
        pose = "qpos0"
    joints = [
        (name, start_q, start_v)
        for name, kind, start_q, start_v in zip(
            model.body_joint_names, model.body_joint_kinds, model.body_q_starts, model.body_v_starts
        )
        if kind in ("revolute", "prismatic")
    ]
    lower, upper = np.asarray(model.lower_position_limit), np.asarray(model.upper_position_limit)
    configs = [np.asarray(q0)]
    for _, iq, _ in joints:
        lo = lower[iq] if np.isfinite(lower[iq]) else float(q0[iq]) - np.pi
        hi = upper[iq] if np.isfinite(upper[iq]) else float(q0[iq]) + np.pi
        for value in np.linspace(lo, hi, num):
            q = np.array(q0)
            q[iq] = value
            configs.append(q)
    configs = jnp.asarray(np.stack(configs))

    @jax.jit
    @functools.partial(jax.vmap, in_axes=(None, None, 0))
    def evaluate(model, cables, q):
        # One solve of every path gives both (docs/cable-sets.md#moment-arms).
        return jw.cable_lengths_and_moment_arms(model, cables, q)

    lengths, arms = jax.block_until_ready(evaluate(model, cables, configs))
    elapsed = time.perf_counter() - start
    print(f"{model!r}\n{cables!r}: {cables.num_structures()} leg structures", file=out)
    print(f"{len(configs)} configurations solved and differentiated in one jit(vmap) call: {elapsed:.1f} s\n", file=out)
    print(f"reference pose ({pose}): length [mm], moment arms [mm] about the joints they cross", file=out)
    for i, name in enumerate(cables.names):
        crossed = [
            f"{joint} {float(arms[0, i, iv]) * 1e3:+.3f}"
            for joint, _, iv in joints
            if abs(float(arms[0, i, iv])) > 1e-12
        ]
        print(f"  {name:<24} {float(lengths[0, i]) * 1e3:9.3f}   {', '.join(crossed) or '-'}", file=out)
    if plot:
        _plot_tendons(joints, cables.names, configs, arms, num, plot, out)


def _plot_tendons(joints, names, configs, arms, num, path, out) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot written)", file=out)
        return
    import numpy as np

    shown = joints[:12]
    cols = min(3, len(shown))
    rows = -(-len(shown) // cols) if shown else 1
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for k, (joint, iq, iv) in enumerate(shown):
        ax = axes[k // cols][k % cols]
        block = slice(1 + k * num, 1 + (k + 1) * num)
        x = np.asarray(configs[block, iq])
        crossing = 0
        for i, name in enumerate(names):
            y = np.asarray(arms[block, i, iv]) * 1e3
            if np.any(np.abs(y) > 1e-9):
                ax.plot(x, y, label=name)
                crossing += 1
        ax.set_xlabel(f"{joint}")
        ax.set_ylabel("moment arm -dL/dq [mm]")
        ax.grid(True)
        if crossing:
            ax.legend(fontsize=6)
        else:
            ax.set_title("no path crosses this joint", fontsize=8)
    for k in range(len(shown), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"\nplot written to {path}" + (f" (first 12 of {len(joints)} joints)" if len(joints) > 12 else ""), file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jaxwrap", description="jaxwrap command line")
    parser.add_argument(
        "--precision",
        choices=("auto", "float32", "float64"),
        default="auto",
        help="working precision (default auto: float64 on CPU, float32 on a GPU or TPU; docs/performance.md#float32)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a demo (default: the cable-wrapping elbow)")
    demo.add_argument(
        "which",
        nargs="?",
        choices=("cable", "arm", "design", "tendon-design"),
        default="cable",
        help="cable: elbow cable sweep with moment arms; arm: six-axis arm kinematics sweep; "
        "design: modular-arm design search; tendon-design: co-design of a tendon-driven arm and its pulleys",
    )
    demo.add_argument("--num", type=int, default=13, help="number of joint angles (default: 13)")
    demo.add_argument("--joint", default="elbow", help="arm demo: joint to sweep (default: elbow)")
    demo.add_argument("--plot", default=None, help="cable and design demos: PNG to write ('' for none)")
    demo.add_argument("--starts", type=int, default=8, help="design demo: number of random starts (default: 8)")
    demo.add_argument(
        "--steps", type=int, default=None, help="design demos: optimiser steps (default: 1500; tendon-design 2000)"
    )
    tendons = sub.add_parser(
        "tendons",
        help="lengths and moment arms of a MuJoCo model's tendons or an OpenSim model's muscles "
        "(needs mujoco or opensim)",
    )
    tendons.add_argument("model", help="path to an MJCF (.xml) or OpenSim (.osim) file")
    tendons.add_argument("--num", type=int, default=25, help="points per joint sweep (default: 25)")
    tendons.add_argument("--plot", default="jaxwrap_tendons.png", help="PNG to write ('' for none)")
    args = parser.parse_args(argv)
    # The precision is scoped to the command (jaxwrap never changes the global flag):
    # float64 on CPU, float32 on accelerators, unless --precision says otherwise.
    import jax

    precision = args.precision
    if precision == "auto":
        precision = "float64" if jax.default_backend() == "cpu" else "float32"
    with jax.enable_x64(precision == "float64"):
        if args.command == "tendons":
            run_tendons(args.model, args.num, args.plot or None)
        elif args.command == "demo":
            if args.which == "arm":
                run_kinematics_demo(args.joint, args.num)
            elif args.which == "design":
                plot = "jaxwrap_design.png" if args.plot is None else args.plot
                run_design_demo(args.starts, args.steps or 1500, plot or None)
            elif args.which == "tendon-design":
                plot = "jaxwrap_tendon_design.png" if args.plot is None else args.plot
                run_tendon_design_demo(args.starts, args.steps, plot or None)
            else:
                plot = "jaxwrap_demo.png" if args.plot is None else args.plot
                run_cable_demo(args.num, plot or None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
