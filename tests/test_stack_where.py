"""`stack_where` (jaxwrap/_misc.py): ``fn`` on the slots of a stack where a mask holds,
zeros elsewhere; under `vmap` the slots of the whole batch are gathered and `fn` runs on
those alone. The candidate cold start scores its rounds with it
(docs/performance.md#scoring-the-slots-that-ran)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxwrap._misc as misc
from jaxwrap._misc import stack_where


def fn(slot, shared):
    scale, offset = shared
    return {"a": jnp.sin(slot["x"]) * scale + offset, "b": jnp.sum(slot["y"]) * scale}


def expected(mask, x, y, scale, offset):
    """Per (lane, slot): fn, or zeros where masked off."""
    out = jax.vmap(jax.vmap(lambda x, y, s: fn({"x": x, "y": y}, (s, offset)), in_axes=(0, 0, None)))(x, y, scale)
    keep = np.asarray(mask)
    return {"a": np.where(keep[..., None], out["a"], 0.0), "b": np.where(keep, out["b"], 0.0)}


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    B, K = 7, 5
    return dict(
        mask=jnp.asarray(rng.uniform(size=(B, K)) < 0.4),
        x=jnp.asarray(rng.normal(size=(B, K, 3))),
        y=jnp.asarray(rng.normal(size=(B, K, 2))),
        scale=jnp.asarray(rng.normal(size=B)),
        offset=jnp.asarray(rng.normal(size=3)),
    )


@pytest.mark.parametrize("chunk", [2, 256])
def test_batched_equals_masked_per_slot(data, chunk, monkeypatch):
    monkeypatch.setattr(misc, "STACK_WHERE_CHUNK", chunk)
    d = data
    run = jax.jit(jax.vmap(lambda m, x, y, s: stack_where(fn, m, {"x": x, "y": y}, (s, d["offset"]))))
    got = run(d["mask"], d["x"], d["y"], d["scale"])
    want = expected(d["mask"], d["x"], d["y"], d["scale"], d["offset"])
    jax.tree.map(lambda g, w: np.testing.assert_array_equal(g, w), got, want)
    # Unbatched: one stack.
    one = stack_where(fn, d["mask"][2], {"x": d["x"][2], "y": d["y"][2]}, (d["scale"][2], d["offset"]))
    jax.tree.map(lambda g, w: np.testing.assert_array_equal(g, w[2]), one, want)
    # Under two `vmap`s (the outer one batches the inner rule's loop as it is).
    twice = jax.vmap(run)(*(jnp.stack([v, v]) for v in (d["mask"], d["x"], d["y"], d["scale"])))
    jax.tree.map(lambda g, w: np.testing.assert_array_equal(g[1], w), twice, want)


def test_runs_fn_on_the_masked_slots_in_chunks(data, monkeypatch):
    """With chunks of 2, a batch with 5 masked slots runs ``fn`` on 3 chunks of 2 slots
    (the callback, batched sequentially, sees 6 slots); one with none never runs it."""
    monkeypatch.setattr(misc, "STACK_WHERE_CHUNK", 2)
    calls = []

    def counted(slot, shared):
        jax.debug.callback(lambda x: calls.append(np.shape(x)), slot["x"])
        return fn(slot, shared)

    d = data
    run = jax.jit(jax.vmap(lambda m, x, y, s: stack_where(counted, m, {"x": x, "y": y}, (s, d["offset"]))))
    mask = np.zeros((7, 5), bool)
    mask[[0, 3, 3, 5, 6], [1, 0, 4, 2, 2]] = True
    got = jax.block_until_ready(run(jnp.asarray(mask), d["x"], d["y"], d["scale"]))
    assert calls == [(3,)] * 6
    jax.tree.map(np.testing.assert_array_equal, got, expected(mask, d["x"], d["y"], d["scale"], d["offset"]))
    calls.clear()
    jax.block_until_ready(run(jnp.zeros((7, 5), bool), d["x"], d["y"], d["scale"]))
    assert calls == []


def nested_fn(slot, shared):
    scale, bias, gain, offset = shared
    return {"a": jnp.sin(slot["x"]) * scale * gain + offset + bias, "b": jnp.sum(slot["y"]) * scale - bias}


@pytest.mark.parametrize("chunk", [2, 256])
def test_nested_vmaps_gather_the_masked_slots_of_every_level(chunk, monkeypatch):
    """Under ``vmap(vmap(...))`` over 3 × 7 stacks of 5 slots, every level is folded into
    one batch of 105 lanes: ``fn`` runs on the masked slots of all of them together, a
    chunk at a time (not on every slot of an inner batch for each outer element), and
    shared leaves batched at the outer level only, the inner level only or both reach the
    right slots."""
    monkeypatch.setattr(misc, "STACK_WHERE_CHUNK", chunk)
    rng = np.random.default_rng(1)
    A, B, K = 3, 7, 5
    mask = rng.uniform(size=(A, B, K)) < 0.3
    x, y = rng.normal(size=(A, B, K, 3)), rng.normal(size=(A, B, K, 2))
    scale, bias, gain, offset = rng.normal(size=(A, B)), rng.normal(size=A), rng.normal(size=B), rng.normal(size=3)
    calls = []

    def counted(slot, shared):
        jax.debug.callback(lambda v: calls.append(np.shape(v)), slot["x"])
        return nested_fn(slot, shared)

    def one(m, x, y, s, b, g):
        return stack_where(counted, m, {"x": x, "y": y}, (s, b, g, jnp.asarray(offset)))

    inner = jax.vmap(one, in_axes=(0, 0, 0, 0, None, 0))
    run = jax.jit(jax.vmap(inner, in_axes=(0, 0, 0, 0, 0, None)))
    args = [jnp.asarray(v) for v in (mask, x, y, scale, bias, gain)]
    got = jax.block_until_ready(run(*args))
    for i in range(A):
        for j in range(B):
            for k in range(K):
                want = nested_fn({"x": x[i, j, k], "y": y[i, j, k]}, (scale[i, j], bias[i], gain[j], offset))
                if not mask[i, j, k]:
                    want = jax.tree.map(jnp.zeros_like, want)
                np.testing.assert_allclose(got["a"][i, j, k], want["a"], rtol=1e-14, atol=1e-14)
                np.testing.assert_allclose(got["b"][i, j, k], want["b"], rtol=1e-14, atol=1e-14)
    chunks = -(-int(mask.sum()) // chunk)
    size = min(chunk, A * B * K)
    assert calls == [(3,)] * (chunks * size)
