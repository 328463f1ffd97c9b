"""Blocked vector accumulation: the fixed order in which a reduction folds its elements.

A row (the elements one reduction result depends on, in C order over the reduced axes)
is cut into chunks of at most CHUNK elements (row_loops.chunk_plan). In a chunk, element
e goes to lane e % W of vector accumulator (e // W) % ACCUMULATORS, W lanes being one
64-byte vector (16 floats, 8 doubles); every lane folds its elements in order. The
accumulators are then combined as ((a0 . a1) . (a2 . a3)) and the lanes by halving, and
the chunk results by a pairwise tree (combine_tree). The order is fixed when the code
is compiled, from the row's shape and the layout of what it reads (which decide the
chunks): it depends neither on how rows are split between loops or threads, nor on
the machine (W is 64 bytes' worth even where vectors are narrower).

The accumulators are explicit LLVM vectors, so the code vectorizes without letting LLVM
reassociate float operations. A float sum is then pairwise at every level but the
lanes', which add at most CHUNK / (4 W) = 16 terms (32 for float64) one after the other:
its error bound grows like 16 + log2(n) roundings, as good as NumPy's pairwise sum.

A float max or min keeps NumPy's answer exactly: lanes take a value only when it
compares greater (less), so a NaN never enters them, and a separate mask records
whether any lane met a NaN; the result is then NaN, as NumPy's is. Ties between 0.0
and -0.0 keep the value met first in each lane (NumPy leaves that sign to its own order).
"""
import numpy as np
from llvmlite import ir

from ..emitter import I32, I64, Splat, ltype, masked_memory
from ..math.scalar import RULES as SCALAR

VECTOR_BYTES = 64
ACCUMULATORS = 4
CHUNK = 1024  # elements per chunk, whatever the dtype: the chunk tree is dtype-free

# The elementwise rule that folds two partial results (NaN-propagating for max / min).
COMBINE = {"reduce_sum": "add", "reduce_prod": "mul", "reduce_max": "max",
           "reduce_min": "min"}


def identity(op, dtype):
    """The value a reduction starts from: 0 for sums (so a sum of -0.0s is 0.0, as in
    NumPy), 1 for products, the lowest (highest) value for max (min)."""
    dtype = np.dtype(dtype)
    if op == "reduce_sum":
        return 0
    if op == "reduce_prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if op == "reduce_max" else np.inf
    if dtype.kind == "b":
        return op == "reduce_min"
    info = np.iinfo(dtype)
    return info.min if op == "reduce_max" else info.max


def lanes(dtype):
    return VECTOR_BYTES // np.dtype(dtype).itemsize


def fold(em, op, dtype, acc, value):
    """acc . value, lane by lane (also on scalars). max / min take value only when it
    compares greater (less): NaN is never taken, ties keep acc."""
    b, kind = em.b, np.dtype(dtype).kind
    if op in ("reduce_sum", "reduce_prod"):
        name = {"reduce_sum": ("fadd", "add"), "reduce_prod": ("fmul", "mul")}[op]
        return getattr(b, name[0] if kind == "f" else name[1])(acc, value)
    predicate = ">" if op == "reduce_max" else "<"
    if kind == "f":
        take = b.fcmp_ordered(predicate, value, acc)
    else:
        take = em.icmp(predicate, value, acc, dtype)
    return b.select(take, value, acc)


def combine(em, op, dtype, x, y):
    """Two partial results folded into one; a NaN in either gives NaN for max / min."""
    return SCALAR[COMBINE[op]](em, x, y, dtype=np.dtype(dtype))


