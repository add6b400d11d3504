"""The few numerics and input checks every layer of jaxwrap shares, written once.

NaN-safe maps use the double-`where` pattern: the differentiated branch never sees the
singular argument, so values *and* gradients stay finite at it. Input checks run on
concrete values only (at construction or trace time); traced values pass through, so
every object can also be built inside `jit`/`vmap`/`grad`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Float, PyTree, Real


# ---------------------------------------------------------------------------- conversions
def as_float_array(value: ArrayLike | Sequence, dtype=None) -> Array:
    """`jnp.asarray`, promoting integer and boolean input to the default float dtype
    (``float64`` under ``jax_enable_x64``); floating input keeps its dtype unless `dtype`
    is given."""
    value = jnp.asarray(value, dtype)
    if not jnp.issubdtype(value.dtype, jnp.inexact):
        value = value.astype(jnp.result_type(float))
    return value


def as_vector(value: ArrayLike | Sequence, size: int, what: str) -> Array:
    """A float array of shape ``(size,)``; `ValueError` naming `what` otherwise."""
    array = as_float_array(value)
    if array.shape != (size,):
        raise ValueError(f"{what} must have shape ({size},), got {array.shape}")
    return array


def as_scalar(value: ArrayLike | Sequence, what: str) -> Array:
    """A float array of shape ``()``; `ValueError` naming `what` otherwise."""
    array = as_float_array(value)
    if array.shape != ():
        raise ValueError(f"{what} must be a scalar, got shape {array.shape}")
    return array


def scalar_setting(value: float | ArrayLike, what: str) -> float | Array:
    """A numeric setting (tolerance, step bound, ...): a Python number stays a Python float
    (no array is created at import time), anything else becomes a float array of shape
    ``()``. Either way it is a pytree leaf, so under `jax.jit` a new value is traced and
    does not recompile."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    return as_scalar(value, what)


# ---------------------------------------------------------------------------- concrete checks
def concrete_value(value) -> np.ndarray | None:
    """The NumPy value of `value`, or None when it is traced (inside `jit`/`vmap`/`grad`,
    or an abstract placeholder of an `equinox` filtered transform)."""
    if isinstance(value, jax.core.Tracer):
        return None
    try:
        return np.asarray(value)
    except Exception:  # noqa: BLE001 - e.g. jax.ShapeDtypeStruct placeholders
        return None


def concretely(predicate: Callable[..., ArrayLike], *values) -> bool:
    """True when every value is concrete and `predicate(*values)` holds everywhere."""
    concretes = [concrete_value(v) for v in values]
    if any(c is None for c in concretes):
        return False
    return bool(np.all(predicate(*concretes)))


def check_positive(what: str, value) -> None:
    """`ValueError` if a concrete `value` has an entry that is not a finite positive number."""
    concrete = concrete_value(value)
    if concrete is not None and not np.all(np.isfinite(concrete) & (concrete > 0)):
        raise ValueError(f"{what} must be finite and positive, got {concrete.tolist()}")


def check_non_negative(what: str, value) -> None:
    """`ValueError` if a concrete `value` has an entry that is not finite and >= 0."""
    concrete = concrete_value(value)
    if concrete is not None and not np.all(np.isfinite(concrete) & (concrete >= 0)):
        raise ValueError(f"{what} must be finite and non-negative, got {concrete.tolist()}")


