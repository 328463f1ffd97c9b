"""jitflow's own single-precision matrix product, generated as LLVM IR, compiled once per
process and called by name like BLAS, with cblas_sgemm's arguments and meaning:

    void jitflow_sgemm(i32 order, i32 trans_a, i32 trans_b, i32 m, i32 n, i32 k,
                       float alpha, ptr a, i32 lda, ptr b, i32 ldb, float beta,
                       ptr c, i32 ldc)

C = alpha * op(A) @ op(B) + beta * C; order 101 (row-major) or 102 (column-major); trans
111 (op(X) = X) or 112 and 113 (op(X) = X transposed). jitflow passes alpha 1 and beta 0,
the case this is built for: C is then only written, whatever it held before (NaN too).
Other alpha and beta cost one multiply (and a read of C) per element and K block; alpha
0 or k 0 only scale C, and beta 0 never reads C, as in BLAS. Arguments CBLAS rejects
(unknown flags, negative sizes, a leading dimension shorter than the rows it steps over)
return without touching C: CBLAS reports them and returns too.

    void jitflow_sgemm_threads(i32 threads, <the same arguments>)

splits the product between `threads` threads instead of the JITFLOW_THREADS read when
the module was built. Results are the same bits for any number of threads.

    void jitflow_sgemm_shares(i64 first, i64 end, i64 count, <the same arguments>)

computes shares first..end-1 of the product cut into `count`, on the calling thread: for
generated code whose own workers each compute a share (matmul.py).

How it is built is told in sgemm_ir.py.
"""
import ctypes
import functools
import threading

import llvmlite.binding as llvm

from ..emitter import I32, I64
from ..jit import pool
from ..jit.engine import CompiledModule, host, link_library_on_demand
from ..jit.threads import thread_count
from .cblas import (
                    COLUMN_MAJOR, CONJUGATE_TRANSPOSE, NO_TRANSPOSE, ROW_MAJOR, TRANSPOSE, cblas_type)
from .common import VOID, declare_function
from .entry_points import SGEMM, SGEMM_SHARES, SGEMM_THREADS
from .sgemm_ir import build_module
from .shares import MIN_PARALLEL_FLOPS
from .tiles import AVX512_TILE, AVX_TILE, SSE_TILE, Tile, tile_for

# The entry points, the CBLAS flags, the tiles and the threshold for threads are the
# generator's (sgemm_ir.py and its parts); they are part of this module's interface too.
__all__ = ["AVX512_TILE", "AVX_TILE", "COLUMN_MAJOR", "CONJUGATE_TRANSPOSE",
           "MIN_PARALLEL_FLOPS", "NO_TRANSPOSE", "ROW_MAJOR", "SGEMM", "SGEMM_SHARES",
           "SGEMM_THREADS", "SSE_TILE", "TRANSPOSE", "Tile", "build_module", "tile_for",
           "ensure_loaded", "sgemm_function", "sgemm_threads_function", "declare",
           "declare_shares", "declare_threads", "CBLAS_ARGUMENTS", "host"]

# --- loading -----------------------------------------------------------------------------

_LOADING = threading.Lock()


def ensure_loaded():
    """Compile the module (once per process, thread-safe; SGEMM splits between the
    threads JITFLOW_THREADS asks for then), register its entry points for the linker,
    and return {name: address}."""
    with _LOADING:  # LLVM releases the GIL: two threads could compile it twice
        return _load()


@functools.cache
def _load():
    """Its code is never freed: generated modules link against it by name."""
    pool.runtime()  # registered before this module links to it
    tile, threads = tile_for(host()[2]), thread_count()
    # O1: the kernels are explicit vector code, and ran as fast as at O3 in the same
    # benchmark run (bench_gemm.py), while O3 took about twice as long to compile.
    compiled = CompiledModule.library(f"sgemm {tile} {threads} threads",
                                      lambda: build_module(tile, threads), speed_level=1)
    addresses = {name: compiled.address(name) for name in (SGEMM, SGEMM_THREADS,
                                                            SGEMM_SHARES)}
    compiled.keep_for_the_process()
    for name, address in addresses.items():
        llvm.add_symbol(name, address)
    return addresses


link_library_on_demand(SGEMM, ensure_loaded)  # SGEMM prefixes all three names

CBLAS_ARGUMENTS = [ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_int,
                                        ctypes.c_void_p, ctypes.c_int, ctypes.c_float,
                                        ctypes.c_void_p, ctypes.c_int]


def sgemm_function():
    """jitflow_sgemm as a ctypes function (it releases the GIL while it runs)."""
    return ctypes.CFUNCTYPE(None, *CBLAS_ARGUMENTS)(ensure_loaded()[SGEMM])


def sgemm_threads_function():
    """jitflow_sgemm_threads as a ctypes function: a thread count, then cblas's
    arguments."""
    return ctypes.CFUNCTYPE(None, ctypes.c_int, *CBLAS_ARGUMENTS)(ensure_loaded()[SGEMM_THREADS])


def declare(module):
    """jitflow_sgemm declared in `module`; compiled and registered before the first
    module calling it links."""
    return module.globals.get(SGEMM) or declare_function(module, SGEMM, VOID, cblas_type().args)


def declare_shares(module):
    """jitflow_sgemm_shares declared in `module`:

        void jitflow_sgemm_shares(i64 first, i64 end, i64 count, <cblas's arguments>)

    computes shares first..end-1 of the product cut into `count` (a product too small to
    cut is computed whole by the caller with first 0), on the calling thread: for code
    whose own workers (lowering/parallel.py) each compute a share."""
    return (module.globals.get(SGEMM_SHARES)
            or declare_function(module, SGEMM_SHARES, VOID, cblas_type(I64, I64, I64).args))


def declare_threads(module):
    """jitflow_sgemm_threads declared in `module`: for code lowered for a thread count
    of its own (threads.thread_count() when it is lowered)."""
    return (module.globals.get(SGEMM_THREADS)
            or declare_function(module, SGEMM_THREADS, VOID, cblas_type(I32).args))
