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

The operations are free functions taking the model first (`forward_kinematics(model,
q)`, as `mjx.kinematics(m, d)`), so `jax.jit`, `vmap` and `grad` apply to them directly
and a model with new numbers never recompiles; the methods of the same names are
one-line wrappers. See docs/kinematics.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float, Int, PRNGKeyArray, Real

from .._io._urdf import read_urdf
from .._misc import as_float_array, unskew
from .._spatial import Transform
from ._functions import CoordinateFunction
from ._joints import JOINT_KINDS, rotation_about_axis
from ._spec import ModelSpec

BodyRef = int | str | Int[ArrayLike, ""]


class RobotModel(eqx.Module):
    """A kinematic tree over bodies connected by joints; load with `jaxwrap.load_urdf`
    or build with `jaxwrap.RobotModelBuilder`.

    Array fields (differentiable, batchable): ``joint_placements`` (``X_PJ`` per body),
    ``joint_axes``, ``body_masses``, ``body_coms`` (in the body frame),
    ``body_inertias`` (about the centre of mass, body frame), and the joint limits
    ``lower_position_limit`` / ``upper_position_limit`` (nq), ``velocity_limit`` /
    ``effort_limit`` (nv), with ``inf`` where a coordinate is unbounded; and
    ``joint_functions``, the function (a `CoordinateFunction`) of each coupled joint,
    whose (body, source body) pairs are the static ``couplings``
    (docs/kinematics.md#coupled-joints).
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
    joint_functions: tuple[CoordinateFunction, ...] = ()
    couplings: tuple[tuple[int, int], ...] = eqx.field(static=True, default=())

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_spec(cls, spec: ModelSpec) -> RobotModel:
        """Freeze a validated `ModelSpec` (what `RobotModelBuilder` and the URDF reader make)."""
        return cls(**spec.assemble())

    @classmethod
    def from_urdf(cls, path_or_xml: str, floating_base: bool = False) -> RobotModel:
        """Load from a URDF path or XML string; the same as `jaxwrap.load_urdf`, whose
        docstring gives the conventions."""
        return cls.from_spec(read_urdf(path_or_xml, floating_base=floating_base))

    # ------------------------------------------------------------------ structure
    @property
    def num_bodies(self) -> int:
        return len(self.body_names)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the joints with coordinates (nq > 0), in ``q`` order (pinocchio's ``names[1:]``)."""
        return tuple(self.body_joint_names[b] for b in self.coordinate_bodies())

    def coordinate_bodies(self) -> tuple[int, ...]:
        """The bodies whose joints have coordinates, in ``q`` (and ``v``) order."""
        bodies = [b for b in range(1, self.num_bodies) if JOINT_KINDS[self.body_joint_kinds[b]].nq > 0]
        return tuple(sorted(bodies, key=lambda b: self.body_q_starts[b]))

    def joint_coordinates(self, body: int) -> tuple[slice, slice]:
        """The ``q`` and ``v`` slices that move ``body``'s joint: its own, or for a coupled
        joint its source joint's."""
        source = dict(self.couplings).get(body, body)
        return self.q_slice(source), self.v_slice(source)

    def body_index(self, name: str) -> int:
        """Index of the body (URDF link) called ``name``; 0 is ``"world"``."""
        try:
            return self.body_names.index(name)
        except ValueError:
            raise ValueError(f"no body named {name!r}; bodies are {list(self.body_names)}") from None

    def resolve_body(self, body: int | str) -> int:
        """A static body index from a name or an index, checked against the model."""
        if isinstance(body, str):
            return self.body_index(body)
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
            raise ValueError(f"body must be a name or an integer index, got {body!r}")
        if not 0 <= body < self.num_bodies:
            raise ValueError(f"body index {body} out of range [0, {self.num_bodies}) for model {self.name!r}")
        return int(body)

    def ancestors(self, body: int | str) -> tuple[int, ...]:
        """Bodies from ``body`` up to (excluding) the world, child first."""
        chain = []
        b = self.resolve_body(body)
        while b > 0:
            chain.append(b)
            b = self.body_parents[b]
        return tuple(chain)

    @property
    def total_mass(self) -> Float[Array, ""]:
        """Mass of the bodies that can move (pinocchio's ``computeTotalMass``: bodies welded to
        the world by fixed joints, such as a fixed-base robot's base link, are left out)."""
        return jnp.sum(self.body_masses * self.moving_bodies())

    def moving_bodies(self) -> np.ndarray:
        """(n_bodies,) bool: the body can move relative to the world (a joint with
        coordinates lies between them)."""
        moving = np.zeros(self.num_bodies, dtype=bool)
        for b in range(1, self.num_bodies):
            moving[b] = moving[self.body_parents[b]] or self.body_joint_kinds[b] != "fixed"
        return moving

    def q_slice(self, body: int) -> slice:
        """The coordinates of ``body``'s parent joint in ``q``."""
        start = self.body_q_starts[body]
        return slice(start, start + JOINT_KINDS[self.body_joint_kinds[body]].nq)

    def v_slice(self, body: int) -> slice:
        """The coordinates of ``body``'s parent joint in ``v``."""
        start = self.body_v_starts[body]
        return slice(start, start + JOINT_KINDS[self.body_joint_kinds[body]].nv)

    def _checked(self, x: ArrayLike | Sequence, size: int, what: str) -> Array:
        x = jnp.asarray(x)
        if x.shape != (size,):
            raise ValueError(
                f"{what} must have shape ({size},) for model {self.name!r}, got {x.shape}; batch with jax.vmap"
            )
        return x if jnp.issubdtype(x.dtype, jnp.floating) else x.astype(self.joint_axes.dtype)

    def check_q(self, q: ArrayLike | Sequence) -> Float[Array, " nq"]:
        """``q`` as a float array; `ValueError` (at trace time) unless its shape is (nq,)."""
        return self._checked(q, self.nq, "q (nq)")

    def check_v(self, v: ArrayLike | Sequence) -> Float[Array, " nv"]:
        """``v`` as a float array; `ValueError` (at trace time) unless its shape is (nv,)."""
        return self._checked(v, self.nv, "v (nv)")

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

    def _velocity_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Static: the body owning each velocity coordinate (nv,), and the (n_bodies, nv)
        mask of the coordinates that move each body (its ancestors' joints, coupled ones
        by their sources)."""
        owner = [np.full(JOINT_KINDS[self.body_joint_kinds[b]].nv, b, dtype=int) for b in self.coordinate_bodies()]
        owner = np.concatenate([np.zeros(0, dtype=int), *owner])
        moves = np.zeros((self.num_bodies, self.nv), dtype=bool)
        for b in range(1, self.num_bodies):
            for a in self.ancestors(b):
                moves[b, self.joint_coordinates(a)[1]] = True
        return owner, moves

    def _joint_dofs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Static table of the joint motions, ``v``'s columns then one per coupled joint:
        the body each moves (n_dof,), the ``v`` column it belongs to (n_dof,), and the
        (n_bodies, n_dof) mask of the motions that move each body. Without coupled joints
        this is ``v`` itself."""
        owner, _ = self._velocity_columns()
        body = np.concatenate([owner, np.array([b for b, _ in self.couplings], dtype=int)]).astype(int)
        column = np.concatenate([np.arange(self.nv), [self.body_v_starts[s] for _, s in self.couplings]]).astype(int)
        moves = np.zeros((self.num_bodies, len(body)), dtype=bool)
        for b in range(1, self.num_bodies):
            ancestors = set(self.ancestors(b))
            moves[b] = [d in ancestors for d in body]
        return body, column, moves

    # ------------------------------------------------------------------ methods (wrappers)
    def neutral(self) -> Float[Array, " nq"]:
        return neutral(self)

    def random_configuration(self, key: PRNGKeyArray) -> Float[Array, " nq"]:
        return random_configuration(self, key)

    def integrate(self, q: ArrayLike | Sequence, v: ArrayLike | Sequence) -> Float[Array, " nq"]:
        return integrate(self, q, v)

    def difference(self, q0: ArrayLike | Sequence, q1: ArrayLike | Sequence) -> Float[Array, " nv"]:
        return difference(self, q0, q1)

    def forward_kinematics(self, q: ArrayLike | Sequence) -> Transform:
        return forward_kinematics(self, q)

    def jacobian(
        self, q: ArrayLike | Sequence, body: BodyRef, point: Real[ArrayLike, "3"] | Sequence = (0.0, 0.0, 0.0)
    ) -> Float[Array, "6 nv"]:
        return jacobian(self, q, body, point)

    def body_velocities(self, q: ArrayLike | Sequence, v: ArrayLike | Sequence) -> Float[Array, "n_bodies 2 3"]:
        return body_velocities(self, q, v)

    def center_of_mass(self, q: ArrayLike | Sequence) -> Float[Array, "3"]:
        return center_of_mass(self, q)

    def __repr__(self) -> str:
        return (
            f"RobotModel({self.name!r}, bodies={self.num_bodies}, nq={self.nq}, nv={self.nv}, "
            f"joints={list(self.joint_names)})"
        )


