"""The LLVM backend: lowering of optimized graphs to native code through llvmlite.

The rest of jitflow calls it through the names below: NativeGraph(graph, name) compiles
a graph; its Python entry answers the outputs, FALLBACK (the arrays do not match the
compiled signature: take the checked path) or an error status, which raise_for turns
into the exception. Inside, each layer uses only those listed before it:

    emitter, views, memory, errors   the shared vocabulary: llvmlite helpers, strided
                                     views of buffers, the workspace plan, statuses
    jit/       LLVM IR text -> machine code: target CPU, JIT, disk cache, thread pool
    math/      scalar semantics of the elementwise primitives, vector math functions
    loops/     vector loops, reductions, arg reductions, gathers and scatters
    gemm/      matmul: OpenBLAS, and jitflow's own sgemm
    linalg/    solve, slogdet, cholesky, eigh, svd, qr: LAPACK, from the same library
    control/   switch, while, scan and while_grad: subgraphs compiled apart and called
    lowering/  Graph -> LLVM modules (Lowering, the structural primitives' table)
    runtime/   NativeGraph: the compiled graph and its call boundary

codegen imports jitflow.ir (and small leaf modules), never the layers that trace or
differentiate: what it needs from them (a while_grad's backward step) is handed in.
"""
from .errors import FALLBACK, OK, raise_for


def __getattr__(name):
    # The LLVM side (the JIT, the lowering) loads on first use, not with jitflow: it
    # takes a tenth of a second that the interpreter backend never needs.
    if name == "NativeGraph":
        from .runtime.native import NativeGraph
        return NativeGraph
    if name == "reporting_misses":  # compile work ahead: jit/disk_cache.py
        from .jit.disk_cache import reporting_misses
        return reporting_misses
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["NativeGraph", "FALLBACK", "OK", "raise_for", "reporting_misses"]
