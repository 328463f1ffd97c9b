"""Native reductions: fused regions, blocked vector accumulation and arg reductions give
NumPy's values (sums to rounding, everything else exactly), are deterministic, are as
accurate as NumPy's pairwise sums, and really run as vector code."""
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import NATIVE_SHARE, NATIVE_ULPS, assert_same, numpy_outcome
from jitflow.codegen import NativeGraph
from jitflow.codegen.jit.engine import SHORT_PIPELINE
from jitflow.codegen.jit.threads import thread_count
from jitflow.codegen.loops import row_loops
from jitflow.codegen.loops.regions import Region
from jitflow.ir.passes.fuse import fuse
from strategies import FLOAT_DTYPES, INT_DTYPES

# Row lengths around the vector width (16 floats), the 4-vector block and the
# 1024-element chunk, where the blocked loops have their edges.
SIDES = [0, 1, 2, 3, 7, 16, 17, 63, 64, 65, 100, 1024, 1025, 2100]
# Floats first: hypothesis draws the first entries most, and floats have the most rules.
ORDERED_DTYPES = FLOAT_DTYPES + INT_DTYPES + [np.dtype(np.bool_)]


def native_examples(test):
    """Every example compiles: native tests draw 1/NATIVE_SHARE of the profile's."""
    return settings(max_examples=max(1, settings.default.max_examples // NATIVE_SHARE))(test)


def compile_native(fn, *args):
    return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(*args)), "f")


def run_native(fn, *args):
    outputs = compile_native(fn, *args)(list(args))
    return outputs if len(outputs) > 1 else outputs[0]


@st.composite
def shapes_and_arrays(draw, dtype=None, max_size=6000):
    """An array of a shape with a few long sides, its elements drawn from a seeded
    generator (hypothesis would be slow on thousands of elements): floats are normal
    with NaN, +-inf, 0.0 and -0.0 sprinkled in; ints span their range."""
    dtype = np.dtype(dtype or draw(st.sampled_from(ORDERED_DTYPES), label="dtype"))
    ndim = draw(st.integers(1, 3), label="ndim")
    shape = tuple(draw(st.lists(st.sampled_from(SIDES), min_size=ndim, max_size=ndim)
                       .filter(lambda s: math.prod(s) <= max_size), label="shape"))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    special = draw(st.sampled_from([0.03, 0.0, 0.3]), label="special share")
    return _values(rng, dtype, shape, special)


def _values(rng, dtype, shape, special):
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    x = rng.standard_normal(shape).astype(dtype)
    corners = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype)
    where = rng.random(shape) < special
    x[where] = rng.choice(corners, int(where.sum()))
    return x


def axes_of(data, ndim):
    choice = data.draw(st.sampled_from(["none", "last", "first", "some"]), label="axes")
    if choice == "none":
        return None
    if choice == "last":
        return ndim - 1
    if choice == "first":
        return 0
    axes = data.draw(st.lists(st.integers(0, ndim - 1), min_size=1, unique=True),
                     label="axis tuple")
    return tuple(sorted(axes))


def sum_tolerance(x, axis, keepdims, result_dtype):
    """n roundings of the sum of magnitudes (fidelity.py), for float sums."""
    if np.dtype(result_dtype).kind != "f":
        return {}
    terms = np.abs(x.astype(result_dtype).astype(np.float64))
    magnitude = np.nan_to_num(np.sum(terms, axis=axis, keepdims=keepdims), posinf=0.0)
    count = x.size // max(magnitude.size, 1)
    return {"atol": count * float(np.finfo(result_dtype).eps) * magnitude}


# --- every reduction, every layout -------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
@native_examples
@given(data=st.data())
def test_reductions_match_numpy(name, data):
    x = data.draw(shapes_and_arrays(), label="x")
    axis = axes_of(data, x.ndim)
    keepdims = data.draw(st.booleans(), label="keepdims")
    expected, error = numpy_outcome(getattr(np, name), x, axis=axis, keepdims=keepdims)
    if error is not None:  # max of nothing
        with pytest.raises(type(error)):
            run_native(lambda x: getattr(jnp, name)(x, axis=axis, keepdims=keepdims), x)
        return
    got = run_native(lambda x: getattr(jnp, name)(x, axis=axis, keepdims=keepdims), x)
    tolerance = sum_tolerance(x, axis, keepdims, expected.dtype) if name == "sum" else {}
    assert_same(got, expected, zero_sign=name not in ("max", "min"), **tolerance)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@native_examples
