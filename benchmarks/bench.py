"""jitflow against NumPy and, where they are installed, JAX (jax.jit), PyTorch (eager and
torch.compile, CPU), numba and numexpr, all measured in one process on the workloads the
backend is judged by. Prints each one's median time and, for every other library, the
ratio (its time / jitflow's time: above 1 means jitflow is faster). The other libraries
are written as their users would write them (benchmarks/peers.py), for the workloads
they have a version of; every result is checked against NumPy's before timing.

    python benchmarks/bench.py            # all workloads
    python benchmarks/bench.py softmax    # those whose name contains 'softmax'
"""
import math
import os
import sys
import time
from collections import namedtuple

import numpy as np

import jitflow
import peers
from jitflow.codegen import blas
from jitflow.codegen.matmul import own_sgemm


def median_time(fn, *args, min_time=0.2, min_repeat=5, min_round=1e-3):
    """Median seconds per call over at least `min_repeat` rounds and `min_time` seconds.
    A round makes as many calls as take `min_round`, so that the timer's own cost does
    not count for a call of a microsecond."""
    fn(*args)
    calls = 1
    while (elapsed := _round(fn, args, calls)) < min_round:
        calls *= 2
    rounds = max(min_repeat, math.ceil(min_time / elapsed))
    return float(np.median([_round(fn, args, calls) / calls for _ in range(rounds)]))


