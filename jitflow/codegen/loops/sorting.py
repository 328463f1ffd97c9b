"""sort and argsort along one axis: every row sorted by a stable merge sort, in a
function of its own that each row calls.

A row is copied into a contiguous buffer (the output row itself when the axis is the
last), with its positions 0, 1, ... beside it for argsort; the function sorts the
buffer in place, carrying the positions along, and the result is copied out along the
axis. The sort is bottom-up: runs of RUN elements sorted by insertion, then merged in
pairs into a spare buffer and back, the runs doubling, so O(n log n) in all. A merge
takes the left element on ties, which keeps equal elements (-0.0 and 0.0, the NaNs) in
the order they came in: NumPy's kind="stable". Merges pick floats by their bits:
LLVM may fold a select between floats on a compare of them into a min or max, which
orders -0.0 and NaN otherwise (math/scalar.py's compare_floats).

Rows are independent: a nest of many rows is split between threads, each worker with
buffers of its own.
"""
import math
from contextlib import contextmanager

import numpy as np
from llvmlite import ir

from ...ir.sizes import product
from ..emitter import I1, I64, PTR, Emitter, define_function, entry_alloca, module_global
from ..views import View, contiguous_strides
from .reduced_views import index_view

RUN = 16  # elements sorted by insertion before the merges start
INT64 = np.dtype(np.int64)


