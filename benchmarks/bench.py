"""jitflow against NumPy and, where they are installed, JAX (jax.jit), PyTorch (eager and
torch.compile, CPU), numba and numexpr, all measured in one process on the workloads the
backend is judged by, each workload's libraries timed in interleaved batches. Prints each
one's median time and, for every other library, the ratio (its time / jitflow's time:
above 1 means jitflow is faster). The other libraries are written as their users would
write them (benchmarks/peers.py), for the workloads they have a version of; every result
is checked against NumPy's before timing.

    python benchmarks/bench.py            # all workloads
    python benchmarks/bench.py softmax    # those whose name contains 'softmax'
"""
import os
import sys
import time
from collections import namedtuple

import numpy as np

import jitflow
import peers
from jitflow.codegen.gemm import blas
from jitflow.codegen.jit import target
from jitflow.codegen.gemm.matmul import own_sgemm


# Every library's kernel for a workload is timed in ROUNDS batches, interleaved with the
# other libraries' batches: this 2-core machine's speed drifts over minutes, and a ratio
# should compare measurements taken seconds apart, not one library's minutes later.
ROUNDS = 15
# A batch makes as many calls as take BATCH_TIME, so that the timer's own cost does not
# count for a call of a microsecond.
BATCH_TIME = 10e-3
# Before each timed batch its kernel runs untimed for LEAD_IN seconds. The worker threads
# the previous library left spinning go to sleep meanwhile instead of taking a core from
# the batch (measured here: after a gemm OpenBLAS's spin for about 0.1 s, PyTorch's and
# numba's for about 20 ms, and the next batch ran up to twice as slow), and this library's
# own threads wake up. A pause instead of a lead-in left the batch up to 40% slower.
LEAD_IN = 0.15


def _batch(fn, args, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return time.perf_counter() - start


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
    sgemm = "jitflow's" if own_sgemm(1024) else "OpenBLAS's"  # the 1024^3 product
    return f"code for {target.describe()}; float32 matmul: {sgemm} sgemm; " \
        f"OpenBLAS kernels: {blas.core_name()}" + (
        f" (OPENBLAS_CORETYPE={forced})" if forced else "")


def jitflow_kernels(cases):
    # Time native code only: build it on the first call instead of running that call
    # on the interpreter while a background thread builds it.
    jitflow.config.background_compile = False
    return {case.key: jitflow.function(case.fn) for case in cases}, peers.unchanged


def numpy_kernels(cases):
    return {case.key: case.fn for case in cases}, peers.unchanged


# A library's kernel for one workload: built by its first call, its result checked
# against NumPy's, and its inputs already in the library's own arrays.
Ready = namedtuple("Ready", "kernel args")


def prepare(column, cases, expected, notes):
    """{case key: Ready} for the cases `column` has a kernel for. A kernel that fails to
    build or run is left out with a note; one that computes other values than NumPy stops
    the benchmark."""
    kernels, convert = column.make()
    ready = {}
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
        ready[case.key] = Ready(kernel, args)
    return ready


def time_interleaved(contenders):
    """{library: median seconds per call} for one workload, given {library: Ready}. Each
    of ROUNDS rounds times one batch of every library in turn; the order rotates by one
    library a round, so that none always runs first."""
    names = list(contenders)
    calls = {name: calls_per_batch(*contenders[name]) for name in names}
    per_call = {name: [] for name in names}
    for round_ in range(ROUNDS):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            kernel, args = contenders[name]
            run_for(kernel, args, LEAD_IN)
            elapsed = _batch(kernel, args, calls[name])
            per_call[name].append(elapsed / calls[name])
    return {name: float(np.median(seconds)) for name, seconds in per_call.items()}


def run_for(kernel, args, seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        kernel(*args)


def calls_per_batch(kernel, args):
    """As many calls as take at least BATCH_TIME; making them also warms the kernel."""
    calls = 1
    while _batch(kernel, args, calls) < BATCH_TIME:
        calls *= 2
    return calls


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
    expected = {case.key: case.fn(*case.args) for case in cases}
    # Every library builds and checks all its kernels before any is timed, jitflow first:
    # numba must not set its options in the LLVM it shares with jitflow until jitflow's
    # kernels are built (peers.py), and no compiler then runs while another is timed.
    ready, notes = {}, []
    for column in columns:
        print(f"building {column.name}...", file=sys.stderr, flush=True)
        ready[column.name] = prepare(column, cases, expected, notes)
    print_table(cases, columns, time_each_workload(cases, ready))
    for note in notes:
        print(note)


def time_each_workload(cases, ready):
    """{library: {case key: median seconds}}, given {library: {case key: Ready}}: one
    workload at a time, all the libraries that have it timed together."""
    times = {name: {} for name in ready}
    for case in cases:
        print(f"timing {case.name}...", file=sys.stderr, flush=True)
        contenders = {name: kernels[case.key] for name, kernels in ready.items()
                      if case.key in kernels}
        for name, seconds in time_interleaved(contenders).items():
            times[name][case.key] = seconds
    return times


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
