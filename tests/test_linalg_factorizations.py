"""numpy.linalg's solvers and factorizations (jitflow/numpy/decompositions.py, the
primitives of jitflow/ops/linalg.py, LAPACK in native code) against numpy.linalg:
values, dtypes and shapes eagerly, traced with jitflow.numpy and traced through NumPy's
own functions, on batches of well-conditioned matrices; NumPy's errors for singular and
non-positive-definite matrices; derivatives against central differences."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend, run_traced
from jitflow.testing import check_grads

pytestmark = pytest.mark.usefixtures("backend")

DTYPES = [np.float64, np.float32, np.int64, np.bool_]


def well_conditioned(rng, shape, dtype):
    """Matrices far from singular in any dtype: small integers plus a large diagonal
    (bool: the identity or'ed with a sparse pattern, kept diagonally dominant in use)."""
    diagonal = np.eye(*shape[-2:])
    if np.dtype(dtype).kind == "b":
        return (diagonal + (rng.random(shape) < 0.1)).astype(bool)
    return (rng.integers(-3, 4, shape) + 4 * max(shape[-2:]) * diagonal).astype(dtype)


def symmetric_positive(rng, shape, dtype):
    if np.dtype(dtype).kind == "b":  # the only positive definite bool matrices
        return np.broadcast_to(np.eye(shape[-1], dtype=bool), shape).copy()
    a = rng.integers(-3, 4, shape).astype(np.float64)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def tolerance(dtype):
    eps = np.finfo(np.float32 if np.dtype(dtype) == np.float32 else np.float64).eps
    return 1e4 * eps


def canonical_signs(vectors, axis):
    """Eigen- and singular vectors are unique up to sign: make the largest element of
    each one (along `axis`) positive."""
    vectors = np.asarray(vectors)
    index = np.expand_dims(np.argmax(np.abs(vectors), axis=axis), axis)
    return vectors * np.sign(np.take_along_axis(vectors, index, axis=axis))


# name -> (program(xp, a, b), operand maker, how to canonicalize each output)
PROGRAMS = {
    "solve": (lambda xp, a, b: xp.linalg.solve(a, b), well_conditioned, None),
    "solve_vector": (lambda xp, a, b: xp.linalg.solve(a, b.reshape(-1)[:a.shape[-1]]),
                     well_conditioned, None),
    "inv": (lambda xp, a, b: xp.linalg.inv(a), well_conditioned, None),
    "det": (lambda xp, a, b: xp.linalg.det(a), well_conditioned, None),
    "slogdet": (lambda xp, a, b: tuple(xp.linalg.slogdet(a)), well_conditioned, None),
    "cholesky": (lambda xp, a, b: xp.linalg.cholesky(a), symmetric_positive, None),
    "cholesky_upper": (lambda xp, a, b: xp.linalg.cholesky(a, upper=True),
                       symmetric_positive, None),
    "eigh": (lambda xp, a, b: tuple(xp.linalg.eigh(a)), symmetric_positive,
             (None, -2)),
    "eigvalsh_upper": (lambda xp, a, b: xp.linalg.eigvalsh(a, "U"), well_conditioned, None),
    "svd": (lambda xp, a, b: tuple(xp.linalg.svd(a)), well_conditioned, (-2, None, -1)),
    "svd_reduced": (lambda xp, a, b: tuple(xp.linalg.svd(a, full_matrices=False)),
                    well_conditioned, (-2, None, -1)),
    "svdvals": (lambda xp, a, b: xp.linalg.svd(a, compute_uv=False), well_conditioned, None),
    "qr": (lambda xp, a, b: tuple(xp.linalg.qr(a)), well_conditioned, None),
    "qr_complete": (lambda xp, a, b: tuple(xp.linalg.qr(a, mode="complete")),
                    well_conditioned, None),
    "qr_r": (lambda xp, a, b: xp.linalg.qr(a, mode="r"), well_conditioned, None),
    "pinv": (lambda xp, a, b: xp.linalg.pinv(a), well_conditioned, None),
    "matrix_rank": (lambda xp, a, b: xp.linalg.matrix_rank(a), well_conditioned, None),
    "matrix_power": (lambda xp, a, b: xp.linalg.matrix_power(a, 5), well_conditioned, None),
    "matrix_power_inverse": (lambda xp, a, b: xp.linalg.matrix_power(a, -2),
                             well_conditioned, None),
    "cond": (lambda xp, a, b: xp.linalg.cond(a), well_conditioned, None),
    "cond_fro": (lambda xp, a, b: xp.linalg.cond(a, "fro"), well_conditioned, None),
    "norm_2": (lambda xp, a, b: xp.linalg.norm(a, 2, axis=(-2, -1)), well_conditioned, None),
    "norm_nuc": (lambda xp, a, b: xp.linalg.norm(a, "nuc", axis=(-1, -2)),
                 well_conditioned, None),
}
RECTANGULAR = {"svd", "svd_reduced", "svdvals", "qr", "qr_complete", "qr_r", "pinv",
               "matrix_rank", "norm_2", "norm_nuc"}


def compare(got, expected, dtype, canonical, what):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected), what
    for i, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        assert (g.dtype, g.shape) == (e.dtype, e.shape), \
            f"{what}: {g.dtype}{g.shape}, NumPy gives {e.dtype}{e.shape}"
        axis = canonical[i] if canonical else None
        if axis is not None:
            g, e = canonical_signs(g, axis), canonical_signs(e, axis)
        scale = max(1.0, float(np.max(np.abs(e), initial=0)))
        np.testing.assert_allclose(g, e, rtol=tolerance(dtype), atol=tolerance(dtype) * scale,
                                   err_msg=what)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@given_per_backend(data=st.data())
