"""The narrow and unsigned integer dtypes (int8, int16, uint8, uint16, uint32, uint64)
against NumPy 2: promotion with every other dtype (NEP 50, Python ints included, with
NumPy's OverflowError for one the array's dtype cannot hold), arithmetic with unsigned
division and shifts, casts both ways, reductions that widen as NumPy's do, indexing and
writes, matmul. Each program runs eagerly, traced with jitflow.numpy and traced through
NumPy's own functions (numpy_programs.check_program), on both backends.

Casting a float outside the integer dtype's range (or NaN) is undefined in C, and NumPy
gives different results there for uint32 depending on whether its SIMD loop or its
scalar loop converts the element; jitflow gives x86's answer through int64 (or, for
int8/int16/uint8/uint16, through int32), which agrees with NumPy for every other dtype
but is not checked here."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import given_per_backend
from numpy_programs import check_program
from strategies import DTYPES, SMALL_INT_DTYPES, arrays, broadcastable_pair

pytestmark = pytest.mark.usefixtures("backend")

BINARY = {
    "add": lambda xp, x, y: x + y,
    "subtract": lambda xp, x, y: x - y,
    "multiply": lambda xp, x, y: x * y,
    "true_divide": lambda xp, x, y: x / y,
    "floor_divide": lambda xp, x, y: x // y,
    "remainder": lambda xp, x, y: x % y,
    "fmod": lambda xp, x, y: xp.fmod(x, y),
    "power": lambda xp, x, y: xp.power(x, y),
    "maximum": lambda xp, x, y: xp.maximum(x, y),
    "minimum": lambda xp, x, y: xp.minimum(x, y),
    "less": lambda xp, x, y: x < y,
    "greater_equal": lambda xp, x, y: x >= y,
    "equal": lambda xp, x, y: x == y,
    "not_equal": lambda xp, x, y: x != y,
    "bitwise_and": lambda xp, x, y: x & y,
    "bitwise_or": lambda xp, x, y: x | y,
    "bitwise_xor": lambda xp, x, y: x ^ y,
    "left_shift": lambda xp, x, y: x << y,
    "right_shift": lambda xp, x, y: x >> y,
    "where": lambda xp, x, y: xp.where(x > y, x, y),
}
UNARY = {
    "negative": lambda xp, x: -x,
    "absolute": lambda xp, x: xp.abs(x),
    "sign": lambda xp, x: xp.sign(x),
    "invert": lambda xp, x: ~x,
    "square": lambda xp, x: xp.square(x),
    "floor": lambda xp, x: xp.floor(x),
    "logical_not": lambda xp, x: xp.logical_not(x),
}
REDUCTIONS = {
    "sum": lambda xp, x: xp.sum(x),
    "sum axis 0": lambda xp, x: xp.sum(x, axis=0),
    "prod": lambda xp, x: xp.prod(x, axis=-1),
    "mean": lambda xp, x: xp.mean(x),
    "max": lambda xp, x: xp.max(x, axis=0),
    "min": lambda xp, x: xp.min(x),
    "argmax": lambda xp, x: xp.argmax(x, axis=-1),
    "argmin": lambda xp, x: xp.argmin(x),
    "cumsum": lambda xp, x: xp.cumsum(x, axis=0),
    "clip": lambda xp, x: xp.clip(x, 1, 100),
}
# Python ints inside and outside each new dtype's range: NumPy 2 raises OverflowError
# when the int does not fit the array's dtype, except in comparisons (exact).
PYTHON_INTS = [0, 1, 7, -1, 127, 128, -129, 255, 256, 32767, 65536, -32769, 2**32, 2**40,
               -2**40, 2**63 - 1]


def _small_int_dtype(data, label):
    return data.draw(st.sampled_from(SMALL_INT_DTYPES), label=label)


def _corners(dtype):
    """Values of `dtype` where its arithmetic is most likely to go wrong: the extremes,
    zero (a divisor), one, and small shift counts."""
    if dtype.kind == "b":
        return np.array([True, False, True, False, True, True, False, False])
    if dtype.kind == "f":  # 1e30: a float16's is inf
        with np.errstate(over="ignore"):
            return np.array([0.0, -2.5, 3.0, np.nan, -np.inf, 1e30, 7.0, -0.0], dtype)
    info = np.iinfo(dtype)
    return np.array([info.min, info.max, 0, 1, 3, 7, info.max // 3, info.min // 5 + 2],
                    dtype)


def _all_binary_ops(xp, x, y):
    """Every op of BINARY but power (whose negative exponents raise) on x and y."""
    return tuple(program(xp, x, y) for name, program in BINARY.items() if name != "power")


SMALL_NAMES = {str(d) for d in SMALL_INT_DTYPES}


@pytest.mark.parametrize("pair", [(x, y) for x in DTYPES for y in DTYPES
                                  if str(x) in SMALL_NAMES or str(y) in SMALL_NAMES],
                         ids=lambda pair: f"{pair[0]}-{pair[1]}")
def test_binary_ops_on_every_dtype_pair(pair, backend):
    """Each pair with a new integer dtype on one side, on the corner values."""
    x, y = _corners(pair[0]), _corners(pair[1])[::-1].copy()
    check_program(_all_binary_ops, x, y, what=f"{pair[0]} and {pair[1]}")


@given_per_backend(data=st.data())
def test_binary_ops_with_every_dtype(data):
    """A new integer dtype against any dtype, either side, broadcast: values and NumPy
    2's dtype."""
    name = data.draw(st.sampled_from(sorted(BINARY)), label="op")
    shape_x, shape_y = data.draw(broadcastable_pair(max_dims=2), label="shapes")
    small = _small_int_dtype(data, "dtype of the integer operand")
    other = data.draw(st.sampled_from(DTYPES), label="dtype of the other operand")
    x = data.draw(arrays(small, shape_x), label="x")
    y = data.draw(arrays(other, shape_y), label="y")
    if data.draw(st.booleans(), label="swapped"):
        x, y = y, x
    check_program(BINARY[name], x, y, what=name)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "floor_divide",
                                  "remainder", "maximum", "less", "equal", "right_shift"])
