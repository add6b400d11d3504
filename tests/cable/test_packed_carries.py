"""The candidate rounds' packed carries (docs/performance.md#packed-candidate-bookkeeping):
packing a stack of solver carries into a few arrays and back gives every leaf bit for bit,
with any number of slot axes and under `vmap`, and taking a slot per leg from the packed
arrays equals taking it leaf by leaf."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import jaxlie
import numpy as np
import pytest

import jaxwrap as jw
from jaxwrap._cable._candidates import PackedCarries, _schedule, _take, _take_packed
from jaxwrap._cable._solver import SolverCarry, initial_carry
from jaxwrap._cable._state import CurveState, build_scene

T = jw.Transform.from_translation


def _cable():
    """Two legs (a via point between them) over a sphere, an ellipsoid, a cylinder and a
    torus, on two bodies (posed at random rotations below): geodesics of several surface
    kinds in one carry."""
    return (
        jw.CableSpan(0, [-4.0, 0.3, 0.1], 1, [4.0, -0.2, 0.3])
        .add_obstacle(0, T([-2.5, 0.0, 0.0]), jw.Sphere(0.6), contact_hint=[0.0, 0.6, 0.0])
        .add_obstacle(0, T([-1.0, 0.0, 0.0]), jw.Ellipsoid(jnp.array([0.5, 0.7, 0.4])))
        .add_via_point(0, [0.0, 1.5, 0.0])
        .add_obstacle(1, T([1.0, 0.0, 0.0]), jw.Cylinder(0.4), contact_hint=[0.0, 0.4, 0.0])
        .add_obstacle(1, T([2.5, 0.0, 0.0]), jw.Torus(0.8, 0.3))
    )


def _stacked_carries(key):
    """Every start of the schedule as a carry, with random iteration counts, flags and
    smoothness, shape (R, K, ...)."""
    cable = _cable()
    turns = jax.random.normal(key, (2, 3))
    poses = jw.Transform(
        jax.vmap(lambda w: jaxlie.SO3.exp(w).as_matrix())(turns), jnp.array([[0.0, 0.0, 0.0], [0.3, -0.2, 0.1]])
    )
    scene = build_scene(cable, poses)
    states, unused, _ = _schedule(cable, scene)
    legs = len(cable.legs())
    carries = jax.vmap(jax.vmap(lambda st: initial_carry(cable, scene, st, jnp.zeros(legs, bool))))(states)
    R, K = unused.shape[:2]
    keys = jax.random.split(jax.random.fold_in(key, 1), 4)
    fields = (
        jax.random.randint(keys[0], (R, K, legs), 0, 50, jnp.int32),
        jax.random.bernoulli(keys[1], 0.5, (R, K, legs)),
        jax.random.uniform(keys[2], (R, K, legs), carries.smoothness.dtype),
        jax.random.bernoulli(keys[3], 0.5, (R, K, cable.num_obstacles)),
    )

    def scrambled(carry, iterations, done, smoothness, inside):
        return dataclasses.replace(carry, iterations=iterations, done=done, smoothness=smoothness, inside=inside)

    return cable, jax.vmap(jax.vmap(scrambled))(carries, *fields)


def _assert_same(a, b):
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.fixture(scope="module")
def stacked():
    return _stacked_carries(jax.random.PRNGKey(0))


def test_packing_and_unpacking_gives_every_leaf_back(stacked):
    cable, carries = stacked
    R, K = carries.done.shape[:2]
    packed = PackedCarries.of(carries, 2)
    # A few arrays: per dtype (float, int32, bool), per obstacle and per leg.
    assert len(packed.per_obstacle) == 3 and len(packed.per_leg) == 3
    assert all(x.shape[:3] == (R, K, cable.num_obstacles) for x in packed.per_obstacle)
    _assert_same(packed.unpack(), carries)
    # One slot axis, none, and packed under `vmap`: the same leaves.
    first_round = jax.tree.map(lambda x: x[0], carries)
    _assert_same(packed.pack(first_round, 1).unpack(), first_round)
    one = jax.tree.map(lambda x: x[1, 2], carries)
    _assert_same(packed.pack(one, 0).unpack(), one)
    _assert_same(packed.map(lambda x: x[1, 2]).unpack(), one)
    under_vmap = jax.vmap(lambda c: PackedCarries.of(c, 1).unpack())(carries)
    _assert_same(under_vmap, carries)


@pytest.mark.parametrize("seed", [0, 1])
def test_taking_a_slot_per_leg_from_packed_carries_equals_taking_it_leaf_by_leaf(stacked, seed):
    cable, carries = stacked
    slots = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), carries)
    S, legs = slots.done.shape
    pick = jax.random.randint(jax.random.PRNGKey(seed + 10), (legs,), 0, S)
    by_obstacle = pick[jnp.array(cable.leg_of_obstacle())], jnp.arange(cable.num_obstacles)
    by_leg = pick, jnp.arange(legs)
    geodesics = tuple(
        jax.tree.map(lambda x, i=i: x[pick[cable.leg_of_obstacle()[i]]], g) for i, g in enumerate(slots.state.geodesics)
    )
    expected = SolverCarry(
        CurveState(geodesics, slots.state.status[by_obstacle], slots.state.tracking[by_obstacle]),
        slots.iterations[by_leg],
        slots.done[by_leg],
        slots.smoothness[by_leg],
        slots.inside[by_obstacle],
        slots.geodesic_failed[by_obstacle],
        slots.patience[by_leg],
        slots.paused[by_leg],
    )
    _assert_same(_take(cable, slots, pick), expected)
    _assert_same(_take_packed(cable, PackedCarries.of(slots, 1), pick).unpack(), expected)
    # Batched: a pick per batch element.
    picks = jnp.stack([pick, (pick + 1) % S])
    batched = jax.vmap(lambda p: _take(cable, slots, p))(picks)
    _assert_same(jax.tree.map(lambda x: x[0], batched), expected)
