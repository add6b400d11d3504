"""`AbstractDifferentiableFunction`: hpp-constraints' ``DifferentiableFunction`` protocol.

A function ``f(q)`` of a `RobotModel`'s configuration with values in R^m (every output
space here is a plain vector space, so differences are subtractions). Its Jacobian is the
derivative along the configuration Lie group, ``J = d/dv f(model.integrate(q, v))`` at
``v = 0`` (``m x nv``; free-flyer columns are body-frame linear then angular velocity,
as pinocchio and hpp).

Piecewise functions (the contact's pair selection, its inside/outside switch) split
evaluation in two: `select` computes the discrete choices at ``q`` and
`value_with_selection` evaluates the active piece. `jacobian` differentiates the latter
with the selection held fixed, which is hpp's "Jacobian of the active piece".

The public methods are `equinox.filter_jit`-ed: called eagerly they compile once per
function structure (shapes, bodies, static options) and reuse it for new array values;
inside an outer `jax.jit`/`jax.vmap` they inline.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Float

from .._kinematics import RobotModel, integrate


class AbstractDifferentiableFunction(eqx.Module):
    """Base of the contact functions; subclasses provide `model`, `output_size`,
    `select` and `value_with_selection`."""

    model: eqx.AbstractVar[RobotModel]

    @property
    @abc.abstractmethod
    def output_size(self) -> int:
        """Dimension of the value (``outputSize`` in hpp)."""

    @abc.abstractmethod
    def select(self, q: Float[Array, " nq"]) -> Any:
        """Discrete choices of the active piece at `q` (a pytree of arrays, or None)."""

    @abc.abstractmethod
    def value_with_selection(self, q: Float[Array, " nq"], selection: Any) -> Float[Array, " m"]:
        """Value of the piece chosen by `selection` at `q`."""

    # ------------------------------------------------------------------ sizes
    @property
    def input_size(self) -> int:
        """``nq``."""
        return self.model.nq

    @property
    def input_derivative_size(self) -> int:
        """``nv``."""
        return self.model.nv

    @property
    def output_derivative_size(self) -> int:
        return self.output_size

    @property
    def active_parameters(self) -> np.ndarray:
        """Configuration coordinates the value may depend on (bool, ``nq``); all by default."""
        return np.ones(self.model.nq, dtype=bool)

    @property
    def active_derivative_parameters(self) -> np.ndarray:
        """Velocity coordinates with possibly non-zero Jacobian columns (bool, ``nv``)."""
        return np.ones(self.model.nv, dtype=bool)

    # ------------------------------------------------------------------ evaluation
    # Eager conveniences: `equinox.filter_jit`-ed, so a call compiles once per function
    # structure; under an outer `jax.jit` use the free functions below.
    @eqx.filter_jit
    def value(self, q: ArrayLike | Sequence) -> Float[Array, " m"]:
        """``f(q)``; see `jaxwrap.constraint_value`."""
        return constraint_value(self, q)

    def __call__(self, q: ArrayLike | Sequence) -> Float[Array, " m"]:
        return self.value(q)

    @eqx.filter_jit
    def value_and_jacobian(self, q: ArrayLike | Sequence) -> tuple[Float[Array, " m"], Float[Array, "m nv"]]:
        """``(f(q), J(q))``; see `jaxwrap.constraint_value_and_jacobian`."""
        return constraint_value_and_jacobian(self, q)

    @eqx.filter_jit
    def jacobian(self, q: ArrayLike | Sequence) -> Float[Array, "m nv"]:
        """``J(q)`` (m, nv); see `jaxwrap.constraint_jacobian`."""
        return constraint_value_and_jacobian(self, q)[1]

    # ------------------------------------------------------------------ finite differences
    def _steps(self, q: Array, eps: float | None) -> Array:
        if eps is None:
            eps = float(np.sqrt(np.finfo(q.dtype).eps))
        # hpp's rule: step eps * |x[j]| (eps where x[j] == 0), x being the configuration
        # vector indexed by the velocity index j (a quirk for free-flyers, kept).
        x = q[: self.model.nv] if self.model.nq >= self.model.nv else jnp.pad(q, (0, self.model.nv - self.model.nq))
        return jnp.where(x == 0, eps, eps * jnp.abs(x))

    @eqx.filter_jit
    def finite_difference_forward(self, q: ArrayLike | Sequence, eps: float | None = None) -> Float[Array, "m nv"]:
        """hpp's ``finiteDifferenceForward`` along ``integrate``: column ``j`` is
        ``(f(q + h_j e_j) - f(q)) / h_j``; inactive columns are zero.

        **Arguments:** `q` (nq,); `eps` (default ``sqrt(machine epsilon)``).
        """
        q = self.model.check_q(q)
        steps = self._steps(q, eps)
        basis = jnp.eye(self.model.nv, dtype=q.dtype)
        f0 = self.value(q)

        def column(e, h):
            return (self.value(self.model.integrate(q, h * e)) - f0) / h

        J = jax.vmap(column, out_axes=1)(basis, steps)
        return jnp.where(self.active_derivative_parameters, J, 0.0)

    @eqx.filter_jit
    def finite_difference_central(self, q: ArrayLike | Sequence, eps: float | None = None) -> Float[Array, "m nv"]:
        """hpp's ``finiteDifferenceCentral``: ``(f(q + h_j e_j) - f(q - h_j e_j)) / (2 h_j)``."""
        q = self.model.check_q(q)
        steps = self._steps(q, eps)
        basis = jnp.eye(self.model.nv, dtype=q.dtype)

        def column(e, h):
            forward = self.value(self.model.integrate(q, h * e))
            backward = self.value(self.model.integrate(q, -h * e))
            return (forward - backward) / (2 * h)

        J = jax.vmap(column, out_axes=1)(basis, steps)
        return jnp.where(self.active_derivative_parameters, J, 0.0)


# ---------------------------------------------------------------------------- functional API
def constraint_value(function: AbstractDifferentiableFunction, q: ArrayLike | Sequence) -> Float[Array, " m"]:
    """``f(q)`` of a differentiable function (a contact, its complement or hold).

    **Arguments:** `function`; `q`, a configuration (nq,) (batch with `jax.vmap`).

    **Returns:** the value (m,).
    """
    q = function.model.check_q(q)
    return function.value_with_selection(q, function.select(q))


def constraint_value_and_jacobian(
    function: AbstractDifferentiableFunction, q: ArrayLike | Sequence
) -> tuple[Float[Array, " m"], Float[Array, "m nv"]]:
    """``(f(q), J(q))`` sharing one forward pass.

    The Jacobian is ``d/dv f(integrate(model, q, v))`` at ``v = 0`` with the selection of
    `q` held fixed (forward-mode autodiff through ``integrate``): hpp's Jacobian of the
    active piece.
    """
    model = function.model
    q = model.check_q(q)
    selection = function.select(q)

    def along(v):
        return function.value_with_selection(integrate(model, q, v), selection)

    zero = jnp.zeros(model.nv, dtype=q.dtype)
    value, jvp = jax.linearize(along, zero)
    return value, jax.vmap(jvp, out_axes=1)(jnp.eye(model.nv, dtype=q.dtype))


def constraint_jacobian(function: AbstractDifferentiableFunction, q: ArrayLike | Sequence) -> Float[Array, "m nv"]:
    """``J(q)`` (m, nv): the derivative along ``integrate``; see `constraint_value_and_jacobian`."""
    return constraint_value_and_jacobian(function, q)[1]