@given(data=st.data())
def test_arg_reductions_match_numpy(name, data):
    x = data.draw(shapes_and_arrays(), label="x")
    if x.dtype.kind == "f" and data.draw(st.booleans(), label="ties"):
        x = np.round(x)  # many equal values, +-0.0 among them
    if x.dtype.kind == "i" and data.draw(st.booleans(), label="ties"):
        x = x % 3
    axis = data.draw(st.sampled_from([None, 0, x.ndim - 1]), label="axis")
    keepdims = data.draw(st.booleans(), label="keepdims")
    expected, error = numpy_outcome(getattr(np, name), x, axis=axis, keepdims=keepdims)
    if error is not None:
        return  # an empty axis: the trace refuses it, as tests/test_numpy.py checks
    got = run_native(lambda x: getattr(jnp, name)(x, axis=axis, keepdims=keepdims), x)
    assert_same(got, expected)


# --- fused regions ----------------------------------------------------------------------

def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logsumexp(x):
    peak = x.max(axis=-1, keepdims=True)
    return np.log(np.exp(x - peak).sum(axis=-1, keepdims=True)) + peak


def variance(x):
    return jnp.var(x, axis=-1)


def relu_max(x):  # a select feeding the max's select: the miscompile scalar.py avoids
    return np.maximum(x, 0).max(axis=-1), np.where(x < 0, x, 0).min(axis=-1)


def shared_tanh(x):
    t = np.tanh(x) * 2
    return t + 1, t.sum(axis=-1)


def column_weights(x):
    return (x * x[:1]).sum(axis=0), np.exp(x).max(axis=0)


def everything(x):
    return (x * 2).sum(), np.abs(x).max()


PROGRAMS = [softmax, logsumexp, variance, relu_max, shared_tanh, column_weights,
            everything]
TRANSCENDENTAL = {softmax, logsumexp, shared_tanh, column_weights}
# How many terms the program's sums add (the last axis's length, unless listed).
TERMS = {column_weights: lambda x: x.shape[0], everything: lambda x: x.size}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
@native_examples
@given(data=st.data())
def test_fused_regions_match_numpy(program, data):
    dtype = data.draw(st.sampled_from(["float32", "float64"]), label="dtype")
    x = data.draw(shapes_and_arrays(dtype, max_size=4000), label="x")
    x = np.where(np.isnan(x) | (x.size > 64), np.nan_to_num(x, posinf=3, neginf=-3), x)
    expected, error = numpy_outcome(program, x)
    if error is not None:
        return  # a max over an empty axis: the trace raises, as NumPy does
    got = run_native(program, x)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, (tuple, list)) else (got,)
    # Rounding errors scale with the magnitudes summed: the program run on |x| (sums of
    # |terms|, for these programs). Allow n roundings of that per sum over n terms, and
    # a few more for each transcendental function and division.
    magnitudes, _ = numpy_outcome(program, np.abs(x))
    magnitudes = magnitudes if isinstance(magnitudes, tuple) else (magnitudes,)
    eps = float(np.finfo(x.dtype).eps)
    terms = TERMS.get(program, lambda x: x.shape[-1])(x)
    rtol = (terms + 4 * NATIVE_ULPS) * eps
    for g, e, m in zip(got, expected, magnitudes):
        e, m = np.asarray(e), np.abs(np.asarray(m, np.float64))
        atol = rtol * np.maximum(np.nan_to_num(m, posinf=0.0), np.nan_to_num(np.abs(e)))
        assert_same(g, e, rtol=rtol, atol=atol, zero_sign=False,
                    ulps=NATIVE_ULPS if program in TRANSCENDENTAL else 0)


def test_empty_rows_and_no_rows():
    for shape in [(3, 0), (0, 5), (0, 0)]:
        x = np.ones(shape, np.float32)
        for fn in (lambda x: x.sum(axis=-1), lambda x: x.prod(axis=0),
                   lambda x: (x * 2).sum(), lambda x: np.exp(x) / np.exp(x).sum(axis=-1,
                                                                               keepdims=True)):
            assert_same(run_native(fn, x), fn(x))


def test_a_region_whose_outputs_are_all_empty_computes_nothing():
    """Its loops would walk an empty axis of an output whose other axes are not."""
    def fn(x, y):
        z = x + (y - 0.5)
        return z.sum(axis=0), -z
    x, y = np.zeros((4, 1, 0), np.float32), np.zeros(0)
    for actual, expected in zip(run_native(fn, x, y), fn(x, y), strict=True):
        assert_same(actual, expected)