@given_per_backend(data=st.data())
def test_python_ints_follow_nep_50(name, data):
    """A Python int takes the array's dtype when it fits and raises OverflowError when
    it does not; comparisons are exact whatever its size."""
    dtype = _small_int_dtype(data, "dtype")
    x = data.draw(arrays(dtype, (3,)), label="x")
    number = data.draw(st.sampled_from(PYTHON_INTS), label="number")
    program = BINARY[name]
    if data.draw(st.booleans(), label="number first"):
        check_program(lambda xp, x: program(xp, number, x), x, what=f"{number} {name} x")
    else:
        check_program(lambda xp, x: program(xp, x, number), x, what=f"x {name} {number}")


@pytest.mark.parametrize("dtype", SMALL_INT_DTYPES, ids=str)
def test_python_int_passed_in_is_checked_at_run_time(dtype, backend):
    """A Python int argument is known only at run time: native code checks it there."""
    add = jitflow.function(lambda x, n: x + n)
    x = np.array([1, 2], dtype)
    assert add(x, 3).dtype == dtype
    np.testing.assert_array_equal(add(x, 3), x + 3)
    too_big = int(np.iinfo(dtype).max) + 1 if dtype.itemsize < 8 else -1
    with pytest.raises(OverflowError, match=str(dtype)):
        np.add(x, too_big)
    with pytest.raises(OverflowError, match=str(dtype)):
        add(x, too_big)


@pytest.mark.parametrize("name", UNARY)
@given_per_backend(data=st.data())
def test_unary_ops(name, data):
    """negative and abs of unsigned values wrap as NumPy's; float results in NumPy's
    dtype (or a TypeError where that is float16)."""
    dtype = _small_int_dtype(data, "dtype")
    x = data.draw(arrays(dtype, data.draw(st.sampled_from([(), (5,), (2, 3)]))), label="x")
    check_program(UNARY[name], x, what=name)


