"""The native backend: results equal the interpreter's, views cost no copies, the memory
plan reuses buffers, the call boundary checks arguments, kernels report errors."""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import jitflow
import jitflow.numpy as jnp
from jitflow.codegen import NativeGraph
from jitflow.codegen.views import collapse
from jitflow.ir.interpret import eval_graph
from strategies import arrays, shapes


def compile_pair(fn, *args):
    graph = jitflow.optimize(jitflow.function(fn).trace(*args))
    return graph, NativeGraph(graph, "f")


def assert_same_as_interpreter(fn, *args):
    graph, native = compile_pair(fn, *args)
    for got, want in zip(native(list(args)), eval_graph(graph, list(args))):
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    return native


def test_collapse_merges_only_axes_every_operand_walks_contiguously():
    assert collapse((2, 3, 4), (12, 4, 1), (12, 4, 1)) == ((24,), [(1,), (1,)])
    assert collapse((2, 3, 4), (12, 4, 1), (0, 0, 1)) == ((6, 4), [(4, 1), (0, 1)])
    assert collapse((2, 3, 4), (1, 2, 6)) == ((2, 3, 4), [(1, 2, 6)])
    assert collapse((2, 1, 4), (4, 4, 1)) == ((8,), [(1,)])


@given(st.data())
def test_views_read_strided_without_copies(data):
    shape = data.draw(shapes(min_dims=2, max_dims=3, min_side=1))
    x = data.draw(arrays(np.float64, shape))
    native = assert_same_as_interpreter(
        lambda x: (x.T * 2, x[::-1, ::2] + 1, jnp.broadcast_to(x[:1], x.shape) - x), x)
    # transpose, slice and broadcast_to lower to index arithmetic, not to copy loops
    assert native.llvm_ir.count(".loop:") <= 3 * x.ndim


def test_memory_plan_reuses_dead_buffers():
    def scans(x):  # cumsum is not elementwise: every step needs a buffer of its own
        for _ in range(6):
            x = jnp.cumsum(x, axis=0)
        return x
    native = assert_same_as_interpreter(scans, np.arange(1000.0))
    one_buffer = 1000 * 8
    assert native.workspace_size == 2 * one_buffer  # 5 intermediates, 2 alive at once


def test_elementwise_loops_are_vectorized():
    _, native = compile_pair(lambda x, y: x * y + 1.0, np.ones(1024, np.float32),
                             np.ones(1024, np.float32))
    assert re.search(r"<(4|8|16) x float>", native.compiled.optimized_ir)


def test_arguments_are_checked_before_native_code_runs():
    _, native = compile_pair(lambda x: x + 1, np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"argument 0 is float64\[3, 2\], compiled for f64\[2,3\]"):
        native([np.ones((3, 2))])
    with pytest.raises(TypeError, match="argument 0 is float32"):
        native([np.ones((2, 3), np.float32)])
    strided = np.arange(12.0).reshape(2, 6)[:, ::2]
    np.testing.assert_array_equal(native([strided])[0], strided + 1)


def test_out_of_bounds_gather_raises_and_never_reads_outside():
    _, native = compile_pair(lambda x, i: x[i], np.ones(4), np.array([0, 1]))
    np.testing.assert_array_equal(native([np.arange(4.0), np.array([3, -4])])[0], [3.0, 0.0])
    for bad in ([4, 0], [0, -5], [2 ** 40, 0]):
        with pytest.raises(IndexError, match="out of bounds"):
            native([np.arange(4.0), np.array(bad)])


def test_integer_power_with_negative_exponent_raises():
    _, native = compile_pair(lambda x, y: x ** y, np.ones(3, np.int64), np.ones(3, np.int64))
    np.testing.assert_array_equal(native([np.array([2, 3, -2]), np.array([10, 0, 3])])[0],
                                  [1024, 1, -8])
    with pytest.raises(ValueError, match="negative integer powers"):
        native([np.array([2, 3, 4]), np.array([1, -1, 2])])


def test_jitflow_function_runs_native_code_when_configured(monkeypatch):
    monkeypatch.setattr(jitflow.config, "backend", "native")
    f = jitflow.function(lambda x: x * 2)
    np.testing.assert_array_equal(f(np.arange(3.0)), [0.0, 2.0, 4.0])
    (executable,) = f._cache.values()
    assert executable.backend == "native" and executable.native.workspace_size >= 0


