"""Innermost loops as vector code: every length around the lane count (whole vectors, a
masked tail, both, neither), broadcasts, errors from existing lanes only, loops split
between threads at run time, and the short pipeline for modules of vector loops."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from fidelity import NATIVE_ULPS, assert_same
from jitflow.codegen import NativeGraph
from jitflow.codegen.jit.engine import SHORT_PIPELINE
from jitflow.codegen.lowering.parallel import MIN_PARALLEL_ELEMENTS
from jitflow.codegen.math import mathlib
from strategies import DTYPES, FLOAT_DTYPES, INT_DTYPES

# Around one vector of every dtype: 64 bytes are 8 to 64 lanes.
LENGTHS = [0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100]


def compile_native(fn, *args):
    return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(*args)), "f")


def random_array(rng, dtype, shape):
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        return rng.integers(-9, 10, shape).astype(dtype)
    values = rng.standard_normal(shape).astype(dtype) * 3
    values.flat[::7] = np.array([np.nan, -0.0, np.inf, 0.0, -np.inf])[
        np.arange(values.flat[::7].size) % 5]
    return values


def arithmetic(x, row, column):
    """Mixed dtypes (casts inside the vectors), a row and a column broadcast (lanes that
    are consecutive elements, lanes that are one element), compares stored as bools."""
    return (x * row - column, np.where(x > row, x, column), (x == column) | (row < 0),
            np.maximum(x, column))


def integer_division(x, row, column):
    return x // row, x % column, np.abs(x) ** np.abs(column % 4)


def transcendental(x, row, column):
    """One function per output: a sum of two would cancel their roundings' bound away."""
    return np.exp(x * row), np.tanh(x - column), np.log1p(np.abs(x)), np.sin(x)


@settings(max_examples=30, deadline=None)
@given(rows=st.sampled_from([1, 2, 5]), length=st.sampled_from(LENGTHS),
       dtypes=st.tuples(*[st.sampled_from(DTYPES)] * 3), seed=st.integers(0, 2 ** 16))
def test_lanes_and_tails_match_numpy_bit_for_bit(rows, length, dtypes, seed):
    rng = np.random.default_rng(seed)
    x, row, column = (random_array(rng, dtype, shape) for dtype, shape in
                      zip(dtypes, [(rows, length), (length,), (rows, 1)]))
    if {dtypes[0].kind, dtypes[1].kind} == {"b"}:
        return  # NumPy has no bool minus
    with np.errstate(all="ignore"):
        expected = arithmetic(x, row, column)
        for got, want in zip(compile_native(arithmetic, x, row, column)([x, row, column]),
                             expected, strict=True):
            assert_same(got, want)


@settings(max_examples=15, deadline=None)
@given(rows=st.sampled_from([1, 3]), length=st.sampled_from(LENGTHS),
       dtype=st.sampled_from(INT_DTYPES), seed=st.integers(0, 2 ** 16))
def test_integer_division_by_zero_and_powers_in_every_lane(rows, length, dtype, seed):
    # Masked-off lanes divide too: by zero, which must stay as harmless as NumPy's 0.
    rng = np.random.default_rng(seed)
    x, row, column = (random_array(rng, dtype, shape)
                      for shape in [(rows, length), (length,), (rows, 1)])
    with np.errstate(all="ignore"):
        expected = integer_division(x, row, column)
        for got, want in zip(compile_native(integer_division, x, row, column)(
                [x, row, column]), expected, strict=True):
            assert_same(got, want)


@pytest.mark.parametrize("route", ["libmvec", "inline"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_math_functions_on_vectors_of_both_routes(route, dtype):
    if route == "libmvec" and not mathlib.has_libmvec():
        pytest.skip("no libmvec here")
    rng = np.random.default_rng(1)
    mathlib.set_route(route)
    try:
        for length in (5, 16, 37):
            x, row, column = (random_array(rng, np.dtype(dtype), shape)
                              for shape in [(3, length), (length,), (3, 1)])
            native = compile_native(transcendental, x, row, column)
            with np.errstate(all="ignore"):
                for got, want in zip(native([x, row, column]),
                                     transcendental(x, row, column), strict=True):
                    assert_same(got, want, ulps=NATIVE_ULPS)
    finally:
        mathlib.set_route(None)


def test_errors_come_from_existing_lanes_only():
    def power(x, y):
        return x ** y
    x = np.arange(17, dtype=np.int64)
    fine = np.zeros(17, np.int64)
    native = compile_native(power, x, fine)
    assert_same(native([x, fine])[0], x ** fine)
    # 3 lanes of 8, the others masked: loaded as 0, their exponent y - 1 is negative.
    def power_of_less(x, y):
        return x ** (y - 1)
    short = compile_native(power_of_less, x[:3], fine[:3] + 1)
    assert_same(short([x[:3], fine[:3] + 1])[0], np.ones(3, np.int64))
    last = fine.copy()
    last[16] = -1  # the one lane of the tail
    with pytest.raises(ValueError, match="negative integer powers"):
        native([x, last])


def test_a_loop_split_between_threads_runs_its_tail_once(monkeypatch):
    monkeypatch.setenv("JITFLOW_THREADS", "2")
    x = np.linspace(-1, 1, 2 * MIN_PARALLEL_ELEMENTS + 5, dtype=np.float32)
    native = compile_native(lambda x: x * 3 - 1, x)
    assert "chunk.loop" in native.llvm_ir  # the count is each thread's share
    assert_same(native([x])[0], x * np.float32(3) - np.float32(1))


@pytest.mark.parametrize("dtype, vector", [(np.float32, "<16 x float>"),
                                           (np.float64, "<8 x double>")])
def test_modules_of_vector_loops_take_the_short_pipeline(dtype, vector):
    x = np.ones((33, 17), dtype)
    native = compile_native(lambda x, y: (x * 2 + y, np.exp(x)), x, x)
    assert native.compiled._speed_levels == [SHORT_PIPELINE]
    assert f"load {vector}" in native.compiled.optimized_ir
    # Reading x across its rows leaves a scalar loop, for LLVM's vectorizer to try.
    transposed = compile_native(lambda x: x.T * 2, x)
    assert transposed.compiled._speed_levels == [3]
    assert_same(transposed([x])[0], x.T * 2)
