"""A graph lowered into several modules (segments, compiled on separate cores): the same
bits as one module on any number of threads, with buffers, outputs and errors carried
from one segment to the next."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.jit.engine import SHORT_PIPELINE
from jitflow.codegen.jit.pool import WAIT
from jitflow.codegen.lowering import lower
from jitflow.codegen.lowering.parallel import MIN_PARALLEL_ELEMENTS

WHOLE = 10 ** 9  # a budget no graph here reaches: one module


def compile_native(fn, args, budget, threads, monkeypatch):
    monkeypatch.setattr(lower, "SEGMENT_INSTRUCTIONS", budget)
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(*args)), "f")


def classifier(x, w, table):
    """Many nodes: a matmul, row reductions with scratch buffers, a column sum,
    indexing, and an input that is also an output."""
    h = np.maximum(x @ w + 0.5, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return p, p.sum(axis=0), x, table[np.argmax(p, axis=1)]


def classifier_inputs(rows, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, 24)).astype(np.float32),
            rng.standard_normal((24, 16)).astype(np.float32),
            rng.integers(-50, 50, 16))


def same_bits(results, expected):
    return all(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
               for a, b in zip(results, expected, strict=True))


@settings(max_examples=8)
@given(rows=st.sampled_from([1, 7, 300, MIN_PARALLEL_ELEMENTS // 16 + 3]),
       budget=st.sampled_from([1, 40, 150]), threads=st.sampled_from([1, 2, 3]),
       seed=st.integers(0, 2 ** 16))
def test_segments_give_the_bits_of_one_module(rows, budget, threads, seed):
    args = classifier_inputs(rows, seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        whole = compile_native(classifier, args, WHOLE, threads, monkeypatch)
        split = compile_native(classifier, args, budget, threads, monkeypatch)
    assert len(whole.llvm_irs) == 1 and len(split.llvm_irs) > 1
    results = split(list(args))
    assert same_bits(results, whole(list(args)))
    p, column, x, picked = classifier(*args)
    np.testing.assert_allclose(results[0], p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[1], column, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(results[2], x)
    assert results[3].dtype == picked.dtype


def test_the_pointers_a_segment_starts_with_do_not_count_toward_its_budget(monkeypatch):
    """Sixty inputs live to the end: each segment makes all their pointers again
    before any node's code, more instructions than the budget. A segment still holds
    the code of several nodes (once it held one each)."""
    def many_live_inputs(*xs):
        results, total = [], xs[0]
        for x in xs:
            total = np.tanh(total @ x + 1.0)  # (a product: nodes fusion cannot merge)
            results.append(total)
        return [r + x for r, x in zip(results, xs)]
    args = [np.full((4, 4), 0.01 * i, np.float32) for i in range(60)]
    native = compile_native(many_live_inputs, args, 200, 1, monkeypatch)
    assert 1 < len(native.llvm_irs) <= 40, len(native.llvm_irs)
    for result, expected in zip(native(args), many_live_inputs(*args)):
        np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_every_segment_calls_the_next_one(monkeypatch):
    native = compile_native(classifier, classifier_inputs(300, 0), 1, 2, monkeypatch)
    segments = native.llvm_irs
    for index, text in enumerate(segments):
        assert re.search(rf'define [^@]*@"jitflow_body{f".{index}" if index else ""}"', text)
        calls_next = f'call i32 @"jitflow_body.{index + 1}"' in text
        last = index == len(segments) - 1
        assert calls_next == (not last)
        assert ("jitflow_entry" in text) == last and ("jitflow_python_call" in text) == last


@pytest.mark.parametrize("threads", [1, 2])
def test_several_segments_put_the_entry_points_in_the_last_module(threads, monkeypatch):
    """So that each other segment compiles as soon as it is lowered. A segment with
    scalar data loops (the argmax, the gather) gets LLVM's pipeline."""
    args = classifier_inputs(300, 0)
    native = compile_native(classifier, args, 1, threads, monkeypatch)
    *segments, last = native.llvm_irs
    assert re.search(r'define [^@]*@"jitflow_python_call"', last)
    first = "jitflow_body" if threads > 1 else "jitflow_entry"
    assert re.search(rf'declare [^@]*@"{first}"', last)
    assert not any("jitflow_python_call" in text for text in segments)
    levels = native.compiled._speed_levels
    assert len(levels) == len(native.llvm_irs)
    assert levels[0] == SHORT_PIPELINE and 3 in levels
    for result, expected in zip(native.python_entry(*args), classifier(*args)):
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def serial_then_parallel(x, y):
    """A small reduction (run by worker 0 alone) that a large nest split between the
    workers reads: in its own segment, the nest must still wait for it."""
    return y * (x[:3].sum() + 1.0)


def test_a_nest_waits_for_serial_code_of_the_previous_segment(monkeypatch):
    x = np.arange(8, dtype=np.float32)
    y = np.linspace(-1, 1, MIN_PARALLEL_ELEMENTS * 2, dtype=np.float32)
    native = compile_native(serial_then_parallel, (x, y), 1, 2, monkeypatch)
    first, *rest = native.llvm_irs
    assert rest, "expected the nest in a segment of its own"
    nest = next(text for text in rest if "chunk.loop" in text)
    # The barrier comes before the split nest's chunk loop, in the nest's own segment.
    assert WAIT in nest.split("chunk.loop")[0]
    np.testing.assert_array_equal(native([x, y])[0], y * np.float32(4.0))


def gather_last(table, index):
    doubled = table * 2
    return np.exp(doubled).sum(), doubled[index]


def gather_first(table, index):
    picked = table[index]
    return picked, np.exp(picked * 2).sum() + table.max()


@pytest.mark.parametrize("fn", [gather_first, gather_last])
@pytest.mark.parametrize("threads", [1, 2])
def test_an_error_in_any_segment_is_raised(fn, threads, monkeypatch):
    table = np.arange(5, dtype=np.float64)
    native = compile_native(fn, (table, np.array([1, 4])), 1, threads, monkeypatch)
    assert len(native.llvm_irs) > 2
    for result, expected in zip(native([table, np.array([1, 4])]),
                                fn(table, np.array([1, 4]))):
        np.testing.assert_array_equal(result, expected)
    with pytest.raises(IndexError, match="out of bounds"):
        native([table, np.array([1, 5])])


def test_index_arithmetic_with_constants_is_folded_as_it_is_emitted(monkeypatch):
    # Offsets are offset + index * stride: strides of 1, first offsets of 0, constant
    # trip counts and integer literals used as floats leave nothing to compute.
    native = compile_native(lambda x, y: x.T * y + x.sum(axis=1, keepdims=True).T / 256,
                            (np.ones((5, 3), np.float32), np.ones((3, 5), np.float32)),
                            WHOLE, 1, monkeypatch)
    trivial = [r"= mul i64 %\S+, 1\n", r"= mul i64 1, ", r"= add i64 0, ",
               r"= add i64 %\S+, 0\n", r"getelementptr inbounds \w+, ptr %\S+, i64 0\n",
               r"= icmp \w+ i64 \d+, \d+\n", r"itofp i64 \d+ to"]
    for pattern in trivial:
        assert not re.search(pattern, native.llvm_ir), pattern
