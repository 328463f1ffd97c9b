"""Complex sqrt, logarithms, exponentials, powers and the hyperbolic and trigonometric
functions against NumPy: every C99 special value NumPy gives (a grid of zeros of both
signs, infinities, NaN, huge, tiny and ordinary parts), and ordinary values within a
few roundings (NumPy's own log1p and expm1 formulas lose accuracy to cancellation, so
they are compared within the rounding of their inputs, scaled by that loss)."""
import itertools

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from complex_checks import assert_complex_same
from fidelity import given_per_backend

pytestmark = pytest.mark.usefixtures("backend")

INVERSE = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]
FUNCTIONS = ["sqrt", "log", "log10", "log2", "log1p", "expm1", "exp", "exp2", "sinh",
             "cosh", "tanh", "sin", "cos", "tan", "reciprocal", "sign", *INVERSE]
SPECIAL = [0.0, -0.0, 1.0, -2.5, 0.3, np.inf, -np.inf, np.nan, 1e300, -800.0,
           800.0, 3e-310, 1e-200, 1 + 2.0 ** -40, 1e20]
GRID = np.array([complex(r, i) for r, i in itertools.product(SPECIAL, SPECIAL)])
# NumPy's losses to cancellation: |1 + z| / |log1p z| and (|e^z| + 1) / |expm1 z|
CONDITION = {"log1p": lambda z: np.abs(1 + z) / np.abs(np.log1p(z)),
             "expm1": lambda z: (np.abs(np.exp(z)) + 1) / np.abs(np.expm1(z))}


def compare(name, got, expected, z):
    finite = np.isfinite(expected.real) & np.isfinite(expected.imag)
    assert_complex_same(got[~finite], expected[~finite], what=name)
    scale = np.abs(expected[finite]) * CONDITION.get(name, lambda z: 1)(z[finite])
    assert_complex_same(got[finite], expected[finite], scale=scale,
                        eps=16 * np.finfo(expected.dtype).eps, what=name)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_values_as_numpy_gives_them(name, dtype):
    z = GRID.astype(dtype)
    with np.errstate(all="ignore"):
        got, expected = jitflow.function(getattr(np, name))(z), getattr(np, name)(z)
    compare(name, got, expected, z)


def values(dtype):
    part = np.float32 if dtype == np.complex64 else np.float64
    floats = st.floats(-30, 30, width=np.dtype(part).itemsize * 8)
    return st.tuples(hnp.arrays(part, 6, elements=floats),
                     hnp.arrays(part, 6, elements=floats)).map(
        lambda p: p[0] + np.asarray(1j, dtype) * p[1])


@given_per_backend(st.sampled_from(FUNCTIONS), st.sampled_from([np.complex64, np.complex128]),
                   st.data())
def test_ordinary_values_within_rounding(name, dtype, data):
    z = data.draw(values(dtype), label="z")
    with np.errstate(all="ignore"):
        got, expected = jitflow.function(getattr(np, name))(z), getattr(np, name)(z)
    compare(name, got, expected, z)


def test_logarithms_stay_accurate_near_the_unit_circle():
    angles = np.linspace(-3, 3, 50)
    z = np.exp(1j * angles) * (1 + np.linspace(-1e-9, 1e-9, 50))
    got = jitflow.function(np.log)(z)
    np.testing.assert_allclose(got.real, np.log(z).real, rtol=1e-12, atol=0)


EXPONENTS = [0, 1, 2, 3, -1, -2, 7, -13, 99, 100, 0.5, 2.5, -1.5, 1j, 2 + 1j]


@pytest.mark.parametrize("exponent", EXPONENTS, ids=repr)
def test_powers_as_numpy_computes_them(exponent):
    rng = np.random.default_rng(5)
    z = np.concatenate([GRID, rng.standard_normal(20) + 1j * rng.standard_normal(20)])
    for label, fn in (("**", lambda z: z ** exponent),
                      ("power", lambda z: np.power(z, exponent))):
        with np.errstate(all="ignore"):
            got, expected = jitflow.function(fn)(z), fn(z)
        finite = np.isfinite(expected)
        # NumPy's square (z ** 2) fuses its multiply-adds where the CPU can: an
        # intermediate that overflows there may give inf where a plain product gives NaN
        plain = np.abs(z) < 1e150
        assert_complex_same(got[~finite & plain], expected[~finite & plain],
                            what=f"z {label} {exponent}")
        scale = np.abs(expected[finite]) * (1 + np.abs(exponent) * np.abs(np.log(z[finite])))
        assert_complex_same(got[finite], expected[finite], scale=scale, eps=8e-16,
                            what=f"z {label} {exponent}")


