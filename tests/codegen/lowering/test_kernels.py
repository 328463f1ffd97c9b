"""Repeated fused nodes share one kernel: the same bits as lowering each inline, on any
number of threads and across segments, with scratch, split nests and errors."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.lowering import kernels, lower
from jitflow.codegen.lowering.parallel import MIN_PARALLEL_ELEMENTS

WHOLE = 10 ** 9  # a segment budget no graph here reaches: one module
WIDTH = 16
SPLIT_ROWS = MIN_PARALLEL_ELEMENTS // WIDTH + 3  # large enough to split between threads


def compile_native(fn, args, monkeypatch, budget=WHOLE, threads=2, shared=True):
    monkeypatch.setattr(lower, "SEGMENT_INSTRUCTIONS", budget)
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    if not shared:
        monkeypatch.setattr(kernels.SharedKernels, "lower", lambda self, *args: False)
    return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(*args)), "f")


def kernel_uses(native):
    """{kernel name: (times defined, times called)} over all of a graph's modules."""
    text = "\n".join(native.llvm_irs)
    names = set(re.findall(r'@"(jitflow_kernel\.\d+)"', text))
    return {name: (len(re.findall(rf'define [^\n]*@"{re.escape(name)}"', text)),
                   len(re.findall(rf'call i32 @"{re.escape(name)}"', text)))
            for name in names}


def two_layers(x, w1, b1, w2, b2):
    """Two bias + relu regions, the same computation on the same shapes."""
    h = np.maximum(x @ w1 + b1, 0)
    return (np.maximum(h @ w2 + b2, 0),)


def two_softmaxes(x, y):
    """Row regions with row buffers (the exps are kept between phases)."""
    def softmax(z):
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return softmax(x), softmax(y)


def two_column_sums(x, y):
    return (x * x + 1).sum(axis=0), (y * y + 1).sum(axis=0)


def layer_inputs(rows, seed):
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal((WIDTH, WIDTH)).astype(np.float32) for _ in range(2)]
    biases = [rng.standard_normal(WIDTH).astype(np.float32) for _ in range(2)]
    return rng.standard_normal((rows, WIDTH)).astype(np.float32), weights[0], biases[0], \
        weights[1], biases[1]


def pair_inputs(rows, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((rows, WIDTH)).astype(np.float32) for _ in range(2))


CASES = {two_layers: layer_inputs, two_softmaxes: pair_inputs, two_column_sums: pair_inputs}


def same_bits(results, expected):
    return all(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
               for a, b in zip(results, expected, strict=True))


@settings(max_examples=10, deadline=None)
@given(fn=st.sampled_from(list(CASES)), rows=st.sampled_from([1, 5, 300, SPLIT_ROWS]),
       budget=st.sampled_from([1, WHOLE]), threads=st.sampled_from([1, 2, 3]),
       seed=st.integers(0, 2 ** 16))
def test_a_shared_kernel_gives_the_bits_of_inline_code(fn, rows, budget, threads, seed):
    args = CASES[fn](rows, seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        inline = compile_native(fn, args, monkeypatch, budget, threads, shared=False)
    with pytest.MonkeyPatch.context() as monkeypatch:
        shared = compile_native(fn, args, monkeypatch, budget, threads)
    assert not kernel_uses(inline)
    assert list(kernel_uses(shared).values()) == [(1, 2)]
    results = shared(list(args))
    assert same_bits(results, inline(list(args)))
    for result, expected in zip(results, fn(*args), strict=True):
        # (sums and matrix products may add in another order than NumPy's)
        np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-4)


def test_a_kernel_defined_in_one_segment_is_called_from_a_later_one(monkeypatch):
    args = layer_inputs(SPLIT_ROWS, 0)
    native = compile_native(two_layers, args, monkeypatch, budget=1)
    defined_in = [i for i, text in enumerate(native.llvm_irs) if "define" in text and
                  re.search(r'define [^\n]*@"jitflow_kernel\.0"', text)]
    called_in = [i for i, text in enumerate(native.llvm_irs)
                 if 'call i32 @"jitflow_kernel.0"' in text]
    assert len(defined_in) == 1 and len(called_in) == 2 and called_in[1] > defined_in[0]
    np.testing.assert_allclose(native(list(args))[0], two_layers(*args)[0], rtol=1e-4,
                               atol=1e-4)


def test_operands_laid_out_differently_get_kernels_of_their_own(monkeypatch):
    def same_body(x, y):
        return np.exp(x) + 1, np.exp(y.T) + 1
    args = pair_inputs(WIDTH, 1)
    native = compile_native(same_body, args, monkeypatch)
    assert sorted(kernel_uses(native).values()) == [(1, 1), (1, 1)]
    for result, expected in zip(native(list(args)), same_body(*args)):
        np.testing.assert_allclose(result, expected, rtol=2e-6)


def test_different_constants_do_not_share(monkeypatch):
    big = np.arange(WIDTH, dtype=np.float32)  # printed as `const f32[16]` in both bodies
    native = compile_native(lambda x, y: (x * big + 1, y * (big + 1) + 1),
                            pair_inputs(4, 2), monkeypatch)
    assert kernel_uses(native) == {}


@pytest.mark.parametrize("threads", [1, 2])
def test_an_error_in_a_shared_kernel_is_raised(threads, monkeypatch):
    def powers(a, b, c, d):
        return a ** b + 1, c ** d + 1
    ints = np.arange(1, 7, dtype=np.int64)
    native = compile_native(powers, (ints, ints, ints, ints), monkeypatch, threads=threads)
    assert list(kernel_uses(native).values()) == [(1, 2)]
    np.testing.assert_array_equal(native([ints, ints, ints, ints])[1], ints ** ints + 1)
    with pytest.raises(ValueError, match="negative integer powers"):
        native([ints, ints, ints, -ints])
