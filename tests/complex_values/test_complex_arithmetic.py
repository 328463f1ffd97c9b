"""Complex arithmetic traced and compiled against NumPy's complex loops: values (each
part exact where NumPy's formula is exact, within rounding of the operands' magnitude
where it is not), dtypes by NumPy 2's promotion with real arrays and Python scalars,
and C99's special values (inf, nan, signed zeros) for division and exp."""
import itertools

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from complex_checks import assert_complex_same
from fidelity import given_per_backend

pytestmark = pytest.mark.usefixtures("backend")

COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e300, 3e-310]


def complex_arrays(dtype, shape):
    part = np.float32 if dtype == np.complex64 else np.float64
    floats = st.floats(width=np.dtype(part).itemsize * 8)
    return st.tuples(hnp.arrays(part, shape, elements=floats),
                     hnp.arrays(part, shape, elements=floats)).map(
        lambda p: _joined(*p, dtype))


def _joined(real, imag, dtype):
    z = np.empty(real.shape, dtype)
    z.real, z.imag = real, imag
    return z


def run(fn, *args):
    with np.errstate(all="ignore"):
        return jitflow.function(fn)(*args), fn(*args)


EXACT = {"add": np.add, "subtract": np.subtract, "negative": lambda a, b: -a,
         "conj": lambda a, b: np.conj(a), "real": lambda a, b: np.real(a) + 0,
         "imag": lambda a, b: np.imag(b) * 1, "equal": np.equal, "not_equal": np.not_equal,
         "isnan": lambda a, b: np.isnan(a), "isinf": lambda a, b: np.isinf(b),
         "isfinite": lambda a, b: np.isfinite(a), "where": lambda a, b: np.where(
             np.isnan(a.real), a, b)}


@given_per_backend(st.sampled_from(COMPLEX), st.sampled_from(COMPLEX),
                   hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
                   st.sampled_from(sorted(EXACT)), st.data())
def test_exact_operations(dtype_a, dtype_b, shapes, name, data):
    a = data.draw(complex_arrays(dtype_a, shapes.input_shapes[0]), label="a")
    b = data.draw(complex_arrays(dtype_b, shapes.input_shapes[1]), label="b")
    got, expected = run(EXACT[name], a, b)
    assert_complex_same(got, expected, what=name)


ROUNDED = {"multiply": (np.multiply, lambda a, b: np.abs(a) * np.abs(b), 4),
           "divide": (np.divide, lambda a, b: np.abs(a) / np.abs(b), 8),
           "square": (lambda a, b: np.square(a), lambda a, b: np.abs(a) ** 2, 4),
           "cube": (lambda a, b: a ** 3, lambda a, b: np.abs(a) ** 3, 8),
           "inverse square": (lambda a, b: a ** -2, lambda a, b: np.abs(a) ** -2.0, 16),
           "abs": (lambda a, b: np.abs(a), lambda a, b: np.abs(a), 2),
           "matmul": (lambda a, b: a @ b.T, lambda a, b: np.abs(a) @ np.abs(b).T, 8),
           "sum": (lambda a, b: np.sum(a * 1, axis=0), lambda a, b: np.sum(np.abs(a), 0), 8)}


def moderate(dtype, shape):
    """Finite parts of moderate size (no overflow on the way): the rounding tests'."""
    part = np.float32 if dtype == np.complex64 else np.float64
    floats = st.floats(-1e3, 1e3, width=np.dtype(part).itemsize * 8)
    return st.tuples(hnp.arrays(part, shape, elements=floats),
                     hnp.arrays(part, shape, elements=floats)).map(
        lambda p: _joined(*p, dtype))


@given_per_backend(st.sampled_from(COMPLEX), hnp.array_shapes(min_dims=2, max_dims=2,
                                                              max_side=4),
                   st.sampled_from(sorted(ROUNDED)), st.data())
def test_rounded_operations(dtype, shape, name, data):
    fn, magnitude, ulps = ROUNDED[name]
    a = data.draw(moderate(dtype, shape), label="a")
    b = data.draw(moderate(dtype, shape), label="b")
    got, expected = run(fn, a, b)
    with np.errstate(all="ignore"):
        scale = magnitude(a.astype(np.complex128), b.astype(np.complex128))
    eps = ulps * np.finfo(dtype).eps * max(1, shape[0])
    assert_complex_same(got, expected, scale=scale, eps=eps, what=name)


