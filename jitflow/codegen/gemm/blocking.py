"""The product on one thread, in jitflow's sgemm (sgemm_ir.py).

K is cut into near-equal blocks of at most KC, N into blocks of NC columns, M into
blocks of MC rows; op(B)'s block and op(A)'s are packed (packing.py), but for op(A)'s
whole micro-panels that can be read where they lie (READ_A_IN_PLACE), then the
micro-kernel (kernel.py) walks the A micro-panels of a block (in L2) against one B
micro-panel, then the next. Each product packs into buffers of its own (aligned_alloc),
so that any number of threads may call at once; if they cannot be allocated, an
unpacked loop computes the same bits instead. Also here: the scaling of C alone, BLAS's
answer when alpha or k is 0.

`library` is the module being built (gemm_ir._Gemm): its tile and module, the tile and
packing functions, the scalar fused multiply-add and the allocator.
"""
import contextlib

from llvmlite import ir

from ..emitter import F32, I64, PTR, Emitter, entry_alloca
from .common import (
                     ALIGNMENT, NULL, VOID, ceil_div, element, minimum, new_function, round_up)
from .problem import load_problem


def define_solve(library):
    """void solve(ptr problem): the product on this thread, with packing buffers of
    its own (so that any number of callers may run at once). (Defines the blocked and
    the unpacked product first.)"""
    blocked, naive = _define_blocked(library), _define_naive(library)
    tile = library.tile
    function, b = new_function(library.module, "gemm.solve", VOID, [PTR])
    (pointer,) = function.args
    p = load_problem(b, pointer)
    blocks = ceil_div(b, p["k"], tile.depth)
    depth = b.udiv(b.add(p["k"], b.sub(blocks, I64(1))), blocks)  # the largest block
    rows = round_up(b, minimum(b, p["m"], I64(tile.block_rows)), tile.rows)
    cols = round_up(b, minimum(b, p["n"], I64(tile.block_cols)), tile.cols)
    a_panels = _allocate_floats(library, b, b.mul(rows, depth))
    b_panels = _allocate_floats(library, b, b.mul(cols, depth))
    allocated = b.and_(b.icmp_unsigned("!=", a_panels, NULL),
                       b.icmp_unsigned("!=", b_panels, NULL))
    with b.if_else(allocated) as (packed, unpacked):
        with packed:
            b.call(blocked, [pointer, a_panels, b_panels])
        with unpacked:
            b.call(naive, [pointer])
    b.call(library.release, [a_panels])
    b.call(library.release, [b_panels])
    b.ret_void()
    return function


def _allocate_floats(library, b, count):
    size = round_up(b, b.mul(count, I64(4)), ALIGNMENT)
    return b.call(library.allocate, [I64(ALIGNMENT), size])


def _define_blocked(library):
    """void blocked(ptr problem, ptr a_panels, ptr b_panels): the product through the
    cache blocks, packing into the two buffers."""
    tile = library.tile
    function, b = new_function(library.module, "gemm.blocked", VOID, [PTR, PTR, PTR])
    pointer, a_panels, b_panels = function.args
    p = load_problem(b, pointer)
    col_blocks = ceil_div(b, p["n"], tile.block_cols)
    with Emitter(b).for_range(col_blocks, name="jc") as col_block:
        jc = b.mul(col_block, I64(tile.block_cols))
        nc = minimum(b, I64(tile.block_cols), b.sub(p["n"], jc))
        with _depth_blocks(library, b, p["k"]) as (pc, kc, first):
            scale = b.select(first, p["beta"], ir.Constant(F32, 1.0))
            b_block = element(b, p["b"], b.add(b.mul(pc, p["b_depth"]),
                                               b.mul(jc, p["b_cols"])))
            b.call(library.pack_cols, [b_block, p["b_cols"], p["b_depth"], nc, kc, b_panels])
            _row_blocks(library, b, p, jc, nc, pc, kc, scale, a_panels, b_panels)
    b.ret_void()
    return function


