"""numpy.linalg's solve and inv of complex matrices (LAPACK's gesv, as NumPy's) against
NumPy's, to rounding; eig and eigvals of real matrices (LAPACK's geev, as NumPy's: its values
and vectors, to the rounding of two builds of LAPACK, always as complex arrays),
batched, under vmap, and their clear errors; the eigenvalues' derivatives against central
differences; and NumPy's order of complex numbers in
sort, argsort, sort_complex, partition and argpartition."""
import numpy as np
import pytest

import jitflow
from complex_checks import assert_complex_same

pytestmark = pytest.mark.usefixtures("backend")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 4, 4), (0, 3, 3), (2, 0, 0)])
def test_eig_and_eigvals_give_numpys_eigenvalues_and_true_vectors(dtype, shape):
    """Native code calls the LAPACK of scipy-openblas32, NumPy its own build: the same
    algorithm, whose rounding, order of eigenvalues and signs of eigenvectors depend on
    the build. So: NumPy's eigenvalues as a set (to rounding), and unit vectors v with
    A v = v w."""
    a = (np.random.default_rng(sum(shape)).standard_normal(shape) * 3).astype(dtype)
    w, v = jitflow.function(np.linalg.eig)(a)
    values = jitflow.function(np.linalg.eigvals)(a)
    complex_dtype = np.complex64 if dtype == np.float32 else np.complex128
    assert w.dtype == v.dtype == values.dtype == complex_dtype
    eps = 64 * np.finfo(complex_dtype).eps * max(1, shape[-1])
    norm = max(1.0, float(np.max(np.abs(a), initial=0)) * shape[-1])
    expected = np.sort_complex(np.linalg.eigvals(a).astype(complex_dtype))
    for got in (w, values):
        assert_complex_same(np.sort_complex(got), expected, scale=norm, eps=eps)
    a64, v64 = a.astype(np.float64), v.astype(np.complex128)
    np.testing.assert_allclose(a64 @ v64, v64 * w[..., None, :], atol=eps * norm)
    np.testing.assert_allclose(np.linalg.norm(v64, axis=-2), 1, atol=eps)


def test_eigenvectors_of_complex_pairs_satisfy_av_equals_vw():
    rotation = np.array([[0.0, -2.0, 0.5], [2.0, 0.0, 0.1], [0.0, 0.0, 3.0]])
    w, v = jitflow.function(np.linalg.eig)(rotation)
    assert np.any(w.imag != 0)
    np.testing.assert_allclose(rotation @ v, v * w, atol=1e-14)


def test_eig_under_vmap_and_its_errors():
    a = np.random.default_rng(1).standard_normal((4, 3, 3))
    got = jitflow.vmap(np.linalg.eigvals)(a)
    assert_complex_same(got, np.linalg.eigvals(a).astype(np.complex128))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        jitflow.function(np.linalg.eig)(np.ones((2, 3)))


# A real matrix with two complex pairs and a real eigenvalue, and NumPy's eigenvectors'
# derivatives by central differences (geev's own choices: unit norm, largest component
# real; this matrix is away from where the sign of that component jumps).
PAIRS = np.array([[0.3, 2.0, 0.0, 0.1, 0.5], [-2.0, 0.3, 0.4, 0.0, 0.0],
                  [0.2, 0.0, -1.0, 1.0, 0.3], [0.0, 0.1, -1.0, -1.0, 0.0],
                  [0.0, 0.3, 0.0, 0.2, 2.5]])