def test_factorizations_match_numpy(name, data):
    program, make, canonical = PROGRAMS[name]
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    batch = data.draw(st.sampled_from([(), (1,), (2,), (2, 1)]), label="batch")
    n = data.draw(st.integers(1, 4), label="n")
    m = data.draw(st.integers(1, 4), label="m") if name in RECTANGULAR else n
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    a = make(rng, batch + (m, n), dtype)
    b = rng.integers(-3, 4, batch[1:] + (n, 2)).astype(dtype)
    expected = program(np, a, b)
    runs = {"eagerly": lambda: program(jnp, a, b),
            "traced": lambda: run_traced(lambda a, b: program(jnp, a, b), a, b),
            "through NumPy": lambda: run_traced(lambda a, b: program(np, a, b), a, b)}
    for label, run in runs.items():
        compare(run(), expected, a.dtype if a.dtype.kind == "f" else np.float64, canonical,
                f"{name} {label}")


def test_lstsq_matches_numpy():
    rng = np.random.default_rng(0)
    for m, n, k in [(5, 3, 2), (3, 5, 1), (4, 4, 0), (6, 2, None)]:
        a = rng.standard_normal((m, n))
        b = rng.standard_normal((m,) if k is None else (m, k))
        expected = np.linalg.lstsq(a, b)
        for got in (jnp.linalg.lstsq(a, b), run_traced(lambda a, b: jnp.linalg.lstsq(a, b),
                                                      a, b)):
            compare(tuple(got), tuple(expected), np.float64, None, f"lstsq {m}x{n}")