def _row_blocks(library, b, p, jc, nc, pc, kc, scale, a_panels, b_panels):
    tile = library.tile
    with Emitter(b).for_range(ceil_div(b, p["m"], tile.block_rows), name="ic") as block:
        ic = b.mul(block, I64(tile.block_rows))
        mc = minimum(b, I64(tile.block_rows), b.sub(p["m"], ic))
        a_block = element(b, p["a"], b.add(b.mul(ic, p["a_rows"]), b.mul(pc, p["a_depth"])))
        in_place = _rows_in_place(library, b, p, nc)
        _pack_rows(library, b, a_block, p, mc, kc, a_panels, in_place)
        with Emitter(b).for_range(ceil_div(b, nc, tile.cols), name="jr") as col_panel:
            jr = b.mul(col_panel, I64(tile.cols))
            b_panel = element(b, b_panels, b.mul(jr, kc))
            cols = minimum(b, I64(tile.cols), b.sub(nc, jr))
            with Emitter(b).for_range(ceil_div(b, mc, tile.rows), name="ir") as row_panel:
                ir_ = b.mul(row_panel, I64(tile.rows))
                rows = minimum(b, I64(tile.rows), b.sub(mc, ir_))
                a_panel, a_step = _row_panel(library, b, p, a_block, a_panels, in_place, ir_,
                                             rows, kc)
                c = element(b, p["c"], b.add(b.mul(b.add(ic, ir_), p["c_rows"]),
                                             b.mul(b.add(jc, jr), p["c_cols"])))
                b.call(library.tile_function, [a_panel, a_step, b_panel, kc, c,
                                               p["c_rows"], p["c_cols"], rows, cols,
                                               p["alpha"], scale])


# A micro-panel of op(A) is read where it lies when its rows are next to each other in
# memory (A transposed: a training step's x.T @ dy) and k's rows close enough; the last
# panel, when partial, is packed still (a whole panel's read would pass the matrix).
# Measured on an Intel Xeon (Emerald Rapids), calls paired with the packed product's:
#  - x.T @ dy at 128x384, 128x512, 192x512, 256x512 and 512x128 (k 512 or 1024) took
#    0.90-0.96 of the time on two threads (each packing all of op(A) when they split
#    C's columns), 0.98-1.0 on one (0.88-0.95 and 0.97-0.99 with a 6 x 64 tile);
#  - rows 512 floats apart: 1.07 at 512^3 on one thread, where 16 column panels each
#    read the block again and a packed block is three times denser; so that far apart
#    only for blocks of at most FEW_PANELS column panels;
#  - 1024 floats apart (a page per k): 1.7 times as long.
# Reading op(B) in place (its columns next to each other) lost up to 10% (1024x128x512,
# 512^3) and is not done.
READ_A_IN_PLACE = True
IN_PLACE_STRIDE, FEW_PANELS_STRIDE, FEW_PANELS = 256, 512, 4


def _rows_in_place(library, b, p, nc):
    """An i1: whether whole micro-panels of op(A) are read in place (above), for a
    block of nc columns."""
    stride = p["a_depth"]
    few_panels = b.icmp_signed("<=", nc, I64(FEW_PANELS * library.tile.cols))
    close = b.or_(b.icmp_signed("<=", stride, I64(IN_PLACE_STRIDE)),
                  b.and_(few_panels, b.icmp_signed("<=", stride, I64(FEW_PANELS_STRIDE))))
    return b.and_(b.and_(b.icmp_signed("==", p["a_rows"], I64(1)), close),
                  ir.Constant(ir.IntType(1), int(READ_A_IN_PLACE)))


def _pack_rows(library, b, a_block, p, mc, kc, a_panels, in_place):
    """Pack op(A)'s block into micro-panels, or (in_place) only its last if partial."""
    rows = library.tile.rows
    first = b.select(in_place, b.mul(b.udiv(mc, I64(rows)), I64(rows)), I64(0))
    b.call(library.pack_rows, [element(b, a_block, b.mul(first, p["a_rows"])), p["a_rows"],
                               p["a_depth"], b.sub(mc, first), kc,
                               element(b, a_panels, b.mul(first, kc))])