def _round(fn, args, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return time.perf_counter() - start


def best_time(fn, *args, repeat=20, min_time=0.2):
    """Best seconds per call over `repeat` rounds, each long enough to time reliably
    (bench_autodiff.py times with this)."""
    fn(*args)
    start = time.perf_counter()
    fn(*args)
    calls = max(1, int(min_time / max(time.perf_counter() - start, 1e-7) / repeat))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


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
    return x.sum()


def sum_of_squares(x):
    return (x * x).sum()


def row_max(x):
    return x.max(axis=1)


def row_argmax(x):
    return x.argmax(axis=1)


def row_logsumexp(x):
    peak = x.max(axis=1, keepdims=True)
    return np.log(np.exp(x - peak).sum(axis=1, keepdims=True)) + peak


def tiny(x):
    return x * 2 + 1


def matmul(a, b):
    return a @ b


def matmul_transposed(a, b):
    return a @ b.T


def standardize(x):
    return (x - np.mean(x, axis=0)) / np.std(x, axis=0)


def middle_axis_sum(x):
    return x.sum(axis=1)


# key: what benchmarks/peers.py calls the workload; the other libraries run only the
# workloads whose key they have a version of.
Case = namedtuple("Case", "key name fn args")


def workloads():
    rng = np.random.default_rng(0)
    big = rng.standard_normal(4 * 2 ** 20).astype(np.float32)
    rows = rng.standard_normal((4096, 1024)).astype(np.float32)
    square = rng.standard_normal((1024, 1024)).astype(np.float32)
    stack = rng.standard_normal((64, 128, 128)).astype(np.float32)
    cube = rng.standard_normal((256, 1024, 16)).astype(np.float32)
    return [
        Case("chain", "elementwise chain, 4M f32", chain, (big, big[::-1].copy())),
        Case("softmax", "row softmax 4096x1024 f32", softmax, (rows,)),
        Case("logsumexp", "row logsumexp 4096x1024 f32", row_logsumexp, (rows,)),
        Case("standardize", "(x-mean(x,0))/std(x,0) 4096x1024 f32", standardize, (rows,)),
        Case("row_sum", "row sum 4096x1024 f32", row_sum, (rows,)),
        Case("column_sum", "column sum 4096x1024 f32", column_sum, (rows,)),
        # Axis 1 of three: each sum strides 16 floats, over 1024 of them.
        Case("middle_axis_sum", "non-contiguous axis sum 256x1024x16 f32, axis 1",
             middle_axis_sum, (cube,)),
        Case("full_sum", "full sum 4M f32", full_sum, (big,)),
        Case("sum_of_squares", "sum of squares 4M f32", sum_of_squares, (big,)),
        Case("row_max", "row max 4096x1024 f32", row_max, (rows,)),
        Case("row_argmax", "row argmax 4096x1024 f32", row_argmax, (rows,)),
        Case("tiny", "tiny x*2+1 on 8 f32 (call overhead)", tiny, (np.ones(8, np.float32),)),
        Case("sgemm", "sgemm 1024^3", matmul, (square, square)),
        Case("dgemm", "dgemm 1024^3", matmul, (square.astype(np.float64),) * 2),
        Case("sgemm_bt", "sgemm 1024^3, a @ b.T", matmul_transposed,
             (square, square[::-1].copy())),
        Case("batched_sgemm", "batched sgemm 64x128^3, b broadcast", matmul,
             (stack, stack[0].copy())),
    ]


def blas_kernels():
    """Which gemm jitflow's float32 matmul runs (matmul.py picks it), and which OpenBLAS
    kernels the rest run: the OPENBLAS_CORETYPE environment variable, if set, overrides
    OpenBLAS's own choice for NumPy and jitflow alike."""
    forced = os.environ.get("OPENBLAS_CORETYPE")
    sgemm = "jitflow's" if own_sgemm() else "OpenBLAS's"
    return f"float32 matmul: {sgemm} sgemm; OpenBLAS kernels: {blas.core_name()}" + (
        f" (OPENBLAS_CORETYPE={forced})" if forced else "")


def jitflow_kernels(cases):
    # Time native code only: build it on the first call instead of running that call
    # on the interpreter while a background thread builds it.
    jitflow.config.background_compile = False
    return {case.key: jitflow.function(case.fn) for case in cases}, peers.unchanged


def numpy_kernels(cases):
    return {case.key: case.fn for case in cases}, peers.unchanged


def measure(column, cases, expected, notes):
    """{case key: median seconds} for the cases `column` has a kernel for. A kernel that
    fails to build or run is left out with a note; one that computes other values than
    NumPy stops the benchmark."""
    kernels, convert = column.make()
    times = {}
    for case in cases:
        kernel = kernels.get(case.key)
        if kernel is None:
            continue
        args = convert(case.args)  # once: converting inputs is not part of the call
        try:
            result = np.asarray(kernel(*args))  # the first call compiles: not timed
        except Exception as error:  # whatever the library raised: report it, go on
            first_line = str(error).strip().partition("\n")[0]
            notes.append(f"{column.name} skipped {case.name!r}: "
                         f"{type(error).__name__}: {first_line}")
            continue
        check(result, expected[case.key], f"{column.name}, {case.name}")
        times[case.key] = median_time(kernel, *args)
    return times


def check(result, expected, label):
    # Sums of float32 in another order differ by rounding: scale atol to the values.
    assert result.dtype == expected.dtype, f"{label}: {result.dtype}, not {expected.dtype}"
    np.testing.assert_allclose(result, expected, rtol=1e-4,
                               atol=1e-5 * float(np.abs(expected).max()), err_msg=label)


def main(selection=""):
    cases = [case for case in workloads() if selection in case.name]
    others, missing = peers.installed()
    print(f"backend: {jitflow.config.backend}; NumPy {np.__version__}; {blas_kernels()}")
    print(f"peers: {peers.versions(others) or 'none'}"
          + (f"; not installed: {', '.join(missing)}" if missing else ""))
    columns = [peers.Peer("jitflow", "jitflow", lambda: jitflow_kernels(cases)),
               peers.Peer("NumPy", "numpy", lambda: numpy_kernels(cases))] + others
    # NumPy's results, computed before any timing so that its idle BLAS threads are
    # not spinning while another library is timed.
    expected = {case.key: case.fn(*case.args) for case in cases}
    # One library at a time over every case, rather than alternating them per case: on
    # 2 cores, the threads one library leaves spinning slow the next.
    times, notes = {}, []
    for column in columns:
        print(f"timing {column.name}...", file=sys.stderr, flush=True)
        times[column.name] = measure(column, cases, expected, notes)
    print_table(cases, columns, times)
    for note in notes:
        print(note)


def print_table(cases, columns, times):
    width = max([len("workload")] + [len(case.name) for case in cases])
    print("median time per call; after each library's time, its time / jitflow's "
          "(above 1: jitflow is faster); -: no version of that workload")
    print(f"{'workload':{width}s} {'jitflow':>10s}"
          + "".join(f" {column.name:>17s}" for column in columns[1:]))
    for case in cases:
        ours = times["jitflow"][case.key]
        line = f"{case.name:{width}s} {_fmt(ours):>10s}"
        for column in columns[1:]:
            theirs = times[column.name].get(case.key)
            line += f" {'-':>17s}" if theirs is None else \
                f" {_fmt(theirs):>10s} {theirs / ours:6.2f}"
        print(line)


def _fmt(seconds):
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.2f} us"


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
