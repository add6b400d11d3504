"""What lets cables and contacts ride on a configuration's links (docs/modular.md#co-design).

Cables and contact shapes are defined on `RobotModel` bodies; a configuration's modules sit
in those bodies at placements computed from the design parameters. These helpers give the
body and the traced body-frame numbers of a module point, a joint's tendon pulley and the
base footprint, so a `jaxwrap.CableSpan` or `jaxwrap.ConvexShape` built from them inside a
traced function follows the design: ``jax.grad`` of a moment arm with respect to a pulley
radius or a link length goes through the module placements and the cable solve.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, Real

from .._contact import ConvexShape
from .._spatial import Transform
from .._surfaces import Cylinder
from ._configuration import Configuration
from ._kinematics import module_placements


def module_frame(config: Configuration, module: str) -> tuple[int, Transform]:
    """The body holding ``module`` and the module frame in it (``X_BM``). For a joint
    module, the frame of its output (the joint frame, moving with the joint)."""
    i = config.instance_index(module)
    inst = config.structure.instances[i]
    if config.module_of(i).kind == "joint":
        return inst.output_body, Transform.identity(dtype=config.twists.dtype)
    return inst.body, module_placements(config)[i]


def module_point(
    config: Configuration, module: str, point: Real[ArrayLike, "3"] | Sequence
) -> tuple[int, Float[Array, "3"]]:
    """(body, point in the body frame) of a point given in ``module``'s frame: a cable
    station on a link, say."""
    body, X_BM = module_frame(config, module)
    return body, X_BM.apply(jnp.asarray(point, dtype=config.twists.dtype))


def joint_pulley(config: Configuration, joint: str) -> tuple[int, Transform, Cylinder]:
    """(body, ``X_BS``, surface) of the tendon pulley on a joint module's output: a
    cylinder on the joint axis, of the module's ``pulley_radius``; pass them to
    `CableSpan.add_obstacle`."""
    i = config.instance_index(joint)
    if config.module_of(i).kind != "joint":
        raise ValueError(f"module {joint!r} is not a joint module, so it has no pulley")
    body, X = module_frame(config, joint)
    return body, X, Cylinder(config.params_of(i)["pulley_radius"])


def footprint_shape(config: Configuration, name: str = "footprint") -> ConvexShape:
    """The base's support polygon as a `jaxwrap.ConvexShape` on the base body (body 1),
    for `jaxwrap.ConvexShapeContact` placement constraints (the base standing on a floor).
    Its vertices run clockwise seen from above, so its normal points down, out of the base."""
    return ConvexShape(config.base.support_polygon(config.params_of(0))[::-1], body=1, name=name)
