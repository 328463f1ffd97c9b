"""Small float32 products computed in the graph's own code, without calling jitflow_sgemm.

jitflow_sgemm packs both operands into buffers it allocates on every call, so that its
micro-kernel reads them in order; for a product of a few hundred thousand operations the
call, the allocations and the packing cost more than the arithmetic. A scan over a
recurrent cell's step runs such products thousands of times: in the RNN of
benchmarks/bench_control_flow.py (batch 32, 64 hidden units) its products of 32x64 by
64x64 ran at 40 GFLOP/s, of 32x8 by 8x64 at 12, and of 32x64 by 64x1 at 2.

Here out is computed a block of rows and columns at a time (register_block), its
accumulators in registers while a loop over k broadcasts x's elements and loads y's row
(which stays in the L1 cache). Each element is the fused multiply-adds of its terms in k
order, starting from zero: exactly what jitflow_sgemm computes when k fits one of its
depth blocks (the tile's KC), so the results keep their bits whichever of the two
computes them.
"""
import numpy as np
from llvmlite import ir

from ...ir.sizes import surely
from ..emitter import I64, LaneOffset, entry_alloca, intrinsic_suffix
from ..math.arithmetic import declare

# Products of at most this many floating-point operations (2 m n k) are small. Above it
# the packing pays for itself: at 64x64x64 (this size) the packed kernel ran at 40
# GFLOP/s, well below its 140 on large products.
SMALL_PRODUCT_FLOPS = 1 << 19
# So are products up to NARROW_PRODUCT_FLOPS with at most NARROW_COLUMNS columns:
# sgemm's AVX-512 tile is 32 columns wide, and narrower products waste part of it. On
# an Intel Xeon (Emerald Rapids; this path on one thread, sgemm on two), a convnet's
# 4096x9 by 9x16 took 23-60 us here against 192-269 us, and 1024x144 by 144x32 112-117
# us against 144-576 us (two runs each).
NARROW_COLUMNS = 32
NARROW_PRODUCT_FLOPS = 1 << 24
# And shallow ones, of k up to SHALLOW_DEPTH, up to NARROW_PRODUCT_FLOPS: sgemm's
# micro-kernel then spends more time loading and storing its tile than adding to it.
# With the rows split between two threads here, against sgemm's two threads, on an
# Intel Xeon (Emerald Rapids; 15 interleaved batches each): 0.40-0.94 of sgemm's time
# for an MLP's 256x10 by 10x512, 784x16 by 16x512, 1024x8 by 8x1024 and a convnet's
# 4096x9 by 9x64 (AVX2 code on the same CPU: 0.65-0.92), but 1.28 at k = 32.
SHALLOW_DEPTH = 16


def is_small_product(x, y, out, tile, typical=lambda size: size):
    """Whether out = x @ y (each a View of its last two axes) is computed here: float32
    operands in memory, k within one depth block of jitflow_sgemm's `tile`, and little
    work per product, or a narrow or shallow one. (y's rows must be contiguous: the
    caller copies it if not.) Run-time sizes (ir/sizes.py) count as `typical` makes
    them for the work, which only tunes speed; k must be within the block at every
    size, for the two ways give the same bits only there."""
    rows, cols = (typical(size) for size in out.shape[-2:])
    depth = x.shape[-1]
    flops = 2 * rows * cols * typical(depth)
    float32 = np.dtype(np.float32)
    small = flops <= SMALL_PRODUCT_FLOPS or ((cols <= NARROW_COLUMNS or
                                              surely(lambda: depth <= SHALLOW_DEPTH)) and
                                             flops <= NARROW_PRODUCT_FLOPS)
    return (out.dtype == x.dtype == y.dtype == float32 and
            x.constant is None and y.constant is None and out.strides[-1] == 1 and
            surely(lambda: 0 < depth <= tile.depth) and small)