def _central_differences(fn, a, tangent, h=1e-6):
    return [(p - m) / (2 * h) for p, m in zip(fn(a + h * tangent), fn(a - h * tangent))]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_eigenvector_derivatives_of_real_matrices_with_complex_pairs(compiled):
    rng = np.random.default_rng(3)
    tangent, weights = rng.standard_normal((5, 5)), rng.standard_normal((5, 5)) + 1j
    expected = _central_differences(np.linalg.eig, PAIRS, tangent)
    jvp = jitflow.function(lambda a, t: jitflow.jvp(np.linalg.eig, (a,), (t,))[1]) \
        if compiled else lambda a, t: jitflow.jvp(np.linalg.eig, (a,), (t,))[1]
    for got, wanted in zip(jvp(PAIRS, tangent), expected):
        np.testing.assert_allclose(got, wanted, rtol=1e-6, atol=1e-6)
    loss = lambda a: np.sum((np.linalg.eig(a)[1] * weights).real)  # noqa: E731
    gradient = jitflow.function(jitflow.grad(loss)) if compiled else jitflow.grad(loss)
    assert np.sum(gradient(PAIRS) * tangent) == pytest.approx(
        np.sum(expected[1] * weights).real, rel=1e-6)


REAL_EIGENVALUE_LOSSES = {
    "parts": lambda a: np.sum(np.linalg.eigvals(a).real * WEIGHTS) +
    np.sum(np.linalg.eigvals(a).imag ** 2),
    "moduli": lambda a: np.sum(np.abs(np.linalg.eigvals(a) + 1)),
    "eig, values only": lambda a: np.sum(np.angle(np.linalg.eig(a)[0] + 2j)),
}
WEIGHTS = np.array([0.5, -1.0, 2.0, 1.5])


@pytest.mark.parametrize("name", sorted(REAL_EIGENVALUE_LOSSES))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_real_matrices_eigenvalue_gradients_match_central_differences(name, compiled):
    """A real matrix with a complex pair and two real eigenvalues: the gradient of a
    real loss of its eigenvalues (the complex matrix a + 0i's rule, real part)."""
    loss = REAL_EIGENVALUE_LOSSES[name]
    a = np.random.default_rng(3).standard_normal((4, 4))
    assert np.any(np.linalg.eigvals(a).imag != 0) and np.any(np.linalg.eigvals(a).imag == 0)
    gradient = jitflow.grad(loss)
    if compiled:
        gradient = jitflow.function(gradient)
    h, expected = 1e-6, np.zeros_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = h
        expected[index] = (loss(a + step) - loss(a - step)) / (2 * h)
    np.testing.assert_allclose(gradient(a), expected, rtol=1e-6, atol=1e-6)


def test_real_matrices_forward_derivative_of_eigenvalues():
    a = np.random.default_rng(5).standard_normal((4, 4))
    direction = np.random.default_rng(6).standard_normal((4, 4))
    values, derivatives = jitflow.function(
        lambda a, d: jitflow.jvp(np.linalg.eigvals, (a,), (d,)))(a, direction)
    h = 1e-6
    expected = (np.linalg.eigvals(a + h * direction) -
                np.linalg.eigvals(a - h * direction)) / (2 * h)
    # LAPACK builds may order the eigenvalues otherwise: pair each with NumPy's nearest
    nearest = np.argmin(np.abs(values[:, None] - np.linalg.eigvals(a)[None]), axis=1)
    assert sorted(nearest) == [0, 1, 2, 3]
    np.testing.assert_allclose(derivatives, expected[nearest], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", ["matrices", "vector", "inverse", "real a", "real b",
                                  "single"])
def test_complex_linear_systems(case):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4, 4)) + 1j * rng.standard_normal((3, 4, 4))
    b = rng.standard_normal((3, 4, 2)) + 1j * rng.standard_normal((3, 4, 2))
    fn, args = {"matrices": (np.linalg.solve, (a, b)),
                "vector": (np.linalg.solve, (a[0], b[0, :, 0])),
                "inverse": (np.linalg.inv, (a,)), "real a": (np.linalg.solve, (a.real, b)),
                "real b": (np.linalg.solve, (a, b.real)),
                "single": (np.linalg.inv, (a.astype(np.complex64),))}[case]
    got, expected = jitflow.function(fn)(*args), fn(*args)
    condition = np.max(np.linalg.cond(args[0]))
    assert_complex_same(got, expected, scale=np.max(np.abs(expected)) * condition,
                        eps=16 * np.finfo(expected.dtype).eps)