def test_lstsq_of_a_rank_deficient_matrix_is_numpys_minimum_norm_solution():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.array([1.0, 0.0, 2.0])
    x, residuals, rank, s = jnp.linalg.lstsq(a, b)
    expected = np.linalg.lstsq(a, b)
    compare((x, residuals, rank, s), tuple(expected), np.float64, None, "lstsq")
    traced = run_traced(lambda a, b: jnp.linalg.lstsq(a, b)[0], a, b)
    np.testing.assert_allclose(traced, expected[0], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_lstsq_of_non_finite_values_is_numpys(bad, dtype):
    """NumPy's lstsq (LAPACK's gelsd) raises where a holds inf or NaN and gives NaN for
    a column of b that holds one; a plain SVD solution would give inf or finite values."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal((5, 2)).astype(dtype)
    b[1, 0] = bad
    with np.errstate(all="ignore"):
        expected = np.linalg.lstsq(a, b)[0]
    got = run_traced(lambda a, b: jnp.linalg.lstsq(a, b)[0], a, b)
    assert got.dtype == expected.dtype
    assert np.isnan(got[:, 0].real).all() and np.isnan(got[:, 0].imag).all() == \
        np.isnan(expected[:, 0].imag).all()
    np.testing.assert_allclose(got[:, 1], expected[:, 1], rtol=1e-5)
    b[1, 0], a[2, 1] = 1.0, bad
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        run_traced(lambda a, b: jnp.linalg.lstsq(a, b)[0], a, b)


def test_multi_dot_and_tensor_functions_match_numpy():
    rng = np.random.default_rng(1)
    chain = [rng.standard_normal(s) for s in [(3,), (3, 10), (10, 2), (2, 5), (5,)]]
    np.testing.assert_allclose(run_traced(lambda *xs: jnp.linalg.multi_dot(xs), *chain),
                               np.linalg.multi_dot(chain), rtol=1e-12)
    a = rng.standard_normal((6, 2, 3)) + np.eye(6).reshape(6, 2, 3) * 4
    b = rng.standard_normal((6,))
    np.testing.assert_allclose(run_traced(jnp.linalg.tensorsolve, a, b),
                               np.linalg.tensorsolve(a, b), rtol=1e-10)
    c = rng.standard_normal((4, 6)).reshape(4, 2, 3) + \
        4 * np.eye(4, 6).reshape(4, 2, 3)
    c = np.concatenate([c, c[:2] + 1], 0).reshape(6, 2, 3)
    c = c + 5 * np.eye(6).reshape(6, 2, 3)
    np.testing.assert_allclose(run_traced(lambda c: jnp.linalg.tensorinv(c, 1), c),
                               np.linalg.tensorinv(c, 1), rtol=1e-10)


# --- errors as NumPy raises them ------------------------------------------------------------

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


@pytest.mark.parametrize("program", [lambda xp, a: xp.linalg.solve(a, a[0]),
                                     lambda xp, a: xp.linalg.inv(a),
                                     lambda xp, a: xp.linalg.matrix_power(a, -1)])
def test_a_singular_matrix_raises_linalgerror(program):
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        program(np, SINGULAR)
    for run in (lambda: program(jnp, SINGULAR),
                lambda: run_traced(lambda a: program(jnp, a), SINGULAR)):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            run()


def test_determinants_of_a_singular_matrix_are_numpys():
    for run in (lambda f: f(SINGULAR), lambda f: run_traced(f, SINGULAR)):
        assert run(jnp.linalg.det) == np.linalg.det(SINGULAR) == 0.0
        sign, logdet = run(jnp.linalg.slogdet)
        assert (sign, logdet) == (0.0, -np.inf)


def test_cholesky_of_a_matrix_that_is_not_positive_definite_raises():
    a = np.array([[1.0, 2.0], [2.0, 1.0]])
    for run in (lambda: jnp.linalg.cholesky(a), lambda: run_traced(jnp.linalg.cholesky, a)):
        with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
            run()


@pytest.mark.parametrize("function", ["solve", "inv", "det", "cholesky", "eigh"])
def test_a_matrix_that_is_not_square_raises_as_numpy(function):
    a = np.ones((2, 3))
    args = (a, np.ones(2)) if function == "solve" else (a,)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        getattr(np.linalg, function)(*args)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        run_traced(getattr(jnp.linalg, function), *args)


def test_nan_propagates_as_in_numpy():
    a = np.array([[np.nan, 1.0], [1.0, 3.0]])
    for name in ("solve", "det"):
        args = (a, np.ones(2)) if name == "solve" else (a,)
        with np.errstate(invalid="ignore"):
            expected = getattr(np.linalg, name)(*args)
        got = run_traced(getattr(jnp.linalg, name), *args)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))


def test_vmap_batches_the_factorizations():
    rng = np.random.default_rng(2)
    a = well_conditioned(rng, (3, 4, 4), np.float64)
    b = rng.standard_normal((3, 4))
    batched = jitflow.function(jitflow.vmap(jnp.linalg.solve))(a, b)
    looped = np.stack([np.linalg.solve(x, y) for x, y in zip(a, b)])
    np.testing.assert_allclose(batched, looped, rtol=1e-12)
    values = jitflow.vmap(lambda x: jnp.linalg.svd(x, compute_uv=False))(a)
    np.testing.assert_allclose(values, np.linalg.svd(a, compute_uv=False), rtol=1e-12)


# --- derivatives ----------------------------------------------------------------------------

def symmetrized(x):
    """cholesky and eigh read one triangle: their derivatives are those of a symmetric
    function of the matrix."""
    return (x + jnp.swapaxes(x, -1, -2)) / 2


RNG = np.random.default_rng(3)
SQUARE = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
SPD = SQUARE @ np.swapaxes(SQUARE, -1, -2) + np.eye(3)
TALL, WIDE = RNG.standard_normal((4, 3)), RNG.standard_normal((2, 4))
DERIVATIVES = {
    "solve": (lambda a, b: jnp.linalg.solve(a, b), (SQUARE, TALL[:3, :2])),
    "inv": (jnp.linalg.inv, (SQUARE,)),
    "det": (jnp.linalg.det, (SQUARE,)),
    "slogdet": (lambda a: jnp.linalg.slogdet(a).logabsdet, (SQUARE,)),
    "cholesky": (lambda a: jnp.linalg.cholesky(symmetrized(a)), (SPD,)),
    "eigh": (lambda a: tuple(jnp.linalg.eigh(symmetrized(a))), (SPD,)),
    "svd_tall": (lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), (TALL,)),
    "svd_wide": (lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), (WIDE,)),
    "svd_square_full": (lambda a: tuple(jnp.linalg.svd(a)), (SQUARE,)),
    "qr": (lambda a: tuple(jnp.linalg.qr(a)), (TALL,)),
    "pinv": (jnp.linalg.pinv, (TALL,)),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], (TALL, TALL[:, :2] + 1)),
    "matrix_power": (lambda a: jnp.linalg.matrix_power(a, -3), (SQUARE,)),
    "norm_2": (lambda a: jnp.linalg.norm(a, 2), (TALL,)),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_derivatives_match_central_differences(name, backend):
    fn, args = DERIVATIVES[name]
    check_grads(fn, args, order=2 if backend == "interpreter" else 1)
    check_grads(jitflow.function(fn), args, order=1)


@pytest.mark.parametrize("name, args", [
    ("svd", (WIDE,)), ("qr", (WIDE,))])
def test_derivatives_where_the_factors_are_not_unique_are_refused(name, args):
    def fn(a):
        result = jnp.linalg.svd(a) if name == "svd" else jnp.linalg.qr(a)
        return jnp.sum(result[0])
    with pytest.raises(NotImplementedError, match=name):
        jitflow.grad(fn)(*args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_svd_of_a_matrix_holding_inf_fails_as_numpys(dtype, backend):
    """gesdd refuses the scaling of a norm that is inf (a negative info); NumPy reads
    any nonzero info as "SVD did not converge", and so must native code: the same
    error where NumPy raises, NaN where NumPy gives NaN."""
    # (not any matrix with an inf: NumPy's own gesdd loops forever on some, such as
    # 3 I with one inf below the diagonal)
    a = np.full((3, 3), np.inf, dtype)
    for fn in (lambda a: np.linalg.svd(a)[1], np.linalg.svdvals,
               lambda a: np.linalg.norm(a, "nuc")):
        try:
            expected = fn(a)
        except np.linalg.LinAlgError:
            with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
                jitflow.function(fn)(a)
            continue
        assert np.isnan(expected).all()
        assert np.isnan(jitflow.function(fn)(a)).all()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_qr_skips_building_q_where_nothing_reads_it(dtype, backend):
    """mode="r" (and q unread) makes no orgqr/ungqr call, as NumPy's mode "r"; r is
    the same either way."""
    if backend != "native":
        pytest.skip("native code's LLVM IR")
    a = np.arange(20.0).reshape(5, 4).astype(dtype) ** 1.5 + np.eye(5, 4)
    for mode, builds_q in (("r", False), ("reduced", True)):
        fn = jitflow.function(lambda a: np.linalg.qr(a, mode=mode))
        text = fn.lower(a).llvm_ir(optimized=False)
        assert ("orgqr" in text or "ungqr" in text) == builds_q
        got, want = fn(a), np.linalg.qr(a, mode=mode)
        for g, w in zip(got if builds_q else [got], want if builds_q else [want]):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    only_r = jitflow.function(lambda a: np.linalg.qr(a)[1])
    assert "gqr" not in only_r.lower(a).llvm_ir(optimized=False)
    np.testing.assert_allclose(only_r(a), np.linalg.qr(a)[1], rtol=1e-12, atol=1e-12)
