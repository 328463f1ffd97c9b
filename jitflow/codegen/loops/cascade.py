"""A float sum of a run-time number of elements (a row whose length is a run-time size,
ir/sizes.py), about as accurate as NumPy's pairwise sum: the elements are summed in
blocks, each into several partial sums folded pairwise at the block's end, and the
blocks' sums pairwise, through a binary counter of the blocks finished (a stack of
partial sums, level k holding 2**k blocks). Summed in order, a row of 10**7 float32
elements could lose about n times the rounding error of one addition; this way about
the block's partial sums' length plus log2(n) of them.

CascadeSum takes one element at a time: blocks of BLOCK, element i into partial i %
LANES (as NumPy sums 128). VectorCascadeSum takes a vector loop's vectors (vector_loops
.py), each added into one vector of partial sums, VECTOR_BLOCK vectors to a block: as
fast as the memory the row is read from.

After block c (counted from 1) the sums of the levels below c's lowest set bit are
folded in, older ones on the left, as a tree over the blocks would fold them; at the
end the levels left, oldest first, then the last partial block.
"""
import numpy as np
from llvmlite import ir

from ...ir.types import is_floating
from ..emitter import I64, ltype
from .accumulate import combine

BLOCK = 128  # elements per block of CascadeSum (as NumPy's pairwise sum's blocks)
LANES = 8  # its partial sums in a block (as NumPy's)
VECTOR_BLOCK = 8  # vectors per block of VectorCascadeSum
VECTOR_SHIFT = VECTOR_BLOCK.bit_length() - 1
LEVELS = 64  # enough for any i64 count of blocks


def wants_cascade(op, dtype):
    return op == "reduce_sum" and is_floating(np.dtype(dtype))


def vector_cascade_dtype(dtype):
    """Whether VectorCascadeSum sums `dtype` (float16 and bfloat16 take CascadeSum)."""
    return np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.float64))


class _Blocks:
    """The binary counter of block sums: push each block's sum, then total()."""

    def __init__(self, lo, dtype):
        self.em, self.dtype = lo.em, np.dtype(dtype)
        element = ltype(self.dtype)
        self.levels = lo.entry_alloca(ir.ArrayType(element, LEVELS))
        self.carried, self.level, self.blocks = (lo.entry_alloca(t) for t in
                                                 (element, I64, I64))

    def sum(self, x, y):
        return combine(self.em, "reduce_sum", self.dtype, x, y)

    def zero(self):
        return self.em.const(0, self.dtype)

    def push(self, block_sum, blocks):
        """Block number `blocks` (from 1) is done: fold in the levels below its lowest
        set bit, then keep the result at that level."""
        b, element = self.em.b, ltype(self.dtype)
        b.store(block_sum, self.carried)
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
        b.store(self.sum(older, b.load(self.carried, typ=element)), self.carried)
        b.store(b.add(level, I64(1)), self.level)
        b.store(b.lshr(remaining, I64(1)), self.blocks)
        b.branch(test)
        b.position_at_end(done)
        b.store(b.load(self.carried, typ=element), self._at(b.load(self.level, typ=I64)))

    def total(self, blocks, last):
        """The levels `blocks` (the count of blocks done) holds, oldest first, then
        `last`, the partial block's sum."""
        em, b, element = self.em, self.em.b, ltype(self.dtype)
        b.store(self.zero(), self.carried)
        with em.for_range(LEVELS, name="cascade.level") as index:
            level = b.sub(I64(LEVELS - 1), index)
            held = b.and_(b.lshr(blocks, level), I64(1))
            with em.if_then(b.icmp_unsigned("!=", held, I64(0))):
                b.store(self.sum(b.load(self.carried, typ=element),
                                 b.load(self._at(level), typ=element)), self.carried)
        return self.sum(b.load(self.carried, typ=element), last)

    def _at(self, level):
        return self.em.b.gep(self.levels, [I64(0), level],
                             source_etype=ir.ArrayType(ltype(self.dtype), LEVELS))