def fold_in_order(em, op, dtype, acc, value):
    """acc . value as NumPy's binary loop computes it (a column reduction's order).

    A float max keeps acc where acc > value or acc is NaN, else takes value: a NaN
    stays once met, and a tie (0.0 against -0.0) takes value, as NumPy's maximum does.
    Written with two plain compares, not the integer orderings of scalar.maximum, which
    cost 3 times the instructions: a condition that is not one compare of the select's
    arms is no min/max pattern to LLVM (see scalar.compare_floats), and where LLVM
    proves acc is never NaN and the condition becomes one, the select's arms are acc and
    an element, whose nesting (max(max(acc, a), b)) LLVM folds soundly."""
    if op not in ("reduce_max", "reduce_min") or np.dtype(dtype).kind != "f":
        return combine(em, op, dtype, acc, value)
    b = em.b
    beats = b.fcmp_ordered(">" if op == "reduce_max" else "<", acc, value)
    return b.select(b.or_(beats, b.fcmp_unordered("uno", acc, acc)), acc, value)


class VectorWalk:
    """Walks contiguous memory in vectors of `width` lanes, spread over ACCUMULATORS
    accumulators: element e goes to lane e % width of accumulator (e // width) %
    ACCUMULATORS. Subclasses say what folding a vector into an accumulator means.

    A short walk leaves accumulators, or lanes, at their starting value; `used` and
    `lanes_used` say how many of each it reached, so that the final combination can
    leave the rest out: combining with a starting value changes nothing (x + 0.0 is x
    for every x an accumulator can hold, as one that starts at 0.0 never holds -0.0),
    so the result is the same bits as combining everything, only cheaper."""

    def __init__(self, lo, dtype, width):
        self.lo, self.em, self.dtype, self.width = lo, lo.em, np.dtype(dtype), width
        self.vector = ir.VectorType(ltype(dtype), width)
        self.start()

    def start(self):
        """Begin a walk: fold_memory once, then the subclass's result()."""
        self.used = self.lanes_used = 0
        self.started = 0  # accumulators given their starting value (by fold_memory)

    def fold_memory(self, pointer, count, align, source=None):
        """Fold `count` (static) contiguous elements at `pointer`, of dtype `source`
        (default: the walk's own; else one that `widens` to it). Only the accumulators
        the walk reaches (rounded up to a power of two, as `combined` takes them) get
        a starting value: a row of one vector needs one, not ACCUMULATORS."""
        if self.started:
            raise RuntimeError("VectorWalk.fold_memory: once per start()")
        self.source = np.dtype(source or self.dtype)
        vectors, tail = divmod(count, self.width)
        blocks, extra = divmod(vectors, ACCUMULATORS)
        block = ACCUMULATORS * self.width
        touched = vectors + (tail > 0)
        self.used = min(touched, ACCUMULATORS)
        self.started = _power_of_two(max(self.used, 1))
        self.initialize(self.started)
        self.lanes_used = self.width if touched > 1 else 1 << max(count - 1, 0).bit_length()
        if blocks == 1:
            self._fold_block(pointer, I64(0), ACCUMULATORS, align)
        elif blocks > 1:
            with self.em.for_range(blocks, name="block") as index:
                self._fold_block(pointer, self.em.mul(index, I64(block)), ACCUMULATORS,
                                 align)
        if extra:
            self._fold_block(pointer, I64(blocks * block), extra, align)
        if tail:
            self._fold_tail(pointer, vectors * self.width, tail, extra, align)

    def fold_memory_at_run_time(self, pointer, count, align, source=None):
        """fold_memory of `count` elements, an i64 known at run time only: each element
        goes to the lane and accumulator fold_memory gives it, and every accumulator
        and lane is combined at the end. Those the walk did not reach hold their
        starting value, which changes nothing (see the class docstring): the same bits
        as fold_memory of that count."""
        if self.started:
            raise RuntimeError("VectorWalk.fold_memory_at_run_time: once per start()")
        em, b = self.em, self.em.b
        self.source = np.dtype(source or self.dtype)
        self.used = self.started = ACCUMULATORS
        self.lanes_used = self.width
        self.initialize(ACCUMULATORS)
        block = ACCUMULATORS * self.width
        blocks = b.udiv(count, I64(block))
        with em.for_range(blocks, name="block") as index:
            self._fold_block(pointer, em.mul(index, I64(block)), ACCUMULATORS, align)
        done = em.mul(blocks, I64(block))
        left = b.sub(count, done)
        vectors, tail = b.udiv(left, I64(self.width)), b.urem(left, I64(self.width))
        for u in range(ACCUMULATORS - 1):  # the last vectors, one accumulator each
            with em.if_then(b.icmp_unsigned(">", vectors, I64(u))):
                self._fold_at(pointer, b.add(done, I64(u * self.width)), u, align)
        tail_start = b.add(done, b.mul(vectors, I64(self.width)))
        with em.if_then(b.icmp_unsigned("!=", tail, I64(0))):
            for u in range(ACCUMULATORS):  # the tail goes to the next accumulator
                with em.if_then(b.icmp_unsigned("==", vectors, I64(u))):
                    self._fold_tail(pointer, tail_start, tail, u, align)

    def _fold_block(self, pointer, start, count, align):
        for u in range(count):
            self._fold_at(pointer, self.em.add(start, I64(u * self.width)), u, align)

    def _fold_at(self, pointer, at, slot, align):
        """The vector of elements from `at` into accumulator `slot`."""
        loaded = ir.VectorType(ltype(self.source), self.width)
        value = self.em.b.load(self.em.element_pointer(pointer, self.source, at),
                               typ=loaded, align=align)
        self._fold_vector(slot, self._widened(value), at)

    def _fold_tail(self, pointer, start, count, slot, align):
        """The last count < width elements (count an int or an i64), by a masked load
        (reading past the row could leave the array) that fills the other lanes with
        the padding value."""
        b = self.em.b
        loaded = ir.VectorType(ltype(self.source), self.width)
        start = start if isinstance(start, ir.Value) else I64(start)
        at = self.em.element_pointer(pointer, self.source, start)
        if isinstance(count, int):
            mask = ir.Constant(ir.VectorType(ir.IntType(1), self.width),
                               [1] * count + [0] * (self.width - count))
        else:
            lanes = ir.VectorType(I64, self.width)
            mask = b.icmp_unsigned("<", ir.Constant(lanes, list(range(self.width))),
                                   _splat_value(b, count, lanes))
        padding = self.em.const(self.padding(), self.source).constant
        value = b.call(masked_memory(self.lo.module, "load", loaded),
                       [at, I32(align), mask, self.splat(padding, loaded)])
        self._fold_vector(slot, self._widened(value), start)

    def _widened(self, value):
        """A loaded vector converted to the walk's dtype (see `widens`)."""
        if self.source == self.dtype:
            return value
        extend = self.em.b.zext if self.source.kind in "bu" else self.em.b.sext
        return extend(value, self.vector)

    def combined(self, vectors):
        """The accumulators and lanes this walk reached (see the class docstring)."""
        b, vectors = self.em.b, vectors[:_power_of_two(max(self.used, 1))]
        lanes = max(self.lanes_used, 1)
        if lanes == self.width:
            return vectors
        keep = _indices(range(lanes))
        return [tuple(b.shuffle_vector(p, p, keep) for p in v) if isinstance(v, tuple) else
                b.shuffle_vector(v, v, keep) for v in vectors]

    def splat(self, value, vector=None):
        """A constant vector of `value` (a Python number of the element's kind)."""
        return Splat(vector or self.vector, value)

    def padding(self):
        raise NotImplementedError

    def initialize(self, count):
        """Give the first `count` accumulators their starting value."""
        raise NotImplementedError

    def _fold_vector(self, u, value, position):
        raise NotImplementedError


