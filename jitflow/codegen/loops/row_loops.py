"""Lowering of a rowwise region (regions.py): one loop over the kept axes, and in it,
phase after phase, loops over the row (the reduced axes).

A phase that reduces walks the row chunk by chunk (chunk_plan): a loop over the chunk
computes the elements (LLVM vectorizes it like any elementwise loop, math calls
included) into a small tile on the stack, or into the row buffer or output that keeps
them anyway, and the vector accumulators (accumulate.py) then fold that memory while it
is in L1. A reduction of a value already in memory, contiguous along the chunk (an
input, say), folds it in place.

Rows are independent and each owns its result: the row loop may be split between
threads (lowering/parallel.py), each with row buffers and partial results of its own. A
region of one row (a reduction over everything) and one phase splits its chunks instead:
each chunk owns its partial result, in memory all workers share, and worker 0 combines
the partials in the same tree whoever computed them (4M float32: a sum in 0.08-0.12 ms on
two threads against 0.17 on one, a sum of squares in 0.11 against 0.27-0.34).

A row whose length is a run-time size (ir/sizes.py) is cut into the same chunks at run
time, so code for all sizes gets the bits of code compiled for each size: whole chunks
through the same chunk code, then the last, shorter one (its elements computed as the
last whole block's, only its own folded), the chunk results combined in the same tree
as they come (accumulate.PairwiseTree). A reduction over everything splits its chunks
between the threads in runs of a power of two, which that tree combines alike.
"""
import math

import numpy as np
from llvmlite import ir

from ...ir.passes.fuse import REDUCTIONS
from ...ir.sizes import DynamicDecision
from ..emitter import I64, LaneOffset, ltype, scalar_constant
from ..views import View, collapse, contiguous_strides
from .accumulate import (CHUNK, VECTOR_BYTES, Accumulator, PairwiseTree, combine_tree,
                         identity, widens)


def lower_rows(lo, region, operands, outputs, inline_checks):
    """operands: external body value (input Var or Lit) -> View; outputs: a View per
    body output; inline_checks as Lowering._check_fused_python_ints returns them."""
    RowLoops(lo, region, operands, outputs, inline_checks).lower()


