"""jitflow against NumPy, measured in the same process, on the workloads the backend is
judged by. Prints the best-of-N time of each and the ratio (NumPy time / jitflow time:
above 1 means jitflow is faster).

    python benchmarks/bench.py            # all workloads
    python benchmarks/bench.py softmax    # those whose name contains 'softmax'
"""
import os
import sys
import time

import numpy as np

import jitflow
from jitflow.codegen import blas
from jitflow.codegen.matmul import own_sgemm


def best_time(fn, *args, repeat=20, min_time=0.2):
    """Best seconds per call over `repeat` rounds, each long enough to time reliably."""
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


def workloads():
    rng = np.random.default_rng(0)
    big = rng.standard_normal(4 * 2 ** 20).astype(np.float32)
    rows = rng.standard_normal((4096, 1024)).astype(np.float32)
    square = rng.standard_normal((1024, 1024)).astype(np.float32)
    stack = rng.standard_normal((64, 128, 128)).astype(np.float32)
    return [
        ("elementwise chain, 4M f32", chain, (big, big[::-1].copy())),
        ("row softmax 4096x1024 f32", softmax, (rows,)),
        ("row logsumexp 4096x1024 f32", row_logsumexp, (rows,)),
        ("row sum 4096x1024 f32", row_sum, (rows,)),
        ("column sum 4096x1024 f32", column_sum, (rows,)),
        ("full sum 4M f32", full_sum, (big,)),
        ("sum of squares 4M f32", sum_of_squares, (big,)),
        ("row max 4096x1024 f32", row_max, (rows,)),
        ("row argmax 4096x1024 f32", row_argmax, (rows,)),
        ("tiny x*2+1 on 8 f32 (call overhead)", tiny, (np.ones(8, np.float32),)),
        ("sgemm 1024^3", matmul, (square, square)),
        ("dgemm 1024^3", matmul, (square.astype(np.float64),) * 2),
        ("sgemm 1024^3, a @ b.T", matmul_transposed, (square, square[::-1].copy())),
        ("batched sgemm 64x128^3, b broadcast", matmul, (stack, stack[0].copy())),
    ]


def blas_kernels():
    """Which gemm jitflow's float32 matmul runs (matmul.py picks it), and which OpenBLAS
    kernels the rest run: the OPENBLAS_CORETYPE environment variable, if set, overrides
    OpenBLAS's own choice for NumPy and jitflow alike."""
    forced = os.environ.get("OPENBLAS_CORETYPE")
    sgemm = "jitflow's" if own_sgemm() else "OpenBLAS's"
    return f"float32 matmul: {sgemm} sgemm; OpenBLAS kernels: {blas.core_name()}" + (
        f" (OPENBLAS_CORETYPE={forced})" if forced else "")


def main(selection=""):
    backend = jitflow.config.backend
    print(f"backend: {backend}; NumPy {np.__version__}; {blas_kernels()}")
    print(f"{'workload':40s} {'NumPy':>12s} {'jitflow':>12s} {'ratio':>8s}")
    for name, fn, args in workloads():
        if selection not in name:
            continue
        compiled = jitflow.function(fn)
        expected = fn(*args)  # float32 sums in another order: scale atol to the values
        np.testing.assert_allclose(compiled(*args), expected, rtol=1e-4,
                                   atol=1e-5 * float(np.abs(expected).max()))
        reference, ours = best_time(fn, *args), best_time(compiled, *args)
        print(f"{name:40s} {_fmt(reference):>12s} {_fmt(ours):>12s} {reference / ours:8.2f}")


def _fmt(seconds):
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.2f} us"


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
