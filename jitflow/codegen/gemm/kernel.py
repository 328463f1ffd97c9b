"""The micro-kernel of jitflow's sgemm (sgemm_ir.py), and the function that writes its
tile to C.

The micro-kernel keeps an MR x NR tile of C in vector registers (MR rows of NR / lanes
vectors), and per k broadcasts MR values of A against NR / lanes vector loads of B, with
one fused multiply-add each. A tile is written straight to C when it is whole; an edge
tile goes through a tile on the stack, and only its elements inside C are copied.

`library` is the module being built (gemm_ir._Gemm): its tile, vector type, module and
fused multiply-add.
"""
from llvmlite import ir

from ..emitter import F32, I32, I64, PTR, Emitter, entry_alloca
from .common import ALIGNMENT, VOID, element, new_function


def _define_kernel(library):
    """void kernel(ptr ap, ptr bp, i64 depth, ptr dst, i64 ld, float alpha,
    float scale): the MR x NR product of an A and a B micro-panel over `depth` (at
    least 1) values of k, then dst[r * ld + j] = alpha * product + scale * dst[...]
    (dst not read when scale is 0)."""
    tile, vector = library.tile, library.vector
    function, b = new_function(library.module, "gemm.kernel", VOID,
                               [PTR, PTR, I64, PTR, I64, F32, F32])
    ap, bp, depth, dst, ld, alpha, scale = function.args
    for pointer in (ap, bp, dst):
        pointer.add_attribute("noalias")
    entry = b.block
    loop = function.append_basic_block("k")
    done = function.append_basic_block("k.end")
    b.branch(loop)
    b.position_at_end(loop)
    p = b.phi(I64, name="p")
    p.add_incoming(I64(0), entry)
    sums = [[b.phi(vector) for _ in range(tile.vectors)] for _ in range(tile.rows)]
    for row in sums:
        for value in row:
            value.add_incoming(ir.Constant(vector, None), entry)
    b_row = element(b, bp, b.mul(p, I64(tile.cols)))
    b_vectors = [b.load(element(b, b_row, I64(v * tile.lanes)), typ=vector,
                        align=4 * tile.lanes) for v in range(tile.vectors)]
    a_row = element(b, ap, b.mul(p, I64(tile.rows)))
    following = b.add(p, I64(1), flags=["nuw", "nsw"])
    updated = []
    for r, row in enumerate(sums):
        a_value = _splat(library, b, b.load(element(b, a_row, I64(r)), typ=F32))
        updated.append([b.call(library.multiply_add, [a_value, b_vector, value])
                        for b_vector, value in zip(b_vectors, row)])
        for value, new in zip(row, updated[-1]):
            value.add_incoming(new, loop)
    p.add_incoming(following, loop)
    b.cbranch(b.icmp_signed("<", following, depth), loop, done)
    b.position_at_end(done)
    _write_tile(library, b, updated, dst, ld, alpha, scale)
    b.ret_void()
    return function


def _write_tile(library, b, sums, dst, ld, alpha, scale):
    """dst = alpha * sums + scale * dst, with the same operations in every path
    (dst * scale + alpha * sum, fused), so an edge tile rounds like a whole one."""
    tile = library.tile
    alpha, scale_vector = _splat(library, b, alpha), _splat(library, b, scale)
    scaled = [[b.fmul(value, alpha) for value in row] for row in sums]
    pointers = [[element(b, dst, b.add(b.mul(I64(r), ld), I64(v * tile.lanes)))
                 for v in range(tile.vectors)] for r in range(tile.rows)]
    reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
    with b.if_else(reads) as (accumulate, overwrite):
        with accumulate:
            for row, row_pointers in zip(scaled, pointers):
                for value, pointer in zip(row, row_pointers):
                    old = b.load(pointer, typ=library.vector, align=4)
                    updated = b.call(library.multiply_add, [old, scale_vector, value])
                    b.store(updated, pointer, align=4)
        with overwrite:
            for row, row_pointers in zip(scaled, pointers):
                for value, pointer in zip(row, row_pointers):
                    b.store(value, pointer, align=4)


def _splat(library, b, scalar):
    """`scalar` in every lane of the tile's vector type."""
    vector, lanes = library.vector, library.tile.lanes
    single = b.insert_element(ir.Constant(vector, ir.Undefined), scalar, I32(0))
    return b.shuffle_vector(single, ir.Constant(vector, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))


def define_tile(library):
    """void tile(ptr ap, ptr bp, i64 depth, ptr c, i64 c_rows, i64 c_cols, i64 rows,
    i64 cols, float alpha, float scale): the kernel's tile, written to the rows x
    cols corner of it that lies in C at `c`. (Defines the kernel first.)"""
    kernel = _define_kernel(library)
    tile = library.tile
    function, b = new_function(library.module, "gemm.tile", VOID,
                               [PTR, PTR, I64, PTR, I64, I64, I64, I64, F32, F32])
    ap, bp, depth, c, c_rows, c_cols, rows, cols, alpha, scale = function.args
    buffer = entry_alloca(b, ir.ArrayType(F32, tile.rows * tile.cols), ALIGNMENT)
    whole = b.and_(b.and_(b.icmp_signed("==", rows, I64(tile.rows)),
                          b.icmp_signed("==", cols, I64(tile.cols))),
                   b.icmp_signed("==", c_cols, I64(1)))
    with b.if_else(whole) as (direct, through_buffer):
        with direct:
            b.call(kernel, [ap, bp, depth, c, c_rows, alpha, scale])
        with through_buffer:
            reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
            with b.if_then(reads):
                _copy_corner(library, b, c, c_rows, c_cols, buffer, rows, cols, into_c=False)
            b.call(kernel, [ap, bp, depth, buffer, I64(tile.cols), alpha, scale])
            _copy_corner(library, b, c, c_rows, c_cols, buffer, rows, cols, into_c=True)
    b.ret_void()
    return function


def _copy_corner(library, b, c, c_rows, c_cols, buffer, rows, cols, into_c):
    with Emitter(b).for_range(rows, name="r") as r:
        with Emitter(b).for_range(cols, name="j") as j:
            in_c = element(b, c, b.add(b.mul(r, c_rows), b.mul(j, c_cols)))
            in_buffer = element(b, buffer, b.add(b.mul(r, I64(library.tile.cols)), j))
            source, target = (in_buffer, in_c) if into_c else (in_c, in_buffer)
            b.store(b.load(source, typ=F32), target)
