"""argmax / argmin: the first position of the extreme value; a NaN beats everything,
and the first NaN wins, as in NumPy.

Along the innermost axis (fuse.rowwise), each row is walked in vectors (ArgWalk): every
lane keeps its best value and where it met it, and the lanes are combined at the end of
the row by a total order (the better value, then the smaller index), so the answer is
exact whatever order the lanes meet in: no float rounding is involved. Otherwise
every element is folded into its output slot in C order, elementwise over the kept
inner axis.
"""
import numpy as np
from llvmlite import ir

from ...ir.sizes import product
from ...ir.passes.fuse import rowwise
from ..emitter import I32, I64
from ..math.scalar import compare_floats
from ..views import View, collapse, contiguous_strides
from .accumulate import ACCUMULATORS, VectorWalk, halving, identity
from .reduced_views import index_view, reduced_view


def arg_reduce(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    axis = node.params["axis"]
    axes = tuple(range(len(x.shape))) if axis is None else (axis,)
    if rowwise(x.shape, axes):
        _rows(lo, node.op, x, out, axes)
    else:
        _columns(lo, node.op, x, out, axes)


def _rows(lo, op, x, out, axes):
    """One ArgWalk per row, over the row in place when it is contiguous, else over a
    copy of it (gathered by a loop LLVM vectorizes as it can)."""
    kept = [i for i in range(len(x.shape)) if i not in axes]
    kept_shape = tuple(x.shape[i] for i in kept)
    row_shape = tuple(x.shape[i] for i in axes)
    count = product(row_shape)
    inner = tuple(x.strides[i] for i in axes)
    shape, (strides,) = collapse(row_shape, inner)
    in_place = x.base is not None and (not shape or (len(shape) == 1 and strides[0] == 1))
    row_copy = None if in_place else lo.memory.scratch(row_shape, x.dtype, until=lo.node_index,
                                                       per_worker=True)
    walk = ArgWalk(lo, op, x.dtype)
    views = [View(x.base, x.dtype, kept_shape, tuple(x.strides[i] for i in kept), x.offset,
                  x.constant),
             View(out.base, out.dtype, kept_shape, contiguous_strides(kept_shape))]

    def row(offsets):
        if in_place:
            pointer, align = lo.em.element_pointer(x.base, x.dtype, offsets[0]), x.dtype.itemsize
        else:  # gather the row first: the walk reads contiguous memory
            base = None if x.base is None else lo.em.element_pointer(x.base, x.dtype,
                                                                     offsets[0])
            lo.copy(View(base, x.dtype, row_shape, inner, 0, x.constant), row_copy)
            pointer, align = row_copy.base, 64
        walk.start()
        walk.fold_memory(pointer, count, align)
        lo.em.store(walk.result(pointer, count), out.base, out.dtype, offsets[1])
    # Each row owns its result (and each worker its row copy): the rows may be split
    # between threads.
    lo.loop_nest(kept_shape, views, row, owner=1, work=count * product(kept_shape))


class ArgWalk(VectorWalk):
    """Per lane, the best value met so far and the block it was met in; element e of
    a row is lane e % W of accumulator (e // W) % ACCUMULATORS in block e // (W *
    ACCUMULATORS). A lane takes a value only when it compares strictly better, so it
    keeps its first best; it starts from the worst value in block 0, which is its own
    first element's position (or one past the row, for a lane the row never reaches):
    if the lane holds nothing better, that first element is its answer. NaN is never
    taken: a mask records that one was seen, and then the row is searched for its first
    NaN instead (rare, and not worth slowing every row down for)."""

    def __init__(self, lo, op, dtype):
        dtype = np.dtype(dtype)
        super().__init__(lo, dtype, min(16, 64 // dtype.itemsize))
        self.op = op
        self.blocks = ir.VectorType(I32, self.width)
        self.values = [lo.entry_alloca(self.vector) for _ in range(ACCUMULATORS)]
        self.found = [lo.entry_alloca(self.blocks) for _ in range(ACCUMULATORS)]
        self.tracks_nan = dtype.kind == "f"
        self.nan_mask = ir.VectorType(ir.IntType(dtype.itemsize * 8), self.width)
        self.nan_seen = lo.entry_alloca(self.nan_mask) if self.tracks_nan else None

    def padding(self):
        """The worst value: it can only tie a real element, which then comes first."""
        extreme = identity("reduce_max" if self.op == "argmax" else "reduce_min", self.dtype)
        return self.em.const(extreme, self.dtype).constant

    def initialize(self, count):
        b = self.em.b
        for values, found in zip(self.values[:count], self.found[:count]):
            b.store(self.splat(self.padding()), values)
            b.store(self.splat(0, self.blocks), found)
        if self.tracks_nan:
            b.store(self.splat(0, self.nan_mask), self.nan_seen)

    def _fold_vector(self, u, value, position):
        b = self.em.b
        block = b.trunc(b.udiv(position, I64(self.width * ACCUMULATORS)), I32)
        block = b.shuffle_vector(b.insert_element(ir.Constant(self.blocks, None), block,
                                                  I32(0)),
                                 ir.Constant(self.blocks, None), self.splat(0, self.blocks))
        best = b.load(self.values[u], typ=self.vector)
        take = self._compare(">" if self.op == "argmax" else "<", value, best)
        b.store(b.select(take, value, best), self.values[u])
        found = b.load(self.found[u], typ=self.blocks)
        b.store(b.select(take, block, found), self.found[u])
        if self.tracks_nan:
            seen = b.sext(b.fcmp_unordered("uno", value, value), self.nan_mask)
            b.store(b.or_(b.load(self.nan_seen, typ=self.nan_mask), seen), self.nan_seen)

    def _compare(self, predicate, x, y):
        b = self.em.b
        if self.dtype.kind == "f":
            return b.fcmp_ordered(predicate, x, y)
        return self.em.icmp(predicate, x, y, self.dtype)

    def result(self, pointer, count):
        """The index of the row's best element (its first NaN, if it has one)."""
        b = self.em.b
        indices = ir.VectorType(I64, self.width)
        pairs = []
        for u, (values, found) in enumerate(zip(self.values[:self.started],
                                                self.found[:self.started])):
            blocks = b.zext(b.load(found, typ=self.blocks), indices)
            first = ir.Constant(indices, [u * self.width + lane for lane in range(self.width)])
            at = b.add(b.mul(blocks, self.splat(self.width * ACCUMULATORS, indices)), first)
            pairs.append((b.load(values, typ=self.vector), at))
        _, index = halving(self.combined(pairs), self._better, b)
        if not self.tracks_nan:
            return index
        seen = halving(self.combined([b.load(self.nan_seen, typ=self.nan_mask)]), b.or_, b)
        slot = self.lo.entry_alloca(I64, align=8)
        b.store(index, slot)
        with self.em.if_then(b.icmp_signed("!=", seen, ir.Constant(seen.type, 0))):
            b.store(self._first_nan(pointer, count), slot)
        return b.load(slot, typ=I64)

    def _better(self, challenger, holder):
        """Lane by lane, the better of two (value, index) pairs: the better value, or
        on a tie the smaller index."""
        b = self.em.b
        (value, at), (best, best_at) = challenger, holder
        predicate = ">" if self.op == "argmax" else "<"
        ties = b.fcmp_ordered("==", value, best) if self.dtype.kind == "f" else \
            b.icmp_signed("==", value, best)
        take = b.or_(self._compare(predicate, value, best),
                     b.and_(ties, b.icmp_signed("<", at, best_at)))
        return b.select(take, value, best), b.select(take, at, best_at)

    def _first_nan(self, pointer, count):
        """The position of the first NaN among `count` elements known to hold one."""
        b, em = self.em.b, self.em
        before = b.block
        loop = b.append_basic_block("first_nan.loop")
        done = b.append_basic_block("first_nan.done")
        b.branch(loop)
        b.position_at_end(loop)
        index = b.phi(I64)
        index.add_incoming(I64(0), before)
        value = em.load(pointer, self.dtype, index)
        following = b.add(index, I64(1))
        more = b.and_(b.fcmp_ordered("ord", value, value),
                      b.icmp_signed("<", following, I64(count)))
        index.add_incoming(following, b.block)
        b.cbranch(more, loop, done)
        b.position_at_end(done)
        return index


def _columns(lo, op, x, out, axes):
    """Every element folded into its output slot in C order, with the best value so far
    in a scratch buffer."""
    em, b = lo.em, lo.builder
    best = lo.memory.scratch(out.shape, x.dtype, until=lo.node_index)
    lo.fill(best, identity("reduce_max" if op == "argmax" else "reduce_min", x.dtype))
    lo.fill(out, 0)
    predicate = ">" if op == "argmax" else "<"
    views = [x, reduced_view(best, x.shape, axes), reduced_view(out, x.shape, axes),
             index_view(x.shape, axes)]

    def body(offsets):
        value = lo.read(x, offsets[0])
        current = em.load(best.base, best.dtype, offsets[1])
        if x.dtype.kind == "f":  # compare_floats: a compare LLVM cannot misfold
            better = b.or_(compare_floats(em, predicate, value, current),
                           b.and_(b.fcmp_unordered("uno", value, value),
                                  b.fcmp_ordered("ord", current, current)))
        else:
            better = em.icmp(predicate, value, current, x.dtype)
        em.store(b.select(better, value, current), best.base, best.dtype, offsets[1])
        index = em.load(out.base, out.dtype, offsets[2])
        em.store(b.select(better, offsets[3], index), out.base, out.dtype, offsets[2])
    # Each output slot folds its elements in order, whichever worker owns it.
    lo.loop_nest(x.shape, views, body, owner=2)
