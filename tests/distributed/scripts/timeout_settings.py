"""The timeout as the environment sets it (JITFLOW_DISTRIBUTED_TIMEOUT=none: forever,
MPI_Wait), then as init sets it; the collectives give the same values either way, and
match between a rank running one eagerly (or interpreted) and a rank running it in
native code (as with background compiling); bad timeouts raise ValueError naming what
was wrong."""
import math

import numpy as np

import jitflow
import jitflow.distributed as dist

jitflow.config.background_compile = False
rank, size = dist.rank(), dist.size()
assert dist.timeout() is None, dist.timeout()
x = np.arange(6.0).reshape(3, 2) + rank
expected = sum(np.arange(6.0).reshape(3, 2) + r for r in range(size))
step = jitflow.function(lambda x: (dist.all_reduce(x), dist.all_gather(x)))
for timeout in (None, 5, 2.5, None):
    dist.init(timeout=timeout)
    assert dist.timeout() == timeout, (dist.timeout(), timeout)
    for run in (lambda x: (dist.all_reduce(x), dist.all_gather(x)), step):
        summed, gathered = run(x)
        np.testing.assert_array_equal(summed, expected)
        np.testing.assert_array_equal(gathered, np.concatenate(
            [np.arange(6.0).reshape(3, 2) + r for r in range(size)]))
    dist.barrier()
    # One rank eager, the other compiled, collective for collective.
    eager_here = rank % 2 == 0
    for _ in range(2):
        summed, gathered = (lambda x: (dist.all_reduce(x), dist.all_gather(x)))(x) \
            if eager_here else step(x)
        np.testing.assert_array_equal(summed, expected)
        eager_here = not eager_here
for bad in (0, -1, math.nan, "soon", True, [3]):
    try:
        dist.init(timeout=bad)
    except ValueError as error:
        assert "init(timeout=...)" in str(error) and repr(bad) in str(error), error
    else:
        raise AssertionError(f"timeout={bad!r} was taken")
assert dist.timeout() is None
print(f"rank {rank} done")