def check_count(what: str, value, minimum: int = 0) -> int:
    """A Python integer >= `minimum` (a static count or budget); `ValueError` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{what} must be an integer >= {minimum}, got {value!r}")
    return int(value)


# ---------------------------------------------------------------------------- NaN-safe maps
def safe_norm(v: Float[Array, "*batch n"]) -> Float[Array, "*batch"]:
    """Euclidean norm over the last axis, with a zero (not NaN) gradient at the origin.
    A NaN vector has a NaN norm: only an exact zero is guarded (``~(norm2 <= 0)``, not
    ``norm2 > 0``, which would turn NaN into 0 and hide a failure)."""
    norm2 = jnp.sum(v * v, axis=-1)
    positive = ~(norm2 <= 0)
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, norm2, 1)), 0)


def unit_and_length(v: Float[Array, "*batch n"]) -> tuple[Float[Array, "*batch n"], Float[Array, "*batch"]]:
    """``(v / |v|, |v|)``; the unit vector is 0 (with finite derivatives) where ``v = 0``,
    and both are NaN where ``v`` is (`safe_norm`)."""
    norm2 = jnp.sum(v * v, axis=-1)
    positive = ~(norm2 <= 0)
    length = jnp.sqrt(jnp.where(positive, norm2, 1))
    return v / length[..., None], jnp.where(positive, length, 0)


def safe_normalize(
    v: Float[Array, "*batch n"], fallback: Real[ArrayLike, "*#batch n"] | Sequence
) -> Float[Array, "*batch n"]:
    """Unit vector along `v`, or `fallback` (assumed unit) where `v` is numerically zero;
    NaN where `v` is NaN."""
    tiny = jnp.finfo(v.dtype).tiny
    norm2 = jnp.sum(v * v, axis=-1, keepdims=True)
    ok = ~(norm2 <= tiny)
    unit = v / jnp.sqrt(jnp.where(ok, norm2, 1))
    return jnp.where(ok, unit, jnp.asarray(fallback, v.dtype))


def positive_or_one(x: Float[Array, "*batch"]) -> Float[Array, "*batch"]:
    """`x` where it is positive, else 1: a denominator that vanishes only at a singular
    point, where the numerator is masked anyway. NaN stays NaN."""
    return jnp.where(x <= 0, 1, x)


# ---------------------------------------------------------------------------- small solves
def solve_3x3(A: Float[Array, "3 3"], b: Float[Array, " 3"]) -> Float[Array, " 3"]:
    """``A⁻¹ b`` by Cramer's rule, ``(b₀ a₁×a₂ + b₁ a₂×a₀ + b₂ a₀×a₁) / det A`` for the
    rows ``aᵢ`` of `A`, and one step of iterative refinement (the same rule on the
    residual), which brings its error to LU's: within ``2 · eps · cond(A) · |x|`` on
    random systems of condition up to 1e4, against up to 40x that for the rule alone
    (`tests/cable/test_small_dense_algebra.py`). Elementwise arithmetic only: under `vmap`
    it is a few fused kernels over the batch, where `jnp.linalg.solve` calls LAPACK once
    per matrix (and jaxlib splits a large batch of calls across XLA's thread pool,
    docs/performance.md#lanes-of-nested-batches). A singular `A` gives inf or NaN, as
    `jnp.linalg.solve` does."""
    c0, c1, c2 = jnp.cross(A[1], A[2]), jnp.cross(A[2], A[0]), jnp.cross(A[0], A[1])
    det = jnp.dot(A[0], c0)

    def cramer(r):
        return (r[0] * c0 + r[1] * c1 + r[2] * c2) / det

    x = cramer(b)
    return x + cramer(b - A @ x)


# ---------------------------------------------------------------------------- rotations
def segment_nearest_to_origin(a: Float[Array, " d"], b: Float[Array, " d"]) -> Float[Array, " d"]:
    """The point of the segment from `a` to `b` nearest the origin (an end point where the
    foot of the perpendicular lies beyond it; `a` where the two coincide)."""
    d = b - a
    t = jnp.clip(-jnp.dot(a, d) / positive_or_one(jnp.dot(d, d)), 0.0, 1.0)
    return a + t * d


def skew(w: Real[ArrayLike, "*batch 3"] | Sequence) -> Float[Array, "*batch 3 3"]:
    """Cross-product matrix: ``skew(w) @ v == cross(w, v)``."""
    w = as_float_array(w)
    zero = jnp.zeros_like(w[..., 0])
    rows = [
        jnp.stack([zero, -w[..., 2], w[..., 1]], axis=-1),
        jnp.stack([w[..., 2], zero, -w[..., 0]], axis=-1),
        jnp.stack([-w[..., 1], w[..., 0], zero], axis=-1),
    ]
    return jnp.stack(rows, axis=-2)


def unskew(m: Real[ArrayLike, "*batch 3 3"] | Sequence) -> Float[Array, "*batch 3"]:
    """Inverse of `skew` on the antisymmetric part of `m`."""
    m = as_float_array(m)
    return 0.5 * jnp.stack(
        [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], axis=-1
    )


def axis_rotation(angle: Real[ArrayLike, "*batch"] | Sequence, axis: int) -> Float[Array, "*batch 3 3"]:
    """Right-handed rotation by `angle` (rad) about coordinate axis 0 (x), 1 (y) or 2 (z)."""
    angle = as_float_array(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3  # e_i -> cos e_i + sin e_j
    c, s = jnp.cos(angle), jnp.sin(angle)
    eye = jnp.broadcast_to(jnp.eye(3, dtype=angle.dtype), (*angle.shape, 3, 3))
    rotation = eye.at[..., i, i].set(c).at[..., j, j].set(c)
    return rotation.at[..., j, i].set(s).at[..., i, j].set(-s)


def all_finite(*trees) -> Bool[Array, ""]:
    """Whether every floating-point leaf of `trees` is finite (a scalar boolean)."""
    leaves = [x for x in jax.tree.leaves(trees) if jnp.issubdtype(jnp.result_type(x), jnp.inexact)]
    if not leaves:
        return jnp.asarray(True)
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves]))


def structure_key(tree) -> tuple:
    """A hashable key equal for pytrees that stack into one batched pytree: the same
    structure (static fields included) and the same leaf shapes and dtypes."""
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves)


def stack_trees(trees: Sequence[PyTree]) -> PyTree:
    """Pytrees of one `structure_key` stacked leaf by leaf along a new leading axis."""
    return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def same_kind_groups(surfaces, static: Sequence | None = None) -> list[list[int]]:
    """The obstacles' indices grouped by surface kind (`structure_key`: same type and
    structure, static fields included, and the same leaf shapes and dtypes), so that a
    group's surfaces stack into one batched surface; with `static` (one hashable per
    obstacle) also by that value. Groups keep path order."""
    static = [None] * len(surfaces) if static is None else static
    groups: dict = {}
    for i, (surface, flag) in enumerate(zip(surfaces, static)):
        groups.setdefault((structure_key(surface), flag), []).append(i)
    return list(groups.values())


def map_by_kind(fn, surfaces, *per_obstacle, static: Sequence | None = None) -> list:
    """``[fn(surfaces[i], *(a[i] for a in per_obstacle)) for i]``, with each group of
    surfaces of one kind (`same_kind_groups`) stacked and run as one `jax.vmap`: one
    geodesic loop (and one traced copy of it) per kind instead of one per obstacle, which
    runs as long as its longest curve rather than the sum of them
    (docs/performance.md#obstacles-of-one-kind). With `static` (one hashable per
    obstacle), obstacles are grouped by it too and ``fn`` takes it as a last, static
    argument."""
    out: list = [None] * len(surfaces)
    for group in same_kind_groups(surfaces, static):
        extra = () if static is None else (static[group[0]],)
        if len(group) == 1:
            i = group[0]
            out[i] = fn(surfaces[i], *(a[i] for a in per_obstacle), *extra)
            continue
        args = [stack_trees([a[i] for i in group]) for a in per_obstacle]
        stacked = stack_trees([surfaces[i] for i in group])
        batched = jax.vmap(lambda surface, *xs, extra=extra: fn(surface, *xs, *extra))(stacked, *args)
        for k, i in enumerate(group):
            out[i] = jax.tree.map(lambda x, k=k: x[k], batched)
    return out


def batched_like(tree: PyTree, reference: PyTree) -> PyTree:
    """`tree` as it is, except that under `jax.vmap` every leaf is batched wherever any leaf
    of `reference` is (unbatched leaves broadcast along the batch axis).

    For the initial carry of a `lax.scan` or `lax.while_loop` whose body batches every
    carry anyway (a per-lane stopping rule does): JAX batches such a loop by finding which
    carries end up batched, a fixpoint that batches the whole body again for every pass
    (docs/performance.md#loops-batched-in-one-pass). A carry batched from the start needs
    one pass. Values and derivatives are unchanged; only where the batch axis is.
    """
    return _batched_like(tree, jax.lax.stop_gradient(reference))


@jax.custom_batching.custom_vmap
def _same(tree, reference):
    return tree


@_same.def_vmap
def _same_batched(axis_size, in_batched, tree, reference):
    tree_batched, reference_batched = in_batched
    if any(jax.tree.leaves(reference_batched)):
        broadcast = lambda x, b: x if b else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))  # noqa: E731
        tree, tree_batched = jax.tree.map(broadcast, tree, tree_batched), jax.tree.map(lambda _: True, tree_batched)
    # Again at the enclosing `vmap`, if there is one: each level batches on its own.
    return _batched_like(tree, reference), tree_batched


@jax.custom_jvp
def _batched_like(tree, reference):
    return _same(tree, reference)


@_batched_like.defjvp
def _batched_like_jvp(primals, tangents):
    # The identity's derivative: tangents pass through as they are (linear, so reverse
    # mode transposes it), whatever their batch axis.
    tree, reference = primals
    return _batched_like(tree, reference), tangents[0]


def any_lane(x: Bool[Array, ""]) -> Bool[Array, ""]:
    """`x`, and under `jax.vmap` whether it holds on any lane of the batch: the result is
    never batched, so a `lax.cond` on it stays a branch under `vmap` (where a batched
    predicate would turn it into a `select` that runs both branches)."""
    return _any_lane(jnp.asarray(x))


@jax.custom_batching.custom_vmap
def _any_lane(x):
    return x


@_any_lane.def_vmap
def _any_lane_batched(axis_size, in_batched, x):
    # Again at the enclosing `vmap`, if there is one.
    return _any_lane(jnp.any(x, axis=0) if in_batched[0] else x), False


def lane_cond(pred: Bool[Array, ""], fn: Callable[..., PyTree], *operands) -> PyTree:
    """``fn(*operands)`` where `pred` holds, zeros (of its output's shapes) elsewhere; `fn`
    runs only when it is needed.

    Unbatched this is a `lax.cond`. Under `jax.vmap` a `lax.cond` on a batched predicate
    becomes a `select` that runs both branches on every lane; here the batch runs `fn`
    (on every lane, masked) only when `pred` holds on some lane, and skips it otherwise.
    `fn` must be a function of its operands alone (it may not close over traced values).
    """
    out = jax.eval_shape(fn, *operands)

    def zeros():
        return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), out)

    @jax.custom_batching.custom_vmap
    def run(pred, operands):
        return jax.lax.cond(pred, lambda ops: fn(*ops), lambda ops: zeros(), operands)

    @run.def_vmap
    def _batched(axis_size, in_batched, pred, operands):
        pred_batched, ops_batched = in_batched
        axes = tuple(jax.tree.map(lambda b: 0 if b else None, ops_batched))

        def compute(pred, *ops):
            if any(jax.tree.leaves(ops_batched)):
                values = jax.vmap(fn, in_axes=axes)(*ops)
            else:
                values = jax.tree.map(lambda x: jnp.broadcast_to(x, (axis_size, *x.shape)), fn(*ops))
            if not pred_batched:
                return values
            return jax.tree.map(lambda x: jnp.where(pred.reshape(-1, *([1] * (x.ndim - 1))), x, 0), values)

        # Itself a `lane_cond`, so that under a further `vmap` the batch of batches again
        # runs `fn` only where some lane needs it.
        result = lane_cond(jnp.any(pred), compute, pred, *operands)
        return result, jax.tree.map(lambda _: True, result)

    return run(jnp.asarray(pred), tuple(operands))


#: `stack_where` evaluates its lanes in chunks of at most this many.
STACK_WHERE_CHUNK = 256


def stack_where(
    fn: Callable[[PyTree, PyTree], PyTree], mask: Bool[Array, " K"], stacked: PyTree, shared: PyTree
) -> PyTree:
    """``fn(stacked[k], shared)`` for each slot ``k`` of a stack (leading axis ``K`` of
    `mask` and of every leaf of `stacked`) where ``mask[k]`` holds, zeros (of its output's
    shapes) elsewhere; `fn` runs only on those slots.

    Under `jax.vmap` over ``B`` stacks the ``B·K`` slots are one batch: the slots where
    `mask` holds are gathered, `STACK_WHERE_CHUNK` at a time, and `fn` runs on those
    alone, so a batch pays for the slots it uses rather than for ``K`` per element
    (docs/performance.md#scoring-the-slots-that-ran). Every enclosing `vmap` level is
    folded into the same batch, as the cable solver's loop folds them
    (docs/performance.md#lanes-of-nested-batches), except `sharded_vmap`'s devices. `fn`
    must be a function of its arguments alone (it may not close over traced values); it
    is traced once.
    """
    slot = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x)[1:], jnp.result_type(x)), stacked)
    common = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)), shared)
    closed, out = jax.make_jaxpr(fn, return_shape=True)(slot, common)
    out_tree = jax.tree.structure(out)

    def run(s, sh):
        leaves = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *jax.tree.leaves((s, sh)))
        return jax.tree.unflatten(out_tree, leaves)

    return _stack_lanes(run, out, mask, stacked, shared, jax.tree.map(lambda _: 0, shared))


def _stack_lanes(run, out, mask, lanes, shared, per) -> PyTree:
    """`stack_where`'s map over the lanes of `mask` and `lanes` (axis 0). `per` holds, per
    leaf of `shared`, how many consecutive lanes share one of its rows (the row of lane
    ``i`` is ``(i // per) % rows``), or 0 where the leaf is one value for every lane.

    Under an enclosing `jax.vmap` over ``B`` elements the new axis is folded into the lanes
    (lane ``b · size + i`` is lane ``i`` of element ``b``) and this is called again, so
    only the outermost level runs the compacted loop; `sharded_vmap`'s devices' level is
    batched as it comes (`folds_this_batch_level`)."""
    size = mask.shape[0]

    def loop(mask, lanes, shared):
        return _compacted_map(run, out, mask, lanes, shared, per, size)

    def fold(axis_size, in_batched, mask, lanes, shared):
        mask_b, lanes_b, shared_b = in_batched

        def as_lanes(x, is_batched):
            return fold_into_lanes(x, is_batched, axis_size)

        # A shared leaf batched at this level: its rows of every element, one after the
        # other (one row per element where it was common to the lanes); one that is not
        # keeps its rows, which the modulo in the row index repeats for every element.
        def folded_shared(x, p, is_batched):
            return x.reshape(-1, *x.shape[2:]) if is_batched and p > 0 else x

        def folded_per(p, is_batched):
            return size if is_batched and p == 0 else p

        shared_l = jax.tree.map(folded_shared, shared, per, shared_b)
        per_l = jax.tree.map(folded_per, per, shared_b)
        return _stack_lanes(run, out, as_lanes(mask, mask_b), jax.tree.map(as_lanes, lanes, lanes_b), shared_l, per_l)

    return fold_batch_levels(loop, fold)(mask, lanes, shared)


def fold_into_lanes(x, is_batched: bool, axis_size: int) -> Array:
    """A stack of ``K`` lanes as seen by a `custom_vmap` rule over ``B = axis_size``
    elements, ``(B, K, ...)`` (or ``(K, ...)`` where not batched, shared by every
    element), as one batch of ``B·K`` lanes: lane ``b·K + k`` is lane ``k`` of element
    ``b``."""
    x = x if is_batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))
    return x.reshape(axis_size * x.shape[1], *x.shape[2:])


def fold_batch_levels(loop: Callable[..., PyTree], fold: Callable[..., PyTree]) -> Callable[..., PyTree]:
    """`loop` (a map over the lanes of its arguments, axis 0), batched by folding: under
    an enclosing `jax.vmap` over ``B`` elements, ``fold(B, in_batched, *args)`` runs
    instead, on the level folded into the lanes (`fold_into_lanes`; it calls the folded
    function again, so only the outermost level runs `loop`), and returns ``B·K`` lanes,
    which come back as ``(B, K, ...)``. The level of `sharded_vmap`'s devices is not
    folded (`folds_this_batch_level`): there `loop` is batched as it comes, so lanes never
    move between devices (docs/performance.md#lanes-of-nested-batches)."""

    @jax.custom_batching.custom_vmap
    def apply(*args):
        return loop(*args)

    @apply.def_vmap
    def _rule(axis_size, in_batched, *args):
        if folds_this_batch_level():
            flat = fold(axis_size, in_batched, *args)
            result = jax.tree.map(lambda x: x.reshape(axis_size, x.shape[0] // axis_size, *x.shape[1:]), flat)
        else:
            axes = tuple(jax.tree.map(lambda b: 0 if b else None, tree) for tree in in_batched)
            result = jax.vmap(loop, in_axes=axes, axis_size=axis_size)(*args)
        return result, jax.tree.map(lambda _: True, result)

    return apply


def _compacted_map(run, out, mask, lanes, shared, per, size: int) -> PyTree:
    """`stack_where`'s loop over `size` lanes: the lanes where `mask` holds, in order, a
    chunk at a time; a leaf of `shared` with ``per > 0`` has one row per `per`
    consecutive lanes (repeated from the start when it has fewer rows than that covers),
    one with 0 is common to every lane."""
    chunk = min(size, STACK_WHERE_CHUNK)
    # The lanes where `mask` holds first, in order; padded so that every chunk is a slice.
    order = jnp.concatenate([jnp.argsort(~mask, stable=True), jnp.zeros(chunk, jnp.int32)])
    count = jnp.sum(mask)
    result = jax.tree.map(lambda s: jnp.zeros((size, *s.shape), s.dtype), out)
    axes = jax.tree.map(lambda p: None if p == 0 else 0, per)

    def rows(x, p, lane):
        if p == 0:
            return x
        row = lane // p
        return x[row if size // p == x.shape[0] else row % x.shape[0]]

    def body(loop):
        start, result = loop
        position = start + jnp.arange(chunk)
        ids = jax.lax.dynamic_slice(order, (start,), (chunk,))
        ids = jnp.where(position < count, ids, size)  # past the last lane: dropped below
        safe = jnp.minimum(ids, size - 1)
        s = jax.tree.map(lambda x: x[safe], lanes)
        sh = jax.tree.map(lambda x, p: rows(x, p, safe), shared, per)
        values = jax.vmap(run, in_axes=(0, axes))(s, sh)
        result = jax.tree.map(lambda r, v: r.at[ids].set(v, mode="drop"), result, values)
        return start + chunk, result

    _, result = jax.lax.while_loop(lambda loop: loop[0] < count, body, (jnp.zeros((), count.dtype), result))
    return result


# ------------------------------------------------------------- batch levels not to fold
# The cable solver folds every enclosing `vmap` level into one batch of lanes
# (`_cable._solver._lanes_solve`), except the level whose inputs live in the trace
# recorded here: `sharded_vmap`'s vmap over devices, so that lanes are never moved
# between devices. A `custom_vmap` rule runs in the trace of the values it batches, so
# the rule of the devices' level sees the trace that was current when `sharded_vmap`'s
# function was entered, and every inner level sees a batching trace of its own
# (docs/performance.md#lanes-of-nested-batches).
_UNFOLDED_TRACE: contextvars.ContextVar = contextvars.ContextVar("jaxwrap_unfolded_trace", default=None)


def _current_trace():
    from jax._src import core  # no public API names the current trace

    return core.trace_ctx.trace


@contextlib.contextmanager
def batch_level_not_folded() -> Iterator[None]:
    """While tracing a `vmap` entered inside this block, from the trace current here:
    its level is batched as it comes, not folded into the lanes of an inner level."""
    token = _UNFOLDED_TRACE.set(_current_trace())
    try:
        yield
    finally:
        _UNFOLDED_TRACE.reset(token)


def folds_this_batch_level() -> bool:
    """In a `custom_vmap` rule: whether the level it batches may be folded into the lanes
    of the levels inside it (`batch_level_not_folded`)."""
    return _current_trace() is not _UNFOLDED_TRACE.get()
