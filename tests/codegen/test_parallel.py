"""Large kernels split between threads: the same bits as one thread, errors still raised,
small kernels untouched."""
import numpy as np
import pytest

import jitflow
from jitflow.codegen.parallel import MIN_PARALLEL_ELEMENTS, thread_count
from jitflow.codegen.runtime import NativeGraph

ROWS, COLUMNS = 300, 517  # more elements than MIN_PARALLEL_ELEMENTS, odd sizes
LENGTH = MIN_PARALLEL_ELEMENTS + 1037


def compiled(fn, args, threads, monkeypatch):
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    graph = jitflow.optimize(jitflow.function(fn).trace(*args))
    return NativeGraph(graph, "f")


def run_both(fn, args, monkeypatch):
    """fn's results with one thread and with two, checking that two did split."""
    one, two = (compiled(fn, args, t, monkeypatch) for t in (1, 2))
    assert "pthread_create" not in one.llvm_ir and "pthread_create" in two.llvm_ir
    return one(list(args)), two(list(args))


def chain(x, y):
    return np.exp(-x * x) * np.sin(y) + 0.5 * np.tanh(x * y)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def row_sum(x):
    return x.sum(axis=1)


def column_sum(x):
    return x.sum(axis=0)


def full_sum(x):
    return (x * x).sum() + x.sum()


rng = np.random.default_rng(0)
VECTOR = rng.standard_normal(LENGTH).astype(np.float32)
MATRIX = rng.standard_normal((ROWS, COLUMNS)).astype(np.float32)


@pytest.mark.parametrize("fn, args", [
    (chain, (VECTOR, VECTOR[::-1].copy())),
    (softmax, (MATRIX,)),
    (row_sum, (MATRIX,)),
    (column_sum, (MATRIX,)),
    (column_sum, (MATRIX.T.copy(),)),
], ids=["chain", "softmax", "row_sum", "column_sum", "column_sum_wide"])
def test_two_threads_give_the_same_bits_as_one(fn, args, monkeypatch):
    one, two = run_both(fn, args, monkeypatch)
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    np.testing.assert_allclose(one[0], fn(*args), rtol=1e-5, atol=1e-5)


def test_a_full_sum_is_never_split_and_keeps_its_bits(monkeypatch):
    one, two = (compiled(full_sum, (VECTOR,), t, monkeypatch) for t in (1, 2))
    assert one((VECTOR,))[0].tobytes() == two((VECTOR,))[0].tobytes()


def test_an_error_in_the_second_threads_chunk_is_raised(monkeypatch):
    base = np.full(LENGTH, 3, np.int64)
    exponent = np.ones(LENGTH, np.int64)
    exponent[-1] = -1  # the last element: worker 1's chunk
    for threads in (1, 2):
        native = compiled(lambda x, y: x ** y, (base, exponent), threads, monkeypatch)
        assert ("pthread_create" in native.llvm_ir) == (threads == 2)
        with pytest.raises(ValueError, match="negative integer powers"):
            native([base, exponent])
        exponent_ok = np.ones(LENGTH, np.int64)
        np.testing.assert_array_equal(native([base, exponent_ok])[0], base)


def test_a_gather_with_a_bad_index_still_raises(monkeypatch):
    table = rng.standard_normal(1000).astype(np.float32)
    indices = rng.integers(0, 1000, LENGTH)
    bad = indices.copy()
    bad[-1] = 1000
    for threads in (1, 2):
        native = compiled(lambda t, i: t[i] * 2.0, (table, indices), threads, monkeypatch)
        np.testing.assert_array_equal(native([table, indices])[0], table[indices] * 2.0)
        with pytest.raises(IndexError):
            native([table, bad])


def test_small_kernels_stay_on_the_calling_thread(monkeypatch):
    small = np.ones(1000, np.float32)
    native = compiled(chain, (small, small), 2, monkeypatch)
    assert "pthread_create" not in native.llvm_ir


def test_the_thread_count_changes_the_code_and_so_the_cache_key(monkeypatch):
    one, two = (compiled(chain, (VECTOR, VECTOR), t, monkeypatch) for t in (1, 2))
    three = compiled(chain, (VECTOR, VECTOR), 3, monkeypatch)
    assert len({one.llvm_ir, two.llvm_ir, three.llvm_ir}) == 3


def test_the_thread_count_setting(monkeypatch):
    monkeypatch.setenv("JITFLOW_THREADS", "3")
    assert thread_count() == 3
    monkeypatch.delenv("JITFLOW_THREADS")
    assert thread_count() >= 1
    monkeypatch.setenv("JITFLOW_THREADS", "0")
    with pytest.raises(ValueError):
        thread_count()