SPECIAL = [np.nan, 1.0, -0.0, 0.0, 2.0, np.inf, -np.inf]


@pytest.mark.parametrize("fn", [lambda z: np.sort(z), lambda z: np.sort(z, axis=0),
                                lambda z: np.sort(z, axis=None),
                                lambda z: np.argsort(z.ravel(), stable=True),
                                lambda z: np.sort_complex(z),
                                lambda z: np.sort_complex(z.real.astype(np.float32)),
                                lambda z: np.sort_complex(z.real.astype(np.int8))])
def test_sorting_in_numpys_order_of_complex_numbers(fn):
    rng = np.random.default_rng(2)
    z = np.array([complex(rng.choice(SPECIAL), rng.choice(SPECIAL)) for _ in range(60)])
    z = z.reshape(6, 10)
    with np.errstate(invalid="ignore"):
        got, expected = jitflow.function(fn)(z), fn(z)
    # 0.0 and -0.0 tie: NumPy's sort is not stable, so which comes first is its own
    assert_complex_same(got, expected, zero_sign=False)


@pytest.mark.parametrize("kth, axis", [(0, -1), (4, -1), ((1, 7), -1), (-1, 0), (5, None),
                                       ((0, 59), None)])
def test_partitions_are_numpys_at_kth_and_arrange_the_rest(kth, axis):
    """jitflow's partition is a sort (a partition at every kth); NumPy's elements away
    from kth are in its introselect's order, so only kth and the multiset compare."""
    rng = np.random.default_rng(3)
    z = np.array([complex(rng.choice(SPECIAL), rng.choice(SPECIAL)) for _ in range(60)])
    z = z.reshape(6, 10)
    with np.errstate(invalid="ignore"):
        got = jitflow.function(lambda z: np.partition(z, kth, axis=axis))(z)
        positions = jitflow.function(lambda z: np.argpartition(z, kth, axis=axis))(z)
        expected = np.partition(z, kth, axis=axis)
    along = -1 if axis is None else axis
    kth = np.atleast_1d(kth)
    assert_complex_same(np.take(got, kth, along), np.take(expected, kth, along),
                        zero_sign=False)
    assert_complex_same(np.sort(got, along), np.sort(expected, along), zero_sign=False)
    source = z.ravel() if axis is None else z
    assert_complex_same(np.take_along_axis(source, positions, along), got)


def test_a_kth_out_of_bounds_is_numpys_error():
    with pytest.raises(ValueError, match=r"kth\(=7\) out of bounds \(5\)"):
        jitflow.function(lambda z: np.partition(z, 7))(np.ones(5, complex))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_eigenvalue_derivatives_at_a_repeated_eigenvalue_keep_the_clusters_sum(compiled):
    # eigvals' rules take eigenvectors from a call of their own; they were matched to the
    # eigenvalues by nearness, which gave a repeated eigenvalue one vector twice (a
    # singular basis): the trace's derivative, and poly's, came out wrong
    a, tangent = np.diag([2.0, 2.0, 5.0]), np.random.default_rng(8).standard_normal((3, 3))
    jvp = lambda a, t: jitflow.jvp(lambda a: np.linalg.eigvals(a).sum(), (a,), (t,))[1]  # noqa: E731
    if compiled:
        jvp = jitflow.function(jvp)
    assert jvp(a, tangent) == pytest.approx(np.trace(tangent), rel=1e-12)
    gram = np.outer([1.0, -2.0, 0.5], [1.0, -2.0, 0.5]) + 3 * np.eye(3)  # 3, 3 and 8.25
    loss = lambda m: np.sum(np.poly(m) * np.array([1.0, 0.5, -0.25, 0.125]))  # noqa: E731
    gradient = jitflow.grad(loss)
    if compiled:
        gradient = jitflow.function(gradient)
    h = 1e-6
    expected = (loss(gram + h * tangent) - loss(gram - h * tangent)) / (2 * h)
    assert np.sum(gradient(gram) * tangent) == pytest.approx(expected, rel=1e-6)