def _row_panel(library, b, p, a_block, a_panels, in_place, first, rows, kc):
    """(pointer, floats from one k to the next) of the A micro-panel of rows first..:
    in the block itself, or packed."""
    direct = b.and_(in_place, b.icmp_signed("==", rows, I64(library.tile.rows)))
    return (b.select(direct, element(b, a_block, first),
                     element(b, a_panels, b.mul(first, kc))),
            b.select(direct, p["a_depth"], I64(library.tile.rows)))


@contextlib.contextmanager
def _depth_blocks(library, b, k):
    """for (pc, kc, first) over K's blocks: as many as blocks of KC need, of near-equal
    sizes (KC 512: 784 = 392 + 392, not 512 + 272), cut where only k decides."""
    count = ceil_div(b, k, library.tile.depth)
    with Emitter(b).for_range(count, name="pc") as block:
        start = b.udiv(b.mul(block, k), count)
        end = b.udiv(b.mul(b.add(block, I64(1)), k), count)
        yield start, b.sub(end, start), b.icmp_signed("==", block, I64(0))


def _define_naive(library):
    """void naive(ptr problem): the product without packing, one element at a time,
    with the blocked product's operations in its order (the same bits): the way out
    when the packing buffers cannot be allocated."""
    function, b = new_function(library.module, "gemm.naive", VOID, [PTR])
    p = load_problem(b, function.args[0])
    with _depth_blocks(library, b, p["k"]) as (pc, kc, first):
        scale = b.select(first, p["beta"], ir.Constant(F32, 1.0))
        with Emitter(b).for_range(p["m"], name="i") as i:
            with Emitter(b).for_range(p["n"], name="j") as j:
                total = _naive_sum(library, b, p, i, j, pc, kc)
                pointer = element(b, p["c"], b.add(b.mul(i, p["c_rows"]),
                                                   b.mul(j, p["c_cols"])))
                _write_scalar(library, b, total, pointer, p["alpha"], scale)
    b.ret_void()
    return function


def _naive_sum(library, b, p, i, j, pc, kc):
    total = entry_alloca(b, F32, ALIGNMENT)  # promoted to a register by LLVM
    b.store(ir.Constant(F32, 0.0), total)
    with Emitter(b).for_range(kc, name="p") as index:
        depth = b.add(pc, index)
        a_value = b.load(element(b, p["a"], b.add(b.mul(i, p["a_rows"]),
                                                  b.mul(depth, p["a_depth"]))), typ=F32)
        b_value = b.load(element(b, p["b"], b.add(b.mul(depth, p["b_depth"]),
                                                  b.mul(j, p["b_cols"]))), typ=F32)
        running = b.load(total, typ=F32)
        b.store(b.call(library.scalar_multiply_add, [a_value, b_value, running]), total)
    return b.load(total, typ=F32)


def _write_scalar(library, b, value, pointer, alpha, scale):
    scaled = b.fmul(value, alpha)
    reads = b.fcmp_unordered("!=", scale, ir.Constant(F32, 0.0))
    with b.if_else(reads) as (accumulate, overwrite):
        with accumulate:
            old = b.load(pointer, typ=F32)
            b.store(b.call(library.scalar_multiply_add, [old, scale, scaled]), pointer)
        with overwrite:
            b.store(scaled, pointer)


def define_scale(library):
    """void scale(ptr problem): C = beta * C (zeros when beta is 0, whatever C held),
    BLAS's answer when alpha or k is 0."""
    function, b = new_function(library.module, "gemm.scale", VOID, [PTR])
    p = load_problem(b, function.args[0])
    with Emitter(b).for_range(p["m"], name="i") as i:
        with Emitter(b).for_range(p["n"], name="j") as j:
            pointer = element(b, p["c"], b.add(b.mul(i, p["c_rows"]), b.mul(j, p["c_cols"])))
            _write_scalar(library, b, ir.Constant(F32, 0.0), pointer, ir.Constant(F32, 0.0),
                          p["beta"])
    b.ret_void()
    return function