def test_division_and_exp_give_the_special_values_numpy_gives(backend):
    values = np.array([complex(r, i) for r, i in itertools.product(SPECIAL, SPECIAL)])
    a, b = np.meshgrid(values, values)
    got, expected = run(np.divide, a.ravel(), b.ravel())
    finite = np.isfinite(expected)
    assert_complex_same(got[~finite], expected[~finite], what="divide")
    assert_complex_same(got[finite], expected[finite], scale=np.abs(expected[finite]),
                        eps=8 * np.finfo(np.float64).eps, what="divide")
    got, expected = run(np.exp, values)
    finite = np.isfinite(expected)
    assert_complex_same(got[~finite], expected[~finite], what="exp")
    assert_complex_same(got[finite], expected[finite], scale=np.abs(expected[finite]),
                        eps=8 * np.finfo(np.float64).eps, what="exp")


@given_per_backend(st.sampled_from(COMPLEX), st.data())
def test_exp_and_angle_within_rounding(dtype, data):
    z = data.draw(moderate(dtype, (5,)), label="z") / 100
    got, expected = run(lambda z: (np.exp(z), np.angle(z), np.angle(z, deg=True)), z)
    eps = 8 * np.finfo(dtype).eps
    assert_complex_same(got[0], expected[0], scale=np.abs(expected[0]), eps=eps, what="exp")
    assert_complex_same(got[1], expected[1], scale=np.pi, eps=eps, what="angle")
    assert_complex_same(got[2], expected[2], scale=180, eps=eps, what="angle in degrees")


PARTNERS = [np.float32(1.5), np.float64(-2.0), np.int32(3), np.array([2.0], np.float32),
            np.array([1, 2], np.int64), 2, 0.5, 1j, np.complex64(1 - 1j), True]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("partner", PARTNERS, ids=repr)
def test_mixed_operands_take_numpys_dtypes(dtype, partner):
    z = np.array([1.5 - 2j, -0.25 + 1j], dtype)
    for fn in (lambda z, p: z + p, lambda z, p: p * z, lambda z, p: z / p,
               lambda z, p: p - z):
        got, expected = run(fn, z, partner)
        assert_complex_same(got, expected, scale=np.abs(expected) + 1,
                            eps=4 * np.finfo(expected.dtype).eps)


@pytest.mark.parametrize("real", [np.float32, np.float64, np.int32, np.bool_])
def test_real_values_become_complex(real):
    x = np.array([0, 1, 2], real)
    got, expected = run(lambda x: (x * 1j, x.astype(np.complex64), x + np.complex64(1j)), x)
    for g, e in zip(got, expected):
        assert_complex_same(g, e)


def test_complex_to_real_casts_warn_and_take_the_real_part():
    z = np.array([1.5 + 2j, 0 - 0j, 0 + 1j])
    with pytest.warns(np.exceptions.ComplexWarning):
        got = jitflow.function(lambda z: z.astype(np.float32))(z)
    assert_complex_same(got, z.real.astype(np.float32))
    got = jitflow.function(lambda z: z.astype(bool))(z)
    np.testing.assert_array_equal(got, z.astype(bool))


@pytest.mark.parametrize("dtype", COMPLEX)
def test_sign_of_values_whose_magnitude_overflows(dtype):
    """NumPy's z / |z| overflows in |z| near the dtype's largest number (its complex64
    sign(-3e38 + 3e38j) is 1j); jitflow's scales z first and stays on the unit circle."""
    big = float(np.finfo(dtype).max) * 0.9
    z = np.array([complex(-big, big), complex(big, big / 2), complex(big, 0.0)], dtype)
    got = jitflow.function(np.sign)(z)
    expected = z.astype(np.clongdouble) / np.abs(z.astype(np.clongdouble))
    assert got.dtype == dtype
    assert_complex_same(got, expected.astype(dtype), scale=1.0,
                        eps=4 * np.finfo(dtype).eps, what="sign")


@pytest.mark.parametrize("dtype", COMPLEX)
def test_logs_of_values_whose_magnitude_overflows(dtype):
    """|z| of parts near the largest float overflows; log|z| must not (NumPy's is
    glibc's clog)."""
    big = float(np.finfo(dtype).max) * 0.99
    z = np.array([complex(big, big), complex(-big, big / 3)], dtype)
    for name in ("log", "log2", "log10"):
        got, expected = run(getattr(np, name), z)
        assert_complex_same(got, expected, scale=np.abs(expected),
                            eps=4 * np.finfo(dtype).eps, what=name)


def test_derivatives_of_powers_at_zero_are_the_formulas_not_nan():
    """power's unused branches (log 0, 1/0) must not turn the chosen one's derivative
    into NaN; z ** 1 at 0 has derivative 1 (found by the complex gradient fuzzer)."""
    zero = np.array(0j)
    for n, expected in ((1, 1.0), (2, 0.0), (3, 0.0)):
        for grad in (jitflow.grad(lambda z: np.real(np.power(z, n))),
                     jitflow.function(jitflow.grad(lambda z: np.real(np.power(z, n))))):
            np.testing.assert_array_equal(grad(zero), expected)
