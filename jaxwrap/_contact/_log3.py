"""hpp-constraints' SO(3) logarithm, with its analytic derivative.

`log3` reproduces ``logSO3`` of hpp-constraints' tools.hh branch for branch
(docs/contact.md#rotation-logarithm), so contact values agree with hpp to rounding, including
the sign choices near angle pi (set-up A5). Differentiating its ``acos`` would be
ill-conditioned near the identity, so the derivative is given by a custom JVP: with the
tangent ``dR`` of ``R`` and the left-trivialized velocity ``w = unskew(dR R^T)``,
``d log3(R) = Jlog(r) w`` where ``Jlog`` is hpp's ``JlogSO3`` (the inverse of the left
Jacobian of SO(3); identity below angle 1e-6). This is exactly the rotation block of
hpp's analytic relative-transformation Jacobian.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._misc import skew, unskew

# hpp's thresholds: the antisymmetric formula below pi - 1e-2, the diagonal one above;
# first order (theta/sin(theta) = 1) and Jlog = I below 1e-6.
# Jlog uses cot(theta/2) for hpp's sin/(1 - cos), equal up to hpp's rounding error.
_NEAR_PI = 1e-2
_SMALL = 1e-6


def _theta(R: Array) -> Array:
    trace = jnp.trace(R)
    cosine = jnp.clip((trace - 1) / 2, -1.0, 1.0)  # tr > 3 -> 0, tr < -1 -> pi, as hpp
    return jnp.arccos(cosine)


@jax.custom_jvp
def log3(R: Float[Array, "3 3"]) -> Float[Array, "3"]:
    """Rotation vector of `R` (angle in [0, pi]) exactly as hpp-constraints' ``logSO3``."""
    theta = _theta(R)
    antisymmetric = jnp.stack([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    small = theta <= _SMALL
    safe_theta = jnp.where(small, 1.0, theta)
    t = jnp.where(small, 1.0, safe_theta / jnp.sin(safe_theta)) / 2
    regular = t * antisymmetric

    # Near pi: magnitudes from the diagonal, signs from the antisymmetric part.
    c_phi = jnp.cos(theta - jnp.pi)
    beta = theta * theta / (1 + c_phi)
    squared = (jnp.diagonal(R) + c_phi) * beta
    magnitude = jnp.sqrt(jnp.where(squared > 0, squared, 0.0))
    sign = jnp.where(antisymmetric > 0, 1.0, -1.0).astype(R.dtype)
    near_pi = sign * magnitude

    return jnp.where(theta < jnp.pi - _NEAR_PI, regular, near_pi)


def jlog3(r: Float[Array, "3"]) -> Float[Array, "3 3"]:
    """hpp's ``JlogSO3``: ``d log3`` per left-trivialized rotation velocity (NaN-free)."""
    squared = jnp.sum(r * r)
    small = squared < _SMALL**2
    theta = jnp.sqrt(jnp.where(small, 1.0, squared))
    # sin / (1 - cos) as cot(theta / 2): hpp's form loses digits for small angles.
    sin_over = 1 / jnp.tan(theta / 2)
    alpha = 1 / (theta * theta) - sin_over / (2 * theta)
    eye = jnp.eye(3, dtype=r.dtype)
    full = (theta * sin_over / 2) * eye - skew(r) / 2 + alpha * jnp.outer(r, r)
    return jnp.where(small, eye, full)


@log3.defjvp
def _log3_jvp(primals, tangents):
    (R,), (dR,) = primals, tangents
    r = log3(R)
    w = unskew(dR @ R.T)
    return r, jlog3(r) @ w
