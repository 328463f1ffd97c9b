"""The IR of jitflow's sgemm (sgemm.py loads it and declares its entry points).

The design is BLIS's, in these parts:
 - problem.py: the problem described by strides (op(A)[i, p] at a + i * a_rows +
   p * a_depth, and so on), so transposes and column-major order are only other
   strides; cblas.py turns cblas_sgemm's arguments into one, transposed when that
   pads far fewer elements.
 - tiles.py: the micro-kernel's tile (MR x NR) and the cache blocks (KC, MC, NC)
   for the host's CPU.
 - packing.py: the blocks of op(A) and op(B), packed into micro-panels padded with
   zeros, so the micro-kernel always computes whole tiles.
 - kernel.py: the micro-kernel, an MR x NR tile of C in vector registers, and the
   writing of its tile to C.
 - blocking.py: the product on one thread, through the cache blocks, with packing
   buffers of its own (an unpacked loop computes the same bits without them).
 - shares.py: a large product cut into one share per thread, run on the pool
   (jit/pool.py); any split gives the same bits.
 - entry_points.py: the entry points, which check the arguments as CBLAS does.
 - common.py: what all of them build with.
Nothing outside the matrices (as CBLAS defines them through m, n, k and the leading
dimensions) is read or written.
"""
from llvmlite import ir

from ..emitter import F32, I64, PTR
from .blocking import define_scale, define_solve
from .common import VOID, declare_function
from .entry_points import define_entry_points
from .kernel import define_tile
from .packing import define_pack
from .shares import define_body


def build_module(tile, threads):
    """The LLVM module (llvmlite.ir) defining SGEMM, which splits between `threads`
    threads, and SGEMM_THREADS, with micro-kernel tile and cache blocks `tile`."""
    return _Gemm(tile, threads).module


class _Gemm:
    """The module being built, handed to each part as `library`: the tile, the thread
    count, the declarations they share, and the module's functions, each defined by a
    part, callees first (the order of the module's text)."""

    def __init__(self, tile, threads):
        self.tile, self.threads = tile, threads
        self.module = ir.Module("jitflow_sgemm")
        self.vector = ir.VectorType(F32, tile.lanes)
        self.multiply_add = _multiply_add(self.module, self.vector, f"v{tile.lanes}f32")
        self.scalar_multiply_add = _multiply_add(self.module, F32, "f32")
        self.allocate = declare_function(self.module, "aligned_alloc", PTR, [I64, I64])
        self.release = declare_function(self.module, "free", VOID, [PTR])
        self.tile_function = define_tile(self)
        self.pack_rows = define_pack(self, tile.rows, "gemm.pack_rows")
        self.pack_cols = define_pack(self, tile.cols, "gemm.pack_cols")
        self.solve = define_solve(self)
        self.scale = define_scale(self)
        self.body = define_body(self)
        define_entry_points(self)


def _multiply_add(module, type, suffix):
    """x * y + z: one fused multiply-add where the CPU has them (every AVX2 and AVX-512
    CPU), a multiply and an add elsewhere, rather than llvm.fma's call to the C
    library's fmaf per lane. (declare_intrinsic cannot name overloads on vectors.)"""
    return declare_function(module, f"llvm.fmuladd.{suffix}", type, [type] * 3)
