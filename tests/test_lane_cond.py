"""`lane_cond` (jaxwrap/_misc.py): ``fn(*operands)`` where the predicate holds and zeros
elsewhere, with `fn` run only when some lane of a batch needs it. The cable solver uses
it to compute the minimum-length and the Gauss-Newton steps only where some curve takes
them (docs/performance.md#where-a-warm-steps-time-goes-and-a-larger-polish-threshold)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxwrap._misc import lane_cond


def _counted(calls):
    def fn(x, y):
        jax.debug.callback(lambda: calls.append(1))
        return {"sum": x + y, "prod": jnp.outer(x, y)}

    return fn


def _expected(pred, x, y):
    keep = np.asarray(pred, float)
    return {"sum": keep * (x + y), "prod": keep * np.outer(x, y)}


def test_unbatched_runs_fn_only_where_the_predicate_holds():
    calls = []
    run = jax.jit(lambda p, x, y: lane_cond(p, _counted(calls), x, y))
    x, y = jnp.arange(3.0), jnp.arange(3.0) + 1
    for pred in (True, False):
        calls.clear()
        out = jax.block_until_ready(run(pred, x, y))
        jax.tree.map(np.testing.assert_array_equal, out, _expected(pred, x, y))
        assert len(calls) == int(pred)


def test_batched_masks_lanes_and_skips_batches_that_need_nothing():
    calls = []
    fn = _counted(calls)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(6, 3)), rng.normal(size=3)
    # Operands partly batched (x per lane, y shared), the predicate per lane.
    run = jax.jit(jax.vmap(lambda p, x: lane_cond(p, fn, x, jnp.asarray(y)), in_axes=(0, 0)))
    for pred in ([True, False, True, False, False, True], [False] * 6, [True] * 6):
        calls.clear()
        out = jax.block_until_ready(run(jnp.asarray(pred), x))
        for lane in range(6):
            want = _expected(pred[lane], x[lane], y)
            for key in want:
                np.testing.assert_allclose(out[key][lane], want[key], rtol=0, atol=1e-15)
        assert len(calls) == int(any(pred))


def test_shared_predicate_and_nested_batches():
    calls = []
    fn = _counted(calls)
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, 4, 3)), rng.normal(size=(4, 3))
    # Predicate shared across the inner batch, per element of the outer one.
    inner = jax.vmap(lambda p, x, y: lane_cond(p, fn, x, y), in_axes=(None, 0, 0))
    run = jax.jit(jax.vmap(inner, in_axes=(0, 0, None)))
    out = jax.block_until_ready(run(jnp.asarray([False, True]), x, y))
    for b, pred in enumerate((False, True)):
        for lane in range(4):
            want = _expected(pred, x[b, lane], y[lane])
            for key in want:
                np.testing.assert_allclose(out[key][b, lane], want[key], rtol=0, atol=1e-15)
    calls.clear()
    jax.block_until_ready(run(jnp.asarray([False, False]), x, y))
    assert not calls
    # No operand batched: fn is computed once and broadcast.
    shared = jax.jit(jax.vmap(lambda p: lane_cond(p, fn, jnp.ones(2), jnp.ones(2))))
    out = shared(jnp.asarray([True, False, True]))
    np.testing.assert_array_equal(out["sum"], [[2, 2], [0, 0], [2, 2]])
