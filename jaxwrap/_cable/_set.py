"""`CableSet`: named cables over one model, solved in as few compiled programs as possible.

A cable of the set is a sum of *branches*, each a `CableSpan` whose length is divided by
its *divisor* (MuJoCo's pulleys), plus an optional term linear in ``q`` (MuJoCo's fixed
tendons). Via points cut every branch into legs that are solved independently
(docs/cable.md), so the set is solved leg by leg: each leg becomes a small `CableSpan`
of its own, its bodies renumbered locally (0 = its start point, then its obstacles, then
its end point), and legs of the same structure (obstacle count, surface kinds, hints and
sides present, settings) are stacked and solved by one `jax.vmap` of `solve_cable`.
Compile time therefore grows with the number of distinct leg *structures*: a MuJoCo
model has at most three (straight legs, one sphere, one cylinder), however many tendons
it has. See docs/cable-sets.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float, Real

from .._kinematics import RobotModel, forward_kinematics, integrate
from .._kinematics._model import _motion_twists
from .._misc import all_finite, as_float_array, safe_norm, safe_normalize, stack_trees, structure_key
from .._results import RESULTS
from .._spatial import Transform
from .._surfaces import Cylinder
from ._definition import AbstractCableSpan
from ._mujoco_wrap import mujoco_wrap
from ._path import CablePath
from ._solve import _nan_where, pose_validity, solve_cable
from ._span import CableSpan


@dataclasses.dataclass(frozen=True)
class _LegPlan:
    """Where one leg comes from: cable, branch, its end points and its obstacles."""

    cable: int
    branch: int
    start: tuple[str, int]  # ("origin", 0) or ("via", j)
    end: tuple[str, int]  # ("via", j) or ("termination", 0)
    obstacles: tuple[int, ...]


def _point(span: AbstractCableSpan, ref: tuple[str, int]) -> tuple[int, Array]:
    kind, index = ref
    if kind == "origin":
        return span.origin_body, span.origin_station
    if kind == "termination":
        return span.termination_body, span.termination_station
    via = span.via_points[index]
    return via.body, via.station


def _leg_refs(span: AbstractCableSpan) -> list[tuple[tuple[str, int], tuple[str, int], tuple[int, ...]]]:
    refs, start, current = [], ("origin", 0), []
    for kind, index in span.elements:
        if kind == "via":
            refs.append((start, ("via", index), tuple(current)))
            start, current = ("via", index), []
        else:
            current.append(index)
    refs.append((start, ("termination", 0), tuple(current)))
    return refs


def _leg_span(span: AbstractCableSpan, plan: _LegPlan) -> tuple[CableSpan, np.ndarray]:
    """The leg as a `CableSpan` over local bodies, and the model body of each local one."""
    start_body, start_station = _point(span, plan.start)
    end_body, end_station = _point(span, plan.end)
    m = len(plan.obstacles)
    obstacles = tuple(dataclasses.replace(span.obstacles[i], body=k + 1) for k, i in enumerate(plan.obstacles))
    leg = CableSpan(
        0,
        start_station,
        m + 1,
        end_station,
        obstacles=obstacles,
        elements=tuple(("obstacle", k) for k in range(m)),
        settings=span.settings,
    )
    bodies = np.array([start_body, *(span.obstacles[i].body for i in plan.obstacles), end_body])
    return leg, bodies


def _is_closed_form(leg: AbstractCableSpan) -> bool:
    """Straight legs and legs over one closed-form obstacle need no solver."""
    return not leg.obstacles or (len(leg.obstacles) == 1 and leg.obstacles[0].closed_form)


class ClosedFormPath(eqx.Module):
    """A solved straight leg, or a leg over one closed-form obstacle (``wrap="inside"`` or
    ``"mujoco"``), batched like a `CablePath`: ``length``; ``in_contact``, whether the path
    wraps the obstacle (or, inside wrap, bends at it; False for a straight leg);
    ``points``, the path's corners in ground: ``[a, b]`` for a straight leg, ``[a, P, Q,
    b]`` over an obstacle (P = Q = the touch point of an inside wrap; P = a, Q = b where
    the path does not touch it); ``result``."""

    length: Float[Array, "*batch"]
    in_contact: Array
    points: Float[Array, "*batch k 3"]
    result: RESULTS

    @property
    def converged(self):
        return jnp.asarray(self.result == RESULTS.successful)


def _closed_form(leg: AbstractCableSpan, a: Array, b: Array, X_GS: Transform | None, valid: Array) -> ClosedFormPath:
    """Solve a straight leg, or a leg whose only obstacle has a closed-form wrap, from its
    end points ``a``, ``b`` and its obstacle's pose ``X_GS`` (None for a straight leg),
    all in ground. Where not ``valid``: NaN length and points, with NaN derivatives
    (`_nan_where`, as the solver), and `RESULTS.invalid_input`."""
    result = RESULTS.where(valid, RESULTS.successful, RESULTS.invalid_input)
    if not leg.obstacles:
        length, points = _nan_where(~valid, (safe_norm(b - a), jnp.stack([a, b])))
        return ClosedFormPath(length=length, in_contact=jnp.zeros((), bool), points=points, result=result)
    obstacle = leg.obstacles[0]
    S_from_G = X_GS.inverse()
    a_S, b_S = S_from_G.apply(a), S_from_G.apply(b)
    if obstacle.wrap == "inside":
        contact, t, length = obstacle.surface.shortest_touch(a_S, b_S)
        P = Q = t
    else:
        cylinder = isinstance(obstacle.surface, Cylinder)
        contact, P, Q, arc = mujoco_wrap(a_S, b_S, obstacle.surface.radius, cylinder, obstacle.side)
        length = jnp.where(contact, safe_norm(P - a_S) + arc + safe_norm(b_S - Q), safe_norm(b_S - a_S))
    P_G, Q_G = X_GS.apply(P), X_GS.apply(Q)
    corners = jnp.stack([a, jnp.where(contact, P_G, a), jnp.where(contact, Q_G, b), b])
    length, corners = _nan_where(~valid, (length, corners))
    return ClosedFormPath(length=length, in_contact=contact & valid, points=corners, result=result)


def _points_on_bodies(body_poses: Transform, bodies: np.ndarray, stations: Array) -> Array:
    """Ground positions (m, 3) of ``stations`` (m, 3) fixed in ``bodies`` (m,), static:
    one small product per distinct body, then a static reordering. Gathering an (m, 3, 3)
    stack of rotations instead moves nine numbers per point, and under `jax.vmap` that
    copy was half the run time of a MuJoCo model's tendons
    (docs/performance.md#closed-form-legs)."""
    order, parts = [], []
    for body in np.unique(bodies):
        members = np.nonzero(bodies == body)[0]
        pose = body_poses[int(body)]
        parts.append(stations[members] @ pose.rotation.T + pose.translation)
        order.append(members)
    inverse = np.argsort(np.concatenate(order))
    points = jnp.concatenate(parts)
    return points if np.array_equal(inverse, np.arange(len(inverse))) else points[inverse]


def _solve_closed_form_group(
    group: _Group, body_poses: Transform, pose_ok: Array
) -> tuple[ClosedFormPath, Array, Array]:
    """Every leg of a closed-form `_Group` at once: its paths, and its end points ``a``,
    ``b`` (m, 3) in ground."""
    leg = group.stacked
    a = _points_on_bodies(body_poses, group.bodies[:, leg.origin_body], leg.origin_station)
    b = _points_on_bodies(body_poses, group.bodies[:, leg.termination_body], leg.termination_station)
    finite = jax.vmap(lambda c: all_finite(eqx.filter(c, eqx.is_inexact_array)))(leg)
    valid = jnp.all(pose_ok[group.bodies], axis=1) & finite
    if leg.obstacles:
        obstacle = leg.obstacles[0]
        X_GS = _gather(body_poses, group.bodies[:, obstacle.body]) @ obstacle.X_BS
    else:
        X_GS = None
    return jax.vmap(_closed_form)(leg, a, b, X_GS, valid), a, b


class CableSet(eqx.Module):
    """Named cables over one model (a pytree; `jaxwrap.load_mjcf` builds one from a file).

    Cable ``i`` has length ``sum_b L(branches[i][b]) / divisors[i][b] + coefficients[i] @ q``:
    its branches are `CableSpan`s (MuJoCo's pulleys start a new branch with a new
    divisor), and the optional linear term in the model's ``q`` is a MuJoCo fixed tendon.

    **Arguments:**

    - `names`: one name per cable (unique).
    - `branches`: per cable, a tuple of `CableSpan` (empty for a purely linear cable).
    - `divisors`: per cable, one positive divisor per branch (default all 1).
    - `coefficients`: ``(n_cables, nq)`` linear coefficients, or None (no linear terms).
    - `conditions`: per cable, per branch, a tuple of conditions ``(i, lower, upper,
      inside)`` on the coordinate ``q[i]``: the branch counts (weight 1) only while every
      ``q[i]`` is inside ``[lower, upper]`` (``inside``) or outside it (not ``inside``),
      else weight 0; OpenSim's ``ConditionalPathPoint`` gives each cable one branch per
      combination of its conditional points (docs/cable-sets.md#conditional-branches).
      Default: every branch always counts.
    - `blend`: 0 for that switch; a width ``w > 0`` blends each condition's weight
      smoothly over ``[bound - w/2, bound + w/2]`` (a C¹ smoothstep), so lengths and
      moment arms are continuous across the switch.

    `CableSet.from_cables({"name": cable, ...})` is the short form for one branch each.
    Solve with `jaxwrap.solve_cables`, `jaxwrap.cable_lengths`, `jaxwrap.moment_arms`.
    """

    names: tuple[str, ...] = eqx.field(static=True)
    branches: tuple[tuple[CableSpan, ...], ...]
    divisors: tuple[Float[Array, " k"], ...]
    coefficients: Float[Array, "n nq"] | None = None
    # Which cables have a linear term (static, so solving without q knows whom it affects).
    linear: tuple[bool, ...] = eqx.field(static=True, default=())
    conditions: tuple[tuple[tuple[tuple[int, float, float, bool], ...], ...], ...] = eqx.field(static=True, default=())
    blend: float = eqx.field(static=True, default=0.0)

    def __init__(
        self,
        names: Sequence[str],
        branches: Sequence[Sequence[CableSpan]],
        divisors: Sequence[ArrayLike | Sequence] | None = None,
        coefficients: ArrayLike | None = None,
        conditions: Sequence[Sequence[Sequence[tuple[int, float, float, bool]]]] | None = None,
        blend: float = 0.0,
    ):
        names = tuple(names)
        if len(set(names)) != len(names):
            duplicates = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"CableSet: cable names must be unique, repeated: {duplicates}")
        if not all(isinstance(n, str) for n in names):
            raise ValueError("CableSet: every cable name must be a string")
        branches = tuple(tuple(b) for b in branches)
        if len(branches) != len(names):
            raise ValueError(f"CableSet: {len(names)} names but {len(branches)} branch lists")
        for name, spans in zip(names, branches):
            for b, span in enumerate(spans):
                if not isinstance(span, AbstractCableSpan):
                    raise ValueError(f"cable {name!r}: branch {b} is not a jaxwrap.CableSpan")
        if divisors is None:
            divisors = [np.ones(len(spans)) for spans in branches]
        if len(divisors) != len(names):
            raise ValueError(f"CableSet: {len(names)} names but {len(divisors)} divisor lists")
        checked = []
        for name, spans, div in zip(names, branches, divisors):
            div = as_float_array(div)
            if div.shape != (len(spans),):
                raise ValueError(f"cable {name!r}: needs {len(spans)} divisors (one per branch), got shape {div.shape}")
            if not isinstance(div, jax.core.Tracer) and not np.all(np.asarray(div) > 0):
                raise ValueError(f"cable {name!r}: divisors must be positive, got {np.asarray(div).tolist()}")
            checked.append(div)
        linear = (False,) * len(names)
        if coefficients is not None:
            coefficients = as_float_array(coefficients)
            if coefficients.ndim != 2 or coefficients.shape[0] != len(names):
                raise ValueError(f"CableSet: coefficients must have shape (n_cables, nq), got {coefficients.shape}")
            if isinstance(coefficients, jax.core.Tracer):
                linear = (True,) * len(names)
            else:
                linear = tuple(bool(x) for x in np.any(np.asarray(coefficients) != 0, axis=1))
        for name, spans, is_linear in zip(names, branches, linear):
            if not spans and not is_linear:
                raise ValueError(f"cable {name!r} has neither branches nor linear coefficients")
            for b, span in enumerate(spans):
                for _, _, obstacles in _leg_refs(span):
                    if len(obstacles) > 1 and any(span.obstacles[i].closed_form for i in obstacles):
                        raise ValueError(
                            f"cable {name!r}, branch {b}: a closed-form ('inside' or 'mujoco') obstacle must be "
                            f"alone between two path points, but obstacles {list(obstacles)} share a leg"
                        )
        self.names = names
        self.branches = branches
        self.divisors = tuple(checked)
        self.coefficients = coefficients
        self.linear = linear
        self.conditions = _checked_conditions(names, branches, conditions)
        blend = float(blend)
        if not np.isfinite(blend) or blend < 0:
            raise ValueError(f"CableSet: blend must be a finite width >= 0, got {blend}")
        self.blend = blend

    @property
    def conditional(self) -> tuple[bool, ...]:
        """Per cable: whether any of its branches has a condition (static)."""
        if not self.conditions:
            return (False,) * len(self.names)
        return tuple(any(bool(c) for c in branches) for branches in self.conditions)

    @classmethod
    def from_cables(cls, cables: Mapping[str, CableSpan]) -> CableSet:
        """One `CableSpan` per name, divisor 1, no linear term."""
        return cls(tuple(cables), [(c,) for c in cables.values()])

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        if name not in self.names:
            raise KeyError(f"no cable named {name!r}; cables: {list(self.names)}")
        return self.names.index(name)

    def __getitem__(self, name: str) -> tuple[CableSpan, ...]:
        """The branches of cable ``name``."""
        return self.branches[self.index(name)]

    def legs(self) -> tuple[_LegPlan, ...]:
        """Every leg of every branch, in cable, branch and path order (static)."""
        return tuple(
            _LegPlan(i, b, start, end, obstacles)
            for i, spans in enumerate(self.branches)
            for b, span in enumerate(spans)
            for start, end, obstacles in _leg_refs(span)
        )

    def num_structures(self) -> int:
        """How many distinct leg structures (compiled solver programs) the set needs."""
        keys = {structure_key(_leg_span(self.branches[p.cable][p.branch], p)[0]) for p in self.legs()}
        return len(keys)

    def __repr__(self) -> str:
        linear = "" if self.coefficients is None else ", with linear terms"
        return f"CableSet({len(self.names)} cables, {len(self.legs())} legs{linear})"


