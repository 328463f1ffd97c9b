"""The other libraries bench.py times jitflow against, each written as that library's users
would write the workloads. None of them is a dependency of jitflow: a peer whose package
is not installed is left out.

A peer's `make()` imports the library and returns (kernels, convert): kernels maps a
workload's key (see bench.workloads) to a callable, and convert turns the workload's NumPy
inputs into the library's own, once, outside the timed region. Compiled kernels are built
lazily by their first call, which bench.py makes before timing.
"""
import importlib.metadata
import importlib.util
from collections import namedtuple

import numpy as np

Peer = namedtuple("Peer", "name package make")


def unchanged(args):
    return args


# --- numexpr: only the workloads that are a single numexpr expression ---------------------

def numexpr_kernels():
    import numexpr

    # A float32 constant: a Python float would make numexpr compute in float64.
    half = np.float32(0.5)

    def chain(x, y):
        return numexpr.evaluate("exp(-x*x)*sin(y) + half*tanh(x*y)",
                                local_dict={"x": x, "y": y, "half": half})

    def tiny(x):
        return numexpr.evaluate("x*2 + 1", local_dict={"x": x})

    def middle_axis_sum(x):
        return numexpr.evaluate("sum(x, axis=1)", local_dict={"x": x})

    return {"chain": chain, "tiny": tiny, "middle_axis_sum": middle_axis_sum}, unchanged


# --- numba: array code where parfors fuses it, explicit prange loops elsewhere ------------

def numba_kernels():
    import numba
    from numba import prange

    # fastmath lets LLVM reorder float sums, which it needs to vectorize the reductions.
    parallel = numba.njit(parallel=True, fastmath=True)

    @parallel
    def chain(x, y):
        # A float32 constant: numba types 0.5 * a float32 array as float64.
        return np.exp(-x * x) * np.sin(y) + np.float32(0.5) * np.tanh(x * y)

    @parallel
    def softmax(x):
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            peak = x[i, 0]
            for j in range(x.shape[1]):
                peak = max(peak, x[i, j])
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
            peak = x[i, 0]
            for j in range(x.shape[1]):
                peak = max(peak, x[i, j])
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

    return {"chain": chain, "softmax": softmax, "logsumexp": logsumexp, "tiny": tiny,
            "sgemm": sgemm, "standardize": standardize,
            "middle_axis_sum": middle_axis_sum}, unchanged


# --- PyTorch, eager and torch.compile'd (CPU) -------------------------------------------

def torch_kernels():
    import torch

    torch.set_num_threads(2)  # one per core of this 2-core machine
    kernels = {
        "chain": lambda x, y: torch.exp(-x * x) * torch.sin(y) + 0.5 * torch.tanh(x * y),
        "softmax": lambda x: torch.softmax(x, dim=1),
        "logsumexp": lambda x: torch.logsumexp(x, dim=1, keepdim=True),
        "tiny": lambda x: x * 2 + 1,
        "sgemm": lambda a, b: a @ b,
        "standardize": lambda x: (x - x.mean(dim=0)) / x.std(dim=0, correction=0),
        "middle_axis_sum": lambda x: x.sum(dim=1),
    }
    return kernels, lambda args: [torch.from_numpy(a) for a in args]


def compiled_torch_kernels():
    import torch

    kernels, convert = torch_kernels()
    return {key: torch.compile(fn) for key, fn in kernels.items()}, convert


# --- JAX (jax.jit) ----------------------------------------------------------------------

def jax_kernels():
    import jax
    import jax.numpy as jnp

    kernels = {
        "chain": lambda x, y: jnp.exp(-x * x) * jnp.sin(y) + 0.5 * jnp.tanh(x * y),
        "softmax": lambda x: jax.nn.softmax(x, axis=1),
        "logsumexp": lambda x: jax.nn.logsumexp(x, axis=1, keepdims=True),
        "tiny": lambda x: x * 2 + 1,
        "sgemm": lambda a, b: a @ b,
        "standardize": lambda x: (x - x.mean(axis=0)) / x.std(axis=0),
        "middle_axis_sum": lambda x: x.sum(axis=1),
    }

    def blocking(fn):
        # JAX returns before the work is done: wait for it inside the timed call.
        compiled = jax.jit(fn)
        return lambda *args: compiled(*args).block_until_ready()

    return ({key: blocking(fn) for key, fn in kernels.items()},
            lambda args: [jax.device_put(a) for a in args])


# JAX last: its idle worker threads keep spinning and would slow whatever ran next.
PEERS = [
    Peer("numexpr", "numexpr", numexpr_kernels),
    Peer("numba", "numba", numba_kernels),
    Peer("torch", "torch", torch_kernels),
    Peer("torch.compile", "torch", compiled_torch_kernels),
    Peer("JAX", "jax", jax_kernels),
]


def installed():
    """The peers whose package is installed, in the order they are timed, and the names
    of the packages that are not. Nothing is imported yet: jitflow runs first, before any
    peer has started its threads or (numba) set options in the LLVM it shares with
    jitflow."""
    present = [p for p in PEERS if importlib.util.find_spec(p.package) is not None]
    missing = sorted({p.package for p in PEERS} - {p.package for p in present})
    return present, missing


def versions(present):
    """'torch 2.13.0, jax 0.10.2' for the packages of these peers."""
    packages = dict.fromkeys(p.package for p in present)
    return ", ".join(f"{name} {importlib.metadata.version(name)}" for name in packages)
