"""The solver's small dense solves (docs/performance.md#small-dense-algebra) against
NumPy's SVD pseudo-inverse with the same cut-off: full-rank, rank-deficient, scaled and
zero matrices, one by one and batched with lanes of both kinds in one `vmap`, in
float64 and float32. Both factorisations are checked: the pivoted QR that `_pinv_solve`
takes on CPU and the SVD it takes on other platforms (a GPU)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxwrap._cable._solver import _pinv_solve, _qr_solve, _svd_solve, _symmetric_pinv_solve_2x2
from jaxwrap._misc import solve_3x3

SHAPES = [(5, 4), (20, 16), (8, 8), (2, 2), (3, 5)]


def _reference(A, b, dtype=np.float64):
    m, n = A.shape
    rcond = max(m, n) * np.finfo(dtype).eps ** (7 / 8)
    return np.linalg.pinv(A.astype(np.float64), rcond=rcond) @ b.astype(np.float64)


def _matrices(m, n, seed, count=60):
    """Random matrices of every kind the solver can meet: full rank, rank 1 to
    min(m, n) - 1, a zero column, tiny or huge entries, and zero."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        if k % 3 == 0 and min(m, n) > 1:
            rank = int(rng.integers(1, min(m, n)))
            A = rng.normal(size=(m, rank)) @ rng.normal(size=(rank, n))
        else:
            A = rng.normal(size=(m, n))
        if k % 5 == 0:
            A[:, rng.integers(n)] = 0.0
        if k % 7 == 0:
            A = A * 10.0 ** rng.choice([-6, 6])
        out.append(A)
    out.append(np.zeros((m, n)))
    return np.stack(out), rng.normal(size=(len(out), m))


@pytest.fixture(scope="module", params=[_pinv_solve, _qr_solve, _svd_solve], ids=["pinv", "qr", "svd"])
def solve(request):
    return request.param


@pytest.fixture(scope="module")
def batched_solve(solve):
    return jax.jit(jax.vmap(solve))


@pytest.mark.parametrize("shape", SHAPES)
def test_minimum_norm_solve_matches_the_svd_pseudo_inverse(shape, solve, batched_solve):
    A, b = _matrices(*shape, seed=sum(shape))
    # One batch holds full-rank and deficient lanes, so both branches run masked.
    got = np.asarray(batched_solve(jnp.asarray(A), jnp.asarray(b)))
    for i in range(len(A)):
        want = _reference(A[i], b[i])
        scale = max(np.max(np.abs(want)), 1e-300)
        assert np.max(np.abs(got[i] - want)) <= 1e-12 * scale, (shape, i)
    # A lane alone gives what it gives in the batch.
    single = jax.jit(solve)
    for i in (0, 1, 3, len(A) - 1):
        np.testing.assert_allclose(
            np.asarray(single(jnp.asarray(A[i]), jnp.asarray(b[i]))),
            got[i],
            rtol=0,
            atol=1e-13 * max(1.0, np.max(np.abs(got[i]))),
        )


@pytest.mark.parametrize("solve", [_qr_solve, _svd_solve], ids=["qr", "svd"])
def test_minimum_norm_solve_float32(solve):
    with jax.enable_x64(False):
        A, b = _matrices(20, 16, seed=3)
        got = np.asarray(jax.jit(jax.vmap(solve))(jnp.asarray(A, jnp.float32), jnp.asarray(b, jnp.float32)))
    assert got.dtype == np.float32
    for i in range(len(A)):
        if np.max(np.abs(A[i])) == 0:
            assert np.all(got[i] == 0)
            continue
        want = _reference(A[i].astype(np.float32), b[i].astype(np.float32), np.float32)
        # Conditioned full-rank lanes to float32's accuracy; rank-deficient ones only
        # where float32 resolves the same rank, so compare the residual's optimality
        # instead: Aᵀ(A x - b) vanishes for a least-squares solution.
        normal = A[i].T @ (A[i] @ got[i] - b[i])
        scale = np.linalg.norm(A[i], 2) ** 2 * max(np.linalg.norm(want), 1.0)
        assert np.linalg.norm(normal) <= 1e-3 * scale, i
        assert np.linalg.norm(got[i]) <= 1.001 * np.linalg.norm(want) + 1e-3, i


