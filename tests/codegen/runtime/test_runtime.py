"""The checked call path of compiled code (runtime/native.py: NativeGraph.__call__)."""
import numpy as np
import pytest

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.memory import ALIGNMENT, aligned_bytes


def test_the_workspace_starts_where_the_code_assumes():
    for size in [0, 1, 63, 64, 65, 1216, 4096, 100_000]:
        buffers = [aligned_bytes(size) for _ in range(20)]  # NumPy's 16-byte slots
        assert all(b.ctypes.data % ALIGNMENT == 0 and b.nbytes >= max(size, 1)
                   for b in buffers)


@pytest.mark.parametrize("shape", [(300, 517), (7, 33), (64, 64)])
def test_rows_copied_into_the_workspace_are_read_aligned(shape):
    # The strided rows of x.T are copied into workspace scratch, which the arg
    # reduction reads with aligned vector loads: from NumPy's own 16-byte-aligned
    # workspace this crashed the process.
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)

    def fn(x):
        return x.T.argmin(axis=1), x.T.argmax(axis=1)
    native = NativeGraph(jitflow.optimize(jitflow.function(fn).trace(x)), "f")
    for _ in range(10):
        got = native([x])
        for result, expected in zip(got, fn(x), strict=True):
            np.testing.assert_array_equal(result, expected)