# --- special values -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("length", [1, 5, 16, 17, 64, 100, 1025, 3000])
def test_max_and_min_keep_numpy_nan_inf_and_zero_rules(dtype, length):
    rows = []
    for at in sorted({0, length // 2, length - 1}):
        row = np.linspace(-1, 1, length).astype(dtype)
        row[at] = np.nan
        rows.append(row)
    rows.append(np.full(length, -np.inf, dtype))
    rows.append(np.full(length, np.inf, dtype))
    zeros = np.zeros(length, dtype)
    zeros[::2] = -0.0
    rows.append(zeros)
    x = np.stack(rows)
    got_max, got_min, got_argmax, got_argmin = run_native(
        lambda x: (x.max(axis=1), x.min(axis=1), x.argmax(axis=1), x.argmin(axis=1)), x)
    assert_same(got_max, x.max(axis=1), zero_sign=False)
    assert_same(got_min, x.min(axis=1), zero_sign=False)
    assert_same(got_argmax, x.argmax(axis=1))
    assert_same(got_argmin, x.argmin(axis=1))
    assert_same(run_native(lambda x: (x.max(), x.argmin()), x)[1], x.argmin())


SPECIAL = [np.nan, -np.inf, np.inf, 0.0, -0.0, 1.0, -1.0, 3.5]


@settings(max_examples=25)
@given(rows=st.integers(1, 11), columns=st.integers(2, 40), dtype=st.sampled_from(
    [np.float32, np.float64]), seed=st.integers(0, 2 ** 16))
def test_column_max_and_min_keep_numpys_nans_and_zero_signs(rows, columns, dtype, seed):
    # A column folds top to bottom as NumPy's maximum does: NaN from either side stays,
    # and a tie (0.0 against -0.0) takes the later element. (One column is one row in
    # memory, reduced in blocked lanes: zero signs are then left to the order.)
    x = np.random.default_rng(seed).choice(SPECIAL, (rows, columns)).astype(dtype)
    for fn in (lambda x: x.max(axis=0), lambda x: x.min(axis=0),
               lambda x: np.maximum(x, -0.0).max(axis=0), lambda x: (x * 2).min(axis=0)):
        assert_same(run_native(fn, x), fn(x))


def test_integer_sums_wrap_and_widen_like_numpy():
    big = np.full((3, 1000), 2 ** 62, np.int64)
    assert_same(run_native(lambda x: x.sum(axis=1), big), big.sum(axis=1))
    small = np.full((3, 1000), 2 ** 31 - 1, np.int32)
    assert_same(run_native(lambda x: x.sum(axis=1), small), small.sum(axis=1))
    flags = np.arange(3000).reshape(3, 1000) % 3 == 0
    assert_same(run_native(lambda x: (x.sum(axis=1), x.max(axis=1), x.min()), flags)[0],
                flags.sum(axis=1))


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "reversed", "fused"])
def test_float_products_multiply_in_numpys_order(layout):
    # One element after another in memory order (NumPy's nditer order; a reversed
    # axis still runs in index order): the same bits, and the same overflow. Blocked
    # lanes would multiply the large diagonal first, overflow to inf, and give NaN.
    diagonal = np.zeros((3, 3), np.float32)
    diagonal[[0, 1, 2], [0, 1, 2]] = [1.0550972e15, 5.8513728e16, 5.511746e6]
    rows = np.random.default_rng(3).uniform(0.5, 2, (5, 700)).astype(np.float32)
    view = {"contiguous": lambda x: x, "transposed": lambda x: x.T,
            "reversed": lambda x: x[:, ::-1], "fused": lambda x: x * np.float32(1.5)}[layout]
    for x in (diagonal, rows):
        for axis in (None, 0, 1, (0, 1)):
            expected = view(x).prod(axis=axis)
            got = run_native(lambda x: view(x).prod(axis=axis), x)
            assert got.tobytes() == expected.tobytes(), (x.shape, axis)


# --- determinism and accuracy ---------------------------------------------------------------

def test_a_row_sums_to_the_same_bits_wherever_it_is():
    x = np.random.default_rng(0).random((5, 3000)).astype(np.float32)
    rows = run_native(lambda x: x.sum(axis=1), x)
    alone = [run_native(lambda r: r.sum(), row.copy()) for row in x[:2]]
    assert rows[:2].tobytes() == np.array(alone, np.float32).tobytes()
    assert run_native(lambda x: x.sum(axis=1), x[1:]).tobytes() == rows[1:].tobytes()