def register_block(tile, cols):
    """(rows, vectors): the block of out kept in registers, rows x vectors accumulators
    of the tile's vectors. A fused multiply-add waits about 4 cycles for the one before
    it on the same accumulator, so a block needs many of them: 16 of AVX-512's 32
    registers, 8 of AVX's 16, leaving room for the row of y and the broadcasts of x; up
    to 4 (AVX: 2) vectors of columns, and as many rows as make up the rest (16 rows of
    a product with one column)."""
    accumulators, widest = (16, 4) if tile.lanes >= 16 else (8, 2)
    vectors = min(widest, -(-cols // tile.lanes))
    return accumulators // vectors, vectors


def emit_small_product(lo, x, y, out, offsets, tile):
    """Emit out = x @ y for the matrices at element `offsets` (of x, y and out) of the
    three views, in blocks of register_block(tile)."""
    em, b = lo.em, lo.builder
    slots = _accumulator_slots(lo, tile, out.shape[-1])
    block_rows = len(slots)
    if not isinstance(out.shape[-2], int):  # a run-time number of rows (ir/sizes.py)
        _rows_at_run_time(lo, (x, y, out), offsets, slots, tile.lanes)
        return
    groups, rest = divmod(out.shape[-2], block_rows)
    if groups:
        with em.for_range(groups, name="small.rows") as group:
            _rows(lo, (x, y, out), offsets, b.mul(group, I64(block_rows)), slots,
                  tile.lanes)
    if rest:
        _rows(lo, (x, y, out), offsets, I64(groups * block_rows), slots[:rest], tile.lanes)


def emit_small_rows(lo, x, y, out, offsets, tile, first, count):
    """emit_small_product's rows first .. first + count - 1 of out alone (i64 values):
    a worker's part of a product."""
    slots = _accumulator_slots(lo, tile, out.shape[-1])
    _row_range(lo, (x, y, out), offsets, slots, tile.lanes, first, count)


def _accumulator_slots(lo, tile, cols):
    block_rows, block_vectors = register_block(tile, cols)
    vector_type = ir.VectorType(ir.FloatType(), tile.lanes)
    return [[entry_alloca(lo.builder, vector_type, 4 * tile.lanes)
             for _ in range(block_vectors)] for _ in range(block_rows)]


def _rows_at_run_time(lo, views, offsets, slots, lanes):
    """emit_small_product's blocks for a number of rows known at run time."""
    _row_range(lo, views, offsets, slots, lanes, I64(0), I64(views[2].shape[-2]))


def _row_range(lo, views, offsets, slots, lanes, first, count):
    """Rows first .. first + count - 1 (i64 values): whole blocks, then the rows left
    one at a time (each element is the same sum either way)."""
    em, b = lo.em, lo.builder
    groups = b.udiv(count, I64(len(slots)))
    with em.for_range(groups, name="small.rows") as group:
        _rows(lo, views, offsets, b.add(first, b.mul(group, I64(len(slots)))), slots, lanes)
    done = b.add(first, b.mul(groups, I64(len(slots))))
    with em.for_range(b.sub(b.add(first, count), done), name="small.rest") as row:
        _rows(lo, views, offsets, b.add(done, row), slots[:1], lanes)


def _rows(lo, views, offsets, first, slots, lanes):
    """Rows first .. first + len(slots) - 1 of out, a block of columns at a time: whole
    blocks in a loop, then the columns left (the last of their vectors masked)."""
    em, b = lo.em, lo.builder
    x, _, out = views
    x_at, y_at, out_at = offsets
    rows = [b.add(first, I64(r)) for r in range(len(slots))]
    x_rows = [b.add(x_at, b.mul(row, I64(x.strides[-2]))) for row in rows]
    out_rows = [b.add(out_at, b.mul(row, I64(out.strides[-2]))) for row in rows]
    width = lanes * len(slots[0])
    whole, left = divmod(out.shape[-1], width)
    if whole:
        with em.for_range(whole, name="small.columns") as block:
            _block(lo, views, (x_rows, y_at, out_rows), b.mul(block, I64(width)),
                   slots, lanes)
    if left:
        vectors = -(-left // lanes)
        _block(lo, views, (x_rows, y_at, out_rows), I64(whole * width),
               [row[:vectors] for row in slots], lanes, left - (vectors - 1) * lanes)


def _block(lo, views, offsets, start, slots, lanes, last_lanes=None):
    """Columns start .. start + lanes * len(slots[0]) of the rows of out at `offsets`,
    the last vector holding only `last_lanes` of them when given; slots: a stack slot
    per accumulator (LLVM keeps them in registers)."""
    em, b = lo.em, lo.builder
    x, y, out = views
    x_rows, y_at, out_rows = offsets
    vector_type = ir.VectorType(ir.FloatType(), lanes)
    vectors = len(slots[0])
    masks = [None] * vectors
    if last_lanes is not None and last_lanes < lanes:
        masks[-1] = ir.Constant(ir.VectorType(ir.IntType(1), lanes),
                                [1] * last_lanes + [0] * (lanes - last_lanes))
    for slot in (slot for row in slots for slot in row):
        b.store(ir.Constant(vector_type, None), slot)
    multiply_add = _multiply_add(b.module, vector_type)
    with em.for_range(x.shape[-1], name="small.k") as k:
        y_row = b.add(b.add(y_at, b.mul(k, I64(y.strides[-2]))), start)
        y_values = []
        for v, mask in enumerate(masks):
            with em.vectorized(lanes, mask):
                y_values.append(em.load(y.base, y.dtype,
                                        LaneOffset(b.add(y_row, I64(v * lanes)), 1)))
        for x_row, row_slots in zip(x_rows, slots):
            x_value = em.load(x.base, x.dtype, b.add(x_row, b.mul(k, I64(x.strides[-1]))))
            with em.vectorized(lanes):
                broadcast = em.splat(x_value)
            for slot, y_value in zip(row_slots, y_values):
                total = b.load(slot, typ=vector_type)
                b.store(b.call(multiply_add, [broadcast, y_value, total]), slot)
    for out_row, row_slots in zip(out_rows, slots):
        for v, (slot, mask) in enumerate(zip(row_slots, masks)):
            with em.vectorized(lanes, mask):
                em.store(b.load(slot, typ=vector_type), out.base, out.dtype,
                         LaneOffset(b.add(b.add(out_row, start), I64(v * lanes)), 1))


def _multiply_add(module, vector_type):
    """llvm.fmuladd on `vector_type`, the operation jitflow_sgemm's micro-kernel adds
    its terms with (fused where the CPU has FMA, in both)."""
    return declare(module, f"llvm.fmuladd.{intrinsic_suffix(vector_type)}", vector_type, 3)
