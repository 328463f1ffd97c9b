"""The packing of jitflow's sgemm (sgemm_ir.py): op(B)'s block into micro-panels of NR
columns, each KC x NR, stored k-major (one row of NR floats per k); op(A)'s block into
micro-panels of MR rows (MR floats per k). Panels past the matrix edge are padded with
zeros, so the micro-kernel always computes whole tiles.

`library` is the module being built (gemm_ir._Gemm): its tile, vector type and module.
"""
from llvmlite import ir

from ..emitter import F32, I32, I64, PTR, Emitter
from .common import VOID, element, minimum, new_function


def define_pack(library, width, name):
    """void pack(ptr src, i64 lane_stride, i64 k_stride, i64 lanes, i64 depth,
    ptr dst): `lanes` lanes (rows of op(A), or columns of op(B)) of `depth` values,
    lane l's value p at src[l * lane_stride + p * k_stride], into micro-panels of
    `width` lanes, each `depth` rows of `width` floats, the last padded with zeros."""
    panel = _define_panel(library, width, name + ".panel")
    function, b = new_function(library.module, name, VOID, [PTR, I64, I64, I64, I64, PTR])
    src, lane_stride, k_stride, lanes, depth, dst = function.args
    panels = b.udiv(b.add(lanes, I64(width - 1)), I64(width))
    with Emitter(b).for_range(panels, name="panel") as index:
        first = b.mul(index, I64(width))
        valid = minimum(b, I64(width), b.sub(lanes, first))
        b.call(panel, [element(b, src, b.mul(first, lane_stride)), lane_stride, k_stride,
                       valid, depth, element(b, dst, b.mul(first, depth))])
    b.ret_void()
    return function


def _define_panel(library, width, name):
    """One micro-panel of `valid` lanes. Whole panels whose lanes or whose k values
    lie next to each other in memory are copied by vectors; the rest (edges, odd
    strides) one float at a time."""
    function, b = new_function(library.module, name, VOID, [PTR, I64, I64, I64, I64, PTR])
    src, lane_stride, k_stride, valid, depth, dst = function.args
    dst.add_attribute("noalias")
    whole = b.icmp_signed("==", valid, I64(width))
    lanes_adjacent = b.and_(whole, b.icmp_signed("==", lane_stride, I64(1)))
    k_adjacent = b.and_(whole, b.icmp_signed("==", k_stride, I64(1)))
    with b.if_else(lanes_adjacent) as (rows_of_lanes, other):
        with rows_of_lanes:
            _copy_lane_rows(b, width, src, k_stride, depth, dst)
        with other:
            with b.if_else(k_adjacent) as (transpose, scalar):
                with transpose:
                    done = _transpose_blocks(library, b, width, src, lane_stride, depth, dst)
                    _copy_scalars(b, width, src, lane_stride, k_stride, I64(width), done,
                                  depth, dst)
                with scalar:
                    _copy_scalars(b, width, src, lane_stride, k_stride, valid, I64(0),
                                  depth, dst)
    b.ret_void()
    return function


def _copy_lane_rows(b, width, src, k_stride, depth, dst):
    """All lanes of one k lie together: one `width`-float load and store per k."""
    row = ir.VectorType(F32, width)
    with Emitter(b).for_range(depth, name="p") as p:
        value = b.load(element(b, src, b.mul(p, k_stride)), typ=row, align=4)
        b.store(value, element(b, dst, b.mul(p, I64(width))), align=4)


def _transpose_blocks(library, b, width, src, lane_stride, depth, dst):
    """Each lane's k values lie together: load `lanes` k values of each lane,
    transpose the square in registers, store one vector per k. Returns the number
    of k values done (a multiple of `lanes`); the rest is left to _copy_scalars."""
    lanes = library.tile.lanes
    blocks = b.udiv(depth, I64(lanes))
    with Emitter(b).for_range(blocks, name="block") as block:
        first_k = b.mul(block, I64(lanes))
        # Whole groups of `lanes` lanes in a loop: one transpose in the code, however
        # wide the panel (each took LLVM about 11 ms to compile).
        with Emitter(b).for_range(I64(width // lanes), name="group") as group:
            _transpose_group(library, b, width, src, lane_stride, dst, first_k,
                             b.mul(group, I64(lanes)), lanes)
        if width % lanes:
            _transpose_group(library, b, width, src, lane_stride, dst, first_k,
                             I64(width - width % lanes), width % lanes)
    return b.mul(blocks, I64(lanes))


def _transpose_group(library, b, width, src, lane_stride, dst, first_k, group, count):
    """Lanes group..group+count-1 (count at most the vector's lanes) of the k values
    from first_k on: loaded a lane at a time, stored a k at a time."""
    lanes, vector = library.tile.lanes, library.vector
    rows = [b.load(element(b, src, b.add(b.mul(b.add(group, I64(lane)), lane_stride),
                                         first_k)),
                   typ=vector, align=4) for lane in range(count)]
    rows += [ir.Constant(vector, ir.Undefined)] * (lanes - count)
    for q, column in enumerate(_transpose(b, rows)):
        if count < lanes:
            column = b.shuffle_vector(column, ir.Constant(vector, ir.Undefined),
                                      ir.Constant(ir.VectorType(I32, count),
                                                  list(range(count))))
        at = b.add(b.mul(b.add(first_k, I64(q)), I64(width)), group)
        b.store(column, element(b, dst, at), align=4)


def _transpose(b, rows):
    """The transpose of a square of vectors (lanes a power of two), by log2(lanes)
    rounds of swapping blocks: at distance d, rows i and i + d (i without bit d) trade
    their off-diagonal blocks of d lanes. Each shuffle keeps every lane within its
    own position or moves it by d, which x86 does in one or two instructions: LLVM
    compiled a 16-lane transpose in 11 ms this way against 41 ms for interleaving rows
    i and i + lanes / 2, into 106 vector instructions against 130."""
    lanes = len(rows)
    distance = 1
    while distance < lanes:
        upper = ir.Constant(ir.VectorType(I32, lanes), [
            j if not j & distance else lanes + j - distance for j in range(lanes)])
        lower = ir.Constant(ir.VectorType(I32, lanes), [
            j + distance if not j & distance else lanes + j for j in range(lanes)])
        swapped = list(rows)
        for i in range(lanes):
            if not i & distance:
                swapped[i] = b.shuffle_vector(rows[i], rows[i + distance], upper)
                swapped[i + distance] = b.shuffle_vector(rows[i], rows[i + distance], lower)
        rows, distance = swapped, distance * 2
    return rows


def _copy_scalars(b, width, src, lane_stride, k_stride, valid, start, depth, dst):
    """k values start..depth of `valid` lanes one float at a time, the panel's lanes
    from `valid` on zeroed."""
    with Emitter(b).for_range(b.sub(depth, start), name="p") as index:
        p = b.add(start, index)
        row = element(b, dst, b.mul(p, I64(width)))
        with Emitter(b).for_range(valid, name="lane") as lane:
            value = b.load(element(b, src, b.add(b.mul(lane, lane_stride),
                                                 b.mul(p, k_stride))), typ=F32)
            b.store(value, element(b, row, lane))
        with Emitter(b).for_range(b.sub(I64(width), valid), name="pad") as pad:
            b.store(ir.Constant(F32, 0.0), element(b, row, b.add(valid, pad)))