def _pairwise(blocks, values):
    """((v0 + v1) + (v2 + v3)) + ...: values folded pairwise."""
    while len(values) > 1:
        values = [blocks.sum(x, y) for x, y in zip(values[::2], values[1::2])] + \
            values[len(values) - len(values) % 2:]
    return values[0]


class CascadeSum:
    """start() once, add(value) per element (scalar code), result() at the end; the
    state lives in stack slots of the function being lowered (Lowering.entry_alloca)."""

    def __init__(self, lo, dtype):
        self.em, self.blocks = lo.em, _Blocks(lo, dtype)
        self.lanes = lo.entry_alloca(ir.ArrayType(ltype(dtype), LANES))
        self.count = lo.entry_alloca(I64)

    def start(self):
        self._clear_lanes()
        self.em.b.store(I64(0), self.count)

    def _clear_lanes(self):
        for lane in range(LANES):
            self.em.b.store(self.blocks.zero(), self._lane(I64(lane)))

    def _lane(self, index):
        return self.em.b.gep(self.lanes, [I64(0), index],
                             source_etype=ir.ArrayType(ltype(self.blocks.dtype), LANES))

    def _block_sum(self):
        element = ltype(self.blocks.dtype)
        return _pairwise(self.blocks, [self.em.b.load(self._lane(I64(lane)), typ=element)
                                       for lane in range(LANES)])

    def add(self, value):
        em, b = self.em, self.em.b
        count = b.load(self.count, typ=I64)
        lane = self._lane(b.and_(count, I64(LANES - 1)))
        b.store(self.blocks.sum(b.load(lane, typ=value.type), value), lane)
        count = b.add(count, I64(1))
        b.store(count, self.count)
        with em.if_then(b.icmp_unsigned("==", b.and_(count, I64(BLOCK - 1)), I64(0))):
            block_sum = self._block_sum()
            self._clear_lanes()
            self.blocks.push(block_sum, b.lshr(count, I64(BLOCK.bit_length() - 1)))

    def result(self):
        b = self.em.b
        blocks = b.lshr(b.load(self.count, typ=I64), I64(BLOCK.bit_length() - 1))
        return self.blocks.total(blocks, self._block_sum())


class VectorCascadeSum:
    """CascadeSum for vector code of `lanes` lanes: add(vector) in Emitter.vectorized
    mode (masked-off lanes count as zero), start() and result() in scalar code."""

    def __init__(self, lo, dtype, lanes):
        self.em, self.blocks, self.width = lo.em, _Blocks(lo, dtype), lanes
        self.vector_type = ir.VectorType(ltype(dtype), lanes)
        self.partials = lo.entry_alloca(self.vector_type)
        self.count = lo.entry_alloca(I64)

    def start(self):
        self.em.b.store(self._zeros(), self.partials)
        self.em.b.store(I64(0), self.count)

    def _zeros(self):
        return ir.Constant(self.vector_type, None)

    def add(self, vector):
        em, b = self.em, self.em.b
        if em.mask is not None:
            vector = b.select(em.mask, vector, self._zeros())
        partials = b.load(self.partials, typ=self.vector_type)
        b.store(self.blocks.sum(partials, vector), self.partials)
        count = b.add(b.load(self.count, typ=I64), I64(1))
        b.store(count, self.count)
        full = b.icmp_unsigned("==", b.and_(count, I64(VECTOR_BLOCK - 1)), I64(0))
        lanes, mask = em.lanes, em.mask
        em.lanes = em.mask = None  # (the block's end is scalar code)
        try:
            with em.if_then(full):
                block_sum = self._lanes_sum()
                b.store(self._zeros(), self.partials)
                self.blocks.push(block_sum, b.lshr(count, I64(VECTOR_SHIFT)))
        finally:
            em.lanes, em.mask = lanes, mask

    def _lanes_sum(self):
        b = self.em.b
        partials = b.load(self.partials, typ=self.vector_type)
        return _pairwise(self.blocks, [b.extract_element(partials, I64(lane))
                                       for lane in range(self.width)])

    def result(self):
        b = self.em.b
        blocks = b.lshr(b.load(self.count, typ=I64), I64(VECTOR_SHIFT))
        return self.blocks.total(blocks, self._lanes_sum())