# ---------------------------------------------------------------------------- configuration space
def neutral(model: RobotModel) -> Float[Array, " nq"]:
    """The neutral configuration (zero angles, identity quaternions)."""
    dtype = model.joint_axes.dtype
    parts = [JOINT_KINDS[model.body_joint_kinds[b]].neutral(dtype) for b in model.coordinate_bodies()]
    return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=dtype)


def random_configuration(model: RobotModel, key: PRNGKeyArray) -> Float[Array, " nq"]:
    """A random configuration: uniform within the position limits, uniform rotations for
    unbounded angles and quaternions; unbounded translations are drawn from [-1, 1]."""
    keys = jax.random.split(key, model.num_bodies)
    parts = []
    for b in model.coordinate_bodies():
        kind = JOINT_KINDS[model.body_joint_kinds[b]]
        sl = model.q_slice(b)
        parts.append(kind.random(keys[b], model.lower_position_limit[sl], model.upper_position_limit[sl]))
    return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=model.joint_axes.dtype)


def integrate(model: RobotModel, q: ArrayLike | Sequence, v: ArrayLike | Sequence) -> Float[Array, " nq"]:
    """``q ⊕ v``: move each joint along its group's exponential (pinocchio ``integrate``)."""
    q, v = model.check_q(q), model.check_v(v)
    parts = [
        JOINT_KINDS[model.body_joint_kinds[b]].integrate(q[model.q_slice(b)], v[model.v_slice(b)])
        for b in model.coordinate_bodies()
    ]
    return jnp.concatenate(parts) if parts else q