def chunk_plan(shape, capacity=CHUNK):
    """How a row of `shape` (collapsed, no axis of size 0) is cut into chunks of at most
    `capacity` elements, each a C-order run of the row: blocks of `block` indices along
    `axis`, the axes after it whole. Returns (axis, block, full, rest): per index of the
    axes before `axis`, `full` blocks and then one of `rest` indices (0: none)."""
    axis = chunk_axis(shape, capacity)
    inner = math.prod(shape[axis + 1:])
    block = max(1, min(shape[axis], capacity // inner))
    full, rest = divmod(shape[axis], block)
    return axis, block, full, rest


# A row's later phases compute on it in L1 (exp, a division) while the memory bus
# idles, and the next row's first phase then waits for memory, its first lines most:
# the hardware's prefetcher stops at each 4 KiB page. So the last phase that reads an
# operand (if not the first) prefetches the same line of its next row as it goes, in
# rows of at least PREFETCH_ROW_BYTES. On an Intel Xeon (Emerald Rapids, two threads,
# 16 MiB of float32 rows), against no prefetch: softmax 0.85-0.88 of the time for rows
# of 1024-65536, 0.98 of 256; a row LayerNorm and logsumexp 0.77-0.86 from 512 on,
# 0.97 at 128 (AVX2 code on that CPU: softmax 0.95-0.96); rows of 64 took 1.04.
PREFETCH_ROW_BYTES = 512

# Groups of chunks per thread in a reduction over a run-time size (_reduce_in_groups):
# a split of a nest's innermost loop between the threads falls on multiples of 64 of
# its iterations (lowering/parallel.py's GRANULE), so each thread needs that many.
GROUPS_PER_THREAD = 64


def chunk_axis(shape, capacity=CHUNK):
    """The axis along which chunk_plan cuts a row of `shape`: the first whose later
    axes hold at most `capacity` elements."""
    for axis in range(len(shape)):
        if math.prod(shape[axis + 1:]) <= capacity:
            return axis
    return len(shape) - 1


def _is_contiguous(view):
    shape, (strides,) = collapse(view.shape, view.strides)
    return not shape or (len(shape) == 1 and strides[0] == 1)


class RowLoops:
    def __init__(self, lo, region, operands, outputs, inline_checks):
        self.lo, self.em = lo, lo.em
        self.region, self.operands, self.inline_checks = region, operands, inline_checks
        positions = {**region.outputs_full, **region.outputs_row}
        self.outputs = {v: outputs[i] for v, i in positions.items()}
        self.kept_shape = tuple(region.shape[i] for i in region.kept)
        self.row_shape = tuple(region.shape[i] for i in region.axes)
        self.buffers = {v: lo.memory.scratch(self.row_shape, v.type.dtype, until=lo.node_index,
                                             per_worker=True)
                        for v in sorted(region.buffered, key=region.position)}
        self.accumulators, self.tiles = {}, {}
        self.streams = False  # whether the rows' output stores stream (set by lower)
        self.prefetched = self._prefetched()

    def _prefetched(self):
        """{operand: (phase index, elements to the next row)}: the operands whose next
        row the last phase reading them prefetches into L1, a cache line per vector
        iteration, if that is not the first phase (see PREFETCH_ROW_BYTES)."""
        one_row = all(isinstance(size, int) and size == 1 for size in self.kept_shape)
        if one_row or len(self.region.phases) < 2:
            return {}
        prefetched = {}
        for value in self._full_operands():
            view = self.operands[value]
            kept, row = self._split(view)
            last = max(phase.index for phase in self.region.phases
                       if value in self._operands_of(phase))
            row_bytes = math.prod(self.row_shape) * view.dtype.itemsize
            static = all(isinstance(size, int) for size in (row_bytes, kept[-1], *row))
            if static and view.base is not None and last > 0 and kept[-1] != 0 and \
                    row == contiguous_strides(self.row_shape) and \
                    row_bytes >= PREFETCH_ROW_BYTES:
                prefetched[value] = (last, kept[-1])
        return prefetched

    # --- the row loop --------------------------------------------------------------------
    def lower(self):
        for phase in self.region.phases:
            for r in phase.reductions:
                self.accumulators[id(r)] = Accumulator(self.lo, r.op, r.outputs[0].type.dtype)
        outer = self._outer_views()
        keys = list(outer)
        self.streams = self.lo.touches_enough_to_stream(
            [self.operands[v] for v in self._full_operands()] + list(self.outputs.values()))
        if not self.kept_shape:  # one row: its chunks may be split instead (_reduce)
            self._row(outer, {key: I64(outer[key].offset) for key in keys})
            return
        owner = next(i for i, key in enumerate(keys) if key[0] == "out")
        self.lo.loop_nest(self.kept_shape, [outer[k] for k in keys],
                          lambda offsets: self._row(outer, dict(zip(keys, offsets))),
                          owner=owner, work=math.prod(self.region.shape))

    def _outer_views(self):
        """key -> a view over the kept axes of everything whose position moves with the
        row: operands read per element ("full") or per row ("row", value, shape), and
        the outputs."""
        region, views = self.region, {}
        for value in self._full_operands():
            view = self.operands[value]
            views[("full", value)] = _restrided(view, self.kept_shape, self._split(view)[0])
        for node in region.body.nodes:
            if region.is_row(node.outputs[0]) and node.op not in REDUCTIONS:
                shape = node.outputs[0].type.shape
                for value in node.inputs:
                    if region.is_external(value):
                        view = self.operands[value]
                        views[("row", value, shape)] = _restrided(
                            view, self.kept_shape, self._row_strides(view, shape))
        for value, out in self.outputs.items():
            strides = self._split(out)[0] if value in region.outputs_full else \
                contiguous_strides(self.kept_shape)
            views[("out", value)] = _restrided(out, self.kept_shape, strides)
        return views

    def _full_operands(self):
        used = [v for phase in self.region.phases for n in phase.evaluate + phase.reductions
                for v in n.inputs if self.region.is_external(v)]
        return list(dict.fromkeys(used))

    def _split(self, view):
        """A view of the domain's shape as (strides over the kept axes, over the row)."""
        strides = view.broadcast_to(self.region.shape).strides
        return (tuple(strides[i] for i in self.region.kept),
                tuple(strides[i] for i in self.region.axes))

    def _row_strides(self, view, shape):
        """Strides over the kept axes of a view a row scalar of `shape` reads."""
        strides = view.broadcast_to(shape).strides
        if len(shape) == len(self.region.shape):  # the reduced shape with keepdims
            return tuple(strides[i] for i in self.region.kept)
        return strides

    def _row(self, outer, offsets):
        """One row: the row's views, then each phase and the row scalars after it."""
        region = self.region
        row = {value: self._at_row(outer[("full", value)], offsets[("full", value)],
                                   self._split(self.operands[value])[1])
               for value in self._full_operands()}
        stored = dict(self.buffers)
        for value in region.outputs_full:
            stored[value] = self._at_row(outer[("out", value)], offsets[("out", value)],
                                         self._split(self.outputs[value])[1])
        scalars = {}
        for phase in region.phases:
            finished = self._phase(phase, row, stored, scalars)
            scalars.update(finished)
            for node in phase.after:
                values = [scalars[v] if not region.is_external(v) else
                          self._row_operand(v, node, outer, offsets) for v in node.inputs]
                self._check_inline(node, values)
                finished[node.outputs[0]] = scalars[node.outputs[0]] = \
                    self.lo._scalar(node, values)
            for value, result in finished.items():
                if value in region.outputs_row:
                    out = outer[("out", value)]
                    self.em.store(result, out.base, out.dtype, offsets[("out", value)])

    def _row_operand(self, value, node, outer, offsets):
        key = ("row", value, node.outputs[0].type.shape)
        return self.lo.read(outer[key], offsets[key])

    def _at_row(self, view, offset, strides):
        """`view` at this row: its base moved to the row's first element, or, for the
        only row, the offset kept in the view (a pointer made here, where worker 0 runs
        alone, would not reach the chunks other workers run)."""
        start = scalar_constant(offset)
        if start is not None:
            return View(view.base, view.dtype, self.row_shape, strides, start,
                        view.constant)
        return View(self._moved(view, offset), view.dtype, self.row_shape, strides, 0,
                    view.constant)

    def _moved(self, view, offset):
        if view.base is None:
            return None
        return self.em.element_pointer(view.base, view.dtype, offset)

    def _check_inline(self, node, values):
        for i in self.inline_checks.get(id(node), ()):
            self.lo._check_python_int(values[i], node, i)

    # --- one phase -------------------------------------------------------------------------
    def _phase(self, phase, row, stored, scalars):
        """Run a phase over the row; returns {reduction result Var: its value}."""
        views = {("in", v): row[v] for v in self._operands_of(phase)}
        views.update({("read", v): stored[v] for v in phase.read})
        views.update({("store", v): stored[v] for v in phase.store})
        if phase.reductions:
            return self._reduce(phase, views, scalars)
        self._walk(self.row_shape, phase, views, scalars, [])
        return {}

    def _operands_of(self, phase):
        used = [v for n in phase.evaluate + phase.reductions for v in n.inputs
                if self.region.is_external(v)]
        return list(dict.fromkeys(used))

    def _walk(self, shape, phase, views, scalars, tiles):
        """A loop over `shape` evaluating the phase at each element; `tiles` are
        (reduction, contiguous View) pairs to fill with the reductions' operands."""
        keys = list(views)
        all_views = [views[k] for k in keys] + [tile for _, tile in tiles]
        needed = {v for node in phase.evaluate for v in node.inputs}
        needed.update(value for kind, value in views if kind == "store")
        needed.update(node.inputs[0] for node, _ in tiles)
        # The row scalars the phase reads, splat in a fixed order (the IR text is the
        # disk cache's key).
        used_scalars = [v for v in scalars if v in needed]

        def element(offsets):
            env = self._element(phase, views, dict(zip(keys, offsets)), scalars,
                                used_scalars)
            for (node, tile), offset in zip(tiles, offsets[len(keys):]):
                operand = node.inputs[0]
                value = self.em.cast(env[operand], operand.type.dtype, tile.dtype)
                self.em.store(value, tile.base, tile.dtype, offset)
        self.lo.loop_nest(shape, all_views, element, rolled=True, vector=True,
                          stream=self._streamed_output(keys))

    def _element(self, phase, views, at, scalars, used_scalars):
        """The phase at one element (or vector of them) at offsets `at` of the views:
        its values computed and those the phase stores stored; returns them."""
        env = {value: self.em.splat(scalars[value]) for value in used_scalars}
        for (kind, value), view in views.items():
            if kind in ("in", "read"):
                env[value] = self.lo.read(view, at[(kind, value)])
            if kind == "in" and self.prefetched.get(value, (None,))[0] == phase.index and \
                    isinstance(at[(kind, value)], LaneOffset):
                ahead = self.lo.builder.add(at[(kind, value)].first,
                                            I64(self.prefetched[value][1]))
                # (not inbounds: past the last row it points outside the array)
                self.em.prefetch(self.lo.builder.gep(view.base, [ahead],
                                                     source_etype=ltype(view.dtype)))
        for node in phase.evaluate:
            values = [env[v] for v in node.inputs]
            self._check_inline(node, values)
            env[node.outputs[0]] = self.lo._scalar(node, values)
        for (kind, value), view in views.items():
            if kind == "store":
                self.em.store(env[value], view.base, view.dtype, at[(kind, value)])
        return env

    def _streamed_output(self, keys):
        """The position among `keys` of an output the phase stores, if the region is
        large enough for its stores to stream past the caches."""
        if not self.streams:
            return None
        return next((i for i, (kind, value) in enumerate(keys)
                     if kind == "store" and value in self.region.outputs_full), None)

    # --- reducing phases: chunks -------------------------------------------------------------
    def _reduce(self, phase, views, scalars):
        if math.prod(self.row_shape) == 0:
            return {r.outputs[0]: self.em.const(identity(r.op, r.outputs[0].type.dtype),
                                                r.outputs[0].type.dtype)
                    for r in phase.reductions}
        if not all(isinstance(size, int) for size in self.row_shape):
            return self._reduce_at_run_time(phase, views, scalars)
        keys = list(views)
        shape, strides = collapse(self.row_shape, *[views[k].strides for k in keys])
        if not shape:
            shape, strides = (1,), [(0,)] * len(keys)
        layout = {k: (views[k], s) for k, s in zip(keys, strides)}
        axis, block, full, rest = chunk_plan(shape)
        per_slice = full + (rest > 0)
        count = math.prod(shape[:axis]) * per_slice
        shared = self._chunks_may_split()
        partials = {r: self.lo.memory.scratch((count,), r.outputs[0].type.dtype,
                                              until=self.lo.node_index,
                                              per_worker=not shared)
                    for r in phase.reductions} if count > 1 else {}
        numbering = tuple(s * per_slice for s in contiguous_strides(shape[:axis]))
        results = {}

        def chunks(blocks):
            """A loop over the chunks of `full` blocks (blocks=True) or over the last,
            shorter ones; each chunk is numbered in C order for its partial result."""
            grid = shape[:axis] + ((full,) if blocks else ())
            first = 0 if blocks else full * block
            views = [View(v.base, v.dtype, grid, s[:axis] + ((block * s[axis],) if blocks
                                                             else ()),
                          v.offset + first * s[axis], v.constant)
                     for v, s in (layout[k] for k in keys)]
            number = View(None, np.dtype(np.int64), grid,
                          numbering + ((1,) if blocks else ()), 0 if blocks else full)
            chunk_shape = ((block if blocks else rest),) + shape[axis + 1:]

            def body(offsets):
                chunk = {k: View(self._moved(layout[k][0], offset), layout[k][0].dtype,
                                 chunk_shape, layout[k][1][axis:], 0, layout[k][0].constant)
                         for k, offset in zip(keys, offsets)}
                for r, value in self._chunk(phase, chunk, chunk_shape, scalars).items():
                    if count > 1:
                        self.em.store(value, partials[r].base, partials[r].dtype, offsets[-1])
                    else:
                        results[r.outputs[0]] = value
            # Each chunk owns its partial result: with `shared` partials, the chunks
            # may be split between the workers, and worker 0 combines the partials.
            self.lo.loop_nest(grid, views + [number], body,
                              owner=len(views) if shared and count > 1 else None,
                              work=math.prod(shape))

        chunks(blocks=True)
        if rest:
            chunks(blocks=False)
        for r in partials:
            results[r.outputs[0]] = combine_tree(self.lo, r.op, partials[r], count)
        return results

    # --- reducing phases over a run-time size (ir/sizes.py) -----------------------------
    def _reduce_at_run_time(self, phase, views, scalars):
        """_reduce of a row whose shape holds a run-time size: the chunks chunk_plan
        cuts at that size, each folded as _reduce folds it, combined in combine_tree's
        order (PairwiseTree): the same bits as code compiled for the size. A chunk's
        own shape must be known (else DynamicDecision)."""
        keys = list(views)
        shape, strides = collapse(self.row_shape, *[views[k].strides for k in keys])
        axis = chunk_axis(shape)
        if not all(isinstance(size, int) for size in shape[axis + 1:]):
            raise DynamicDecision("a reduction's chunk would hold a run-time size")
        layout = [(views[k], s) for k, s in zip(keys, strides)]
        if axis == 0 and self._chunks_may_split() and self.lo.workers is not None:
            along = {k: View(v.base, v.dtype, shape, s, v.offset, v.constant)
                     for k, (v, s) in zip(keys, layout)}
            return self._reduce_in_groups(phase, along, scalars)
        trees = self._trees(phase)
        outer = [View(v.base, v.dtype, shape[:axis], s[:axis], v.offset, v.constant)
                 for v, s in layout]

        def slice_of_row(offsets):
            along = {k: View(self._moved(v, offset), v.dtype, shape[axis:], s[axis:], 0,
                             v.constant)
                     for k, (v, s), offset in zip(keys, layout, offsets)}
            if isinstance(shape[axis], int):
                self._static_chunks(phase, along, scalars, self._pusher(trees))
            else:
                self._numbered_chunks(phase, along, I64(0), self._chunk_count(along),
                                      scalars, self._pusher(trees))
        self.lo.loop_nest(shape[:axis], outer, slice_of_row)
        return {r.outputs[0]: tree.total() for r, tree in trees.items()}

    def _reduce_in_groups(self, phase, along, scalars):
        """The chunks of the only row, cut into GROUPS_PER_THREAD groups per thread:
        runs of 2**k chunks from a multiple of 2**k (the last run shorter), which the
        workers fold apart; worker 0 then combines the groups' results. combine_tree's
        first k levels fold exactly those runs, so the tree is its own."""
        em, b, groups = self.em, self.em.b, self.lo.threads * GROUPS_PER_THREAD
        partials = {r: self.lo.memory.scratch((groups,), r.outputs[0].type.dtype,
                                              until=self.lo.node_index)
                    for r in phase.reductions}
        trees = self._trees(phase)

        def group(offsets):
            count, per_group = self._groups(along, groups)
            first = b.mul(offsets[0], per_group)
            end = _smaller(b, b.add(first, per_group), count)
            with em.if_then(b.icmp_unsigned("<", first, end)):
                for tree in trees.values():
                    tree.start()
                self._numbered_chunks(phase, along, first, end, scalars,
                                      self._pusher(trees))
                for r, tree in trees.items():
                    em.store(tree.total(), partials[r].base, partials[r].dtype, offsets[0])
        number = View(None, np.dtype(np.int64), (groups,), (1,), 0)
        work = math.prod(next(iter(along.values())).shape)
        self.lo.loop_nest((groups,), [number], group, owner=0, work=work)
        count, per_group = self._groups(along, groups)
        used = b.udiv(b.add(count, b.sub(per_group, I64(1))), per_group)
        results = {}
        for r in phase.reductions:
            tree = PairwiseTree(self.lo, r.op, r.outputs[0].type.dtype)
            tree.start()
            with em.for_range(used, name="group") as index:
                tree.push(em.load(partials[r].base, partials[r].dtype, index))
            results[r.outputs[0]] = tree.total()
        return results

    def _trees(self, phase):
        trees = {r: PairwiseTree(self.lo, r.op, r.outputs[0].type.dtype)
                 for r in phase.reductions}
        for tree in trees.values():
            tree.start()
        return trees

    @staticmethod
    def _pusher(trees):
        def push(results):
            for r, value in results.items():
                trees[r].push(value)
        return push

    def _static_chunks(self, phase, along, scalars, push):
        """The chunks of a slice whose length is known (the run-time size lies in the
        axes before it), in order, each chunk's results handed to push({reduction:
        value}) where they are computed."""
        first = next(iter(along.values()))
        length, inner = first.shape[0], first.shape[1:]
        block = min(length, max(1, CHUNK // math.prod(inner)))
        full, rest = divmod(length, block)
        with self.em.for_range(full, name="chunk") as index:
            push(self._chunk_at(phase, along, self.em.mul(index, I64(block)),
                                (block,) + inner, scalars))
        if rest:
            push(self._chunk_at(phase, along, full * block, (rest,) + inner, scalars))

    def _chunk_count(self, along):
        """The chunks of a slice whose length is a run-time size, an i64: whole chunks
        of `_block` indices, then one of the rest, if any (a slice shorter than a
        block is one chunk)."""
        b, block = self.em.b, self._block(along)
        length = I64(next(iter(along.values())).shape[0])
        full = b.udiv(length, I64(block))
        rest = b.urem(length, I64(block))
        return b.add(full, b.zext(b.icmp_unsigned("!=", rest, I64(0)), I64))

    def _groups(self, along, groups):
        """(chunks, chunks per group): groups of the least power of two of chunks
        that cuts them into at most `groups` groups."""
        b = self.em.b
        count = self._chunk_count(along)
        least = b.udiv(b.add(count, I64(groups - 1)), I64(groups))
        below = b.sub(least, I64(1))
        zeros = self.em.intrinsic("llvm.ctlz", below, ir.Constant(ir.IntType(1), 0))
        return count, b.shl(I64(1), b.sub(I64(64), zeros))

    @staticmethod
    def _block(along):
        inner = next(iter(along.values())).shape[1:]
        return max(1, CHUNK // math.prod(inner))

    def _numbered_chunks(self, phase, along, first, end, scalars, push):
        """Chunks first..end-1 (i64s) of a slice whose length is a run-time size."""
        em, b = self.em, self.em.b
        first_view = next(iter(along.values()))
        length, inner = first_view.shape[0], first_view.shape[1:]
        block = self._block(along)
        size = I64(length)
        full, rest = b.udiv(size, I64(block)), b.urem(size, I64(block))
        with em.for_range(b.sub(end, first), name="chunk") as index:
            chunk = b.add(first, index)
            with b.if_else(b.icmp_unsigned("==", full, I64(0))) as (short, long):
                with short:  # the slice is one chunk, shorter than a block
                    push(self._chunk_at(phase, along, I64(0), first_view.shape, scalars,
                                        fold=(I64(0), I64(math.prod(first_view.shape)))))
                with long:
                    with b.if_else(b.icmp_unsigned("<", chunk, full)) as (whole, last):
                        with whole:
                            push(self._chunk_at(phase, along, b.mul(chunk, I64(block)),
                                                (block,) + inner, scalars))
                        with last:
                            push(self._last_chunk(phase, along, block, rest, scalars))

    def _last_chunk(self, phase, along, block, rest, scalars):
        """The chunk of the last `rest` (< block, at run time) indices of the slice:
        the last whole block's elements are computed, as a whole chunk's (the same
        bits: they are elementwise), and only its last `rest` folded."""
        b = self.em.b
        first = next(iter(along.values()))
        shape = (block,) + first.shape[1:]
        start = b.sub(I64(first.shape[0]), I64(block))
        per_index = math.prod(shape[1:])
        skipped = b.mul(b.sub(I64(block), rest), I64(per_index))
        return self._chunk_at(phase, along, start, shape, scalars,
                              fold=(skipped, b.mul(rest, I64(per_index))))

    def _chunk_at(self, phase, along, start, shape, scalars, fold=None):
        """The chunk of `shape` from index `start` of the chunk axis."""
        start = start if isinstance(start, ir.Value) else I64(start)
        chunk = {k: View(self._moved(v, self.em.add(I64(v.offset),
                                                    self.em.mul(start, I64(v.strides[0])))),
                         v.dtype, shape, v.strides, 0, v.constant)
                 for k, v in along.items()}
        return self._chunk(phase, chunk, shape, scalars, fold)

    def _chunks_may_split(self):
        """Whether a reduction's chunks may run on several workers: in the only row
        (a reduction over everything), of a region with one phase, whose values no
        later phase reads from a worker's row buffer."""
        return not self.kept_shape and len(self.region.phases) == 1

    def _chunk(self, phase, chunk, shape, scalars, fold=None):
        """One chunk: compute its elements, then fold them; {reduction: chunk result}.
        fold: (skipped, count), i64s: fold only `count` elements after the first
        `skipped` (fold_memory_at_run_time), rather than all."""
        sources, tiles = {}, []
        for r in phase.reductions:
            source = self._in_place(r, chunk)
            if source is None:
                tile = View.contiguous(self._tile(r), r.outputs[0].type.dtype, shape)
                tiles.append((r, tile))
                sources[r] = (tile.base, VECTOR_BYTES, tile.dtype)
            else:
                sources[r] = (source.base, source.dtype.itemsize, source.dtype)
        if phase.evaluate or phase.store or tiles:
            self._walk(shape, phase, chunk, scalars, tiles)
        results = {}
        for r in phase.reductions:
            accumulator = self.accumulators[id(r)]
            accumulator.start()
            pointer, align, dtype = sources[r]
            if fold is None:
                accumulator.fold_memory(pointer, math.prod(shape), align, dtype)
            else:
                skipped, count = fold
                accumulator.fold_memory_at_run_time(
                    self.em.element_pointer(pointer, dtype, skipped), count,
                    dtype.itemsize, dtype)
            results[r] = accumulator.result()
        return results

    def _in_place(self, reduction, chunk):
        """The memory already holding the reduction's operand over the chunk,
        contiguous and in a dtype the accumulators widen to theirs, or None."""
        operand, dtype = reduction.inputs[0], reduction.outputs[0].type.dtype
        view = chunk.get(("in", operand)) or chunk.get(("store", operand))
        if view is None or view.base is None or not widens(view.dtype, dtype):
            return None
        return view if _is_contiguous(view) else None

    def _tile(self, reduction):
        if id(reduction) not in self.tiles:
            element = ltype(reduction.outputs[0].type.dtype)
            self.tiles[id(reduction)] = self.lo.entry_alloca(ir.ArrayType(element, CHUNK))
        return self.tiles[id(reduction)]


def _smaller(b, x, y):
    return b.select(b.icmp_unsigned("<", x, y), x, y)


def _restrided(view, shape, strides):
    return View(view.base, view.dtype, shape, tuple(strides), view.offset, view.constant)
