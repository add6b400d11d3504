"""Upstream Simbody test scenes (docs/cable.md#validation) as jaxwrap cables and body poses.

Bodies follow Simbody's mobilized-body indices: 0 = Ground, then creation order. A
Translation or Free mobilizer with zero q places the body at its parent offset with
identity rotation, so every pose here is a pure translation.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

import jaxwrap as jw

Ry90 = np.asarray(jw.rotation_y(np.pi / 2))
Rx90 = np.asarray(jw.rotation_x(np.pi / 2))
Rz90 = np.asarray(jw.rotation_z(np.pi / 2))
I3 = np.eye(3)
TAN_22_5 = np.tan(np.pi / 8)


def T(R=I3, p=(0.0, 0.0, 0.0)) -> jw.Transform:
    return jw.Transform(jnp.asarray(R, float), jnp.asarray(p, float))


def poses(*positions) -> jw.Transform:
    """Ground at the origin followed by translated bodies."""
    points = np.array([(0.0, 0.0, 0.0), *positions], dtype=float)
    return jw.Transform(jnp.broadcast_to(jnp.eye(3), (len(points), 3, 3)), jnp.asarray(points))


def simple_cable() -> tuple[jw.CableSpan, jw.Transform]:
    """testSimpleCable: torus, ellipsoid, torus, cylinder; bodies origin(1), termination(2),
    torusBody(3) at (0,10,0), ellipsoidBody(4) at torusBody + (4,-10,0)."""
    cable = (
        jw.CableSpan(1, [0, 0, 0], 2, [0, 0, 0])
        .add_obstacle(3, T(Ry90, [1, 1, 0]), jw.Torus(10.0, 1.0), contact_hint=[0, -9, 0])
        .add_obstacle(4, T(I3, [0.5, 1, 0]), jw.Ellipsoid(jnp.array([1.0, 1.0, 6.0])), contact_hint=[1, 1, 0.5])
        .add_obstacle(0, T(Ry90, [4, -12, 0]), jw.Torus(10.0, 1.5), contact_hint=[0, 1, 0])
        .add_obstacle(0, T(I3, [-2, -1.5, 0]), jw.Cylinder(2.0), contact_hint=[0, -1, 0])
        .with_settings(curve_segment_accuracy=1e-12, smoothness_tolerance=1e-7, cold_start="hints")
    )
    return cable, poses((0, 0, 0), (-4, 0, 0), (0, 10, 0), (4, 0, 0))


def single_sphere(hint=(1.0, 0.0, 0.0), body_offset=(0.0, 0.0, 0.0), X_BS_offset=(0.0, 0.0, 0.0)):
    """testCableForceOnSingleObstacle / testSolverOptimum: unit sphere on a free body, cable
    from Ground (tan 22.5°, 1, 0) to Ground (tan 22.5°, -1, 0)."""
    cable = jw.CableSpan(0, [TAN_22_5, 1, 0], 0, [TAN_22_5, -1, 0]).add_obstacle(
        1, T(I3, X_BS_offset), jw.Sphere(1.0), contact_hint=hint
    )
    return cable.with_settings(cold_start="hints"), poses(body_offset)


def darboux_reference(surface, p_SP, R_SP, arc_length):
    """CableSubsystemTestHelper's geodesic test (docs/surfaces.md#geodesic-check): integrate the
    unconstrained Darboux-frame ODE x' = t, t' = κn n_s, n' = -κn t - τg (t × n_s),
    b' = τg n_s (κn = -k, τg = -τ, n_s the surface normal at x) from the projected P at
    accuracy 1e-13. Returns the end point and frame (columns t, n, b)."""
    import diffrax

    def field(s, y, args):
        x, t = y[:3], y[3:6]
        n_s = surface.normal(x)
        kappa = surface.normal_curvature(x, t)
        tau_g = -surface.geodesic_torsion(x, t)
        return jnp.concatenate([t, kappa * n_s, -kappa * t - tau_g * jnp.cross(t, n_s), tau_g * n_s])

    y0 = jnp.concatenate([surface.project(p_SP), R_SP[:, 0], R_SP[:, 1], R_SP[:, 2]])
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(field), diffrax.Dopri8(), 0.0, arc_length, None, y0,
        stepsize_controller=diffrax.PIDController(rtol=1e-13, atol=1e-13), max_steps=100_000,
    )
    y1 = sol.ys[-1]
    return y1[:3], jnp.stack([y1[3:6], y1[6:9], y1[9:]], axis=-1)
