"""The compacted solver loop carries its lanes packed, one (lanes, columns) array per
dtype (`_pack`, docs/performance.md#packed-lanes); unpacking gives the pytree back
exactly, for any number of lanes."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxwrap._cable._solver import _pack, _unpack


def test_pack_round_trip_over_dtypes_and_shapes():
    rng = np.random.default_rng(0)
    lanes = 6
    tree = {
        "f": jnp.asarray(rng.normal(size=(lanes, 3, 3))),
        "scalar": jnp.asarray(rng.normal(size=lanes)),
        "empty": jnp.zeros((lanes, 0, 3)),
        "i": jnp.asarray(rng.integers(-5, 5, size=(lanes, 4)), jnp.int32),
        "b": jnp.asarray(rng.uniform(size=(lanes, 2)) < 0.5),
        "nested": (jnp.asarray(rng.normal(size=(lanes, 2))), None),
    }
    packed, layout = _pack(tree)
    # One array per dtype, lanes leading.
    assert sorted(str(x.dtype) for x in packed) == sorted({str(x.dtype) for x in (tree["f"], tree["i"], tree["b"])})
    assert all(x.shape[0] == lanes for x in packed)
    assert sum(x.shape[1] for x in packed) == 9 + 1 + 0 + 4 + 2 + 2
    back = _unpack(packed, layout)
    for key in ("f", "scalar", "empty", "i", "b"):
        assert back[key].dtype == tree[key].dtype and back[key].shape == tree[key].shape
        np.testing.assert_array_equal(back[key], tree[key])
    np.testing.assert_array_equal(back["nested"][0], tree["nested"][0])
    assert back["nested"][1] is None
    # Rows taken from the packed arrays unpack to the same rows of every leaf.
    rows = jnp.array([4, 1])
    part = _unpack(tuple(x[rows] for x in packed), layout)
    np.testing.assert_array_equal(part["f"], tree["f"][rows])
    np.testing.assert_array_equal(part["b"], tree["b"][rows])
