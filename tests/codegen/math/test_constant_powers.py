"""x ** n with n known at compile time, an integer or a half-integer: multiplications
(and a square root), as close to NumPy as pow is."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.math.math_inline import host_features
from strategies import arrays, shapes

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e-30, 1.0, -1.0]


def native_power(x, n, spelling):
    fn = (lambda x: x ** n) if spelling == "operator" else (lambda x: np.power(x, n))
    graph = jitflow.optimize(jitflow.function(fn).trace(x))
    native = NativeGraph(graph, "power")
    return native([x])[0], native


def with_specials(x):
    flat = x.reshape(-1)
    flat[:len(SPECIAL)] = SPECIAL[:flat.size]
    return x


def assert_same_signs(actual, expected):
    """Zeros and infinities of the same sign; a NaN's sign bit is no part of its value
    (NumPy's powf and a division pass on different ones)."""
    numbers = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(actual[numbers]), np.signbit(expected[numbers]))


def ulp_error(actual, expected):
    finite = np.isfinite(expected) & (expected != 0)
    scale = np.spacing(np.abs(expected[finite]))
    return np.max(np.abs(actual[finite].astype(np.float64) - expected[finite]) / scale,
                  initial=0)


@given(st.data(), st.sampled_from([-16, -3, -2, -1, 0, 1, 3, 4, 7, 16, 3.0,
                                   -15.5, -2.5, -0.5, 1.5, 2.5, 15.5]),
       st.sampled_from(["operator", "ufunc"]))
def test_float32_is_the_correctly_rounded_power(data, n, spelling):
    x = with_specials(data.draw(arrays(np.float32, shapes(min_side=1))))
    with np.errstate(all="ignore"):
        got, _ = native_power(x, n, spelling)
        exact = (x.astype(np.float64) ** n).astype(np.float32)
        expected = x ** n
    assert got.dtype == expected.dtype == np.float32 and got.shape == expected.shape
    # float64 holds every product of up to 16 float32 factors (and a square root)
    # within a few of its own ulps, so one final rounding gives the float32 nearest the
    # exact power; -0.0 and -inf to a half-integer power are pow's, not sqrt's.
    assert_rounded_as_float64(got, exact, n)
    assert_same_signs(got, expected)
    assert ulp_error(got, expected) <= 1  # NumPy's powf is itself up to an ulp off


def assert_rounded_as_float64(got, exact, n):
    """got is `exact` (the float64 power rounded once), but for a float32 cube below
    2**-100, made with fma's, which may be an ulp off (constant_powers._cube)."""
    if n == 3 and "fma" in host_features():
        tiny = np.abs(exact) < 2.0 ** -100
        assert ulp_error(got[tiny], exact[tiny]) <= 1
        got, exact = got[~tiny], exact[~tiny]
    np.testing.assert_array_equal(got, exact)


def test_a_float32_cube_by_fma_is_the_rounded_float64_cube():
    """Random bit patterns, the range where the cube is subnormal or barely normal,
    and where it or lo*x overflows (from 2**43 and 2**51), with the specials."""
    rng = np.random.default_rng(0)
    patterns = rng.integers(0, 2 ** 32, 200_000, dtype=np.uint64).astype(np.uint32)
    small = 10.0 ** rng.uniform(-16, -10, 100_000) * rng.choice([-1, 1], 100_000)
    large = 2.0 ** rng.uniform(42, 66, 20_000) * rng.choice([-1, 1], 20_000)
    x = np.concatenate([patterns.view(np.float32), small.astype(np.float32),
                        large.astype(np.float32), np.array(SPECIAL, np.float32)])
    with np.errstate(all="ignore"):
        got, native = native_power(x, 3, "operator")
        exact = (x.astype(np.float64) ** 3).astype(np.float32)
    assert_rounded_as_float64(got, exact, 3)
    assert_same_signs(got, exact)
    assert ("llvm.fma" in native.llvm_ir) == ("fma" in host_features())


@given(st.data(), st.sampled_from([-1, 0, 1, 2, 3, 3.0, -0.5, 1.5]))
def test_float64_chains_stay_within_an_ulp_of_numpy(data, n):
    x = with_specials(data.draw(arrays(np.float64, shapes(min_side=1))))
    with np.errstate(all="ignore"):
        got, _ = native_power(x, n, "operator")
        expected = x ** n
    nonfinite = ~np.isfinite(expected) | (expected == 0)
    np.testing.assert_array_equal(got[nonfinite], expected[nonfinite])
    assert_same_signs(got, expected)
    assert ulp_error(got, expected) <= 1


@given(st.data(), st.sampled_from([np.int32, np.int64]),
       st.sampled_from([0, 1, 2, 3, 5, 13, 64]))
def test_integer_powers_wrap_exactly_as_numpy(data, dtype, n):
    x = data.draw(arrays(dtype, shapes(min_side=1)))
    got, _ = native_power(x, n, "ufunc")
    expected = np.power(x, n)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype, n", [(np.float32, 3), (np.float32, -16), (np.float64, 3),
                                      (np.float64, -1), (np.int64, 13), (np.float32, 2.5),
                                      (np.float32, -0.5), (np.float16, -15.5),
                                      (np.float64, 1.5), (np.float64, -0.5)])
def test_small_integer_exponents_call_no_pow(dtype, n):
    _, native = native_power(np.ones(64, dtype), n, "operator")
    assert "pow" not in native.llvm_ir.lower().replace("power", "")


@pytest.mark.parametrize("dtype, n", [(np.float64, 4), (np.float64, -2), (np.float32, 17),
                                      (np.float32, 16.5), (np.float64, 2.5),
                                      (np.float64, -1.5), (np.float32, 2.25)])
def test_exponents_a_chain_cannot_match_stay_with_pow(dtype, n):
    # float64 x**4 would round three times (2 ulp); 1/(x*x) loses subnormal results.
    x = np.array([2e154 if dtype == np.float64 else 2e30, 1.5, -3.0, 0.0], dtype)
    with np.errstate(all="ignore"):
        got, native = native_power(x, n, "operator")
        expected = x ** n
    assert "pow" in native.llvm_ir
    assert ulp_error(got, expected) <= 1
    np.testing.assert_array_equal(got[expected == 0], expected[expected == 0])


@pytest.mark.parametrize("n", [np.inf, -np.inf, np.nan, 1e300])
def test_exponents_that_are_no_small_integers_stay_with_pow(n):
    # found by the fuzzer: float_power(False, inf) failed to compile
    x = np.array([0.0, -0.0, 0.5, 1.0, 2.0, np.nan])
    with np.errstate(all="ignore"):
        got, _ = native_power(x, n, "ufunc")
        expected = np.power(x, n)
    np.testing.assert_array_equal(got, expected)
