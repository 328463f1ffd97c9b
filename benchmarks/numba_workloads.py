"""bench.py's workloads in numba (benchmarks/peers.py), as its users would write them:
array code where parfors fuses it, explicit prange loops elsewhere. Importing this module
compiles nothing; each kernel compiles on its first call."""
import numba
import numpy as np
from numba import prange

# fastmath lets LLVM reorder float sums, which it needs to vectorize the reductions.
parallel = numba.njit(parallel=True, fastmath=True)


@numba.njit(fastmath=True)
def row_max(x, i):
    peak = x[i, 0]
    for j in range(x.shape[1]):
        peak = max(peak, x[i, j])
    return peak


@parallel
def chain(x, y):
    # A float32 constant: numba types 0.5 * a float32 array as float64.
    return np.exp(-x * x) * np.sin(y) + np.float32(0.5) * np.tanh(x * y)


@parallel
def softmax(x):
    out = np.empty_like(x)
    for i in prange(x.shape[0]):
        peak = row_max(x, i)
        total = np.float32(0)
        for j in range(x.shape[1]):
            out[i, j] = np.exp(x[i, j] - peak)
            total += out[i, j]
        for j in range(x.shape[1]):
            out[i, j] /= total
    return out


@parallel
def logsumexp(x):
    out = np.empty((x.shape[0], 1), x.dtype)
    for i in prange(x.shape[0]):
        peak = row_max(x, i)
        total = np.float32(0)
        for j in range(x.shape[1]):
            total += np.exp(x[i, j] - peak)
        out[i, 0] = np.log(total) + peak
    return out


@numba.njit  # 8 elements: starting threads would cost more than the work
def tiny(x):
    return x * 2 + 1


@parallel
def sgemm(a, b):
    # Loops, not `@`: numba's `@` needs SciPy (for BLAS), which the benchmark does
    # not require. Ordered i-k-j so that the inner loop runs along rows of b and out.
    out = np.zeros((a.shape[0], b.shape[1]), a.dtype)
    for i in prange(a.shape[0]):
        for k in range(a.shape[1]):
            for j in range(b.shape[1]):
                out[i, j] += a[i, k] * b[k, j]
    return out


@parallel
def standardize(x):
    # Each task takes a block of columns and walks down the rows, reading each row's
    # part contiguously rather than striding down one column at a time.
    rows, cols = x.shape
    block = 128
    out = np.empty_like(x)
    for task in prange((cols + block - 1) // block):
        lo = task * block
        hi = min(lo + block, cols)
        mean = np.zeros(hi - lo, x.dtype)
        for i in range(rows):
            for j in range(lo, hi):
                mean[j - lo] += x[i, j]
        mean /= rows
        var = np.zeros(hi - lo, x.dtype)
        for i in range(rows):
            for j in range(lo, hi):
                var[j - lo] += (x[i, j] - mean[j - lo]) ** 2
        std = np.sqrt(var / rows)
        for i in range(rows):
            for j in range(lo, hi):
                out[i, j] = (x[i, j] - mean[j - lo]) / std[j - lo]
    return out


@parallel
def middle_axis_sum(x):
    out = np.zeros((x.shape[0], x.shape[2]), x.dtype)
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            for k in range(x.shape[2]):
                out[i, k] += x[i, j, k]
    return out


KERNELS = {"chain": chain, "softmax": softmax, "logsumexp": logsumexp, "tiny": tiny,
           "sgemm": sgemm, "standardize": standardize, "middle_axis_sum": middle_axis_sum}
