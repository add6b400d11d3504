"""`ModelSpec`: the NumPy description of a kinematic tree, before it becomes arrays.

Bodies and joints are added one at a time, each validated where it is given (so errors
name the body or joint); `assemble` then checks the tree as a whole, orders the bodies
depth-first from the world (children in the order their joints were added), assigns the
``q``/``v`` offsets in that order and returns the arrays and static tuples a
`RobotModel` is made of. Both `RobotModelBuilder` and the URDF reader produce a
`ModelSpec`; neither needs the model class itself.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from .._spatial import Transform
from ._functions import CoordinateFunction, PiecewiseCubic, Polynomial
from ._joints import AXIS_KINDS, COUPLED_KINDS, JOINT_KINDS

WORLD = "world"


@dataclasses.dataclass(frozen=True)
class BodySpec:
    name: str
    mass: float
    com: np.ndarray  # (3,), body frame
    inertia: np.ndarray  # (3, 3), about the com, body frame


@dataclasses.dataclass(frozen=True)
class JointSpec:
    name: str
    kind: str
    parent: str
    child: str
    placement: np.ndarray  # (4, 4) homogeneous X_PJ
    axis: np.ndarray  # (3,), unit
    lower: np.ndarray  # (nq,)
    upper: np.ndarray  # (nq,)
    velocity: np.ndarray  # (nv,)
    effort: np.ndarray  # (nv,)
    coupling: tuple[str, CoordinateFunction] | None = None  # (source joint, f)


def _as_placement(placement, joint_name: str) -> np.ndarray:
    if placement is None:
        return np.eye(4)
    if isinstance(placement, Transform):
        placement = placement.as_matrix()
    placement = np.asarray(placement, dtype=float)
    if placement.shape != (4, 4) or not np.all(np.isfinite(placement)):
        raise ValueError(f"joint {joint_name!r}: placement must be a Transform or a finite 4x4 matrix")
    R = placement[:3, :3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) <= 0:
        raise ValueError(f"joint {joint_name!r}: placement rotation is not a rotation matrix: {R.tolist()}")
    return placement


def _limit_array(value, size: int, default: float, what: str, joint_name: str) -> np.ndarray:
    if value is None:
        return np.full(size, default)
    arr = np.broadcast_to(np.asarray(value, dtype=float), (size,)).copy() if size else np.zeros(0)
    if np.any(np.isnan(arr)):
        raise ValueError(f"joint {joint_name!r}: {what} contains NaN")
    return arr


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """An immutable kinematic-tree description: `add_body` and `add_joint` return a new
    spec, so partial robots can be shared and extended."""

    name: str = "robot"
    bodies: tuple[BodySpec, ...] = ()
    joints: tuple[JointSpec, ...] = ()
    # Joint names in ``q`` order; None: the bodies' depth-first order.
    coordinate_order: tuple[str, ...] | None = None

    def add_body(self, name: str, mass: float = 0.0, com=(0.0, 0.0, 0.0), inertia=None) -> ModelSpec:
        """Add a body with its mass, centre of mass (body frame) and rotational inertia about
        the centre of mass (3x3 in the body frame; zero by default)."""
        if name == WORLD or any(b.name == name for b in self.bodies):
            raise ValueError(f"body {name!r} is defined twice (or uses the reserved name 'world')")
        mass = float(mass)
        if not np.isfinite(mass) or mass < 0:
            raise ValueError(f"body {name!r}: mass must be finite and non-negative, got {mass}")
        com = np.asarray(com, dtype=float)
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise ValueError(f"body {name!r}: com must be 3 finite numbers, got {com.tolist()}")
        inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
            raise ValueError(f"body {name!r}: inertia must be a finite 3x3 matrix, got {inertia.tolist()}")
        if not np.allclose(inertia, inertia.T, rtol=1e-9, atol=1e-12 * max(np.abs(inertia).max(), 1e-300)):
            raise ValueError(f"body {name!r}: inertia must be symmetric, got {inertia.tolist()}")
        moments = np.linalg.eigvalsh(inertia)
        if moments.min() < -1e-9 * max(np.abs(moments).max(), np.finfo(float).tiny):
            raise ValueError(
                f"body {name!r}: inertia must be positive semi-definite; its principal moments are {moments.tolist()}"
            )
        body = BodySpec(name, mass, com, inertia)
        return dataclasses.replace(self, bodies=(*self.bodies, body))

    def add_joint(
        self,
        name: str,
        kind: str,
        parent: str,
        child: str,
        placement=None,
        axis=(1.0, 0.0, 0.0),
        lower=None,
        upper=None,
        velocity=None,
        effort=None,
        coupling=None,
    ) -> ModelSpec:
        """Connect ``child`` to ``parent`` (``"world"`` for the root).

        **Arguments:**

        - `kind`: ``"revolute"``, ``"continuous"``, ``"prismatic"``, ``"fixed"``,
          ``"floating"``, ``"spherical"`` (a ball joint, quaternion ``(x, y, z, w)``) or
          ``"planar"`` (motion in the joint frame's xy plane).
        - `placement`: ``X_PJ``, the joint frame in the parent body (a `Transform` or 4x4).
        - `axis`: joint axis in the joint frame (revolute, continuous, prismatic);
          normalized here, must be non-zero.
        - `lower`, `upper`: position limits per coordinate (default unbounded).
        - `velocity`, `effort`: limits per velocity coordinate (default unbounded).
        - `coupling`: ``(source joint name, f)`` with ``f`` a `PiecewiseCubic` or a
          `Polynomial`: the joint
          (``"revolute"`` or ``"prismatic"``) turns or slides by ``f(q_source)`` and has
          no coordinate of its own; the source is a revolute or prismatic joint without
          coupling (docs/kinematics.md#coupled-joints).
        """
        if kind in COUPLED_KINDS.values():
            raise ValueError(f"joint {name!r}: give kind 'revolute' or 'prismatic' with coupling=, not {kind!r}")
        if kind not in JOINT_KINDS:
            raise ValueError(f"joint {name!r}: unknown joint type {kind!r}; known: {sorted(JOINT_KINDS)}")
        if any(j.name == name for j in self.joints):
            raise ValueError(f"joint {name!r} is defined twice")
        spec = JOINT_KINDS[kind]
        axis = np.asarray(axis, dtype=float)
        if axis.shape != (3,):
            raise ValueError(f"joint {name!r}: axis must have shape (3,), got {axis.shape}")
        if kind in AXIS_KINDS:
            norm = np.linalg.norm(axis)
            if not np.isfinite(norm) or norm < 1e-12:
                raise ValueError(f"joint {name!r}: axis {axis.tolist()} has zero length")
            axis = axis / norm
        lower = _limit_array(lower, spec.nq, -np.inf, "lower", name)
        upper = _limit_array(upper, spec.nq, np.inf, "upper", name)
        if np.any(lower > upper):
            raise ValueError(f"joint {name!r}: lower limit {lower.tolist()} exceeds upper {upper.tolist()}")
        velocity = _limit_array(velocity, spec.nv, np.inf, "velocity", name)
        effort = _limit_array(effort, spec.nv, np.inf, "effort", name)
        if coupling is not None:
            if kind not in COUPLED_KINDS:
                raise ValueError(f"joint {name!r}: only revolute and prismatic joints can be coupled, not {kind!r}")
            if (
                not isinstance(coupling, tuple)
                or len(coupling) != 2
                or not isinstance(coupling[0], str)
                or not isinstance(coupling[1], (PiecewiseCubic, Polynomial))
            ):
                raise ValueError(f"joint {name!r}: coupling must be (source joint name, PiecewiseCubic or Polynomial)")
            if coupling[0] == name:
                raise ValueError(f"joint {name!r}: a joint cannot be coupled to itself")
            lower, upper = np.zeros(0), np.zeros(0)
            velocity, effort = np.zeros(0), np.zeros(0)
        joint = JointSpec(
            name, kind, parent, child, _as_placement(placement, name), axis, lower, upper, velocity, effort, coupling
        )
        return dataclasses.replace(self, joints=(*self.joints, joint))

    def with_coordinate_order(self, joint_names) -> ModelSpec:
        """Order ``q`` (and ``v``) by these joints, which must be every joint with
        coordinates exactly once (default: the bodies' depth-first order)."""
        return dataclasses.replace(self, coordinate_order=tuple(joint_names))

    # ------------------------------------------------------------------ build
    def _tree(self) -> tuple[dict[str, JointSpec], dict[str, list[JointSpec]]]:
        names = {b.name for b in self.bodies}
        joint_of_child: dict[str, JointSpec] = {}
        children: dict[str, list[JointSpec]] = {WORLD: []}
        for j in self.joints:
            if j.parent != WORLD and j.parent not in names:
                raise ValueError(f"joint {j.name!r}: parent link {j.parent!r} is not defined")
            if j.child not in names:
                raise ValueError(f"joint {j.name!r}: child link {j.child!r} is not defined")
            if j.child in joint_of_child:
                raise ValueError(
                    f"link {j.child!r} is the child of two joints ({joint_of_child[j.child].name!r} and "
                    f"{j.name!r}): kinematic loops are not supported"
                )
            joint_of_child[j.child] = j
            children.setdefault(j.parent, []).append(j)
        return joint_of_child, children

    def assemble(self) -> dict:
        """The arrays and static tuples of a `RobotModel` (its constructor's arguments).

        **Raises:** `ValueError` for a missing parent or child, a link with two parents,
        a cycle, a body not connected to the world, or no body at all.
        """
        if not self.bodies:
            raise ValueError(f"robot {self.name!r} has no bodies")
        joint_of_child, children = self._tree()
        body_specs = {b.name: b for b in self.bodies}

        # Depth-first order from the world; anything unreached is either in a cycle or floating free.
        order: list[tuple[str, JointSpec | None]] = [(WORLD, None)]
        stack = [(WORLD, iter(children[WORLD]))]
        while stack:
            _, it = stack[-1]
            joint = next(it, None)
            if joint is None:
                stack.pop()
                continue
            order.append((joint.child, joint))
            stack.append((joint.child, iter(children.get(joint.child, []))))
        reached = {name for name, _ in order}
        unreached = [b.name for b in self.bodies if b.name not in reached]
        if unreached:
            cyclic = _find_cycle(joint_of_child, unreached)
            if cyclic:
                raise ValueError(f"robot {self.name!r}: the joints form a cycle through links {cyclic}")
            raise ValueError(
                f"robot {self.name!r}: links {unreached} are not connected to 'world' "
                "(add a joint to 'world', e.g. a 'floating' or 'fixed' one)"
            )

        index = {name: i for i, (name, _) in enumerate(order)}
        joint_body = {joint.name: i for i, (_, joint) in enumerate(order) if joint is not None}
        kind_of = {j.name: (COUPLED_KINDS[j.kind] if j.coupling is not None else j.kind) for j in self.joints}
        with_coordinates = [joint.name for _, joint in order[1:] if JOINT_KINDS[kind_of[joint.name]].nq > 0]
        q_order = with_coordinates if self.coordinate_order is None else list(self.coordinate_order)
        if sorted(q_order) != sorted(with_coordinates):
            raise ValueError(
                f"robot {self.name!r}: coordinate order {q_order} must list every joint with coordinates "
                f"{with_coordinates} exactly once"
            )
        starts, nq, nv = {}, 0, 0
        for name in q_order:
            starts[name] = (nq, nv)
            nq += JOINT_KINDS[kind_of[name]].nq
            nv += JOINT_KINDS[kind_of[name]].nv
        couplings, functions = [], []
        for i, (_, joint) in enumerate(order[1:], start=1):
            if joint.coupling is None:
                continue
            source, function = joint.coupling
            if source not in joint_body:
                raise ValueError(f"joint {joint.name!r}: coupling source joint {source!r} is not defined")
            if kind_of[source] not in ("revolute", "prismatic"):
                raise ValueError(
                    f"joint {joint.name!r}: coupling source {source!r} must be an uncoupled revolute or prismatic "
                    f"joint, not {kind_of[source]!r}"
                )
            couplings.append((i, joint_body[source]))
            functions.append(function)
        n = len(order)
        placements = np.tile(np.eye(4), (n, 1, 1))
        axes = np.zeros((n, 3))
        masses = np.zeros(n)
        coms = np.zeros((n, 3))
        inertias = np.zeros((n, 3, 3))
        parents, kinds, joint_names, q_starts, v_starts = [-1], ["root"], [""], [0], [0]
        lower, upper, velocity, effort = [np.zeros(0)] * nq, [np.zeros(0)] * nq, [np.zeros(0)] * nv, [np.zeros(0)] * nv
        running_q = running_v = 0
        for i, (name, joint) in enumerate(order[1:], start=1):
            body = body_specs[name]
            masses[i], coms[i], inertias[i] = body.mass, body.com, body.inertia
            placements[i], axes[i] = joint.placement, joint.axis
            parents.append(index[joint.parent])
            kinds.append(kind_of[joint.name])
            joint_names.append(joint.name)
            # Joints without coordinates get an empty slice at the running offset.
            q_start, v_start = starts.get(joint.name, (running_q, running_v))
            running_q += JOINT_KINDS[kind_of[joint.name]].nq
            running_v += JOINT_KINDS[kind_of[joint.name]].nv
            q_starts.append(q_start)
            v_starts.append(v_start)
            if joint.name in starts:
                lower[q_start], upper[q_start] = joint.lower, joint.upper
                velocity[v_start], effort[v_start] = joint.velocity, joint.effort

        dtype = jnp.result_type(float)  # float64 under jax_enable_x64, float32 otherwise
        return dict(
            joint_placements=Transform.from_matrix(jnp.asarray(placements, dtype=dtype)),
            joint_axes=jnp.asarray(axes, dtype=dtype),
            body_masses=jnp.asarray(masses, dtype=dtype),
            body_coms=jnp.asarray(coms, dtype=dtype),
            body_inertias=jnp.asarray(inertias, dtype=dtype),
            lower_position_limit=jnp.asarray(np.concatenate([np.zeros(0), *lower]), dtype=dtype),
            upper_position_limit=jnp.asarray(np.concatenate([np.zeros(0), *upper]), dtype=dtype),
            velocity_limit=jnp.asarray(np.concatenate([np.zeros(0), *velocity]), dtype=dtype),
            effort_limit=jnp.asarray(np.concatenate([np.zeros(0), *effort]), dtype=dtype),
            name=self.name,
            body_names=tuple(name for name, _ in order),
            body_joint_names=tuple(joint_names),
            body_joint_kinds=tuple(kinds),
            body_parents=tuple(parents),
            body_q_starts=tuple(q_starts),
            body_v_starts=tuple(v_starts),
            nq=nq,
            nv=nv,
            joint_functions=tuple(functions),
            couplings=tuple(couplings),
        )


def _find_cycle(joint_of_child: dict[str, JointSpec], links: list[str]) -> list[str] | None:
    """Follow parent links from each unreached link; return the cycle's links if one closes."""
    for start in links:
        seen: list[str] = []
        link = start
        while link in joint_of_child and link not in seen:
            seen.append(link)
            link = joint_of_child[link].parent
        if link in seen:
            return seen[seen.index(link) :]
    return None
