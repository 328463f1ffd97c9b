"""OpenBLAS for matmul: found through the scipy-openblas32 wheel, loaded once per process,
and its gemm routines made known to LLVM by name.

Generated code calls the routines by symbol, so object code stays free of addresses and
can be stored in the disk cache: linking it, fresh or cached, resolves the symbol
through the table `llvm.add_symbol` fills. Lowering loads the library before it emits
a call, and a module is always lowered before it is compiled or loaded from the cache,
so the symbol is registered by the time the engine links.

JITFLOW_BLAS=0 (read each time a matmul is lowered) turns BLAS off: matmul then runs
the generated kernel for every dtype. Without the wheel, or where its library does not
load, that kernel is used too.
"""
import contextlib
import ctypes
import functools
import importlib.util
import os

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ..emitter import F32, F64, I32, PTR

# The CBLAS enumerations (cblas.h), passed as C ints.
ROW_MAJOR = 101
NO_TRANSPOSE = 111
TRANSPOSE = 112

# scipy-openblas32 takes 32-bit integers (blasint) for sizes and leading dimensions.
INT_MAX = 2 ** 31 - 1

# dtype -> (symbol, LLVM type of its alpha and beta); the wheel prefixes every symbol.
GEMM = {np.dtype(np.float32): ("scipy_cblas_sgemm", F32),
        np.dtype(np.float64): ("scipy_cblas_dgemm", F64)}

# How long OpenBLAS's idle threads spin before they sleep, as log2 of CPU cycles; the
# library reads it once, when it loads. Its default, 2**28 cycles (about 0.1 s), hurts
# here: NumPy has an OpenBLAS of its own, and the two thread pools spinning for each
# other on two cores made alternating NumPy and jitflow 128^3 sgemms take about 10 ms
# a pair instead of 0.06 ms. 2**14 cycles (a few microseconds) still keeps the threads
# awake between back-to-back calls.
SPIN_LOG2_CYCLES = "14"


def wanted():
    """False when JITFLOW_BLAS turns BLAS off."""
    return os.environ.get("JITFLOW_BLAS", "1").strip().lower() not in ("0", "false", "no")


@functools.cache
def library():
    """The loaded OpenBLAS (a ctypes handle) with its gemm symbols registered for
    LLVM, or None when the wheel is missing or its library does not load."""
    try:
        with _environment_default("OPENBLAS_THREAD_TIMEOUT", SPIN_LOG2_CYCLES):
            handle = ctypes.CDLL(_library_path())
        addresses = {name: ctypes.cast(getattr(handle, name), ctypes.c_void_p).value
                     for name, _ in GEMM.values()}
    except (ImportError, OSError, AttributeError, IndexError, TypeError):
        return None
    for name, address in addresses.items():
        llvm.add_symbol(name, address)
    return handle


def _library_path():
    """The wheel's shared library. Looked up in the package's folder first: importing
    the package costs about 20 ms (it reads its own metadata), which every cold compile
    with a matmul would pay."""
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None:
        raise ImportError("scipy-openblas32 is not installed")
    for folder in spec.submodule_search_locations or ():
        lib = os.path.join(folder, "lib")
        names = sorted(n for n in os.listdir(lib) if n.startswith("libscipy_openblas")
                       and n.endswith((".so", ".dylib", ".dll"))) if os.path.isdir(lib) else []
        if names:
            return os.path.join(lib, names[0])
    import scipy_openblas32
    return os.path.join(scipy_openblas32.get_lib_dir(),
                        scipy_openblas32.get_library(fullname=True))


def core_name():
    """The kernel family OpenBLAS chose when it loaded ("SkylakeX", "Haswell", ...; the
    OPENBLAS_CORETYPE environment variable overrides its choice), or None."""
    handle = library()
    if handle is None:
        return None
    function = handle.scipy_openblas_get_corename
    function.restype = ctypes.c_char_p
    return function().decode()


@contextlib.contextmanager
def _environment_default(name, value):
    """Environment variable `name` set to `value` inside the block, unless the user
    set it already."""
    if name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


def gemm(module, dtype):
    """The gemm routine for `dtype` declared in `module`, or None when BLAS is off,
    missing, or has no routine for that dtype:

        void gemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    """
    entry = GEMM.get(np.dtype(dtype))
    if entry is None or not wanted() or library() is None:
        return None
    name, scalar = entry
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    flags_and_sizes = [I32] * 6  # order, trans_a, trans_b, m, n, k
    signature = ir.FunctionType(ir.VoidType(), flags_and_sizes + [
        scalar, PTR, I32, PTR, I32, scalar, PTR, I32])
    return ir.Function(module, signature, name)

