"""Non-temporal stores for loops that touch more memory than the last-level cache: the
same bits as plain stores for every length, dtype and alignment of the output (the
masked head up to the aligned vector, the masked tail), on one thread and split, in
elementwise nests and in row regions; only where the loop is large enough; and the
threshold's source (jit/caches.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.jit import caches
from jitflow.codegen.lowering.parallel import MIN_PARALLEL_ELEMENTS

LENGTHS = [64, 65, 100, 127, 128, 129, 250, 1000, 4099]
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.uint64, np.bool_]


def stream_everything(monkeypatch):
    monkeypatch.setenv("JITFLOW_STREAMING_BYTES", "1")


def chain(x, y):
    """A fused body: casts to the output's dtype, a compare, a select."""
    return np.where(x > y, x * 2 + y, y * x).astype(x.dtype)


def values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 50, shape).astype(dtype)
    return (rng.standard_normal(shape) * 4).astype(dtype)


def misaligned(shape, dtype, shift):
    """An empty C-contiguous array whose data starts `shift` elements past a 64-byte
    boundary."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    raw = np.empty(size * dtype.itemsize + 64 + 16 * dtype.itemsize, np.uint8)
    start = -raw.ctypes.data % 64 + shift * dtype.itemsize
    return raw[start:start + size * dtype.itemsize].view(dtype).reshape(shape)


@settings(max_examples=40, deadline=None)
@given(length=st.sampled_from(LENGTHS), rows=st.sampled_from([1, 3]),
       dtype=st.sampled_from(DTYPES), shift=st.integers(0, 15), seed=st.integers(0, 99))
def test_streamed_stores_give_numpys_bits_at_any_alignment(length, rows, dtype, shift,
                                                          seed):
    rng = np.random.default_rng(seed)
    x, y = values(rng, dtype, (rows, length)), values(rng, dtype, (rows, length))
    expected = chain(x, y)
    out = misaligned(expected.shape, expected.dtype, shift)
    with pytest.MonkeyPatch.context() as patch:
        stream_everything(patch)
        f = jitflow.function(chain)
        assert f(x, y, out=out) is out
        np.testing.assert_array_equal(out, expected, strict=True)
        np.testing.assert_array_equal(f(x, y), expected, strict=True)


def test_a_loop_split_between_threads_streams_each_share(monkeypatch):
    stream_everything(monkeypatch)
    monkeypatch.setenv("JITFLOW_THREADS", "2")
    rng = np.random.default_rng(0)
    x, y = (values(rng, np.float32, MIN_PARALLEL_ELEMENTS * 3 + 17) for _ in range(2))
    for shift in (0, 5):
        out = misaligned(x.shape, np.float32, shift)
        jitflow.function(chain)(x, y, out=out)
        np.testing.assert_array_equal(out, chain(x, y), strict=True)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_row_region_streams_its_output_with_the_same_bits(threads, monkeypatch):
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    x = values(np.random.default_rng(1), np.float32, (301, 1000))
    monkeypatch.setenv("JITFLOW_STREAMING_BYTES", "0")
    plain = jitflow.function(softmax)(x)
    stream_everything(monkeypatch)
    native = NativeGraph(jitflow.optimize(jitflow.function(softmax).trace(x)), "f")
    assert "!nontemporal" in native.llvm_ir
    # One fence per worker's share of the rows, after them all: not one per row.
    assert native.llvm_ir.count('call void @"llvm.x86.sse.sfence"()') == 1
    for shift in (0, 3):
        out = misaligned(x.shape, np.float32, shift)
        jitflow.function(softmax)(x, out=out)
        np.testing.assert_array_equal(out, plain, strict=True)
    np.testing.assert_allclose(plain, softmax(x), rtol=1e-6)


def lowered_code(monkeypatch, threshold, length):
    monkeypatch.setenv("JITFLOW_STREAMING_BYTES", str(threshold))
    x = np.ones(length, np.float32)
    native = NativeGraph(jitflow.optimize(jitflow.function(chain).trace(x, x)), "f")
    return native.llvm_ir


def test_only_loops_past_the_threshold_stream(monkeypatch):
    length = 4096  # three arrays of 16 KiB
    assert "!nontemporal" in lowered_code(monkeypatch, 3 * 4 * length, length)
    assert "llvm.x86.sse.sfence" in lowered_code(monkeypatch, 3 * 4 * length, length)
    assert "!nontemporal" not in lowered_code(monkeypatch, 3 * 4 * length + 1, length)
    assert "!nontemporal" not in lowered_code(monkeypatch, 0, length)  # 0: off


def test_short_rows_never_stream(monkeypatch):
    # Rows of 10 floats (a row broadcast keeps them rows): a non-temporal store of part
    # of a line costs more than it saves.
    monkeypatch.setenv("JITFLOW_STREAMING_BYTES", "1")
    x, row = np.ones((5000, 10), np.float32), np.ones(10, np.float32)
    native = NativeGraph(jitflow.optimize(jitflow.function(chain).trace(x, row)), "f")
    assert "!nontemporal" not in native.llvm_ir


def test_the_threshold_defaults_to_the_last_level_cache_or_its_cap(monkeypatch):
    monkeypatch.delenv("JITFLOW_STREAMING_BYTES", raising=False)
    assert caches.streaming_bytes() == min(caches.last_level_cache_bytes(), caches.CAP_BYTES) > 0
    monkeypatch.setenv("JITFLOW_STREAMING_BYTES", "12345")
    assert caches.streaming_bytes() == 12345
    monkeypatch.setenv("JITFLOW_STREAMING_BYTES", "lots")
    with pytest.raises(ValueError, match="JITFLOW_STREAMING_BYTES='lots'"):
        caches.streaming_bytes()


@pytest.mark.parametrize("text, size", [("32768K", 32 << 20), ("300M", 300 << 20),
                                        ("1G", 1 << 30), ("512", 512)])
def test_sysfs_cache_sizes_are_read_in_bytes(text, size):
    assert caches._parse_size(text + "\n") == size