class Accumulator(VectorWalk):
    """The vector accumulators of one reduction over one chunk at a time:
    start(); fold_memory(pointer, count, align); result()."""

    def __init__(self, lo, op, dtype):
        super().__init__(lo, dtype, lanes(dtype))
        self.op = op
        self.mask = ir.VectorType(ir.IntType(self.dtype.itemsize * 8), self.width)
        self.tracks_nan = self.dtype.kind == "f" and op in ("reduce_max", "reduce_min")
        self.slots = [lo.entry_alloca(self.vector) for _ in range(ACCUMULATORS)]
        self.nan_slots = [lo.entry_alloca(self.mask) for _ in range(ACCUMULATORS)] \
            if self.tracks_nan else []

    def padding(self):
        return self._identity()

    def _identity(self):
        return self.em.const(identity(self.op, self.dtype), self.dtype).constant

    def initialize(self, count):
        b = self.em.b
        for slot in self.slots[:count]:
            b.store(self.splat(self._identity()), slot)
        for slot in self.nan_slots[:count]:
            b.store(self.splat(0, self.mask), slot)

    def _fold_vector(self, u, value, position):
        b = self.em.b
        acc = b.load(self.slots[u], typ=self.vector)
        b.store(fold(self.em, self.op, self.dtype, acc, value), self.slots[u])
        if self.tracks_nan:
            seen = b.sext(b.fcmp_unordered("uno", value, value), self.mask)
            b.store(b.or_(b.load(self.nan_slots[u], typ=self.mask), seen), self.nan_slots[u])

    def result(self):
        """The chunk's result: accumulators combined pairwise, then lanes by halving."""
        b = self.em.b
        slots = self.slots[:self.started]
        total = halving(self.combined([b.load(s, typ=self.vector) for s in slots]),
                        lambda x, y: fold(self.em, self.op, self.dtype, x, y), b)
        if not self.tracks_nan:
            return total
        seen = halving(self.combined([b.load(s, typ=self.mask)
                                      for s in self.nan_slots[:self.started]]), b.or_, b)
        nan = self.em.const(np.nan, self.dtype)
        return b.select(b.icmp_signed("!=", seen, ir.Constant(seen.type, 0)), nan, total)