@given_per_backend(data=st.data())
def test_casts_between_every_pair(data):
    """astype from and to a new integer dtype: wrapping, zero and sign extension,
    truncation of floats toward zero (values the target holds, as the module says)."""
    small = _small_int_dtype(data, "integer dtype")
    other = data.draw(st.sampled_from(DTYPES), label="other dtype")
    source, target = (small, other) if data.draw(st.booleans(), label="from") \
        else (other, small)
    if source.kind == "f" and target.kind in "iu":
        info = np.iinfo(target)
        x = data.draw(arrays(source, (4,), special=False, min_value=int(info.min),
                             max_value=min(float(info.max), 2.0**62)), label="x")
        x = np.where(np.trunc(x) > info.max, 0, x).astype(source)  # rounded up by float
    else:
        x = data.draw(arrays(source, (4,)), label="x")
    check_program(lambda xp, x: x.astype(target), x, what=f"{source} -> {target}")


@pytest.mark.parametrize("name", REDUCTIONS)
@given_per_backend(data=st.data())
def test_reductions_accumulate_as_numpy_does(name, data):
    """sum, prod and cumsum of small ints accumulate in int64 (unsigned in uint64), mean
    in float64; max, min, argmax and clip keep the dtype."""
    dtype = _small_int_dtype(data, "dtype")
    x = data.draw(arrays(dtype, data.draw(st.sampled_from([(4,), (3, 5), (2, 19)]))),
                  label="x")
    # a float64 sum past 2**53 rounds, by the order of its additions: NumPy's pairwise
    # against native code's blocks (15 uint64 values of 6.9e14: 1 ulp apart)
    tolerance = {"rtol": x.size * 2.0 ** -52} if name == "mean" else {}
    check_program(REDUCTIONS[name], x, what=name, **tolerance)


@pytest.mark.parametrize("dtype", SMALL_INT_DTYPES, ids=str)
def test_matmul_wraps_in_the_dtype(dtype, backend):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    x = rng.integers(info.min, info.max, (3, 5), dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, (5, 4), dtype=dtype, endpoint=True)
    check_program(lambda xp, x, y: xp.matmul(x, y), x, y, what="matmul")
    check_program(lambda xp, x, y: x @ y.astype(np.float32), x, y, what="mixed matmul")


@pytest.mark.parametrize("dtype", SMALL_INT_DTYPES, ids=str)
def test_indexing_and_writes(dtype, backend):
    x = np.arange(10).astype(dtype)
    positions = np.array([9, 0, 3], np.uint8)

    def program(xp, x):
        y = x.copy()
        y[2:4] = x[0]
        y[positions] += x[1]
        y[5] = 7
        return y[::2], xp.take(x, positions), x[positions[0]]
    check_program(program, x, what="indexing")


@pytest.mark.parametrize("dtype", SMALL_INT_DTYPES, ids=str)
def test_writing_a_python_int_checks_that_it_fits(dtype, backend):
    def program(xp, x):
        y = x.copy()
        y[0] = 300
        return y
    check_program(program, np.zeros(3, dtype), what="y[0] = 300")


def test_traced_uint64_indices_are_refused(backend):
    x = np.arange(5.0)
    with pytest.raises(TypeError, match="uint64"):
        jitflow.function(lambda x, i: x[i])(x, np.array([1], np.uint64))
    with pytest.raises(TypeError, match="uint64"):
        jitflow.function(lambda x, i: jnp.take(x, i))(x, np.array([1], np.uint64))


def test_integer_inputs_have_no_gradient(backend):
    with pytest.raises(TypeError):
        jitflow.grad(lambda x: jnp.sum(x * 2.0))(np.array([1, 2], np.uint8))
