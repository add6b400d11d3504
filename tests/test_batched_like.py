"""`batched_like` (jaxwrap/_misc.py): a loop's initial carry batched under `vmap`
wherever its reference is, so that JAX batches the loop body in one pass instead of
searching for the batched carries pass by pass (docs/performance.md#compile-time). It
must change nothing else: values, derivatives of every order and mode, and the batch
axes JAX would have found itself."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.interpreters import batching

from jaxwrap._misc import batched_like


def _newton(x, y, batch_the_carry=True):
    """A Newton loop for sqrt(x) from y with a per-lane stop, whose counter and flag start
    unbatched; with `batch_the_carry`, its carry goes through `batched_like` first."""

    def body(c):
        v, count, _ = c
        v = v - (v * v - x) / (2 * v)
        return v, count + 1, jnp.abs(v * v - x) < 1e-12

    init = (y, jnp.zeros((), jnp.int32), jnp.zeros((), bool))
    if batch_the_carry:
        init = batched_like(init, (x, y))
    v, count, _ = jax.lax.while_loop(lambda c: ~c[2] & (c[1] < 50), body, init)
    return v + 0.0 * count


def _loop(x, y):
    return _newton(x, y)


def _plain(x, y):
    return _newton(x, y, batch_the_carry=False)


def test_values_are_unchanged_unbatched_and_under_nested_vmaps():
    x = jnp.array([2.0, 3.0, 5.0])
    y = jnp.array([1.0, 2.0])
    np.testing.assert_array_equal(jax.jit(_loop)(x[0], y[0]), _plain(x[0], y[0]))
    nested = jax.jit(jax.vmap(jax.vmap(_loop, (0, None)), (None, 0)))(x, y)
    expected = jax.vmap(jax.vmap(_plain, (0, None)), (None, 0))(x, y)
    np.testing.assert_array_equal(nested, expected)
    np.testing.assert_allclose(nested, np.broadcast_to(np.sqrt(x), (2, 3)), rtol=1e-12)  # the loop's own tolerance


@pytest.mark.parametrize("case", ["a inner, b outer", "b inner, a outer", "both at both levels"])
def test_every_leaf_is_batched_at_every_level_where_the_reference_is(case):
    """A leaf of the tree is batched at a `vmap` level (inner: size 3, outer: size 2)
    wherever the reference `b` is; where `b` is not, every leaf keeps its own batching."""
    seen = {}

    @jax.custom_batching.custom_vmap
    def probe(tree):
        return tree

    @probe.def_vmap
    def _rule(axis_size, in_batched, tree):
        seen[axis_size] = tuple(in_batched[0])
        return probe(tree), in_batched[0]

    def f(a, b):
        return probe(batched_like((jnp.zeros(()), a, jnp.ones(2)), b))

    a3, b2 = jnp.arange(3.0), jnp.arange(2.0)
    if case == "a inner, b outer":
        jax.vmap(jax.vmap(f, (0, None)), (None, 0))(a3, b2)
        assert seen == {3: (False, True, False), 2: (True, True, True)}
    elif case == "b inner, a outer":
        jax.vmap(jax.vmap(f, (None, 0)), (0, None))(b2, a3)
        assert seen == {3: (True, True, True), 2: (False, True, False)}
    else:
        both = jnp.arange(6.0).reshape(2, 3)
        jax.vmap(jax.vmap(f))(both, both)
        assert seen == {3: (True, True, True), 2: (True, True, True)}


def test_a_loop_with_its_carry_batched_from_the_start_is_batched_in_one_pass(monkeypatch):
    """JAX's while-loop rule batches the body once per fixpoint pass and once more for good;
    the last one is served from its cache when the first pass already had every carry
    batched. Counted: calls of the (cached) body batcher that were not cache hits."""
    misses = []
    original = batching._batch_jaxpr_axes

    def counting(closed_jaxpr, axis_data, in_axes, out_axes_dest):
        before = original.cache_info().misses
        out = original(closed_jaxpr, axis_data, in_axes, out_axes_dest)
        if original.cache_info().misses > before and "body" in str(closed_jaxpr.jaxpr.debug_info.func_src_info):
            misses.append(in_axes)
        return out

    monkeypatch.setattr(batching, "_batch_jaxpr_axes", counting)
    x = jnp.array([2.0, 3.0, 5.0])
    jax.make_jaxpr(jax.vmap(_plain, (0, None)))(x, jnp.asarray(1.0))
    plain = len(misses)
    misses.clear()
    jax.make_jaxpr(jax.vmap(_loop, (0, None)))(x, jnp.asarray(1.0))
    assert (plain, len(misses)) == (3, 1)


def test_derivatives_of_every_mode_and_order_are_the_identitys():
    def g(a):
        tree = batched_like({"u": a * a, "v": jnp.sin(a), "w": jnp.ones(())}, a)
        return tree["u"] + 3 * tree["v"] * tree["w"]

    a = jnp.linspace(0.1, 1.0, 4)
    first, second = 2 * a + 3 * jnp.cos(a), 2 - 3 * jnp.sin(a)
    for d1 in (jax.grad, jax.jacfwd, jax.jacrev):
        np.testing.assert_allclose(jax.vmap(d1(g))(a), first, rtol=1e-14)
        for d2 in (jax.jacfwd, jax.jacrev):
            np.testing.assert_allclose(jax.vmap(d2(d1(g)))(a), second, rtol=1e-14)
            np.testing.assert_allclose(d2(d1(g))(a[1]), second[1], rtol=1e-14)
    # Forward mode through the loop (JAX cannot reverse-differentiate a `while_loop`):
    # d sqrt(x) / dx from Newton's converged iterates.
    np.testing.assert_allclose(
        jax.vmap(jax.jacfwd(_loop), (0, None))(jnp.array([4.0, 9.0]), 1.5), [0.25, 1 / 6], rtol=1e-10
    )
