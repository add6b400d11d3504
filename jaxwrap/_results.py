"""`RESULTS`: the outcome of every iterative solve in jaxwrap, one enumeration.

The cable solver, geodesic shooting and the placement projector all report through it
(`CablePath.result`, `Geodesic.result`, `ProjectionSolution.result`), in the style of
diffrax's and optimistix's `RESULTS`. Inside `jit` and `vmap` a result is an array per
lane, never an exception; each entry point takes ``throw=True`` to raise the result's
message instead (through `equinox`'s runtime errors, so also under `jit`). The booleans
`converged` / `success` are summaries: ``result == RESULTS.successful``.
"""

from __future__ import annotations

import equinox as eqx
from jaxtyping import Array, Bool


class RESULTS(eqx.Enumeration):
    """Outcomes of jaxwrap's iterative solves (compare with ``==``, read the message with
    ``RESULTS[result]``)."""

    successful = ""
    max_iterations_reached = (
        "The solver used its whole iteration budget and its conditions are not satisfied "
        "(cable: smoothness above `smoothness_tolerance` after `max_iterations`; projector: "
        "the constraints were not satisfied to `tolerance` within `max_steps`)."
    )
    endpoint_inside_obstacle = (
        "A path point next to an obstacle (an end point, a via point or the neighbouring "
        "contact point) lies inside that obstacle, so no wrapping path exists there."
    )
    geodesic_failed = (
        "A geodesic integration failed (its step budget `max_steps` was exhausted or its state became non-finite)."
    )
    diverged = (
        "The solve diverged: a non-finite value, or a curve whose length or winding exceeds what the scene allows."
    )
    passes_through = (
        "A straight piece of the path passes through an obstacle that the path is not "
        "wrapped on (a curve lifted off where its new straight line goes through the surface)."
    )
    not_taut = (
        "The path is stationary but not taut: a curve lies on the side of the surface where "
        "lifting it off would shorten the path."
    )
    wrong_side = (
        "The path is taut but passes an obstacle on the side away from its wrap `side` "
        "point, and no start found a path on that side."
    )
    invalid_input = (
        "An input is invalid: a pose, station, surface parameter or start value is NaN or "
        "infinite, or a pose's rotation is not a rotation matrix. Outputs are NaN."
    )


def first_failure(*candidates: tuple[Bool[Array, ""], RESULTS]) -> RESULTS:
    """The result of the first ``(failed, result)`` pair whose condition holds, else
    successful. Earlier pairs take precedence, so list the most fundamental cause first."""
    result = RESULTS.successful
    for failed, candidate in reversed(candidates):
        result = RESULTS.where(failed, candidate, result)
    return result
