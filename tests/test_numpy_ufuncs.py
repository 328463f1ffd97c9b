"""The ufuncs jitflow.numpy builds from other primitives (arithmetic.py,
transcendental.py) against NumPy's: dtypes under NEP 50 (Python numbers too), values
with NaN, infinities and signed zeros, errors, and derivatives."""
import math

import numpy as np
import pytest
from hypothesis import assume, strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import NATIVE_ULPS, assert_same, given_per_backend
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import CORE_DTYPES as DTYPES, arrays, broadcastable_pair

pytestmark = pytest.mark.usefixtures("backend")

EXACT_UNARY = ["fabs", "reciprocal", "trunc", "fix", "rint", "degrees", "radians",
               "deg2rad", "rad2deg", "signbit", "modf", "spacing"]
# (copysign is a primitive: tests/test_ops.py and the fuzzer check it)
EXACT_BINARY = ["fmax", "fmin", "fmod", "heaviside"]
TRANSCENDENTAL_UNARY = ["exp2", "sinh", "cosh", "arcsinh", "arccosh", "arctanh"]
TRANSCENDENTAL_BINARY = ["logaddexp", "logaddexp2", "hypot", "float_power"]

# Within 2 ulp of NumPy on this machine's libm (measured on a million values); native
# code's exp, log1p and pow are within 4 ulp of the exact value themselves.
INTERPRETER_ULPS = 4


def operand(data, shape, label, integers=False):
    """An array of any dtype (with the special values), or a Python number."""
    numbers = [0, 1, -2, 2**40, True] + ([] if integers else
                                         [0.5, -0.0, math.inf, math.nan, 1e300])
    if data.draw(st.integers(0, 4), label=f"{label} is a number") == 0:
        return data.draw(st.sampled_from(numbers), label=label)
    dtypes = [d for d in DTYPES if d.kind != "f" or not integers]
    dtype = data.draw(st.sampled_from(dtypes), label=f"dtype of {label}")
    return data.draw(arrays(dtype, shape), label=label)


def tolerance(name, args):
    if name not in TRANSCENDENTAL_UNARY + TRANSCENDENTAL_BINARY:
        return {}
    ulps = NATIVE_ULPS if jitflow.config.backend == "native" else INTERPRETER_ULPS
    if name in ("logaddexp", "logaddexp2"):
        # the result may cancel (-0.5 + log1p(...)): rounding of the terms, not the sum
        with np.errstate(all="ignore"):
            larger = np.abs(np.nan_to_num(np.maximum(*map(np.asarray, args)).astype(
                np.float64), posinf=0, neginf=0)) + 1
        return {"ulps": ulps, "atol": 4 * ulps * float(np.finfo(np.float32).eps) * larger}
    return {"ulps": ulps}


@pytest.mark.parametrize("name", EXACT_UNARY + TRANSCENDENTAL_UNARY)
@given_per_backend(data=st.data())
def test_unary(name, data):
    x = operand(data, data.draw(hnp.array_shapes(min_dims=0, max_side=5)), "x")
    if name == "spacing" and np.spacing(np.asarray(x)).dtype == np.float16:
        with pytest.raises(TypeError, match="float16"):  # test_float16.py says why
            jitflow.function(jnp.spacing)(x)
        return
    check_program(lambda xp, x: getattr(xp, name)(x), x, what=name,
                  **tolerance(name, (x,)))


@pytest.mark.parametrize("name", EXACT_BINARY + TRANSCENDENTAL_BINARY)
@given_per_backend(data=st.data())
def test_binary(name, data):
    shape_x, shape_y = data.draw(broadcastable_pair(), label="shapes")
    x, y = operand(data, shape_x, "x"), operand(data, shape_y, "y")
    check_program(lambda xp, x, y: getattr(xp, name)(x, y), x, y, what=name,
                  **tolerance(name, (x, y)))


