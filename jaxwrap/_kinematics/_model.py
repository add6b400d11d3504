"""`RobotModel`: a kinematic tree with array parameters, pinocchio's conventions.

Structure (parents, joint kinds, index offsets, names) is static and lives in Python
tuples, bookkept once at construction like MJX does; every number (joint placements,
axes, inertias, limits) is an array leaf, so gradients flow to link lengths and masses and
models batch under ``vmap``. Forward kinematics is a branch-free pass over the bodies in
topological order, unrolled at trace time.

Conventions:

- Body 0 is the world (ground); the others follow in depth-first order from the root.
  Every body has exactly one parent joint (possibly ``fixed``), the frame of the child
  body coinciding with the joint frame after motion, as in URDF.
- ``X_GB``: pose of body B in ground G; ``X_PJ``: the joint frame J in the parent body P
  (the URDF joint origin); ``X_JB(q)``: the joint's motion.
- Jacobians are 6 x nv with rows ``[linear; angular]`` expressed in ground at the
  requested point (pinocchio's LOCAL_WORLD_ALIGNED); spatial velocities are
  ``[angular, linear]`` arrays of shape (2, 3), the jaxwrap contract's order.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from .._spatial import Transform, unskew
from ._joints import JOINT_KINDS, rotation_about_axis


class RobotModel(eqx.Module):
    """A kinematic tree over bodies connected by joints; build with
    :meth:`RobotModel.from_urdf` or :class:`jaxwrap.RobotModelBuilder`.

    Array fields (differentiable, batchable): ``joint_placements`` (``X_PJ`` per body),
    ``joint_axes``, ``body_masses``, ``body_coms`` (in the body frame),
    ``body_inertias`` (about the centre of mass, body frame), and the joint limits
    ``lower_position_limit`` / ``upper_position_limit`` (nq), ``velocity_limit`` /
    ``effort_limit`` (nv), with ``inf`` where a coordinate is unbounded.
    """

    joint_placements: Transform
    joint_axes: Float[Array, "n_bodies 3"]
    body_masses: Float[Array, " n_bodies"]
    body_coms: Float[Array, "n_bodies 3"]
    body_inertias: Float[Array, "n_bodies 3 3"]
    lower_position_limit: Float[Array, " nq"]
    upper_position_limit: Float[Array, " nq"]
    velocity_limit: Float[Array, " nv"]
    effort_limit: Float[Array, " nv"]

    name: str = eqx.field(static=True)
    body_names: tuple[str, ...] = eqx.field(static=True)
    body_joint_names: tuple[str, ...] = eqx.field(static=True)
    body_joint_kinds: tuple[str, ...] = eqx.field(static=True)
    body_parents: tuple[int, ...] = eqx.field(static=True)
    body_q_starts: tuple[int, ...] = eqx.field(static=True)
    body_v_starts: tuple[int, ...] = eqx.field(static=True)
    nq: int = eqx.field(static=True)
    nv: int = eqx.field(static=True)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_urdf(cls, path_or_xml: str, floating_base: bool = False) -> RobotModel:
        """Load a model from a URDF file path or XML string (meshes are never loaded).

        **Arguments:**

        - `path_or_xml`: a path to a ``.urdf`` file, or the XML text itself.
        - `floating_base`: attach the root link to the world with a free-flyer joint
          named ``root_joint`` (pinocchio's ``JointModelFreeFlyer``).

        Children of a link are ordered by joint name, as urdfdom (and so pinocchio)
        orders them, which makes ``q`` and ``v`` layouts identical to pinocchio's. Mimic
        tags are ignored (mimic joints get their own coordinates), as pinocchio does by
        default.

        **Raises:** `ValueError` naming the element for malformed XML, cycles, missing
        links, unknown joint types, zero axes or negative masses.
        """
        from ._urdf import builder_from_urdf

        return builder_from_urdf(path_or_xml, floating_base=floating_base).build()

    # ------------------------------------------------------------------ structure
    @property
    def num_bodies(self) -> int:
        return len(self.body_names)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the joints with coordinates (nq > 0), in ``q`` order (pinocchio's ``names[1:]``)."""
        return tuple(
            name
            for name, kind in zip(self.body_joint_names[1:], self.body_joint_kinds[1:])
            if JOINT_KINDS[kind].nq > 0
        )

    def body_index(self, name: str) -> int:
        """Index of the body (URDF link) called ``name``; 0 is ``"world"``."""
        try:
            return self.body_names.index(name)
        except ValueError:
            raise ValueError(f"no body named {name!r}; bodies are {list(self.body_names)}") from None

    def _resolve_body(self, body: int | str) -> int:
        if isinstance(body, str):
            return self.body_index(body)
        body = int(body)
        if not 0 <= body < self.num_bodies:
            raise ValueError(f"body index {body} out of range [0, {self.num_bodies})")
        return body

    def ancestors(self, body: int | str) -> tuple[int, ...]:
        """Bodies from ``body`` up to (excluding) the world, child first."""
        chain = []
        b = self._resolve_body(body)
        while b > 0:
            chain.append(b)
            b = self.body_parents[b]
        return tuple(chain)

    @property
    def total_mass(self) -> Array:
        """Mass of the bodies that can move (pinocchio's ``computeTotalMass``: bodies welded to
        the world by fixed joints, such as a fixed-base robot's base link, are left out)."""
        return jnp.sum(self.body_masses * self._moving_mask())

    def _moving_mask(self) -> np.ndarray:
        moving = np.zeros(self.num_bodies, dtype=bool)
        for b in range(1, self.num_bodies):
            moving[b] = moving[self.body_parents[b]] or self.body_joint_kinds[b] != "fixed"
        return moving

    def _q_slice(self, b: int) -> slice:
        start = self.body_q_starts[b]
        return slice(start, start + JOINT_KINDS[self.body_joint_kinds[b]].nq)

    def _v_slice(self, b: int) -> slice:
        start = self.body_v_starts[b]
        return slice(start, start + JOINT_KINDS[self.body_joint_kinds[b]].nv)

    def _check(self, x: ArrayLike, size: int, what: str) -> Array:
        x = jnp.asarray(x)
        if x.shape != (size,):
            raise ValueError(
                f"{what} must have shape ({size},) for model {self.name!r}, got {x.shape}; "
                "batch with jax.vmap"
            )
        if not jnp.issubdtype(x.dtype, jnp.floating):
            x = x.astype(self.joint_axes.dtype)
        return x

    def _check_q(self, q: ArrayLike) -> Array:
        return self._check(q, self.nq, "q (nq)")

    def _check_v(self, v: ArrayLike) -> Array:
        return self._check(v, self.nv, "v (nv)")

    # ------------------------------------------------------------------ configuration space
    def neutral(self) -> Float[Array, " nq"]:
        """The neutral configuration (zero angles, identity quaternions)."""
        dtype = self.joint_axes.dtype
        parts = [JOINT_KINDS[k].neutral(dtype) for k in self.body_joint_kinds[1:]]
        return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=dtype)

    def random_configuration(self, key: Array) -> Float[Array, " nq"]:
        """A random configuration: uniform within the position limits, uniform rotations for
        unbounded angles and quaternions; unbounded translations are drawn from [-1, 1]."""
        keys = jax.random.split(key, self.num_bodies)
        parts = []
        for b in range(1, self.num_bodies):
            kind = JOINT_KINDS[self.body_joint_kinds[b]]
            sl = self._q_slice(b)
            parts.append(kind.random(keys[b], self.lower_position_limit[sl], self.upper_position_limit[sl]))
        return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=self.joint_axes.dtype)

    def integrate(self, q: ArrayLike, v: ArrayLike) -> Float[Array, " nq"]:
        """``q ⊕ v``: move each joint along its group's exponential (pinocchio ``integrate``)."""
        q, v = self._check_q(q), self._check_v(v)
        parts = [
            JOINT_KINDS[self.body_joint_kinds[b]].integrate(q[self._q_slice(b)], v[self._v_slice(b)])
            for b in range(1, self.num_bodies)
        ]
        return jnp.concatenate(parts) if parts else q

    def difference(self, q0: ArrayLike, q1: ArrayLike) -> Float[Array, " nv"]:
        """``q1 ⊖ q0``: the velocity that integrates ``q0`` into ``q1`` in unit time."""
        q0, q1 = self._check_q(q0), self._check_q(q1)
        parts = [
            JOINT_KINDS[self.body_joint_kinds[b]].difference(q0[self._q_slice(b)], q1[self._q_slice(b)])
            for b in range(1, self.num_bodies)
        ]
        return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=q0.dtype)

    # ------------------------------------------------------------------ kinematics
    def _levels(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(bodies, their parents) at each depth 1, 2, ... of the tree (static)."""
        depth = [0] * self.num_bodies
        for b in range(1, self.num_bodies):
            depth[b] = depth[self.body_parents[b]] + 1
        levels = []
        for d in range(1, max(depth, default=0) + 1):
            bodies = np.array([b for b in range(self.num_bodies) if depth[b] == d])
            levels.append((bodies, np.array([self.body_parents[b] for b in bodies])))
        return levels

    def _joint_transforms(self, q: Array, dtype) -> tuple[Array, Array]:
        """``X_JB(q)`` of every body's joint, (n, 3, 3) and (n, 3); identity for body 0.
        Revolute joints, the common case, are evaluated together."""
        rotations = [jnp.eye(3, dtype=dtype)] * self.num_bodies
        translations = [jnp.zeros(3, dtype=dtype)] * self.num_bodies
        revolute = [b for b in range(1, self.num_bodies) if self.body_joint_kinds[b] == "revolute"]
        if revolute:
            angles = q[np.array([self.body_q_starts[b] for b in revolute])]
            R = jax.vmap(rotation_about_axis)(self.joint_axes[np.array(revolute)], jnp.cos(angles), jnp.sin(angles))
            for k, b in enumerate(revolute):
                rotations[b] = R[k]
        for b in range(1, self.num_bodies):
            if self.body_joint_kinds[b] != "revolute":
                kind = JOINT_KINDS[self.body_joint_kinds[b]]
                rotations[b], translations[b] = kind.transform(q[self._q_slice(b)], self.joint_axes[b])
        return jnp.stack(rotations).astype(dtype), jnp.stack(translations).astype(dtype)

    def forward_kinematics(self, q: ArrayLike) -> Transform:
        """Poses ``X_GB`` of every body, a ``Transform`` with leading axis ``num_bodies``.

        Joint motions are composed with their placements for all bodies at once, then
        propagated from the root one tree level at a time (every body of a level in one
        batched product), which keeps the traced graph small for branching robots."""
        q = self._check_q(q)
        dtype = jnp.result_type(q, self.joint_axes)
        R_JB, p_JB = self._joint_transforms(q, dtype)
        X_PJ = self.joint_placements
        R_PB = X_PJ.rotation @ R_JB
        p_PB = jnp.einsum("nij,nj->ni", X_PJ.rotation, p_JB) + X_PJ.translation
        # Level by level with static gathers only (body 0 has identity placement and
        # motion, so X_GB[0] = I); the levels are concatenated and put back in body order.
        Rs, ps = [R_PB[:1]], [p_PB[:1]]
        where = {0: (0, 0)}  # body -> (level, position in level)
        for level, (bodies, parents) in enumerate(self._levels(), start=1):
            position = np.array([where[parent][1] for parent in parents])
            R_parent, p_parent = Rs[level - 1][position], ps[level - 1][position]
            Rs.append(R_parent @ R_PB[bodies])
            ps.append(jnp.einsum("nij,nj->ni", R_parent, p_PB[bodies]) + p_parent)
            where.update({int(b): (level, k) for k, b in enumerate(bodies)})
        order = np.concatenate([[0]] + [bodies for bodies, _ in self._levels()])
        inverse = np.argsort(order)
        return Transform(jnp.concatenate(Rs)[inverse], jnp.concatenate(ps)[inverse])

    def jacobian(
        self, q: ArrayLike, body: int | str, point: ArrayLike = (0.0, 0.0, 0.0)
    ) -> Float[Array, "6 nv"]:
        """Jacobian of a point fixed on ``body`` (given in the body frame).

        **Returns:** (6, nv), rows ``[linear velocity of the point; angular velocity]``,
        both in ground axes (pinocchio's LOCAL_WORLD_ALIGNED), columns along ``integrate``.
        """
        b = self._resolve_body(body)
        X_GB = self.forward_kinematics(q)
        return self._jacobian_from_poses(X_GB, b, point)

    def _jacobian_from_poses(self, X_GB: Transform, b: int, point: ArrayLike) -> Array:
        dtype = X_GB.translation.dtype
        p_G = X_GB[b].apply(jnp.asarray(point, dtype=dtype))
        joints = [j for j in self.ancestors(b) if JOINT_KINDS[self.body_joint_kinds[j]].nv > 0]
        if not joints:
            return jnp.zeros((6, self.nv), dtype=dtype)
        # Motion subspaces of all ancestor joints side by side (6, k), then one batched
        # rotation to ground and one lever-arm cross product for all columns.
        blocks = [JOINT_KINDS[self.body_joint_kinds[j]].motion_subspace(self.joint_axes[j]) for j in joints]
        owner = np.concatenate([np.full(block.shape[1], j) for j, block in zip(joints, blocks)])
        columns = np.concatenate([np.arange(self._v_slice(j).start, self._v_slice(j).stop) for j in joints])
        S = jnp.concatenate(blocks, axis=1).astype(dtype)
        R = X_GB.rotation[owner]  # (k, 3, 3)
        angular = jnp.einsum("kij,jk->ki", R, S[3:])
        linear = jnp.einsum("kij,jk->ki", R, S[:3]) + jnp.cross(angular, p_G - X_GB.translation[owner])
        J = jnp.zeros((6, self.nv), dtype=dtype)
        return J.at[:, columns].set(jnp.concatenate([linear, angular], axis=1).T)

    def body_velocities(self, q: ArrayLike, v: ArrayLike) -> Float[Array, "n_bodies 2 3"]:
        """Spatial velocities of every body, ``[angular, linear]`` in ground, the linear part
        being the velocity of the body origin (forward-mode derivative of the poses along
        ``integrate(q, t v)``)."""
        q, v = self._check_q(q), self._check_v(v)
        X_GB, dX_GB = jax.jvp(
            lambda t: self.forward_kinematics(self.integrate(q, t * v)),
            (jnp.zeros((), dtype=v.dtype),),
            (jnp.ones((), dtype=v.dtype),),
        )
        angular = unskew(dX_GB.rotation @ jnp.swapaxes(X_GB.rotation, -1, -2))
        return jnp.stack([angular, dX_GB.translation], axis=-2)

    def center_of_mass(self, q: ArrayLike) -> Float[Array, " 3"]:
        """Centre of mass of the moving bodies in ground (pinocchio's ``centerOfMass``)."""
        X_GB = self.forward_kinematics(q)
        masses = self.body_masses * self._moving_mask()
        total = jnp.sum(masses)
        weighted = jnp.sum(masses[:, None] * X_GB.apply(self.body_coms), axis=0)
        safe_total = jnp.where(total > 0, total, 1.0)
        return jnp.where(total > 0, weighted / safe_total, 0.0)

    def __repr__(self) -> str:
        return (
            f"RobotModel({self.name!r}, bodies={self.num_bodies}, nq={self.nq}, nv={self.nv}, "
            f"joints={list(self.joint_names)})"
        )