def sort_along_axis(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    if out.size == 0:
        return
    axis = node.params["axis"]
    n = x.shape[axis]
    with_positions = node.op == "argsort"
    function = sort_function(lo.module, x.dtype, with_positions)
    kept = [a for a in range(len(x.shape)) if a != axis]
    kept_shape = tuple(x.shape[a] for a in kept)
    out_strides = contiguous_strides(out.shape)
    in_place = axis == len(x.shape) - 1  # the output row is contiguous: sort it there

    def buffer(dtype, in_output=False):
        return None if in_output else lo.memory.scratch((n,), dtype, until=lo.node_index,
                                                        per_worker=True)
    keys = buffer(x.dtype, in_place and not with_positions)
    positions = buffer(INT64, in_place) if with_positions else None
    spares = [buffer(x.dtype)] + ([buffer(INT64)] if with_positions else [])
    views = [View(x.base, x.dtype, kept_shape, tuple(x.strides[a] for a in kept), x.offset,
                  x.constant),
             View(out.base, out.dtype, kept_shape, tuple(out_strides[a] for a in kept))]

    def row(offsets):
        em = lo.em
        source = View(None if x.base is None else em.element_pointer(x.base, x.dtype,
                                                                     offsets[0]),
                      x.dtype, (n,), (x.strides[axis],), 0, x.constant)
        target = View(em.element_pointer(out.base, out.dtype, offsets[1]), out.dtype, (n,),
                      (out_strides[axis],))
        buffers = [keys or target]
        lo.copy(source, buffers[0])
        if with_positions:
            buffers.append(positions or target)
            _count(lo, buffers[1])
        lo.builder.call(function, [buffer.base for buffer in buffers] +
                        [spare.base for spare in spares] + [I64(n)])
        result = buffers[-1]
        if result is not target:
            lo.copy(result, target)
    rows = product(kept_shape)
    lo.loop_nest(kept_shape, views, row, owner=1,
                 work=rows * n * max(1, math.ceil(math.log2(max(n, 2)))))
    lo.leave_loops_to_llvm()  # the sort's loops want LLVM's loop passes


def _count(lo, target):
    """target[i] = i."""
    def body(offsets):
        lo.em.store(offsets[0], target.base, target.dtype, offsets[1])
    lo.loop_nest(target.shape, [index_view(target.shape, (0,)), target], body, owner=1)


def sort_function(module, dtype, with_positions):
    """void sort(keys, [positions,] spare keys, [spare positions,] i64 n): the module's
    merge sort of `dtype` rows (defined on first use)."""
    dtype = np.dtype(dtype)
    name = f"jitflow_sort.{dtype.name}" + (".positions" if with_positions else "")
    return module_global(module, name,
                         lambda: MergeSort(module, name, dtype, with_positions).function)


class MergeSort:
    """Emits the sort function. Its loop variables live in stack slots, which LLVM
    turns into registers."""

    def __init__(self, module, name, dtype, with_positions):
        arrays = 2 if with_positions else 1
        self.function, self.b = define_function(module, name, ir.VoidType(),
                                                [PTR] * (2 * arrays) + [I64])
        self.em = Emitter(self.b)
        self.dtype = dtype
        args = list(self.function.args)
        dtypes = [dtype, INT64][:arrays]
        # (buffer, spare, dtype) of the keys, then of the positions carried along
        self.arrays = list(zip(args[:arrays], args[arrays:2 * arrays], dtypes))
        self.n = args[-1]
        self._sort_runs()
        self._merge_passes()
        self.b.ret_void()

    # --- small helpers --------------------------------------------------------------------
    def variable(self, value):
        slot = entry_alloca(self.b, value.type)
        self.b.store(value, slot)
        return slot

    def get(self, slot, kind=I64):
        return self.b.load(slot, typ=kind)

    def minimum(self, x, y):
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    @contextmanager
    def while_(self, condition):
        """while condition(): the body is emitted inside the `with` block."""
        b = self.b
        head = b.append_basic_block("while.head")
        body = b.append_basic_block("while.body")
        end = b.append_basic_block("while.end")
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(condition(), body, end)
        b.position_at_end(body)
        yield
        b.branch(head)
        b.position_at_end(end)

    def load(self, base, dtype, index):
        return self.em.load(base, dtype, index)

    def less(self, x, y):
        """x sorts strictly before y: NaN after every number, and equal to NaN."""
        b = self.b
        if self.dtype.kind == "f":
            return b.or_(b.fcmp_ordered("<", x, y),
                         b.and_(b.fcmp_unordered("uno", y, y), b.fcmp_ordered("ord", x, x)))
        if self.dtype.kind in "bu":  # bools and unsigned integers: unsigned order
            return b.icmp_unsigned("<", x, y)
        return b.icmp_signed("<", x, y)

    def pick(self, take_second, first, second, dtype):
        """second if take_second else first. Floats are picked as their bits: a select
        between two floats on a compare of them is what LLVM may fold into a min or
        max, which orders -0.0 and NaN its own way."""
        b = self.b
        if dtype.kind != "f":
            return b.select(take_second, second, first)
        bits = ir.IntType(dtype.itemsize * 8)
        return b.select(take_second, b.bitcast(second, bits), b.bitcast(first, bits))

    # --- runs sorted by insertion -----------------------------------------------------------
    def _sort_runs(self):
        b, n = self.b, self.n
        runs = b.udiv(b.add(n, I64(RUN - 1)), I64(RUN))
        with self.em.for_range(runs, name="run") as run:
            start = b.mul(run, I64(RUN))
            end = self.minimum(b.add(start, I64(RUN)), n)
            with self.em.for_range(b.sub(b.sub(end, start), I64(1)), name="insert") as t:
                self._insert(start, b.add(start, b.add(t, I64(1))))

    def _insert(self, start, i):
        """Move element i down into the sorted elements start .. i-1 before it."""
        b = self.b
        (keys, _, dtype) = self.arrays[0]
        values = [self.load(base, kind, i) for base, _, kind in self.arrays]
        hole = self.variable(i)

        def shifting():  # hole > start and values[0] sorts before the element below it
            at = self.get(hole)
            above = b.icmp_signed(">", at, start)
            before = b.block
            compare = b.append_basic_block("insert.compare")
            join = b.append_basic_block("insert.join")
            b.cbranch(above, compare, join)
            b.position_at_end(compare)
            below = self.load(keys, dtype, b.sub(at, I64(1)))
            smaller = self.less(values[0], below)
            compared = b.block
            b.branch(join)
            b.position_at_end(join)
            result = b.phi(I1)
            result.add_incoming(ir.Constant(I1, 0), before)
            result.add_incoming(smaller, compared)
            return result
        with self.while_(shifting):
            at = self.get(hole)
            lower = b.sub(at, I64(1))
            for base, _, kind in self.arrays:
                self.em.store(self.load(base, kind, lower), base, kind, at)
            b.store(lower, hole)
        at = self.get(hole)
        for value, (base, _, kind) in zip(values, self.arrays):
            self.em.store(value, base, kind, at)

    # --- merges -------------------------------------------------------------------------------
    def _merge_passes(self):
        """Merge runs of `width` in pairs, from the buffers into the spares and back,
        doubling width until one run is left; then the result is in the buffers."""
        b, n = self.b, self.n
        width = self.variable(I64(RUN))
        in_spare = self.variable(ir.Constant(I1, 0))
        with self.while_(lambda: b.icmp_signed("<", self.get(width), n)):
            w, flipped = self.get(width), self.get(in_spare, I1)
            pairs = [(b.select(flipped, spare, base), b.select(flipped, base, spare), kind)
                     for base, spare, kind in self.arrays]
            step = b.mul(w, I64(2))
            count = b.udiv(b.add(n, b.sub(step, I64(1))), step)
            with self.em.for_range(count, name="pair") as pair:
                left = b.mul(pair, step)
                middle = self.minimum(b.add(left, w), n)
                self._merge(pairs, left, middle, self.minimum(b.add(left, step), n))
            b.store(b.not_(flipped), in_spare)
            b.store(step, width)
        with self.em.if_then(self.get(in_spare, I1)):
            for base, spare, kind in self.arrays:
                self._copy(spare, base, kind, I64(0), I64(0), n)

    def _merge(self, pairs, left, middle, right):
        """source[left:middle] and source[middle:right], each sorted, merged into
        target[left:right] for every (source, target, dtype) of `pairs`."""
        b = self.b
        i, j, k = self.variable(left), self.variable(middle), self.variable(left)
        keys_from, _, dtype = pairs[0]

        def both_left():
            return b.and_(b.icmp_signed("<", self.get(i), middle),
                          b.icmp_signed("<", self.get(j), right))
        with self.while_(both_left):
            at_i, at_j, at_k = self.get(i), self.get(j), self.get(k)
            take_right = self.less(self.load(keys_from, dtype, at_j),
                                   self.load(keys_from, dtype, at_i))
            for source, target, kind in pairs:
                value = self.pick(take_right, self.load(source, kind, at_i),
                                  self.load(source, kind, at_j), kind)
                b.store(value, self.em.element_pointer(target, kind, at_k))
            step = b.zext(take_right, I64)
            b.store(b.add(at_i, b.sub(I64(1), step)), i)
            b.store(b.add(at_j, step), j)
            b.store(b.add(at_k, I64(1)), k)
        at_i, at_j, at_k = self.get(i), self.get(j), self.get(k)
        rest_left = b.sub(middle, at_i)
        for source, target, kind in pairs:  # what is left of either side, in order
            self._copy(source, target, kind, at_i, at_k, rest_left)
            self._copy(source, target, kind, at_j, b.add(at_k, rest_left),
                       b.sub(right, at_j))

    def _copy(self, source, target, dtype, start, to, count):
        """target[to : to + count] = source[start : start + count]."""
        b = self.b
        with self.em.for_range(count, name="copy") as t:
            self.em.store(self.load(source, dtype, b.add(start, t)), target, dtype,
                          b.add(to, t))