def test_traced_exponents_and_real_bases():
    rng = np.random.default_rng(6)
    z = rng.standard_normal(16) + 1j * rng.standard_normal(16)
    b = np.array([2, 3, -2, 0.5, 1j, 0, 150, -7] * 2)
    x = rng.uniform(0.5, 2, 16)
    for fn, args in ((lambda z, b: z ** b, (z, b)), (lambda x, z: x ** z, (x, z)),
                     (lambda z, b: 2.0 ** z, (z, b))):
        got, expected = jitflow.function(fn)(*args), fn(*args)
        assert_complex_same(got, expected, scale=np.abs(expected) * 200, eps=1e-16)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), ((0, 2), True),
                                            (-1, True)])
def test_products_over_axes(axis, keepdims):
    rng = np.random.default_rng(8)
    z = rng.standard_normal((3, 5, 4)) + 1j * rng.standard_normal((3, 5, 4))
    for w in (z, z[:, :0]):
        got = jitflow.function(lambda w: np.prod(w, axis=axis, keepdims=keepdims))(w)
        expected = np.prod(w, axis=axis, keepdims=keepdims)
        assert_complex_same(got, expected, scale=np.abs(expected), eps=1e-15)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_sqrt_near_the_largest_float_does_not_overflow(dtype):
    # found by the complex fuzzer's corners: |z| overflowed on the way, and
    # sqrt(-3e38 + 3e38j) in complex64 had a real part of 0 (NumPy: 7.88e18)
    big = float(np.finfo(np.float32 if dtype == np.complex64 else np.float64).max)
    z = np.array([complex(-big * 0.9, big * 0.9), complex(big, big), complex(big / 2, -big),
                  1 + 1j], dtype)
    got, expected = jitflow.function(np.sqrt)(z), np.sqrt(z)
    assert_complex_same(got, expected, scale=np.abs(expected),
                        eps=8 * np.finfo(dtype).eps)


def _near_branch_points(dtype):
    """Values within a few roundings of +-1 and +-i, and just off the cuts beyond them,
    where the textbook formulas cancel."""
    eps = float(np.finfo(np.float32 if dtype == np.complex64 else np.float64).eps)
    offsets = np.array([0.0, eps, -eps, 1e3 * eps, 1e-3, 0.5])
    tiny = np.array([0.0, -0.0, 1e-300, 1e-30, eps, 1e-3])
    lines = [complex(sign * (1 + d), t) for sign in (1, -1) for d in offsets for t in tiny]
    return np.array(lines + [complex(t, sign * (1 + d)) for sign in (1, -1)
                             for d in offsets for t in tiny], dtype)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", INVERSE)
def test_inverse_functions_stay_accurate_at_their_branch_points(name, dtype):
    z = _near_branch_points(dtype)
    with np.errstate(all="ignore"):
        got, expected = jitflow.function(getattr(np, name))(z), getattr(np, name)(z)
    compare(name, got, expected, z)


DERIVATIVES = {"arcsin": lambda z: 1 / np.sqrt(1 - z * z),
               "arccos": lambda z: -1 / np.sqrt(1 - z * z),
               "arctan": lambda z: 1 / (1 + z * z),
               "arcsinh": lambda z: 1 / np.sqrt(1 + z * z),
               "arccosh": lambda z: 1 / (np.sqrt(z - 1) * np.sqrt(z + 1)),
               "arctanh": lambda z: 1 / (1 - z * z)}
# on each function's cut (a limit from one side only) and beside it
OFF_CUTS = np.array([0.4 + 0.3j, -1.7 + 0.6j, 2.5 - 0.2j, -0.3 - 2.2j, 0.5 + 0j, 3j + 0.1])


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", INVERSE)
def test_inverse_functions_derivatives_are_f_prime(name, compiled):
    from complex_checks import assert_gradient_matches_central_differences
    fn = getattr(np, name)
    z = OFF_CUTS if name != "arccosh" else OFF_CUTS + 1.6  # (its cut: the real axis below 1)
    loss = lambda z: np.sum(np.abs(fn(z)) ** 2 + (fn(z) * np.arange(1, 7)).real)  # noqa: E731
    assert_gradient_matches_central_differences(loss, z, compiled)
    tangent = np.linspace(0.5, 2, 6) - 0.7j
    pushed = jitflow.jvp(fn, (z,), (tangent,))[1]
    np.testing.assert_allclose(pushed, DERIVATIVES[name](z) * tangent, rtol=1e-12)


def test_second_derivative_of_an_inverse_function():
    # d^2/dx^2 Re arcsin(x (1 + i)) = Re((1 + i)^2 z / (1 - z^2)^1.5), z = x (1 + i)
    second = jitflow.function(jitflow.grad(jitflow.grad(
        lambda x: np.real(np.arcsin(x * (1 + 1j))))))
    z = 0.3 * (1 + 1j)
    np.testing.assert_allclose(second(0.3), np.real((1 + 1j) ** 2 * z / (1 - z * z) ** 1.5),
                               rtol=1e-12)
