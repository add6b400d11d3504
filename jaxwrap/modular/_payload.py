"""Payloads: single rigid bodies held by an end effector (Darwin2K ``payload``).

A `Payload` has a world pose and connectors. `set_payload` attaches it rigidly to an end
point *where it is*: the pose relative to the tool's TCP at the given joint values is
stored and kept from then on (Darwin2K's rule), so callers first put the payload where
it should be held, usually with `align_connector_to_pose`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Real

from .._spatial import Transform
from ._configuration import Configuration
from ._kinematics import end_point_poses
from ._module import POINT_MINUS_Z


class Payload(eqx.Module):
    """A rigid payload: ``mass``, ``com`` and ``inertia`` (about the com) in its own frame,
    its world pose ``X_GP`` and its ``connectors`` (frames in the payload frame, z axis
    pointing out, like module connectors)."""

    mass: Float[Array, ""]
    com: Float[Array, "3"]
    inertia: Float[Array, "3 3"]
    X_GP: Transform
    connectors: Transform

    def __init__(self, mass, com=(0.0, 0.0, 0.0), inertia=None, X_GP=None, connectors=None):
        dtype = jnp.result_type(float)
        self.mass = jnp.asarray(mass, dtype=dtype)
        self.com = jnp.asarray(com, dtype=dtype)
        self.inertia = jnp.zeros((3, 3), dtype) if inertia is None else jnp.asarray(inertia, dtype=dtype)
        self.X_GP = Transform.identity(dtype=dtype) if X_GP is None else X_GP
        self.connectors = Transform.identity((1,), dtype=dtype) if connectors is None else connectors
        if self.mass.shape != () or self.com.shape != (3,) or self.inertia.shape != (3, 3):
            raise ValueError("payload mass must be a scalar, com (3,) and inertia (3, 3)")


class AttachedPayload(eqx.Module):
    """A payload held by an end point: its pose ``X_TP`` in the TCP frame is fixed."""

    mass: Float[Array, ""]
    com: Float[Array, "3"]
    inertia: Float[Array, "3 3"]
    X_TP: Transform


def align_connector_to_pose(payload: Payload, connector: int, X_G_target: Transform) -> Payload:
    """Move the payload so that its connector faces the target frame (e.g. a TCP) as an
    attached module's would: turned 180 degrees about its y axis and coincident."""
    C = payload.connectors[connector]
    flip = Transform(jnp.asarray(POINT_MINUS_Z, dtype=C.rotation.dtype), jnp.zeros(3, dtype=C.rotation.dtype))
    return eqx.tree_at(lambda p: p.X_GP, payload, X_G_target @ flip @ C.inverse())


def set_payload(
    config: Configuration, end_point: int | str, payload: Payload, q: Real[ArrayLike, " nq"] | Sequence
) -> Configuration:
    """Attach ``payload`` rigidly to an end point, keeping its current pose relative to the
    TCP at joint values ``q`` (Darwin2K ``setPayload``). Replaces any previous payload."""
    e = config.end_point_index(end_point)
    X_G_tcp = end_point_poses(config, q)[e]
    held = AttachedPayload(payload.mass, payload.com, payload.inertia, X_G_tcp.inverse() @ payload.X_GP)
    payloads = tuple(held if k == e else p for k, p in enumerate(config.payloads))
    return dataclasses.replace(config, payloads=payloads)


def remove_payload(config: Configuration, end_point: int | str) -> Configuration:
    e = config.end_point_index(end_point)
    payloads = tuple(None if k == e else p for k, p in enumerate(config.payloads))
    return dataclasses.replace(config, payloads=payloads)
