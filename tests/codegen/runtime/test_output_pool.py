"""Large outputs over pooled buffers (codegen/runtime/output_pool.py): a buffer comes
back only once no array views it, so no result anyone holds is ever written again."""
import numpy as np

import jitflow
from jitflow.codegen.runtime.output_pool import POOLED_BYTES

N = POOLED_BYTES // 4  # float32 results just large enough to be pooled


@jitflow.function
def triad(b, c):
    return b + np.float32(3) * c


def arrays():
    rng = np.random.default_rng(1)
    return rng.standard_normal(N, dtype=np.float32), rng.standard_normal(N, dtype=np.float32)


def test_a_result_let_go_of_lends_its_memory_to_the_next():
    b, c = arrays()
    first = triad(b, c)
    address = first.ctypes.data
    np.testing.assert_allclose(first, b + 3 * c, rtol=1e-6)
    del first
    second = triad(c, b)
    assert second.ctypes.data == address
    np.testing.assert_allclose(second, c + 3 * b, rtol=1e-6)


def test_results_and_views_still_held_are_never_written():
    b, c = arrays()
    kept = [triad(b, c)]
    view = triad(c, b)[N // 2:]  # the result itself is gone, a view of it is not
    for _ in range(3):
        kept.append(triad(b * 0, c))
    np.testing.assert_allclose(kept[0], b + 3 * c, rtol=1e-6)
    np.testing.assert_allclose(view, (c + 3 * b)[N // 2:], rtol=1e-6)
    assert len({a.ctypes.data for a in kept} | {view.ctypes.data - N // 2 * 4}) == 5
    assert all(a.flags.writeable and a.flags.c_contiguous for a in kept)