@pytest.mark.parametrize("shape", [(11, 70), (9, 3, 5), (1000, 3), (6, 1)])
def test_column_sums_add_in_numpys_order(shape):
    # Each output slot folds its column top to bottom, as NumPy does (several rows per
    # pass, and a remainder): the same bits.
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    assert run_native(lambda x: x.sum(axis=0), x).tobytes() == x.sum(axis=0).tobytes()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(3, 10), (257, 10), (2, 4099, 16), (130, 7, 2, 3)])
def test_narrow_column_sums_fold_in_registers_in_numpys_order(shape, threads, monkeypatch):
    # The kept axis fits in one vector: each vector of output slots folds the whole
    # reduced axis, UNROLL rows per pass and the rest after, its slots in registers
    # without LLVM's loop passes; the rows' products are stored on the way.
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    fn = lambda x: (x * x, (x * x).sum(axis=-3 if len(shape) > 2 else 0), x.max(axis=0))
    native = compile_native(fn, x)
    assert set(native.compiled._speed_levels) == {SHORT_PIPELINE}
    for got, expected in zip(native([x]), fn(x)):
        assert got.tobytes() == expected.tobytes()


def test_large_float32_sums_are_as_accurate_as_numpys():
    x = np.random.default_rng(1).random(2 ** 20).astype(np.float32)
    exact = math.fsum(x.astype(np.float64))
    error = abs(float(run_native(lambda x: x.sum(), x)) - exact) / exact
    # NumPy's pairwise sum is off by ~3e-8 here; adding one by one, by ~4e-6.
    assert error < 3e-7


# --- the code is vector code ---------------------------------------------------------------

@pytest.mark.parametrize("fn, pattern", [
    (lambda x: x.sum(axis=1), r"fadd <16 x float>"),
    (lambda x: x.max(axis=1), r"fcmp ogt <16 x float>"),
    (lambda x: x.argmin(axis=1), r"fcmp olt <16 x float>"),
    (lambda x: np.exp(x).sum(), r"fadd <16 x float>"),
    (softmax, r"fdiv <\d+ x float>"),
])
def test_reductions_are_vectorized(fn, pattern):
    native = compile_native(fn, np.ones((64, 1024), np.float32))
    assert re.search(pattern, native.compiled.optimized_ir)


def test_row_regions_prefetch_the_next_row_in_a_later_phase(monkeypatch):
    # softmax reads x in its first two phases: the second prefetches the next row
    rows = np.random.default_rng(0).standard_normal((64, 1024)).astype(np.float32)
    rows[3, 5], rows[9] = np.nan, np.inf
    native = compile_native(softmax, rows)
    assert len(re.findall(r"call void @llvm.prefetch", native.compiled.optimized_ir)) >= 1
    monkeypatch.setattr(row_loops, "PREFETCH_ROW_BYTES", 1 << 30)
    plain = compile_native(softmax, rows)
    assert "llvm.prefetch" not in plain.compiled.optimized_ir
    np.testing.assert_array_equal(native([rows])[0], plain([rows])[0], strict=True)


@pytest.mark.parametrize("fn, shape", [
    (softmax, (64, 64)),                      # rows of 256 bytes: the prefetcher's
    (lambda x: x.sum(axis=1), (64, 1024)),    # one phase: no later one to hide it in
    (softmax, (1, 4096)),                     # one row: no next one
])
def test_rows_without_prefetches(fn, shape):
    native = compile_native(fn, np.ones(shape, np.float32))
    assert "llvm.prefetch" not in native.compiled.optimized_ir


def test_fused_regions_never_hold_a_whole_intermediate():
    x = np.ones((512, 1000), np.float32)
    # softmax keeps one row of exp (4000 bytes, rounded to the 64-byte alignment) per
    # thread that the row loop may be split between
    assert compile_native(softmax, x).workspace_size == 4032 * thread_count()
    assert compile_native(lambda x: (np.exp(x) * 2).sum(axis=1), x).workspace_size == 0
    assert compile_native(lambda x: (x * x).sum(axis=0), x).workspace_size == 0


# --- the schedule of a region -------------------------------------------------------------

def region_of(fn, *args):
    graph = fuse(jitflow.optimize(jitflow.function(fn).trace(*args)))
    (node,) = [n for n in graph.nodes if n.op == "fused"]
    return Region(node.subgraphs[0])


def test_softmax_keeps_exp_in_a_row_buffer():
    region = region_of(softmax, np.ones((4, 8), np.float32))
    assert region.rowwise and len(region.phases) == 3
    first, second, third = region.phases
    assert [n.op for n in first.reductions] == ["reduce_max"] and not first.evaluate
    assert [n.op for n in second.evaluate] == ["sub", "exp"]
    assert [n.op for n in third.evaluate] == ["div"]  # exp is read back, not recomputed
    assert [region.producer[v].op for v in region.buffered] == ["exp"]


def test_cheap_values_are_recomputed_not_buffered():
    def normalized(x):
        centered = x - x.mean(axis=-1, keepdims=True)
        return centered / (centered * centered).sum(axis=-1, keepdims=True)
    region = region_of(normalized, np.ones((4, 8)))
    assert not region.buffered
    assert [n.op for n in region.phases[-1].evaluate] == ["sub", "div"]