def difference(model: RobotModel, q0: ArrayLike | Sequence, q1: ArrayLike | Sequence) -> Float[Array, " nv"]:
    """``q1 ⊖ q0``: the velocity that integrates ``q0`` into ``q1`` in unit time."""
    q0, q1 = model.check_q(q0), model.check_q(q1)
    parts = [
        JOINT_KINDS[model.body_joint_kinds[b]].difference(q0[model.q_slice(b)], q1[model.q_slice(b)])
        for b in model.coordinate_bodies()
    ]
    return jnp.concatenate(parts) if parts else jnp.zeros(0, dtype=q0.dtype)


# ---------------------------------------------------------------------------- kinematics
def _joint_transforms(model: RobotModel, q: Array, dtype) -> tuple[Array, Array]:
    """``X_JB(q)`` of every body's joint, (n, 3, 3) and (n, 3); identity for body 0.
    Revolute joints, the common case, are evaluated together."""
    rotations = [jnp.eye(3, dtype=dtype)] * model.num_bodies
    translations = [jnp.zeros(3, dtype=dtype)] * model.num_bodies
    revolute = [b for b in range(1, model.num_bodies) if model.body_joint_kinds[b] == "revolute"]
    if revolute:
        angles = q[np.array([model.body_q_starts[b] for b in revolute])]
        R = jax.vmap(rotation_about_axis)(model.joint_axes[np.array(revolute)], jnp.cos(angles), jnp.sin(angles))
        for k, b in enumerate(revolute):
            rotations[b] = R[k]
    coupled = {b: k for k, (b, _) in enumerate(model.couplings)}
    for b in range(1, model.num_bodies):
        if model.body_joint_kinds[b] != "revolute":
            kind = JOINT_KINDS[model.body_joint_kinds[b]]
            value = q[model.q_slice(b)]
            if b in coupled:  # a coupled joint's value is f(q_source), shape (1,)
                k = coupled[b]
                value = model.joint_functions[k](q[model.q_slice(model.couplings[k][1])])
            rotations[b], translations[b] = kind.transform(value, model.joint_axes[b])
    return jnp.stack(rotations).astype(dtype), jnp.stack(translations).astype(dtype)