CORNERS = [0.0, -0.0, math.nan, math.inf, -math.inf, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0,
           -1.0, 1e-30, 20.0, 88.5, 89.3, 709.5, 710.3, 2.0**28, 3e38, 1e300, -1e300]


@pytest.mark.parametrize("name", EXACT_UNARY + TRANSCENDENTAL_UNARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_on_corner_values(name, dtype, backend):
    with np.errstate(all="ignore"):
        x = np.array(CORNERS, dtype)
        if name == "arctanh":
            x = np.concatenate([x, x / 1000])
    check_program(lambda xp, x: getattr(xp, name)(x), x, what=name,
                  **tolerance(name, (x,)))


@pytest.mark.parametrize("name", sorted(EXACT_BINARY + TRANSCENDENTAL_BINARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_on_corner_values(name, dtype, backend):
    with np.errstate(all="ignore"):
        x = np.array(CORNERS, dtype)
    x, y = np.meshgrid(x, x)
    check_program(lambda xp, x, y: getattr(xp, name)(x, y), x, y, what=name,
                  **tolerance(name, (x, y)))


def test_fmod_has_the_sign_of_the_dividend_and_zero_for_zero_divisors(backend):
    x = np.array([7, -7, 7, -7, 5, -2**31, 0], np.int32)
    y = np.array([3, 3, -3, -3, 0, -1, -4], np.int32)
    check_program(lambda xp, x, y: xp.fmod(x, y), x, y)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(jnp.fmod(x, y), [1, -1, 1, -1, 0, 0, 0])


def test_fmod_of_floats_is_cs_fmod(backend):
    x = np.array([7.5, -7.5, 7.5, -0.0, 1.0, np.inf, 5.0, 1e300, 3.0])
    y = np.array([2.0, 2.0, -2.0, 3.0, 0.0, 2.0, np.inf, 3.0, -np.nan])
    check_program(lambda xp, x, y: xp.fmod(x, y), x, y)


def test_running_products_and_nan_scans_match_numpy(backend):
    x = np.array([[1.5, 0.0, -2.0, np.nan, 0.5], [2.0, np.nan, 0.0, 0.0, -1.0]])
    for program in [lambda xp, x: xp.cumprod(x), lambda xp, x: xp.cumprod(x, axis=1),
                    lambda xp, x: xp.cumprod(x.astype(np.int32), 0),
                    lambda xp, x: xp.cumprod(x > 0, 1),
                    lambda xp, x: xp.cumprod(x, 1, dtype=np.float32),
                    lambda xp, x: xp.nancumsum(x, 1), lambda xp, x: xp.nancumprod(x),
                    lambda xp, x: xp.nanargmax(x, 1), lambda xp, x: xp.nanargmin(x, 0),
                    lambda xp, x: xp.nanargmax(x)]:
        check_program(program, x, rtol=1e-15)


def test_cumprod_of_a_long_axis_matches_numpy_to_rounding(backend):
    x = np.random.default_rng(0).uniform(0.9, 1.1, (3, 300))
    check_program(lambda xp, x: xp.cumprod(x, axis=1), x, rtol=1e-13)


def test_nanargmax_of_an_all_nan_slice_raises_as_numpy_does(backend):
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with pytest.raises(ValueError, match="All-NaN slice"):
        jnp.nanargmax(x, axis=1)
    compiled = jitflow.function(lambda x: (jnp.nanargmin(x[1:], 1), jnp.nanargmax(x, 1)))
    for _ in range(2):  # the first call and native code
        with pytest.raises(ValueError, match="All-NaN slice.*nanargmax") as raised:
            compiled(x)
        assert "test_numpy_ufuncs.py" in str(raised.value)
        compiled.wait()
    y = np.array([[np.nan, 2.0], [1.0, np.nan]])  # no slice all NaN
    assert_same(compiled(y)[1], np.nanargmax(y, 1))
    batched = jitflow.vmap(lambda row: jnp.nanargmax(row))
    with pytest.raises(ValueError, match="All-NaN slice"):
        batched(x)
    assert_same(batched(y), np.nanargmax(y, 1))


ZEROS = np.array([[1.3, 0.0, -0.7], [0.0, 0.0, 2.1], [-1.2, 0.4, 0.9]])
AWAY_FROM_KINKS = np.array([[1.3, 0.2, -0.7], [0.6, -0.3, 2.1], [-1.2, 0.4, 0.9]])


@pytest.mark.parametrize("function, x", [
    (lambda x: jnp.cumprod(x, axis=-1), ZEROS), (lambda x: jnp.cumprod(x), ZEROS),
    (lambda x: jnp.nancumprod(x, axis=0), ZEROS),
    (lambda x: jnp.modf(x)[0], AWAY_FROM_KINKS),
    (lambda x: jnp.copysign(x, x[::-1]), AWAY_FROM_KINKS),
    (lambda x: jnp.fmod(x, 0.7 + x * x), AWAY_FROM_KINKS)])
def test_derivatives_of_scans_and_sign_functions(function, x, backend):
    """cumprod's derivative is right where the input holds zeros, too."""
    check_grads(function, (x,), order=2 if backend == "interpreter" else 1)
    check_grads(jitflow.function(function), (x,), order=1)


def test_ufuncs_numpy_computes_in_float16_give_float16(backend):
    check_program(lambda xp, x: xp.sinh(x), np.array([True, False]), ulps=1)


def test_dtype_argument(backend):
    x = np.array([0.5, -1.5, 3.0], np.float64)
    check_program(lambda xp, x: xp.sinh(x, dtype=np.float32), x, ulps=NATIVE_ULPS)
    check_program(lambda xp, x: xp.fmax(x, 1, dtype=np.float32), x)


# --- derivatives ---------------------------------------------------------------------------

def floats(low, high, shape):
    return hnp.arrays(np.float64, shape,
                      elements=st.floats(low, high).filter(lambda v: abs(v) > 0.05))


DERIVATIVES = {  # name: (function, its arguments' range)
    "sinh": (jnp.sinh, (-30, 30)), "cosh": (jnp.cosh, (-30, 30)),
    "arcsinh": (jnp.arcsinh, (-1e3, 1e3)), "arccosh": (jnp.arccosh, (1.1, 1e3)),
    "arctanh": (jnp.arctanh, (-0.95, 0.95)), "exp2": (jnp.exp2, (-20, 20)),
    "fabs": (jnp.fabs, (-5, 5)), "degrees": (jnp.degrees, (-5, 5)),
    "radians": (jnp.radians, (-5, 5)), "reciprocal": (jnp.reciprocal, (0.2, 5)),
    "logaddexp": (jnp.logaddexp, (-30, 30)), "logaddexp2": (jnp.logaddexp2, (-30, 30)),
    "hypot": (jnp.hypot, (-5, 5)), "float_power": (jnp.float_power, (0.2, 3)),
    "fmax": (jnp.fmax, (-5, 5)), "fmin": (jnp.fmin, (-5, 5)),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
@given_per_backend(data=st.data(), ci_examples=12)
def test_derivatives(name, data):
    fn, (low, high) = DERIVATIVES[name]
    nin = getattr(np, name).nin
    shape = data.draw(st.sampled_from([(3,), (2, 2)]), label="shape")
    args = tuple(data.draw(floats(low, high, shape), label=f"x{i}") for i in range(nin))
    # away from the kinks of fmax, fmin (ties) and hypot (|x| = |y|)
    assume(nin == 1 or np.all(np.abs(np.abs(args[0]) - np.abs(args[1])) > 1e-3))
    check_grads(fn, args, order=2, rtol=1e-4, atol=1e-4)
    check_grads(jitflow.function(fn), args, order=1, rtol=1e-4, atol=1e-4)


@given_per_backend(x=hnp.arrays(np.float64, 2, elements=st.floats(-3, 3)))
def test_logaddexp_of_equal_operands_splits_the_derivative(x):
    grads = jitflow.grad(lambda a, b: jnp.sum(jnp.logaddexp(a, b)), argnums=(0, 1))
    gx, gy = jitflow.function(grads)(x, x)
    np.testing.assert_allclose(gx, 0.5)
    np.testing.assert_allclose(gy, 0.5)


def test_derivatives_are_finite_past_the_ranges_where_a_formula_overflows(backend):
    x = np.array([-800.0, -30.0, 0.0, 30.0, 710.0, 1e300])
    for fn in (jnp.sinh, jnp.cosh, jnp.arcsinh):
        gradient = jitflow.function(jitflow.grad(lambda x: jnp.sum(fn(x))))(x[:-1] / 2)
        assert np.all(np.isfinite(gradient)), (fn.__name__, gradient)
    gradient = jitflow.function(jitflow.grad(lambda x: jnp.sum(jnp.arcsinh(x))))(x)
    np.testing.assert_allclose(gradient, 1 / np.hypot(1, x))  # 1 / sqrt(1 + x**2)


# --- rounding and replacing ----------------------------------------------------------------

@given_per_backend(data=st.data())
def test_round_and_nan_to_num(data):
    x = operand(data, data.draw(hnp.array_shapes(min_dims=0, max_side=5)), "x")
    decimals = data.draw(st.integers(-2, 3), label="decimals")
    if np.asarray(x).dtype.kind != "b" or decimals == 0:  # (bool: NumPy raises)
        check_program(lambda xp, x: xp.round(x, decimals), x, what="round")
        check_program(lambda xp, x: xp.around(x, decimals), x, what="around")
    fill = data.draw(st.sampled_from([{}, {"nan": 1.5, "posinf": 7, "neginf": -0.0}]),
                     label="fill")
    check_program(lambda xp, x: xp.nan_to_num(x, **fill), x, what="nan_to_num")


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int64", "uint64"])
def test_round_of_integers_to_tens_goes_through_float64_as_numpys(backend, dtype):
    """uint8 255 rounds to 260, which wraps to 4; half to even: 15 and 25 to 20."""
    x = np.array([15, 25, 255, 127, 0, 994, 7], np.int64).astype(dtype)
    for decimals in (-1, -2, -400):
        with np.errstate(invalid="ignore"):
            expected = np.round(x, decimals)
        result = jitflow.function(lambda x: np.round(x, decimals))(x)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)


def test_shifts_and_ldexp_at_their_edges(backend):
    """Shift counts of the width and beyond, and negative ones, give NumPy's 0 (or -1
    shifting a negative number right); ldexp is exact into the subnormals and
    saturates, with an exponent beyond int32 too."""
    x = np.array([1, -1, 5, -8, 2**30, -2**31, 7, 3], np.int32)
    count = np.array([0, 1, 31, 32, 2, 40, -1, 3], np.int32)
    check_program(lambda xp, x, n: (x << n, x >> n, xp.left_shift(x, 3),
                                    xp.bitwise_right_shift(x.astype(np.int64), 63)),
                  x, count)
    y = np.array([1.5, -0.0, 3.0, 1e-310, 1e308, np.inf, np.nan, 0.75])
    n = np.array([3, 5, -1077, 2, 2, 1, 1, 2**40])
    check_program(lambda xp, y, n: (xp.ldexp(y, n), xp.ldexp(y.astype(np.float32), 3),
                                    xp.ldexp(n[:3], 2)), y, n)


def test_float_power_of_a_half_is_pow_not_sqrt(backend):
    # found by the program fuzzer: NumPy's power of a scalar 0.5 is sqrt (-0.0 -> -0.0,
    # -inf -> nan), its float_power is pow (-0.0 -> 0.0, -inf -> inf)
    x = np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, -2.0, 4.0])
    for exponent in (0.5, np.full(7, 0.5)):
        with np.errstate(invalid="ignore"):
            expected = np.float_power(x, exponent)
        got = jitflow.function(lambda x, e: np.float_power(x, e))(x, exponent)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