def halving(vectors, op, b):
    """op over every lane of `vectors` (as many as a power of two): the vectors
    pairwise, then the lanes of the last one by halves. The vectors may be tuples
    (values and their indices): op then takes and returns such tuples."""
    single = not isinstance(vectors[0], tuple)
    merge = (lambda x, y: (op(x[0], y[0]),)) if single else op
    items = [(v,) for v in vectors] if single else list(vectors)
    while len(items) > 1:
        items = [merge(items[i], items[i + 1]) for i in range(0, len(items), 2)]
    (parts,) = items
    width = parts[0].type.count
    while width > 1:
        width //= 2
        low = tuple(b.shuffle_vector(p, p, _indices(range(width))) for p in parts)
        high = tuple(b.shuffle_vector(p, p, _indices(range(width, 2 * width))) for p in parts)
        parts = merge(low, high)
    results = tuple(b.extract_element(p, I32(0)) for p in parts)
    return results[0] if single else results


def widens(source, target):
    """Whether the walk converts `source` elements to `target` in registers, as
    Emitter.cast does: bool and narrower ints to int64 (unsigned ones to uint64), which
    is how sums of bool and small integer arrays accumulate."""
    source, target = np.dtype(source), np.dtype(target)
    if source == target:
        return True
    return target.kind in "iu" and (source.kind == "b" or (
        source.kind == target.kind and source.itemsize < target.itemsize))


def _splat_value(b, value, vector):
    """The run-time scalar `value` in every lane of `vector`."""
    single = b.insert_element(ir.Constant(vector, ir.Undefined), value, I32(0))
    return b.shuffle_vector(single, ir.Constant(vector, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, vector.count), [0] * vector.count))


def _power_of_two(count):
    return 1 << (count - 1).bit_length()


def _indices(values):
    values = list(values)
    return ir.Constant(ir.VectorType(I32, len(values)), values)


