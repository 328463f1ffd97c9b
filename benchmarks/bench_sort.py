"""np.sort and np.argsort compiled by jitflow (its stable merge sort, rows split
between threads) against NumPy's, float32: one row of 1M values and 1000 rows of 1000,
along the last axis and along the first. NumPy is timed with its default kind
(quicksort: SIMD sorting networks where the CPU has them, unstable) and with
kind="stable" (what jitflow computes: ties in order). Prints the median time of each
and the ratios jitflow / NumPy (above 1: jitflow is slower). Results are checked to
agree with NumPy's stable sort before timing; the calls alternate, in rounds, so that
drift hits all alike.

    python benchmarks/bench_sort.py
"""
import time

import numpy as np

import jitflow
import jitflow.numpy as jnp
from jitflow.codegen.jit.threads import thread_count

ROUNDS = 7
CASES = {  # name -> (shape, axis)
    "1M values": ((1_000_000,), -1),
    "1000 x 1000, rows": ((1000, 1000), -1),
    "1000 x 1000, columns": ((1000, 1000), 0),
}
FUNCTIONS = {"sort": "sort", "argsort": "argsort"}


def once(fn, x):
    start = time.perf_counter()
    fn(x)
    return time.perf_counter() - start


def main():
    rng = np.random.default_rng(0)
    print(f"jitflow threads: {thread_count()}")
    print(f"{'function':8} {'case':22} {'jitflow':>9} {'NumPy':>9} {'stable':>9} "
          f"{'/ NumPy':>8} {'/ stable':>9}")
    for name in FUNCTIONS:
        for case, (shape, axis) in CASES.items():
            x = rng.standard_normal(shape).astype(np.float32)
            compiled = jitflow.function(lambda a: getattr(jnp, name)(a, axis))
            np.testing.assert_array_equal(compiled(x),
                                          getattr(np, name)(x, axis, kind="stable"))
            runs = {"jitflow": compiled,
                    "numpy": lambda a: getattr(np, name)(a, axis),
                    "stable": lambda a: getattr(np, name)(a, axis, kind="stable")}
            times = {label: [] for label in runs}
            for _ in range(ROUNDS):
                for label, fn in runs.items():
                    times[label].append(once(fn, x))
            mine, theirs, stable = (np.median(times[k]) * 1e3 for k in runs)
            print(f"{name:8} {case:22} {mine:7.2f}ms {theirs:7.2f}ms {stable:7.2f}ms "
                  f"{mine / theirs:8.2f} {mine / stable:9.2f}")


if __name__ == "__main__":
    main()
