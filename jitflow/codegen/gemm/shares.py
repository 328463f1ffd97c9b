"""Threads in jitflow's sgemm (sgemm_ir.py): a product of at least MIN_PARALLEL_FLOPS is
cut into one share per thread, a contiguous, disjoint part of C's rows (in whole
MR-row panels) or of its columns (whole NR-column panels), whichever balances the work
better; the pool's workers (jit/pool.py) each compute theirs as a product of its own, and a
caller that finds the pool busy computes every share itself. An element's sum runs
over the same K blocks in the same order whoever computes it, so any split gives the
same bits.

`library` is the module being built (gemm_ir._Gemm): its tile and module, and the
solve and body functions.
"""
from llvmlite import ir

from ..emitter import F64, I32, I64, PTR, Emitter, entry_alloca
from ..jit import pool
from .common import ALIGNMENT, ceil_div, element, minimum, new_function, round_up
from .problem import PROBLEM, SHARES, SPLIT_COLS, SPLIT_ROWS, load_problem, store_problem

# Below this many floating-point operations (2 m n k) a product runs on the calling
# thread alone. Measured on 2 cores, two threads against one, calls back to back (the
# pool's workers awake): 5.2 -> 3.8 us at 64^3 (0.5 MFLOP), 10.6 -> 6.7 us at 96^3,
# 28 -> 16 us for the (256, 10, 512) of an MLP's last layer (2.6 MFLOP). With calls 1 ms
# apart (workers asleep; waking one took 25-100 us here) two threads lost even at 256^3
# (170 against 190 us). Generated code calls gemm between split kernels, with the
# workers awake, as parallel.MIN_PARALLEL_ELEMENTS assumes too.
MIN_PARALLEL_FLOPS = 1 << 21


def define_body(library):
    """i32 body(ptr shares, i64 worker, i64 end, ptr barrier), run by the pool: solves
    shares worker..end-1 (one, or all of them for a caller left alone)."""
    function, b = new_function(library.module, "gemm.body", I32, [PTR, I64, I64, PTR])
    shares, worker, end, _ = function.args
    problem = load_problem(b, b.gep(shares, [I32(0), I32(0)], source_etype=SHARES))
    axis = b.load(b.gep(shares, [I32(0), I32(1)], source_etype=SHARES), typ=I64)
    count = b.load(b.gep(shares, [I32(0), I32(2)], source_etype=SHARES), typ=I64)
    part = entry_alloca(b, PROBLEM, ALIGNMENT)
    with Emitter(b).for_range(b.sub(end, worker), name="share") as index:
        share = b.add(worker, index)
        on_rows = b.icmp_signed("==", axis, I64(SPLIT_ROWS))
        begin = _share_bound(library, b, problem, on_rows, share, count)
        finish = _share_bound(library, b, problem, on_rows, b.add(share, I64(1)), count)
        with b.if_then(b.icmp_signed("<", begin, finish)):
            store_problem(b, _share(b, problem, on_rows, begin, finish), part)
            b.call(library.solve, [part])
    b.ret(I32(0))
    return function


def _share_bound(library, b, problem, on_rows, share, count):
    """Where share `share` of `count` starts: in whole panels, a function of the
    shapes only."""
    size = b.select(on_rows, problem["m"], problem["n"])
    unit = b.select(on_rows, I64(library.tile.rows), I64(library.tile.cols))
    units = b.udiv(b.add(size, b.sub(unit, I64(1))), unit)
    start = b.mul(b.udiv(b.mul(share, units), count), unit)
    return minimum(b, start, size)


def _share(b, problem, on_rows, begin, end):
    """The part of `problem` that computes C's rows (or columns) begin..end-1."""
    p = problem
    a_offset = b.select(on_rows, b.mul(begin, p["a_rows"]), I64(0))
    b_offset = b.select(on_rows, I64(0), b.mul(begin, p["b_cols"]))
    c_offset = b.mul(begin, b.select(on_rows, p["c_rows"], p["c_cols"]))
    size = b.sub(end, begin)
    return dict(p, a=element(b, p["a"], a_offset), b=element(b, p["b"], b_offset),
                c=element(b, p["c"], c_offset),
                m=b.select(on_rows, size, p["m"]), n=b.select(on_rows, p["n"], size))


def solve_on_threads(library, b, problem, shares, threads):
    """Solve on this thread, or in shares on the pool for a large enough product."""
    with b.if_else(worth_splitting(b, problem, threads)) as (pooled, alone):
        with pooled:
            plan_shares(library, b, problem, shares, threads)
            b.call(pool.declare_run(library.module), [library.body, shares, threads])
        with alone:
            b.call(library.solve, [b.gep(shares, [I32(0), I32(0)], source_etype=SHARES)])


def worth_splitting(b, problem, count):
    """An i1: more than one share and at least MIN_PARALLEL_FLOPS of work."""
    m, n, k = (b.uitofp(problem[name], F64) for name in "mnk")
    flops = b.fmul(b.fmul(b.fmul(m, n), k), ir.Constant(F64, 2.0))
    return b.and_(b.icmp_signed(">", count, I64(1)),
                  b.fcmp_ordered(">=", flops, ir.Constant(F64, float(MIN_PARALLEL_FLOPS))))


def plan_shares(library, b, problem, shares, count):
    """Record in `shares` the axis to cut (_split_columns) and the share count."""
    axis = b.select(_split_columns(library, b, problem, count), I64(SPLIT_COLS),
                    I64(SPLIT_ROWS))
    b.store(axis, b.gep(shares, [I32(0), I32(1)], source_etype=SHARES))
    b.store(count, b.gep(shares, [I32(0), I32(2)], source_etype=SHARES))


def _split_columns(library, b, problem, threads):
    """Whether to split C's columns rather than its rows: the split whose largest
    share computes fewer (padded) tiles, so that no thread waits long for another
    (512 x 512 in 12 x 32 tiles: 256 columns each, where rows go 264 and 252); within
    1/EVEN_WITHIN of even, the larger dimension, so that each thread packs the smaller
    operand whole (a split of rows packs all of B in every share, of columns all of A).
    1024 x 128 x 512 in 6 x 64 tiles splits its columns by padded tiles alone, 1% fewer,
    and took 1.13 times as long on two threads as the split of its rows."""
    tile = library.tile
    rows, cols = problem["m"], problem["n"]

    def largest_share(size, unit):
        units = ceil_div(b, size, unit)
        return b.mul(b.udiv(b.add(units, b.sub(threads, I64(1))), threads), I64(unit))

    by_rows = b.mul(largest_share(rows, tile.rows), round_up(b, cols, tile.cols))
    by_cols = b.mul(round_up(b, rows, tile.rows), largest_share(cols, tile.cols))
    larger = b.select(b.icmp_unsigned("<", by_rows, by_cols), by_cols, by_rows)
    smaller = b.select(b.icmp_unsigned("<", by_rows, by_cols), by_rows, by_cols)
    even = b.icmp_unsigned("<=", b.mul(b.sub(larger, smaller), I64(EVEN_WITHIN)), larger)
    return b.select(even, b.icmp_signed(">", cols, rows),
                    b.icmp_unsigned("<", by_cols, by_rows))


EVEN_WITHIN = 16  # splits whose largest shares differ by at most 1/16 count as even
