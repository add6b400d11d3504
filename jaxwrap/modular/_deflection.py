"""End-effector deflection under tip loads and gravity: hollow tubes as cantilever beams.

Quasi-static and linear (small deflections, docs/modular.md#deflection). Each
`HollowTube` is an Euler-Bernoulli beam clamped at its proximal connector, loaded at its
distal connector by everything beyond it (module and payload weights, end-point loads:
force F and moment N about the distal end) and along its length by its own weight w.
With I = pi (D^4 - d^4) / 64, A = pi (D^2 - d^2) / 4, J = 2 I, G = E / (2 (1 + nu)), t
the tube axis and subscripts perp / ax the parts normal to / along t::

    delta = L^3/(3EI) F_perp + L^2/(2EI) N_perp x t + L^4/(8EI) w_perp + (F_ax L + w_ax L^2 / 2)/(EA)
    theta = L^2/(2EI) t x F_perp + L/(EI) N_perp + L^3/(6EI) t x w_perp + N_ax L/(GJ)

An end point beyond the tube moves by ``delta + theta x (x_tcp - p_distal)`` and turns by
``theta``; contributions of all tubes between it and the base add up. Joints, elbows,
tees, tools and the base are rigid.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float, Real

from .._misc import safe_norm
from ._catalog import HollowTube
from ._configuration import Configuration
from ._kinematics import update_pose
from ._metrics import STANDARD_GRAVITY


def _masses(config: Configuration, X_GM) -> tuple[Array, Array]:
    masses, points = [], []
    for i in range(config.num_modules()):
        m = config.module_of(i).mass_properties(config.params_of(i))
        masses.append(m.mass)
        points.append(X_GM[i].apply(m.com))
    return jnp.stack(masses), jnp.stack(points)


def end_point_deflections(
    config: Configuration,
    q: Real[ArrayLike, " nq"] | Sequence,
    gravity: Real[ArrayLike, "3"] | Sequence = STANDARD_GRAVITY,
) -> tuple[Float[Array, "n_end_points 3"], Float[Array, "n_end_points 3"]]:
    """Linear and angular deflection vectors (world frame) of every end point's TCP under
    the configuration's tip loads (`set_tip_load`), payloads and ``gravity``."""
    s = config.structure
    pose = update_pose(config, q)
    dtype = pose.body_poses.translation.dtype
    g = jnp.asarray(gravity, dtype=dtype)
    n_ep = len(s.end_points)
    m_mod, c_mod = _masses(config, pose.module_poses)
    x_tcp = pose.end_point_poses.translation
    # Payloads: weight at their world centre of mass; tip loads at the TCP.
    m_pay = jnp.stack([jnp.zeros((), dtype) if p is None else p.mass for p in config.payloads]) if n_ep else None
    c_pay = (
        jnp.stack(
            [
                x_tcp[e] if p is None else (pose.end_point_poses[e] @ p.X_TP).apply(p.com)
                for e, p in enumerate(config.payloads)
            ]
        )
        if n_ep
        else None
    )
    dx = jnp.zeros((n_ep, 3), dtype)
    dtheta = jnp.zeros((n_ep, 3), dtype)
    for t, inst in enumerate(s.instances):
        if not isinstance(config.module_of(t), HollowTube):
            continue
        p = config.params_of(t)
        k_in = config.attachments[inst.attachment].child_connector
        C = config.module_of(t).connectors(p)
        X = pose.module_poses[t]
        p1, p2 = X.apply(C[k_in].translation), X.apply(C[1 - k_in].translation)
        L = p["length"]
        axis = (p2 - p1) / L
        below = np.zeros(config.num_modules(), dtype=bool)
        below[list(s.subtree(t))] = True
        below[t] = False
        eps = np.array([below[i] for i in s.end_points], dtype=bool)
        F = jnp.sum(jnp.where(below, m_mod, 0.0)) * g
        N = jnp.sum(jnp.where(below[:, None], jnp.cross(c_mod - p2, m_mod[:, None] * g), 0.0), axis=0)
        if n_ep:
            f = config.tip_forces + m_pay[:, None] * g
            F = F + jnp.sum(jnp.where(eps[:, None], f, 0.0), axis=0)
            arm = jnp.cross(x_tcp - p2, config.tip_forces) + jnp.cross(c_pay - p2, m_pay[:, None] * g)
            N = N + jnp.sum(jnp.where(eps[:, None], arm + config.tip_torques, 0.0), axis=0)
        D = p["outer_diameter"]
        d = HollowTube.inner_diameter(p)
        E = p["youngs_modulus"]
        I = jnp.pi * (D**4 - d**4) / 64.0
        A = jnp.pi * (D**2 - d**2) / 4.0
        G = E / (2.0 * (1.0 + p["poisson_ratio"]))
        w = HollowTube.mass_per_length(p) * g
        F_ax, N_ax, w_ax = F @ axis, N @ axis, w @ axis
        F_perp, N_perp, w_perp = F - F_ax * axis, N - N_ax * axis, w - w_ax * axis
        EI = E * I
        delta = (
            L**3 / (3 * EI) * F_perp
            + L**2 / (2 * EI) * jnp.cross(N_perp, axis)
            + L**4 / (8 * EI) * w_perp
            + (F_ax * L + w_ax * L**2 / 2) / (E * A) * axis
        )
        theta = (
            L**2 / (2 * EI) * jnp.cross(axis, F_perp)
            + L / EI * N_perp
            + L**3 / (6 * EI) * jnp.cross(axis, w_perp)
            + N_ax * L / (G * 2 * I) * axis
        )
        if n_ep:
            dx = dx + jnp.where(eps[:, None], delta + jnp.cross(theta, x_tcp - p2), 0.0)
            dtheta = dtheta + jnp.where(eps[:, None], theta, 0.0)
    return dx, dtheta


def compute_deflections(
    config: Configuration,
    q: Real[ArrayLike, " nq"] | Sequence,
    gravity: Real[ArrayLike, "3"] | Sequence = STANDARD_GRAVITY,
) -> tuple[Float[Array, ""], Float[Array, ""]]:
    """Sums over end points of the linear (m) and angular (rad) TCP deflection magnitudes
    (Darwin2K ``computeDeflections``); see `end_point_deflections`."""
    dx, dtheta = end_point_deflections(config, q, gravity)
    return jnp.sum(safe_norm(dx)), jnp.sum(safe_norm(dtheta))
