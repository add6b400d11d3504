"""The README's tour, runnable (tests/test_examples.py runs it)."""

import equinox as eqx
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

import jaxwrap as jw  # noqa: E402

# Kinematics: URDF (jw.load_urdf; meshes are never loaded) or the builder; pinocchio's q/v layouts.
model = (
    jw.RobotModelBuilder("elbow")
    .add_body("humerus", mass=2.0, com=(0, -0.15, 0))
    .add_body("forearm", mass=1.2, com=(0, -0.12, 0))
    .add_joint("shoulder_weld", "fixed", "world", "humerus")
    .add_joint(
        "elbow",
        "revolute",
        "humerus",
        "forearm",
        placement=jw.Transform.from_translation([0, -0.3, 0]),
        axis=(0, 0, 1),
        lower=0.0,
        upper=1.8,
    )
    .build()
)
q = jnp.array([1.2])
X_GB = jw.forward_kinematics(model, q)  # one pose per body, 0 = world
J = jw.jacobian(model, q, "forearm", point=(0, -0.25, 0))  # (6, nv): [linear; angular], world-aligned

# A cable from the back of the humerus over an ellipsoid (distal humerus) and a cylinder on
# the elbow axis to the olecranon: flexion wraps it round the back of the elbow.
humerus, forearm = model.body_index("humerus"), model.body_index("forearm")
cable = (
    jw.CableSpan(humerus, [-0.03, -0.08, 0.0], forearm, [-0.024, -0.005, 0.0])
    .add_obstacle(
        humerus,
        jw.Transform.from_translation([-0.028, -0.22, 0]),
        jw.Ellipsoid(jnp.array([0.01, 0.05, 0.02])),
        contact_hint=[-0.01, 0, 0],
    )
    # side: a point (in the cylinder's frame) behind the axis; the cable keeps to that side.
    .add_obstacle(
        humerus,
        jw.Transform.from_translation([0, -0.3, 0]),
        jw.Cylinder(0.022),
        contact_hint=[-0.022, 0, 0],
        side=[-1, 0, 0],
    )
)
# Functions take the cable and model as arguments: jit once, then any new numbers reuse it.
solve = jax.jit(jw.solve_cable)
path = solve(cable, jw.forward_kinematics(model, q))
print(
    f"length {float(path.length):.6f} m, in contact {path.in_contact.tolist()}, "
    f"converged {bool(path.converged)} in {int(path.num_iterations)} iterations"
)
forces = path.body_forces(100.0)  # (n_bodies, 2, 3) [moment, force] for 100 N
r = jax.jit(jw.moment_arms)(model, cable, q)  # -dL/dq, from the solved path's forces
print(f"moment arm {float(r[0]) * 1e3:.3f} mm")

# A moment-arm curve: every angle solved cold in one jit(vmap) call, no hint tuning (the
# default cold start solves a few starts in parallel, the lifted path and starts beside
# each obstacle, and keeps the shortest taut path; a path flagged converged is a genuine
# taut one).
angles = jnp.linspace(0.0, 1.8, 7)
arms = jax.jit(jax.vmap(lambda m, c, a: jw.moment_arms(m, c, a[None])[0], in_axes=(None, None, 0)))(
    model, cable, angles
)
print("moment arms [mm]:", " ".join(f"{1e3 * float(a):.2f}" for a in arms))

# Warm-started from a previous path, differentiable in the radius.
warm = jax.jit(jw.solve_cable)(cable, jw.forward_kinematics(model, q + 0.01), warm_start=path)


def length_of_radius(radius, cable):
    thicker = eqx.tree_at(lambda c: c.obstacles[1].surface.radius, cable, radius)  # a new cylinder radius
    return jw.solve_cable(thicker, jw.forward_kinematics(model, q)).length


print(f"dL/d(radius) = {float(jax.jit(jax.grad(length_of_radius))(0.022, cable)):.4f}")
