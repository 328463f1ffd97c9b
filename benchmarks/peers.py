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
import platform
import time
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
    # Imported only now, so that numba touches the process's LLVM after jitflow has
    # compiled its own kernels.
    import numba_workloads

    return numba_workloads.KERNELS, unchanged


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


def cpu_name():
    """The CPU's model name, as /proc/cpuinfo gives it (figures say where they came from)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def mean_time_per_call(fn, *args, seconds=0.05):
    """Seconds per call of fn(*args), over a batch of calls lasting `seconds` (after one
    call to warm it)."""
    fn(*args)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn(*args)
        calls += 1
    return (time.perf_counter() - start) / calls