def forward_kinematics(model: RobotModel, q: ArrayLike | Sequence) -> Transform:
    """Poses ``X_GB`` of every body, a `Transform` with leading axis ``num_bodies``.

    Joint motions are composed with their placements for all bodies at once, then
    propagated from the root one tree level at a time (every body of a level in one
    batched product), which keeps the traced graph small for branching robots.

    **Arguments:** `model`; `q`, the configuration (nq,) (batch with `jax.vmap`).
    """
    q = model.check_q(q)
    dtype = jnp.result_type(q, model.joint_axes)
    R_JB, p_JB = _joint_transforms(model, q, dtype)
    X_PJ = model.joint_placements
    R_PB = X_PJ.rotation @ R_JB
    p_PB = jnp.einsum("nij,nj->ni", X_PJ.rotation, p_JB) + X_PJ.translation
    # Level by level with static gathers only (body 0 has identity placement and
    # motion, so X_GB[0] = I); the levels are concatenated and put back in body order.
    levels = model._levels()
    Rs, ps = [R_PB[:1]], [p_PB[:1]]
    where = {0: (0, 0)}  # body -> (level, position in level)
    for level, (bodies, parents) in enumerate(levels, start=1):
        position = np.array([where[parent][1] for parent in parents])
        R_parent, p_parent = Rs[level - 1][position], ps[level - 1][position]
        Rs.append(R_parent @ R_PB[bodies])
        ps.append(jnp.einsum("nij,nj->ni", R_parent, p_PB[bodies]) + p_parent)
        where.update({int(b): (level, k) for k, b in enumerate(bodies)})
    inverse = np.argsort(np.concatenate([[0]] + [bodies for bodies, _ in levels]))
    return Transform(jnp.concatenate(Rs)[inverse], jnp.concatenate(ps)[inverse])


def jacobian(
    model: RobotModel, q: ArrayLike | Sequence, body: BodyRef, point: Real[ArrayLike, "3"] | Sequence = (0.0, 0.0, 0.0)
) -> Float[Array, "6 nv"]:
    """Jacobian of a point fixed on ``body`` (given in the body frame).

    **Arguments:**

    - `model`, `q` (nq,).
    - `body`: a body name (static), or an index, which may be traced: under
      ``jax.jit(jw.jacobian)`` or `vmap` over bodies the same program serves every body.
    - `point`: the point in the body frame (default its origin).

    **Returns:** (6, nv), rows ``[linear velocity of the point; angular velocity]``,
    both in ground axes (pinocchio's LOCAL_WORLD_ALIGNED), columns along ``integrate``.
    """
    q = model.check_q(q)
    X_GB = forward_kinematics(model, q)
    return jacobian_from_poses(model, X_GB, body, point, q)


def _motion_twists(model: RobotModel, X_GB: Transform, q: Array | None) -> Array:
    """The unit twists in ground of the joint motions of `RobotModel._joint_dofs`, (6,
    n_dof) ``[linear; angular]`` rows, the linear part at the ground origin; a coupled
    joint's is its motion per unit of its source coordinate (``f'(q_c)`` times its axis)."""
    dtype = X_GB.translation.dtype
    owner, _, _ = model._joint_dofs()
    if len(owner) == 0:
        return jnp.zeros((6, 0), dtype=dtype)
    # Motion subspaces of every joint side by side, rotated to ground.
    blocks = [
        JOINT_KINDS[model.body_joint_kinds[b]].motion_subspace(model.joint_axes[b]) for b in model.coordinate_bodies()
    ]
    if model.couplings:
        if q is None:
            raise ValueError(
                f"model {model.name!r} has coupled joints: their twists depend on q; pass q= (docs/kinematics.md)"
            )
        for (b, source), function in zip(model.couplings, model.joint_functions):
            rate = function.derivative(q[model.body_q_starts[source]])
            blocks.append(JOINT_KINDS[model.body_joint_kinds[b]].motion_subspace(model.joint_axes[b]) * rate)
    S = jnp.concatenate(blocks, axis=1).astype(dtype)
    R = X_GB.rotation[owner]  # (n_dof, 3, 3)
    angular = jnp.einsum("kij,jk->ki", R, S[3:])
    linear = jnp.einsum("kij,jk->ki", R, S[:3]) - jnp.cross(angular, X_GB.translation[owner])
    return jnp.concatenate([linear, angular], axis=1).T


