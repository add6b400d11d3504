"""`ImplicitSurface`: any smooth user function; derivatives by autodiff."""

from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float, PyTree, Real

from .._misc import as_float_array, concrete_value, scalar_setting
from ._base import AbstractSurface


class ImplicitSurface(AbstractSurface):
    """Surface {x : fn(x, params) = 0} for any smooth `fn` (> 0 inside, < 0 outside).

    Gradient and Hessian come from `jax.grad`/`jax.hessian`; geodesics use the diffrax
    shooter. `fn` is a static field (it must be a hashable, pure function);
    `params` is an arbitrary pytree of arrays, differentiable and batchable.

    Example: `ImplicitSurface(lambda x, r: r**2 - x @ x, 1.0)` is Simbody's sphere.

    **Arguments:**

    - `fn`: `fn(x, params) -> scalar`.
    - `params`: pytree of parameters passed to `fn`.
    - `bounding_radius`: optional radius about the origin of S that holds the part of the
      surface a cable can wrap (see `AbstractSurface.extent`); unbounded by default.
    """

    fn: Callable[[Float[Array, "3"], Any], Float[Array, ""]] = eqx.field(static=True)
    params: PyTree
    bounding_radius: float | Float[Array, ""]

    def __init__(
        self,
        fn: Callable[[Float[Array, "3"], Any], Real[ArrayLike, ""] | Sequence],
        params: PyTree = None,
        bounding_radius: float | Real[ArrayLike, ""] = float("inf"),
    ):
        if not callable(fn):
            raise ValueError(f"ImplicitSurface needs a callable fn(x, params), got {type(fn).__name__}")
        self.fn = fn
        # Python numbers become arrays, so that every parameter can be differentiated.
        self.params = jax.tree.map(lambda p: as_float_array(p) if isinstance(p, (int, float)) else p, params)
        self.bounding_radius = scalar_setting(bounding_radius, "bounding_radius")
        check_positive_or_inf = concrete_value(self.bounding_radius)
        if check_positive_or_inf is not None and not check_positive_or_inf > 0:
            raise ValueError(f"ImplicitSurface bounding_radius must be positive, got {bounding_radius!r}")

    def extent(self) -> Float[Array, ""]:
        return jnp.asarray(self.bounding_radius)

    def implicit(self, x: Float[Array, "3"]) -> Float[Array, ""]:
        return jnp.asarray(self.fn(x, self.params))
