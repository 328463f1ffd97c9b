"""gcd, lcm, frexp, bitwise_count and ufunc.reduceat against NumPy: values bit for bit
and dtypes, eagerly, traced and through NumPy's ufuncs, on drawn arrays of every dtype
(integer extremes and float subnormals too); bad inputs; derivatives."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from jitflow.testing import check_grads
from numpy_programs import check_program
from strategies import DTYPES, INT_DTYPES, SMALL_INT_DTYPES, arrays, broadcastable_pair, shapes

pytestmark = pytest.mark.usefixtures("backend")
# a third of the profile's examples on each backend: every one traces and compiles
DRAWN = settings(max_examples=max(5, settings.default.max_examples // 3))


def fibonacci_below(limit):
    a, b, found = 1, 1, []
    while b <= limit:
        found.append(b)
        a, b = b, a + b
    return found


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_gcd_and_lcm_of_extremes_and_slowest_operands(backend, dtype):
    info = np.iinfo(dtype)
    slowest = fibonacci_below(info.max)[-3:]  # the most steps of Euclid's algorithm
    values = np.array([0, 1, -1, 6, -9, 12, 2 ** 20, info.max, info.min, info.min + 1,
                       *slowest, -slowest[0]], dtype)
    x, y = np.meshgrid(values, values)
    check_program(lambda xp, x, y: (xp.gcd(x, y), xp.lcm(x, y)), x, y)


@settings(max_examples=min(10, settings.default.max_examples))  # each traces 700 nodes
@given(data=st.data())
def test_gcd_and_lcm_on_drawn_arrays(backend, data):
    shape_x, shape_y = data.draw(broadcastable_pair(), label="shapes")
    dtype_x, dtype_y = (data.draw(st.sampled_from(DTYPES), label=f"dtype {n}")
                        for n in "xy")
    x = data.draw(arrays(dtype_x, shape_x), label="x")
    y = data.draw(arrays(dtype_y, shape_y), label="y")
    if data.draw(st.booleans(), label="with a Python int"):
        check_program(lambda xp, x: xp.lcm(x, 12), x)
    else:
        check_program(lambda xp, x, y: (xp.gcd(x, y), xp.lcm(x, y)), x, y)


@pytest.mark.parametrize("dtype", SMALL_INT_DTYPES + INT_DTYPES + [np.bool_], ids=str)
def test_bitwise_count_of_extremes(backend, dtype):
    info = np.iinfo(dtype) if dtype != np.bool_ else np.iinfo(np.uint8)
    values = np.array([0, 1, 6, int(info.max), int(info.min), int(info.min) + 1,
                       int(info.max) // 3], object).astype(dtype)
    check_program(lambda xp, x: xp.bitwise_count(x), values)
    check_program(lambda xp, x: xp.bitwise_count(x[::-1, None]), values)


@DRAWN
@given(data=st.data())
def test_bitwise_count_on_drawn_arrays(backend, data):
    dtype = data.draw(st.sampled_from([d for d in DTYPES if np.dtype(d).kind in "biu"]),
                      label="dtype")
    check_program(lambda xp, x: xp.bitwise_count(x),
                  data.draw(arrays(dtype, data.draw(shapes())), label="x"))


@DRAWN
@given(data=st.data())
def test_frexp_on_drawn_arrays(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    x = data.draw(arrays(dtype, data.draw(shapes())), label="x")
    check_program(lambda xp, x: xp.frexp(x), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_frexp_of_subnormals_and_powers_of_two(backend, dtype):
    info = np.finfo(dtype)
    x = np.array([info.smallest_subnormal, -info.smallest_subnormal * 3,
                  info.smallest_normal, np.nextafter(info.smallest_normal, 0), info.max,
                  1.0, 2.0, 0.5, np.nextafter(dtype(1), 0), np.nextafter(dtype(2), 3),
                  -0.0, 0.0, np.inf, -np.inf, np.nan, 0.1], dtype)
    check_program(lambda xp, x: xp.frexp(x), x)
    mantissa, exponent = jitflow.function(jnp.frexp)(x)
    assert_same(np.signbit(mantissa), np.signbit(np.frexp(x)[0]))


REDUCEAT = {
    "add": lambda x: np.add.reduceat(x, [0, 2, 1, 3], axis=-1),
    "multiply": lambda x: np.multiply.reduceat(x, [1, 1, 0], axis=0),
    "maximum": lambda x: np.maximum.reduceat(x, [2, 0], axis=-1),
    "minimum": lambda x: np.minimum.reduceat(x, [0, 3], axis=-1),
    "add_dtype": lambda x: np.add.reduceat(x, [0, 2], axis=-1, dtype=np.float64),
}


@DRAWN
@given(data=st.data())
def test_reduceat_on_drawn_arrays(backend, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    shape = data.draw(shapes(min_dims=1, min_side=4, max_side=5), label="shape")
    x = data.draw(arrays(dtype, shape), label="x")
    name = data.draw(st.sampled_from(sorted(REDUCEAT)), label="name")
    with np.errstate(all="ignore"):
        expected = REDUCEAT[name](x)
    got = jitflow.function(REDUCEAT[name])(x)
    sums = name.startswith("add") or name == "multiply"
    assert_same(got, expected, what=name,
                **({"rtol": 1e-5} if sums and expected.dtype.kind == "f" else {}))


def test_bad_inputs(backend):
    x = np.arange(5.0)
    check_program(lambda xp, x: xp.gcd(x, x), x)  # no float loop: TypeError
    check_program(lambda xp, x: xp.frexp(x), np.array([True]))  # float16: refused
    with pytest.raises(IndexError, match=r"index 5 out-of-bounds in add.reduceat \[0, 5\)"):
        jitflow.function(lambda x: np.add.reduceat(x, [0, 5]))(x)
    with pytest.raises(TypeError, match="known when the function is traced"):
        jitflow.function(lambda x, i: np.add.reduceat(x, i))(x, np.array([0, 2]))
    with pytest.raises(TypeError, match="subtract.reduceat is not supported"):
        jitflow.function(lambda x: np.subtract.reduceat(x, [0, 2]))(x)
    check_program(lambda xp, x: xp.bitwise_count(x), x)  # no float loop: TypeError


def test_derivatives(backend):
    x = np.array([[0.7, -1.2, 2.3, 1.5], [0.3, 1.1, -0.4, 0.9]])
    order = 2 if backend == "interpreter" else 1
    for fn in (lambda x: jnp.frexp(x)[0] * 1.0,
               lambda x: np.add.reduceat(x * x, [0, 2, 1], axis=1),
               lambda x: np.multiply.reduceat(x, [1, 0], axis=0),
               lambda x: np.maximum.reduceat(x, [0, 2], axis=1)):
        check_grads(fn, (x,), order=order)
        check_grads(jitflow.function(fn), (x,), order=1)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
def test_reduceat_of_an_empty_axis(backend, name):
    # no indices fit an empty axis: NumPy's result is empty (found by the fuzzer)
    ufunc = getattr(np, name)
    for x in (np.zeros(0, bool), np.zeros((2, 0), np.int32)):
        assert_same(jitflow.function(lambda x: ufunc.reduceat(x, [], axis=-1))(x),
                    ufunc.reduceat(x, [], axis=-1))


def test_add_reduceat_keeps_the_sign_of_zero_slices(backend):
    # NumPy adds each slice from its first element: -0.0 + -0.0 is -0.0 (found by the
    # fuzzer), where np.sum of the same gives 0.0
    x = np.array([[-0.0, -0.0, 1.0, -1.0, -0.0], [0.0, -0.0, -0.0, 2.0, -0.0]], np.float32)
    for indices in ([0, 0, 1, 3], [1, 2, 4], [4, 0]):
        assert_same(jitflow.function(lambda x: np.add.reduceat(x, indices, axis=1))(x),
                    np.add.reduceat(x, indices, axis=1))


def test_add_reduceat_of_zero_slices_has_the_sums_derivative():
    # The sign fix of a slice of -0.0 alone once took -|sum|, whose derivative at 0 is
    # 0: jvp gave 0 where central differences gave the direction (found by the fuzzer)
    def sums(x):
        return np.add.reduceat(x, [0, 0, 1], axis=-1)
    for x in (np.array([-0.0, 0.0]), np.array([-0.0, -0.0]), np.array([0.0, -0.0])):
        direction = np.array([0.3, -0.7])
        _, tangent = jitflow.jvp(sums, (x,), (direction,))
        np.testing.assert_array_equal(tangent, [0.3, 0.3, -0.7])
        np.testing.assert_array_equal(jitflow.grad(lambda x: sums(x).sum())(x), [2.0, 1.0])
        check_grads(sums, (x,), order=2)
        assert_same(jitflow.function(sums)(x), np.add.reduceat(x, [0, 0, 1], axis=-1))


def test_gcd_and_lcm_of_uint64_values_past_int64s_end(backend):
    """Worked in uint64 itself: values past int64's end once came back wrapped."""
    largest = np.iinfo(np.uint64).max
    values = np.array([0, 1, 6, 2 ** 63, 2 ** 63 + 1, largest, largest - 1,
                       12200160415121876738, 7540113804746346429], np.uint64)
    x, y = np.meshgrid(values, values)
    check_program(lambda xp, x, y: (xp.gcd(x, y), xp.lcm(x, y)), x, y)
    check_program(lambda xp, x: (xp.gcd(x, 12), xp.lcm(x, 2 ** 63 - 1)), values)
    check_program(lambda xp, x: xp.gcd(x, -3), values)  # OverflowError, as in NumPy


def test_a_python_int_that_does_not_fit_raises_as_in_numpy(backend):
    """gcd(2**31, an int32 array) raises NumPy's OverflowError (it came back wrapped;
    found by the program fuzzer)."""
    x = np.array([0, 6], np.int32)
    with pytest.raises(OverflowError):
        np.gcd(2 ** 31, x)
    with pytest.raises(OverflowError):
        jitflow.function(lambda x: np.gcd(2 ** 31, x))(x)
    with pytest.raises(OverflowError):
        jitflow.function(lambda x, n: np.lcm(x, n))(x, 2 ** 31)
    np.testing.assert_array_equal(jitflow.function(lambda x: np.gcd(4, x))(x), np.gcd(4, x))
