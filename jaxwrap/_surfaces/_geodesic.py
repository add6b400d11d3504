"""`Geodesic`: the result of shooting a geodesic over a surface (all in surface frame S)."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, Int

from .._results import RESULTS
from ._darboux import darboux_frame


class Geodesic(eqx.Module):
    """A geodesic segment from P to Q, as CableSpan stores it per curve segment.

    Frames are Darboux frames in the surface frame S (Simbody's convention, see
    docs/surfaces.md#sign-conventions): a (3, 3) rotation `R_SP` with columns **X = tangent t,
    Y = outward normal n, Z = binormal b = t × n**, and the contact point `p_SP`.

    Curvatures use the **CableSpan sign** (`dt/ds = κ_t n`, so κ < 0 on convex surfaces);
    torsion uses ContactGeometry's sign unflipped (CableSpan's `torsion_P`).

    The Jacobi scalars at Q describe how Q moves when the start is varied
    (Scholz et al. 2015): `a` (translational field, a(0)=1, a'(0)=0) for a shift of P
    along b_P, `r` (rotational field, r(0)=0, r'(0)=1) for a rotation of t_P about n_P
    towards b_P; with the primes their arc-length derivatives.

    **Fields:**

    - `R_SP`, `p_SP`: frame and point at P.
    - `R_SQ`, `p_SQ`: frame and point at Q.
    - `arc_length`: ℓ ≥ 0.
    - `curvatures_P`, `curvatures_Q`: (κ along t, κ along b), CableSpan sign.
    - `torsion_P`, `torsion_Q`: geodesic torsion τ along t.
    - `jacobi_Q`: (a, r) at Q.
    - `jacobi_dot_Q`: (a', r') at Q.
    - `result`: a `jaxwrap.RESULTS` (`geodesic_failed` when the integrator did not reach ℓ
      or produced a non-finite state; always successful for closed forms). `converged`
      is its boolean summary.
    - `num_steps`: accepted + rejected integrator steps (0 for closed forms).
    """

    R_SP: Float[Array, "3 3"]
    p_SP: Float[Array, "3"]
    R_SQ: Float[Array, "3 3"]
    p_SQ: Float[Array, "3"]
    arc_length: Float[Array, ""]
    curvatures_P: Float[Array, "2"]
    curvatures_Q: Float[Array, "2"]
    torsion_P: Float[Array, ""]
    torsion_Q: Float[Array, ""]
    jacobi_Q: Float[Array, "2"]
    jacobi_dot_Q: Float[Array, "2"]
    result: RESULTS
    num_steps: Int[Array, ""]

    @property
    def converged(self) -> Bool[Array, "..."]:
        """``result == RESULTS.successful`` (keeps batch axes)."""
        return jnp.asarray(self.result == RESULTS.successful)

    @property
    def tangent_P(self) -> Float[Array, "*batch 3"]:
        return self.R_SP[..., :, 0]

    @property
    def normal_P(self) -> Float[Array, "*batch 3"]:
        return self.R_SP[..., :, 1]

    @property
    def binormal_P(self) -> Float[Array, "*batch 3"]:
        return self.R_SP[..., :, 2]

    @property
    def tangent_Q(self) -> Float[Array, "*batch 3"]:
        return self.R_SQ[..., :, 0]

    @property
    def normal_Q(self) -> Float[Array, "*batch 3"]:
        return self.R_SQ[..., :, 1]

    @property
    def binormal_Q(self) -> Float[Array, "*batch 3"]:
        return self.R_SQ[..., :, 2]


def frame_curvatures(
    surface, p: Float[Array, "3"], R: Float[Array, "3 3"]
) -> tuple[Float[Array, "2"], Float[Array, ""]]:
    """At point `p` with Darboux frame `R` (columns t, n, b): the normal curvatures along t
    and b (CableSpan sign) and the geodesic torsion along t."""
    kappa = jnp.stack([surface.normal_curvature(p, R[:, 0]), surface.normal_curvature(p, R[:, 2])])
    return kappa, surface.geodesic_torsion(p, R[:, 0])


def make_geodesic(
    surface,
    p_SP: Float[Array, "3"],
    t_P: Float[Array, "3"],
    p_SQ: Float[Array, "3"],
    t_Q: Float[Array, "3"],
    arc_length: Float[Array, ""],
    jacobi_Q: Float[Array, "2"],
    jacobi_dot_Q: Float[Array, "2"],
    result: RESULTS,
    num_steps: Int[Array, ""],
) -> Geodesic:
    """Assemble a `Geodesic` on `surface` (any `AbstractSurface`): build both Darboux
    frames and evaluate κ and τ at P and Q."""
    R_SP = darboux_frame(surface.normal(p_SP), t_P)
    R_SQ = darboux_frame(surface.normal(p_SQ), t_Q)
    curvatures_P, torsion_P = frame_curvatures(surface, p_SP, R_SP)
    curvatures_Q, torsion_Q = frame_curvatures(surface, p_SQ, R_SQ)
    return Geodesic(
        R_SP=R_SP,
        p_SP=p_SP,
        R_SQ=R_SQ,
        p_SQ=p_SQ,
        arc_length=jnp.asarray(arc_length),
        curvatures_P=curvatures_P,
        curvatures_Q=curvatures_Q,
        torsion_P=torsion_P,
        torsion_Q=torsion_Q,
        jacobi_Q=jacobi_Q,
        jacobi_dot_Q=jacobi_dot_Q,
        result=result,
        num_steps=jnp.asarray(num_steps),
    )


def zero_length_geodesic_at(surface, p: Float[Array, "3"], tangent: Float[Array, "3"]) -> Geodesic:
    """The geodesic of length 0 at the surface point `p` (already on the surface),
    heading along `tangent` (projected onto the tangent plane): Jacobi scalars at their
    initial values (a, r) = (1, 0), (a', r') = (0, 1)."""
    dtype = p.dtype
    return make_geodesic(
        surface,
        p,
        jnp.asarray(tangent, dtype),
        p,
        jnp.asarray(tangent, dtype),
        jnp.zeros((), dtype),
        jnp.array([1.0, 0.0], dtype),
        jnp.array([0.0, 1.0], dtype),
        RESULTS.successful,
        jnp.array(0, jnp.int32),
    )