def _checked_conditions(names, branches, conditions) -> tuple:
    if conditions is None:
        return ()
    if len(conditions) != len(names):
        raise ValueError(f"CableSet: {len(names)} names but {len(conditions)} condition lists")
    checked = []
    for name, spans, per_branch in zip(names, branches, conditions):
        if len(per_branch) != len(spans):
            raise ValueError(
                f"cable {name!r}: needs one condition tuple per branch ({len(spans)}), got {len(per_branch)}"
            )
        rows = []
        for b, conds in enumerate(per_branch):
            row = []
            for cond in conds:
                if len(cond) != 4:
                    raise ValueError(f"cable {name!r}, branch {b}: a condition is (index, lower, upper, inside)")
                index, lower, upper, inside = int(cond[0]), float(cond[1]), float(cond[2]), bool(cond[3])
                if index < 0 or not lower <= upper:
                    raise ValueError(f"cable {name!r}, branch {b}: bad condition {tuple(cond)}")
                row.append((index, lower, upper, inside))
            rows.append(tuple(row))
        checked.append(tuple(rows))
    return tuple(checked)


def _smoothstep(t: Array) -> Array:
    u = jnp.clip(t + 0.5, 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


def _branch_weight(conditions, q: Array, blend: float) -> Array:
    """The weight of one branch: the product of its conditions' weights (1 without any)."""
    weight = jnp.ones((), q.dtype)
    for index, lower, upper, inside in conditions:
        x = q[index]
        if blend > 0:
            w = _smoothstep((x - lower) / blend) * _smoothstep((upper - x) / blend)
        else:
            w = ((x >= lower) & (x <= upper)).astype(q.dtype)
        weight = weight * (w if inside else 1.0 - w)
    return weight


def _leg_weights(cables: CableSet, groups: list, q: Array) -> list[Array]:
    """Per group, the weight (m,) of each leg's branch at ``q``."""
    weights = []
    for group in groups:
        conditions = [cables.conditions[plan.cable][plan.branch] for plan, _, _ in group.members]
        weights.append(jnp.stack([_branch_weight(c, q, cables.blend) for c in conditions]))
    return weights


class CableSetPath(eqx.Module):
    """The solved legs of a `CableSet` and the per-cable summaries (a pytree).

    - `length`: (n_cables,) total lengths (NaN for a cable with a linear term when no
      ``q`` was given to `solve_cables`);
    - `result`: per cable, the first failure over its legs (else successful);
      `converged` is ``result == RESULTS.successful``;
    - `groups`: one batched `CablePath` per leg structure, leading axis = its legs
      (a `ClosedFormPath` for closed-form legs); `leg_paths(name)` picks out a cable's legs.
    """

    names: tuple[str, ...] = eqx.field(static=True)
    plans: tuple[tuple[_LegPlan, ...], ...] = eqx.field(static=True)
    groups: tuple[CablePath | ClosedFormPath, ...]
    length: Float[Array, " n"]
    result: RESULTS

    @property
    def converged(self):
        return jnp.asarray(self.result == RESULTS.successful)

    def obstacle_contact(self, name: str) -> list:
        """Per obstacle of cable ``name`` (branches in order, path order within each),
        whether the path touches it: a curve in contact, a closed-form wrap that wraps or
        an inside wrap that bends."""
        flags = []
        for plan, leg in self._legs(name):
            if isinstance(leg, ClosedFormPath):
                flags.extend([leg.in_contact] if plan.obstacles else [])
            else:
                flags.extend(leg.in_contact[..., k] for k in range(leg.in_contact.shape[-1]))
        return flags

    def leg_paths(self, name: str) -> list[CablePath | ClosedFormPath]:
        """The legs of cable ``name`` in branch and path order: a `CablePath` in the leg's
        local bodies (0 = start point, then the obstacles, then the end point), or a
        `ClosedFormPath` for a straight or closed-form leg. Unbatched paths only."""
        return [path for _, path in self._legs(name)]

    def _legs(self, name: str) -> list:
        cable = self.names.index(name)
        found = []
        for group, plans in zip(self.groups, self.plans):
            for member, plan in enumerate(plans):
                if plan.cable == cable:
                    found.append((plan, jax.tree.map(lambda x, m=member: x[m], group)))

        def order(item):
            plan = item[0]
            return plan.branch, plan.start[0] != "origin", plan.start[1]

        return sorted(found, key=order)


def _grouped_legs(cables: CableSet) -> dict[tuple, list]:
    """Every leg as ``(plan, local CableSpan, model body of each local body)``, grouped by
    structure (insertion order: deterministic)."""
    groups: dict[tuple, list] = {}
    for plan in cables.legs():
        leg, bodies = _leg_span(cables.branches[plan.cable][plan.branch], plan)
        groups.setdefault(structure_key(leg), []).append((plan, leg, bodies))
    return groups


class _Group(NamedTuple):
    """One leg structure: its legs stacked, the model body of each local body (m, k),
    the cable each leg belongs to (m,) and its branch divisor (m,)."""

    members: list
    stacked: CableSpan
    bodies: np.ndarray
    owners: np.ndarray
    divisor: Array

    @property
    def closed_form(self) -> bool:
        return _is_closed_form(self.members[0][1])


def _stacked_groups(cables: CableSet) -> list[_Group]:
    groups = []
    for members in _grouped_legs(cables).values():
        groups.append(
            _Group(
                members=members,
                stacked=stack_trees([leg for _, leg, _ in members]),
                bodies=np.stack([bodies for _, _, bodies in members]),
                owners=np.array([plan.cable for plan, _, _ in members]),
                divisor=jnp.stack([cables.divisors[plan.cable][plan.branch] for plan, _, _ in members]),
            )
        )
    return groups


def _gather(body_poses: Transform, bodies: np.ndarray) -> Transform:
    return Transform(body_poses.rotation[bodies], body_poses.translation[bodies])


def solve_cables(
    cables: CableSet,
    body_poses: Transform,
    q: Real[ArrayLike, " nq"] | None = None,
    *,
    warm_start: CableSetPath | None = None,
) -> CableSetPath:
    """Solve every cable of `cables` at ``body_poses`` (docs/cable-sets.md).

    Legs of the same structure are stacked and solved by one `jax.vmap` of
    `jaxwrap.solve_cable`, so ``jax.jit(jw.solve_cables)`` compiles one solver program
    per leg structure, not per cable.

    **Arguments:**

    - `cables`: a `jaxwrap.CableSet` whose body indices index ``body_poses``.
    - `body_poses`: ``X_GB`` of every body, leading axis ``n_bodies``.
    - `q`: the configuration, needed only for cables with a linear term (fixed tendons)
      or conditional branches; without it their length is NaN and their result
      `invalid_input`.
    - `warm_start`: a previous `CableSetPath` of the same set.

    **Returns:** a `CableSetPath`; ``.length`` has shape (n_cables,).
    """
    if not isinstance(cables, CableSet):
        raise ValueError(f"cables must be a jaxwrap.CableSet, got {type(cables).__name__}")
    if not isinstance(body_poses, Transform) or len(body_poses.batch_shape) != 1:
        raise ValueError("body_poses must be a Transform with one leading axis (n_bodies,); batch with jax.vmap")
    n_bodies = body_poses.batch_shape[0]
    for spans in cables.branches:
        for span in spans:
            span.check_bodies(n_bodies)

    groups = _stacked_groups(cables)
    if warm_start is not None and len(warm_start.groups) != len(groups):
        raise ValueError("warm_start must be a CableSetPath of the same CableSet")

    dtype = body_poses.translation.dtype
    n = len(cables.names)
    leg_lengths, leg_codes = [], []
    paths, plans = [], []
    pose_ok = pose_validity(body_poses)
    conditional = any(cables.conditional)
    if conditional and q is not None:
        q = as_float_array(q)
        weights = _leg_weights(cables, groups, q)
    else:
        weights = [None] * len(groups)
    for g, group in enumerate(groups):
        warm = None if warm_start is None else warm_start.groups[g]
        if group.closed_form:
            path = _solve_closed_form_group(group, body_poses, pose_ok)[0]
        else:
            poses = _gather(body_poses, group.bodies)
            if warm is None:
                path = jax.vmap(lambda c, p: solve_cable(c, p))(group.stacked, poses)
            else:
                path = jax.vmap(lambda c, p, w: solve_cable(c, p, warm_start=w))(group.stacked, poses, warm)
        leg_length, leg_code = path.length / group.divisor, path.result._value
        if weights[g] is not None:  # a branch that does not count adds nothing, not even a failure
            off = weights[g] == 0
            leg_length = jnp.where(off, 0.0, leg_length * weights[g])
            leg_code = jnp.where(off, RESULTS.successful._value, leg_code)
        leg_lengths.append(leg_length)
        leg_codes.append(leg_code)
        paths.append(path)
        plans.append(tuple(plan for plan, _, _ in group.members))

    # Per cable, the sum of its legs and the first failure among them (static gathers of
    # each cable's legs in order, padded with a zero length and a success).
    table = _leg_table(groups, n)
    success = RESULTS.successful._value
    if groups:
        length = jnp.concatenate([*leg_lengths, jnp.zeros(1, dtype)])[table].sum(axis=1)
        codes = jnp.concatenate([*leg_codes, jnp.full(1, success, dtype=leg_codes[0].dtype)])[table]
        code = jnp.take_along_axis(codes, jnp.argmax(codes != success, axis=1)[:, None], axis=1)[:, 0]
    else:
        length = jnp.zeros(n, dtype)
        code = jnp.full(n, success)
    if any(cables.linear):
        if q is None:
            length = jnp.where(jnp.asarray(cables.linear), jnp.nan, length)
            valid_q = jnp.asarray(False)
        else:
            q = as_float_array(q)
            if q.shape != (cables.coefficients.shape[1],):
                raise ValueError(f"q must have shape ({cables.coefficients.shape[1]},), got {q.shape}")
            length = length + cables.coefficients @ q
            valid_q = jnp.all(jnp.isfinite(q))
        # An invalid q comes before any leg's failure.
        bad_q = jnp.asarray(cables.linear) & ~valid_q
        code = jnp.where(bad_q, RESULTS.invalid_input._value, code)
    if conditional:
        uses_q = jnp.asarray(cables.conditional)
        valid_q = jnp.asarray(False) if q is None else jnp.all(jnp.isfinite(q))
        length = jnp.where(uses_q & ~valid_q, jnp.nan, length)
        code = jnp.where(uses_q & ~valid_q, RESULTS.invalid_input._value, code)

    # A NaN length (invalid input) gets NaN derivatives too, not zeros: multiply by a factor
    # that is 1 or NaN and carries no derivative of its own.
    length = length * jax.lax.stop_gradient(jnp.where(jnp.isnan(length), jnp.nan, 1.0))

    result = eqx.tree_at(lambda r: r._value, RESULTS.successful, code.astype(RESULTS.successful._value.dtype))
    return CableSetPath(names=cables.names, plans=tuple(plans), groups=tuple(paths), length=length, result=result)


def cable_lengths(model: RobotModel, cables: CableSet, q: Real[ArrayLike, " nq"] | Sequence) -> Float[Array, " n"]:
    """Length of every cable of `cables` at configuration ``q`` of `model`, shape
    (n_cables,): the solved branches over ``forward_kinematics(model, q)`` plus the linear
    (fixed-tendon) terms."""
    q = model.check_q(q)
    return solve_cables(cables, forward_kinematics(model, q), q).length


def _closed_form_lines(leg: AbstractCableSpan, a: Array, b: Array, path: ClosedFormPath) -> Array:
    """The straight pieces of a closed-form leg as unit-tension wrenches, (S, 6): each
    piece from x to y, direction u, pulls the body at x with ``[u; x × u]`` (force; moment
    about the ground origin: the line's Plücker coordinates) and the body at y with the
    opposite. Pieces ``a→P``, ``Q→b``, ``a→b`` for an obstacle leg, weighted by whether it
    wraps; ``a→b`` alone for a straight leg (the bodies of each: `_LINE_BODIES`). The
    contact points of a closed-form wrap are stationary (tangent points, or the inside
    wrap's reflection point), so they move with the obstacle's body to first order
    (docs/cable-sets.md#moment-arms). ``a``, ``b``: the leg's end points in ground."""
    if leg.obstacles:
        P, Q = path.points[1], path.points[2]
        pieces = [(a, P), (Q, b), (a, b)]
        wraps = path.in_contact.astype(a.dtype)
        weight = jnp.stack([wraps, wraps, 1.0 - wraps])
    else:
        pieces, weight = [(a, b)], jnp.ones(1, a.dtype)
    lines = []
    for x, y in pieces:
        u = safe_normalize(y - x, jnp.zeros(3, a.dtype))
        lines.append(jnp.concatenate([u, jnp.cross(x, u)]))
    return jnp.stack(lines) * weight[:, None]


def _line_bodies(num_bodies: int) -> list[tuple[int, int]]:
    """The (pulled at x, pulled at y) local bodies of `_closed_form_lines`' pieces."""
    if num_bodies == 3:
        return [(0, 1), (1, 2), (0, 2)]
    return [(0, num_bodies - 1)]


def cable_lengths_and_moment_arms(
    model: RobotModel, cables: CableSet, q: Real[ArrayLike, " nq"] | Sequence
) -> tuple[Float[Array, " n"], Float[Array, "n nv"]]:
    """Lengths (n_cables,) and moment arms ``-dL/dv`` (n_cables, nv) in one pass
    (docs/cable-sets.md#moment-arms): `solve_cables` at ``forward_kinematics(model, q)``,
    then `moment_arms_from_paths` of its paths. Invalid input gives NaN lengths and NaN
    rows."""
    q = model.check_q(q)
    paths = solve_cables(cables, forward_kinematics(model, q), q)
    return paths.length, moment_arms_from_paths(model, cables, q, paths)


def moment_arms_from_paths(
    model: RobotModel,
    cables: CableSet | AbstractCableSpan,
    q: Real[ArrayLike, " nq"] | Sequence,
    paths: CableSetPath | CablePath,
) -> Float[Array, "n nv"] | Float[Array, " nv"]:
    """Moment arms ``-dL/dv`` (n_cables, nv) of `cables` at ``q`` from their solved
    ``paths`` (``solve_cables(cables, forward_kinematics(model, q), q)``, possibly
    warm-started), without solving again (docs/cable-sets.md#moment-arms).

    A moment arm is the generalized force of a unit tension: ``r = Σ_k J_kᵀ F_k`` over
    the bodies a leg acts on, with ``F_k`` the spatial force of unit tension on body k
    (`CablePath.body_forces`, or the closed forms' straight lines). With ``F_k`` taken
    about the ground origin, ``J_kᵀ F_k`` is every coordinate's twist (`dof_twists`,
    computed once) against ``F_k``, kept for the coordinates that move body k, so no body
    Jacobian is formed. Each leg costs one forward evaluation, not ``nv`` tangents or a
    backward pass; second derivatives flow through it (the paths' implicit derivatives).
    A cable whose length is NaN (invalid input) gets a NaN row.

    For one cable (a `CableSpan` and the `CablePath` that ``solve_cable`` returns for it at
    ``forward_kinematics(model, q)``): its (nv,) moment arms, taken the same way
    (docs/cable.md#moment-arms)."""
    if isinstance(cables, AbstractCableSpan):
        if not isinstance(paths, CablePath):
            raise ValueError("for one cable, paths must be the CablePath that jw.solve_cable returns for it")
        return path_moment_arms(model, model.check_q(q), paths)
    q = model.check_q(q)
    groups = _stacked_groups(cables)
    plans = tuple(tuple(plan for plan, _, _ in group.members) for group in groups)
    if not isinstance(paths, CableSetPath) or paths.names != cables.names or paths.plans != plans:
        raise ValueError("paths must be the CableSetPath that jw.solve_cables returns for these cables")
    dtype = jnp.result_type(q, float)
    poses = forward_kinematics(model, q)
    # One twist per joint motion (v's columns, then coupled joints), each adding to its
    # coordinate's column.
    twists = _motion_twists(model, poses, q).T  # (n_dof, 6)
    _, column, moves = model._joint_dofs()
    n = len(cables.names)
    values, targets = [], []
    conditional = any(cables.conditional)
    weights = _leg_weights(cables, groups, q) if conditional else [None] * len(groups)
    raw_lengths = []
    for group, weight, path in zip(groups, weights, paths.groups):
        moved = moves[group.bodies].astype(dtype)  # (m, k, n_dof), static
        leg = group.stacked
        if group.closed_form:
            a = _points_on_bodies(poses, group.bodies[:, leg.origin_body], leg.origin_station)
            b = _points_on_bodies(poses, group.bodies[:, leg.termination_body], leg.termination_station)
            rows = jax.vmap(_closed_form_lines)(leg, a, b, path)
            # A piece pulls its two bodies with opposite wrenches: a coordinate that moves
            # both gets nothing from it.
            coef = np.stack([moved[:, i] - moved[:, j] for i, j in _line_bodies(moved.shape[1])], axis=1)
        else:
            local = _gather(poses, group.bodies)
            force = jax.vmap(lambda p: p.body_forces(1.0))(path)
            rows = _wrenches_about_origin(force, local.translation)
            # A leg in equilibrium exerts no net wrench on its bodies together, so only
            # coordinates that move some but not all of them get anything.
            coupled = moved.any(axis=1) & ~moved.all(axis=1)
            coef = moved * coupled[:, None, :]
        raw = path.length / group.divisor
        scale = 1.0 / group.divisor
        if weight is not None:  # weighted branches; one that does not count adds nothing
            raw = jnp.where(weight == 0, 0.0, raw)
            scale = jnp.where(weight == 0, 0.0, weight * scale)
        raw_lengths.append(raw)
        # Static (leg, coordinate) pairs with a share; the power of each row's wrench
        # against the coordinate's twist (elementwise: tiny batched dots run slowly).
        pair_leg, dof = np.nonzero(np.any(coef != 0, axis=1))
        power = jnp.sum(rows[pair_leg] * twists[dof][:, None, :], axis=-1)
        values.append(jnp.sum(power * coef[pair_leg, :, dof], axis=1) * scale[pair_leg])
        targets.append(group.owners[pair_leg] * model.nv + column[dof])
    if groups:
        arms = _sum_pairs(np.concatenate(targets), jnp.concatenate(values), n, model.nv, dtype)
    else:  # only fixed tendons
        arms = jnp.zeros((n, model.nv), dtype)
    if conditional and cables.blend > 0 and groups:
        # Blended branches: the weights' own derivative, -Σ_b L_b dw_b/dv.
        def all_weights(v):
            return jnp.concatenate(_leg_weights(cables, groups, integrate(model, q, v)))

        dw_dv = jax.jacfwd(all_weights)(jnp.zeros(model.nv, dtype))  # (legs, nv)
        rates = jnp.concatenate(raw_lengths)[:, None] * dw_dv
        padded = jnp.concatenate([rates, jnp.zeros((1, model.nv), dtype)])
        arms = arms - padded[_leg_table(groups, n)].sum(axis=1)
    if any(cables.linear):
        dq_dv = jax.jacfwd(lambda v: integrate(model, q, v))(jnp.zeros(model.nv, dtype))
        arms = arms - cables.coefficients @ dq_dv
    return jnp.where(jnp.isnan(paths.length)[:, None], jnp.nan, arms)


def path_moment_arms(model: RobotModel, q: Real[ArrayLike, " nq"], path: CablePath) -> Float[Array, " nv"]:
    """``-dL/dv`` of a solved path (``solve_cable(cable, forward_kinematics(model, q))``)
    from its forces (docs/cable.md#moment-arms): the power of a unit tension's wrench on
    every body against every coordinate's twist, summed over the bodies that coordinate
    moves. One solve and no backward pass; NaN where the length is NaN."""
    poses = path.body_poses
    if poses.translation.ndim != 2:
        raise ValueError(
            f"one path, not a batch of shape {poses.translation.shape[:-2]}: map over a batch with jax.vmap"
        )
    if poses.translation.shape[-2] != model.num_bodies:
        raise ValueError(
            f"the path was solved at {poses.translation.shape[-2]} body poses, but model {model.name!r} has "
            f"{model.num_bodies} bodies: solve it at forward_kinematics(model, q)"
        )
    dtype = poses.translation.dtype
    wrench = _wrenches_about_origin(path.body_forces(jnp.ones((), dtype)), poses.translation)
    twists = _motion_twists(model, poses, q)  # (6, n_dof)
    _, column, moves = model._joint_dofs()
    power = jnp.sum(jnp.where(jnp.asarray(moves), wrench @ twists, 0.0), axis=0)  # (n_dof,)
    to_v = np.zeros((len(column), model.nv))
    to_v[np.arange(len(column)), column] = 1.0  # coupled joints add to their source's column
    arms = power @ jnp.asarray(to_v, dtype)
    return jnp.where(jnp.isnan(path.length), jnp.nan, arms)


def _wrenches_about_origin(forces: Float[Array, "*bodies 2 3"], origins: Float[Array, "*bodies 3"]) -> Array:
    """``[F; M + p × F]``: body forces given as [moment about the body origin, force]
    (`CablePath.body_forces`), as wrenches about the ground origin, the body origins at
    `origins` (ground frame)."""
    f = forces[..., 1, :]
    return jnp.concatenate([f, forces[..., 0, :] + jnp.cross(origins, f)], axis=-1)


def _sum_pairs(targets: np.ndarray, values: Array, n: int, nv: int, dtype) -> Array:
    """(n, nv) sums of ``values`` into the flat cells ``targets`` (static): a gather per
    occupied cell and a sum, then a gather into the matrix (XLA's CPU backend runs
    scatters slowly)."""
    cells, slot = np.unique(targets, return_inverse=True)
    members = [np.nonzero(slot == c)[0] for c in range(len(cells))]
    width = max([len(m) for m in members] + [1])
    table = np.full((len(cells), width), len(targets), dtype=int)
    for c, m in enumerate(members):
        table[c, : len(m)] = m
    sums = jnp.concatenate([values, jnp.zeros(1, dtype)])[table].sum(axis=1)
    where = np.full(n * nv, len(cells), dtype=int)
    where[cells] = np.arange(len(cells))
    return jnp.concatenate([sums, jnp.zeros(1, dtype)])[where].reshape(n, nv)


def _leg_table(groups: list[_Group], n: int) -> np.ndarray:
    """Static (n cables, most legs) indices into the legs of ``groups`` in order, each
    cable's legs then padding pointing one past the last leg (a zero row)."""
    order = np.concatenate([np.zeros(0, int), *(group.owners for group in groups)]).tolist()
    rows = [[k for k, owner in enumerate(order) if owner == i] for i in range(n)]
    width = max([len(r) for r in rows] + [1])
    return np.array([r + [len(order)] * (width - len(r)) for r in rows], dtype=int)


def cable_set_moment_arms(
    model: RobotModel, cables: CableSet, q: Real[ArrayLike, " nq"] | Sequence
) -> Float[Array, "n nv"]:
    """``-dL/dv`` of every cable along ``model.integrate``, shape (n_cables, nv)
    (`cable_lengths_and_moment_arms`)."""
    return cable_lengths_and_moment_arms(model, cables, q)[1]