def dof_twists(model: RobotModel, X_GB: Transform) -> Float[Array, "6 nv"]:
    """Every velocity coordinate's unit twist in ground, ``[linear; angular]`` rows, the
    linear part being the velocity of the point at the ground origin (docs/kinematics.md).
    A body's Jacobian is these columns, masked to its ancestors' joints and moved to its
    point; a wrench ``[F; M_O]`` about the origin does power ``twistsᵀ [F; M_O]`` per
    coordinate, whichever body it acts on. A model with coupled joints has no such
    per-coordinate twist (different bodies see different joints of one coordinate):
    `ValueError`, use `jacobian_from_poses` with ``q``."""
    if model.couplings:
        raise ValueError(
            f"model {model.name!r} has coupled joints, so a coordinate moves different bodies differently; "
            "use jacobian_from_poses(model, X_GB, body, point, q=q)"
        )
    return _motion_twists(model, X_GB, None)


def jacobian_from_poses(
    model: RobotModel,
    X_GB: Transform,
    body: BodyRef,
    point: Real[ArrayLike, "3"] | Sequence = (0.0, 0.0, 0.0),
    q: Real[ArrayLike, " nq"] | None = None,
) -> Float[Array, "6 nv"]:
    """`jacobian` from already computed body poses (``forward_kinematics(model, q)``);
    ``q`` is needed only by models with coupled joints."""
    dtype = X_GB.translation.dtype
    if isinstance(body, (str, int, np.integer)):
        body = model.resolve_body(body)
    body = jnp.asarray(body)
    if body.shape != () or not jnp.issubdtype(body.dtype, jnp.integer):
        raise ValueError(f"body must be a name or a scalar integer index, got {body!r}")
    if model.nv == 0:
        return jnp.zeros((6, 0), dtype=dtype)
    p_G = X_GB[body].apply(as_float_array(point, dtype))
    _, column, moves = model._joint_dofs()
    # The joints' twists at the ground origin, moved to the point (v_p = v_O + w x p);
    # columns of joints that do not move `body` are masked.
    twists = _motion_twists(model, X_GB, None if q is None else model.check_q(q))
    J = twists.at[:3].add(jnp.cross(twists[3:].T, p_G).T)
    J = jnp.where(jnp.asarray(moves)[body], J, 0.0)
    if model.couplings:  # a coupled joint's motion adds to its source's column
        J = J @ jnp.asarray(np.eye(model.nv)[column], dtype=dtype)
    return J


def body_velocities(
    model: RobotModel, q: ArrayLike | Sequence, v: ArrayLike | Sequence
) -> Float[Array, "n_bodies 2 3"]:
    """Spatial velocities of every body, ``[angular, linear]`` in ground, the linear part
    being the velocity of the body origin (forward-mode derivative of the poses along
    ``integrate(q, t v)``)."""
    q, v = model.check_q(q), model.check_v(v)
    X_GB, dX_GB = jax.jvp(
        lambda t: forward_kinematics(model, integrate(model, q, t * v)),
        (jnp.zeros((), dtype=v.dtype),),
        (jnp.ones((), dtype=v.dtype),),
    )
    angular = unskew(dX_GB.rotation @ jnp.swapaxes(X_GB.rotation, -1, -2))
    return jnp.stack([angular, dX_GB.translation], axis=-2)


def center_of_mass(model: RobotModel, q: ArrayLike | Sequence) -> Float[Array, "3"]:
    """Centre of mass of the moving bodies in ground (pinocchio's ``centerOfMass``)."""
    X_GB = forward_kinematics(model, q)
    masses = model.body_masses * model.moving_bodies()
    total = jnp.sum(masses)
    weighted = jnp.sum(masses[:, None] * X_GB.apply(model.body_coms), axis=0)
    return jnp.where(total > 0, weighted / jnp.where(total > 0, total, 1.0), 0.0)