INT_EDGE = np.array([7, -7, 7, -7, 5, np.iinfo(np.int32).min, 0], np.int32)
INT_DIVISOR = np.array([2, 2, -2, -2, 0, -1, 3], np.int32)
FLOAT_EDGE = np.array([7.5, -7.5, 1.0, -0.0, 5.0, np.nan, np.inf, -np.inf, 0.0])
FLOAT_DIVISOR = np.array([2.0, 2.0, 0.0, 3.0, np.inf, 1.0, 2.0, np.inf, -0.0])


@pytest.mark.parametrize("x, y", [(INT_EDGE, INT_DIVISOR), (FLOAT_EDGE, FLOAT_DIVISOR)])
def test_division_family_matches_numpy_bit_for_bit(x, y):
    _, native = compile_pair(lambda a, b: (a // b, a % b, np.maximum(a, b),
                                           np.minimum(a, b), np.sign(a)), x, y)
    with np.errstate(all="ignore"):
        expected = [x // y, x % y, np.maximum(x, y), np.minimum(x, y), np.sign(x)]
    for got, want in zip(native([x, y]), expected):
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes(), (got, want)


def test_float_to_int_casts_of_nan_and_overflow_match_numpy():
    x = np.array([np.nan, 1e20, -1e20, 3.7, -3.7, np.inf], np.float64)
    _, native = compile_pair(lambda a: (a.astype(np.int32), a.astype(np.int64),
                                        a.astype(np.bool_)), x)
    with np.errstate(all="ignore"):
        expected = [x.astype(np.int32), x.astype(np.int64), x.astype(np.bool_)]
    for got, want in zip(native([x]), expected):
        np.testing.assert_array_equal(got, want)


def test_indexing_an_empty_axis_raises_without_reading_it():
    # Every index into an axis of length 0 is out of bounds and raises, also from the
    # gradient's scatter; the kernels skip their loops then, as there is no element 0
    # to fall back to (run under valgrind to see no read of the empty buffer).
    x = np.zeros((0, 3), np.float32)
    with pytest.raises(IndexError, match="out of bounds"):
        jitflow.function(lambda x, i: x[i])(x, np.array([0, 0]))
    grad = jitflow.function(jitflow.grad(lambda x, i: np.sum(x[i])))
    with pytest.raises(IndexError, match="out of bounds"):
        grad(x, np.array([0]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, y_shape", [((3, 4), ()), ((3, 4), (1,)), ((3, 4), (3, 1)),
                                              ((3, 4), (1, 4)), ((1,), (1,)), ((), ())])
def test_power_by_one_half_follows_numpy_loops(dtype, x_shape, y_shape):
    # NumPy computes x ** 0.5 as sqrt(x) when its loop sees the exponent as one value:
    # sqrt(-inf) is NaN and sqrt(-0.0) is -0.0, where pow gives inf and 0.0.
    values = np.array([-np.inf, -0.0, 0.0, 4.0, np.nan, -2.0, np.inf, 2.0, 1e-30,
                       -1.0, 0.5, 9.0])
    x = np.resize(values, x_shape).astype(dtype)
    y = np.full(y_shape, 0.5, dtype)
    with np.errstate(all="ignore"):
        expected = np.power(x, y)
    for got in (jitflow.function(lambda x, y: x ** y)(x, y),
                jitflow.function(lambda x: x ** y)(x)):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        numbers = ~np.isnan(expected)  # a NaN's sign bit means nothing
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]))
        np.testing.assert_allclose(got, expected, rtol=2 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("literal", [np.nan, -0.0, 0.0, np.inf, -np.inf, -1.5, 2.0])
def test_comparisons_with_float_literals_follow_numpy(dtype, literal):
    # A literal's ordering key is computed when the code is generated (scalar.py):
    # the same answers as comparing two arrays, for NaN, both zeros and infinities.
    x = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, -1.5, 2.0, 1e-40, -3.0] * 2, dtype)

    def compare(x):
        return (x < literal, x <= literal, x == literal, x != literal, x > literal,
                x >= literal, np.maximum(x, literal), np.minimum(literal, x))
    native = NativeGraph(jitflow.optimize(jitflow.function(compare).trace(x)), "f")
    for got, expected in zip(native([x]), compare(x), strict=True):
        assert got.dtype == expected.dtype
        assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("fn", [lambda x, y: 2**31 + (x + y), lambda x, y: (x * y) - 2**40])
def test_python_int_out_of_bounds_raises_for_empty_fused_results(fn):
    # NumPy raises OverflowError whatever the size; a fused node with nothing to compute
    # still checks its Python ints.
    x, y = np.zeros(0, bool), np.zeros((2, 0), np.int32)
    with pytest.raises(OverflowError):
        fn(x, y)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        jitflow.function(fn)(x, y)
