"""A float sum of elements that come one at a time, a run-time number of them (a row
whose length is a run-time size, ir/sizes.py), about as accurate as NumPy's pairwise
sum: blocks of BLOCK elements are summed as NumPy sums 128 (LANES partial sums, element
i into partial i % LANES, folded pairwise), and the blocks' sums pairwise, through a
binary counter of the blocks finished (a stack of partial sums, level k holding 2**k
blocks). Summed in order, a row of 10**7 float32 elements could lose about n times the
rounding error of one addition; this way about BLOCK / LANES plus log2(n) of them.

After block c (counted from 1) the sums of the levels below c's lowest set bit are
folded in, older ones on the left, as a tree over the blocks would fold them; at the
end the levels left, oldest first, then the last partial block.
"""
import numpy as np
from llvmlite import ir

from ...ir.types import is_floating
from ..emitter import I64, ltype
from .accumulate import combine

BLOCK = 128  # elements per block (as NumPy's pairwise sum's blocks)
LANES = 8  # partial sums in a block (as NumPy's)
LEVELS = 64  # enough for any i64 count of blocks


def wants_cascade(op, dtype):
    return op == "reduce_sum" and is_floating(np.dtype(dtype))


class CascadeSum:
    """start() once, add(value) per element (scalar code), result() at the end; the
    state lives in stack slots of the function being lowered (Lowering.entry_alloca)."""

    def __init__(self, lo, dtype):
        self.lo, self.em, self.dtype = lo, lo.em, np.dtype(dtype)
        element = ltype(self.dtype)
        self.lanes = lo.entry_alloca(ir.ArrayType(element, LANES))
        self.count = lo.entry_alloca(I64)
        self.levels = lo.entry_alloca(ir.ArrayType(element, LEVELS))
        self.carried, self.level, self.blocks = (lo.entry_alloca(t) for t in
                                                 (element, I64, I64))

    def _sum(self, x, y):
        return combine(self.em, "reduce_sum", self.dtype, x, y)

    def _zero(self):
        return self.em.const(0, self.dtype)

    def start(self):
        self._clear_lanes()
        self.em.b.store(I64(0), self.count)

    def _clear_lanes(self):
        for lane in range(LANES):
            self.em.b.store(self._zero(), self._lane(I64(lane)))

    def _lane(self, index):
        return self.em.b.gep(self.lanes, [I64(0), index],
                             source_etype=ir.ArrayType(ltype(self.dtype), LANES))

    def _block_sum(self):
        """The lanes folded pairwise: ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7))."""
        b, element = self.em.b, ltype(self.dtype)
        values = [b.load(self._lane(I64(lane)), typ=element) for lane in range(LANES)]
        while len(values) > 1:
            values = [self._sum(x, y) for x, y in zip(values[::2], values[1::2])]
        return values[0]

    def add(self, value):
        em, b = self.em, self.em.b
        count = b.load(self.count, typ=I64)
        lane = self._lane(b.and_(count, I64(LANES - 1)))
        b.store(self._sum(b.load(lane, typ=value.type), value), lane)
        count = b.add(count, I64(1))
        b.store(count, self.count)
        with em.if_then(b.icmp_unsigned("==", b.and_(count, I64(BLOCK - 1)), I64(0))):
            self._finish_block(b.lshr(count, I64(BLOCK.bit_length() - 1)))

    def _finish_block(self, blocks):
        """Push the block's sum, folding in the levels below blocks' lowest set bit."""
        b, element = self.em.b, ltype(self.dtype)
        b.store(self._block_sum(), self.carried)
        self._clear_lanes()
        b.store(I64(0), self.level)
        b.store(blocks, self.blocks)
        test = b.append_basic_block("cascade.carry")
        fold = b.append_basic_block("cascade.fold")
        done = b.append_basic_block("cascade.push")
        b.branch(test)
        b.position_at_end(test)
        remaining = b.load(self.blocks, typ=I64)
        b.cbranch(b.icmp_unsigned("!=", b.and_(remaining, I64(1)), I64(0)), done, fold)
        b.position_at_end(fold)
        level = b.load(self.level, typ=I64)
        older = b.load(self._at(level), typ=element)
        b.store(self._sum(older, b.load(self.carried, typ=element)), self.carried)
        b.store(b.add(level, I64(1)), self.level)
        b.store(b.lshr(remaining, I64(1)), self.blocks)
        b.branch(test)
        b.position_at_end(done)
        b.store(b.load(self.carried, typ=element), self._at(b.load(self.level, typ=I64)))

    def _at(self, level):
        return self.em.b.gep(self.levels, [I64(0), level],
                             source_etype=ir.ArrayType(ltype(self.dtype), LEVELS))

    def result(self):
        """The levels the count of blocks holds, oldest (highest) first, then the
        last block's partial sums."""
        em, b, element = self.em, self.em.b, ltype(self.dtype)
        blocks = b.lshr(b.load(self.count, typ=I64), I64(BLOCK.bit_length() - 1))
        b.store(self._zero(), self.carried)
        with em.for_range(LEVELS, name="cascade.level") as index:
            level = b.sub(I64(LEVELS - 1), index)
            held = b.and_(b.lshr(blocks, level), I64(1))
            with em.if_then(b.icmp_unsigned("!=", held, I64(0))):
                b.store(self._sum(b.load(self.carried, typ=element),
                                  b.load(self._at(level), typ=element)), self.carried)
        return self._sum(b.load(self.carried, typ=element), self._block_sum())