def test_symmetric_2x2_solve_matches_the_svd_pseudo_inverse():
    rng = np.random.default_rng(0)
    cases = []
    for k in range(400):
        M = rng.normal(size=(2, 2))
        A = M + M.T if k % 2 else M @ M.T  # indefinite and semidefinite
        if k % 5 == 0:
            A = np.outer(M[0], M[0])  # rank 1
        if k % 11 == 0:
            A = np.diag([rng.normal(), 0.0])
        if k % 13 == 0:
            A = np.eye(2) * rng.normal()  # no rotation needed
        if k % 17 == 0:
            A = A * 1e-9
        cases.append(A)
    cases.append(np.zeros((2, 2)))
    A = np.stack(cases)
    b = rng.normal(size=(len(A), 2))
    got = np.asarray(jax.jit(jax.vmap(_symmetric_pinv_solve_2x2))(jnp.asarray(A), jnp.asarray(b)))
    assert np.all(np.isfinite(got))
    for i in range(len(A)):
        want = _reference(A[i], b[i])
        scale = max(np.max(np.abs(want)), 1e-300)
        # Both answers are accurate to the conditioning of the kept eigenvalues.
        s = np.linalg.svd(A[i], compute_uv=False)
        kept = s[s > 2 * np.finfo(float).eps ** (7 / 8) * s[0]] if s[0] > 0 else np.ones(1)
        condition = kept[0] / kept[-1]
        assert np.max(np.abs(got[i] - want)) <= 50 * np.finfo(float).eps * condition * scale, i


def test_non_finite_systems_give_nan(batched_solve):
    """As the SVD pseudo-inverse does: a NaN or infinite entry of A or b is no answer,
    never the rank-0 answer zero; the finite lanes of the batch are unaffected."""
    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 5, 4))
    b = rng.normal(size=(4, 5))
    A[1, 2, 3] = np.nan
    A[2, 0, 0] = np.inf
    b[3, 4] = np.nan
    got = np.asarray(batched_solve(jnp.asarray(A), jnp.asarray(b)))
    assert np.all(np.isnan(got[1:]))
    np.testing.assert_allclose(got[0], _reference(A[0], b[0]), rtol=1e-12)
    x = _symmetric_pinv_solve_2x2(jnp.full((2, 2), jnp.nan), jnp.ones(2))
    assert np.all(np.isnan(np.asarray(x)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_closed_form_3x3_solve_matches_lu(dtype):
    """`solve_3x3` (Cramer's rule and one refinement step, the foot-point Newton's solve)
    against LAPACK's LU on random systems of condition up to 1e4, with rows of scales 1e-5
    to 1e5, batched: the error bound of a backward-stable solve, ``c · eps · cond(A) ·
    |x|`` (measured c: 0.2 in float64, 1.6 in float32; 16 and 42 without the refinement);
    a singular system gives no finite answer."""
    rng = np.random.default_rng(3)
    U, _ = np.linalg.qr(rng.normal(size=(500, 3, 3)))
    V, _ = np.linalg.qr(rng.normal(size=(500, 3, 3)))
    s = 10.0 ** -rng.uniform(0, 4, size=(500, 3))
    s[:, 0] = 1.0
    A = (U * s[:, None, :]) @ V * 10.0 ** rng.uniform(-3, 3, size=(500, 1, 1))
    A = A * 10.0 ** rng.uniform(-2, 2, size=(500, 3, 1))
    b = rng.normal(size=(500, 3))
    want = np.linalg.solve(A, b[..., None])[..., 0]
    got = np.asarray(jax.jit(jax.vmap(solve_3x3))(jnp.asarray(A, dtype), jnp.asarray(b, dtype)), np.float64)
    condition = np.linalg.cond(A)
    bound = 4 * np.finfo(dtype).eps * condition * np.linalg.norm(want, axis=-1)
    assert np.all(np.linalg.norm(got - want, axis=-1) <= bound)
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]], dtype)
    assert not np.any(np.isfinite(np.asarray(solve_3x3(jnp.asarray(singular), jnp.ones(3, dtype)))))