class PairwiseTree:
    """combine_tree's tree over partial results that come one at a time, as many as
    known at run time only: start(), push(value) per partial result, total(). A binary
    counter of the results pushed keeps at level k the fold of 2**k of them (a push
    folds in the levels below its count's lowest set bit, older on the left); total()
    folds the levels left, newest first, which is combine_tree's fold of that count.
    The state lives in stack slots of the function being lowered."""

    def __init__(self, lo, op, dtype):
        self.em, self.op, self.dtype = lo.em, op, np.dtype(dtype)
        element = ltype(self.dtype)
        self.levels_type = ir.ArrayType(element, TREE_LEVELS)
        self.levels = lo.entry_alloca(self.levels_type)
        self.pushed, self.level, self.bits = (lo.entry_alloca(I64) for _ in range(3))
        self.carried = lo.entry_alloca(element)
        self.found = lo.entry_alloca(ir.IntType(1))

    def start(self):
        self.em.b.store(I64(0), self.pushed)

    def push(self, value):
        b = self.em.b
        count = b.add(b.load(self.pushed, typ=I64), I64(1))
        b.store(count, self.pushed)
        b.store(value, self.carried)
        b.store(I64(0), self.level)
        b.store(count, self.bits)
        test, fold, done = (b.append_basic_block(f"tree.{name}")
                            for name in ("carry", "fold", "push"))
        b.branch(test)
        b.position_at_end(test)
        bits = b.load(self.bits, typ=I64)
        b.cbranch(b.icmp_unsigned("!=", b.and_(bits, I64(1)), I64(0)), done, fold)
        b.position_at_end(fold)
        level = b.load(self.level, typ=I64)
        b.store(self._combine(b.load(self._at(level), typ=value.type),
                              b.load(self.carried, typ=value.type)), self.carried)
        b.store(b.add(level, I64(1)), self.level)
        b.store(b.lshr(bits, I64(1)), self.bits)
        b.branch(test)
        b.position_at_end(done)
        b.store(b.load(self.carried, typ=value.type), self._at(b.load(self.level, typ=I64)))

    def total(self):
        """The fold of everything pushed (at least one value)."""
        b, element = self.em.b, ltype(self.dtype)
        pushed = b.load(self.pushed, typ=I64)
        b.store(ir.Constant(ir.IntType(1), 0), self.found)
        with self.em.for_range(TREE_LEVELS, name="tree.level") as level:
            with self.em.if_then(b.icmp_unsigned("!=", b.and_(b.lshr(pushed, level), I64(1)),
                                            I64(0))):
                held = b.load(self._at(level), typ=element)
                found = b.load(self.found, typ=ir.IntType(1))
                newer = b.load(self.carried, typ=element)
                b.store(b.select(found, self._combine(held, newer), held), self.carried)
                b.store(ir.Constant(ir.IntType(1), 1), self.found)
        return b.load(self.carried, typ=element)

    def _combine(self, older, newer):
        return combine(self.em, self.op, self.dtype, older, newer)

    def _at(self, level):
        return self.em.b.gep(self.levels, [I64(0), level], source_etype=self.levels_type)


TREE_LEVELS = 64  # enough for any i64 count of partial results


def combine_tree(lo, op, partials, count):
    """Fold `count` partial results stored at `partials` (a contiguous View) pairwise:
    at step s = 1, 2, 4, ..., p[i] = p[i] . p[i + s] for i = 0, 2s, 4s, ...; returns
    p[0]. The tree depends on count alone."""
    em, b, dtype = lo.em, lo.builder, partials.dtype
    step = 1
    while step < count:
        pairs = (count - step + 2 * step - 1) // (2 * step)
        with em.for_range(pairs, name="pair") as k:
            left = b.mul(k, I64(2 * step))
            right = b.add(left, I64(step))
            value = combine(em, op, dtype, em.load(partials.base, dtype, left),
                            em.load(partials.base, dtype, right))
            em.store(value, partials.base, dtype, left)
        step *= 2
    return em.load(partials.base, dtype, I64(0))
