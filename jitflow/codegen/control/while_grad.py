"""Lowering of while_grad nodes: reverse mode of a loop whose trip count is only known
when it runs (control_flow/while_grad.py says what it computes).

The backward step is a graph built from the body by autodiff, a layer above codegen:
the Lowering's `backward_step(body)` builds it, handed in by whoever compiles the graph
(jitflow's executables pass control_flow's backward_step_graph).

Forward, the loop runs as while_loop's does, its carry in two records (every leaf of
the carry at a fixed offset), and every k-th trip copies the record it starts from into
a buffer that grows by realloc as the loop runs. Backward, for each stored record from
the last: the trips of its stretch are recomputed from it into a segment buffer (none
when k is 1), then walked back through the backward step (the body's vjp, adding the
consts' cotangents to their sums), whose state is double-buffered like a carry.
"""
import numpy as np
from llvmlite import ir

from ..emitter import I1, I8, I64, PTR, module_global
from ..errors import OK, OUT_OF_MEMORY
from ..memory import ALIGNMENT
from ..views import View
from .callees import Callee, buffer, byte_pointer, memcpy, shared_workspace
from .loops import CarrySets


class Record:
    """A carry's leaves laid out in one block of bytes, each at an aligned offset."""

    def __init__(self, types):
        self.types, self.offsets, size = types, [], 0
        for t in types:
            self.offsets.append(size)
            size += -(-max(1, t.size * t.dtype.itemsize) // ALIGNMENT) * ALIGNMENT
        self.size = size

    def leaves(self, lo, base):
        return [byte_pointer(lo, base, offset) for offset in self.offsets]

    def views(self, lo, base):
        return [View.contiguous(pointer, t.dtype, t.shape)
                for pointer, t in zip(self.leaves(lo, base), self.types)]


def while_grad(lo, node, inputs, outputs):
    cond_graph, body_graph = node.subgraphs
    carried, taken = len(body_graph.outputs), len(body_graph.inputs)
    loop = _Loop(lo, node, [buffer(lo, v) for v in inputs[carried:taken]])
    for view, target in zip(inputs[:carried], loop.record.views(lo, loop.records)):
        lo.copy(view, target)
    back = CarrySets(lo, outputs)
    float_carries = len(inputs) - taken
    back.start(inputs[taken:], in_spare=False)
    for view in outputs[float_carries:]:
        lo.fill(view, 0)
    loop.forward()
    loop.backward(back)


class _Loop:
    """The state of one while_grad's native code: its callees, buffers and counters."""

    def __init__(self, lo, node, consts):
        cond_graph, body_graph = node.subgraphs
        self.lo, self.b, self.consts = lo, lo.builder, consts
        self.every = node.params["checkpoint_every"]
        self.cond = Callee(lo, cond_graph, "cond")
        self.body = Callee(lo, body_graph, "body")
        self.step = Callee(lo, lo.backward_step(body_graph), "backward")
        self.workspace = shared_workspace(lo, [self.cond, self.body, self.step])
        self.record = Record([v.type for v in body_graph.outputs])
        self.records = self._scratch(2 * self.record.size)       # the forward carry
        self.segment = self._scratch((self.every - 1) * self.record.size)
        self.flag = self._scratch(1)
        self.stored = self._counter("stored", I64, I64(0))     # records in the buffer
        self.capacity = self._counter("capacity", I64, I64(0))
        self.steps = self._counter("steps", I64, I64(0))
        self.saved = self._counter("saved", PTR, ir.Constant(PTR, None))
        self.in_spare = self._counter("in_spare", I1, ir.Constant(I1, 0))

    def _scratch(self, nbytes):
        return self.lo.memory.scratch((max(1, nbytes),), np.dtype(np.uint8),
                                      until=self.lo.node_index).base

    def _counter(self, name, type, start):
        slot = self.lo.entry_alloca(type, align=8)
        self.b.store(start, slot)
        return slot

    def _load(self, slot, type=I64):
        return self.b.load(slot, typ=type)

    def _ok(self, status):
        return self.b.icmp_signed("==", status, ir.Constant(status.type, OK))

    def _carry_at(self, which):
        """Record `which` (i1) of the two forward records."""
        return self.b.select(which, byte_pointer(self.lo, self.records, self.record.size),
                             self.records)

    # --- forward ----------------------------------------------------------------------
    def forward(self):
        b = self.b
        head, trip, done = (b.append_basic_block(f"while_grad.{n}")
                            for n in ("head", "trip", "forward_end"))
        b.branch(head)
        b.position_at_end(head)
        which = self._load(self.in_spare, I1)
        current = self._carry_at(which)
        status = self.cond(self.record.leaves(self.lo, current) + self.consts + [self.flag],
                           self.workspace)
        b.cbranch(b.and_(self._ok(status), b.icmp_unsigned("!=", b.load(self.flag, typ=I8),
                                                           I8(0))), trip, done)
        b.position_at_end(trip)
        steps = self._load(self.steps)
        with b.if_then(b.icmp_unsigned("==", b.urem(steps, I64(self.every)), I64(0))):
            self._keep(current)
        b.store(b.add(steps, I64(1)), self.steps)
        status = self.body(self.record.leaves(self.lo, current) + self.consts +
                           self.record.leaves(self.lo, self._carry_at(b.not_(which))),
                           self.workspace)
        b.store(b.not_(which), self.in_spare)
        b.cbranch(b.and_(self._ok(status), self._ok(self.lo.em.error.result())), head, done)
        b.position_at_end(done)

    def _keep(self, record):
        """Copy `record` to the end of the growing buffer."""
        b = self.b
        stored, capacity = self._load(self.stored), self._load(self.capacity)
        with b.if_then(b.icmp_unsigned("==", stored, capacity)):
            self._grow(capacity)
        with b.if_then(b.icmp_unsigned("<", stored, self._load(self.capacity))):
            at = b.mul(stored, I64(self.record.size))
            memcpy(self.lo, byte_pointer(self.lo, self._load(self.saved, PTR), at), record,
                   self.record.size)
            b.store(b.add(stored, I64(1)), self.stored)

    def _grow(self, capacity):
        b = self.b
        wanted = b.add(b.mul(capacity, I64(2)), I64(16))
        old = self._load(self.saved, PTR)
        new = b.call(_libc(self.lo.module, "realloc", PTR, [PTR, I64]),
                     [old, b.mul(wanted, I64(self.record.size))])
        failed = b.icmp_unsigned("==", new, ir.Constant(PTR, None))
        self.lo.em.error.flag_if(failed, OUT_OF_MEMORY)
        b.store(b.select(failed, old, new), self.saved)
        b.store(b.select(failed, capacity, wanted), self.capacity)

    # --- backward ---------------------------------------------------------------------
    def backward(self, back):
        """For each stored record from the last: its stretch recomputed, then walked
        back. Skipped when the forward loop failed."""
        b = self.b
        self.back, self.back_in_spare = back, self._counter("back_in_spare", I1,
                                                            ir.Constant(I1, 0))
        head, segment, done = (b.append_basic_block(f"while_grad.{n}")
                               for n in ("segments", "segment", "backward_end"))
        index = self._counter("segment_index", I64, b.sub(self._load(self.stored), I64(1)))
        b.cbranch(self._ok(self.lo.em.error.result()), head, done)
        b.position_at_end(head)
        s = self._load(index)
        b.cbranch(b.icmp_signed(">=", s, I64(0)), segment, done)
        b.position_at_end(segment)
        first = b.mul(s, I64(self.every))
        left = b.sub(self._load(self.steps), first)
        count = b.select(b.icmp_signed("<", left, I64(self.every)), left, I64(self.every))
        start = byte_pointer(self.lo, self._load(self.saved, PTR),
                             b.mul(s, I64(self.record.size)))
        self._recompute(start, count)
        self._walk_back(start, count)
        b.store(b.sub(s, I64(1)), index)
        b.branch(head)
        b.position_at_end(done)
        back.finish(self._load(self.back_in_spare, I1))
        b.call(_libc(self.lo.module, "free", ir.VoidType(), [PTR]),
               [self._load(self.saved, PTR)])

    def _trip_record(self, start, j):
        """The record trip j of the stretch starts from: the stored one for j = 0, else
        the segment buffer's (j - 1)th."""
        b = self.b
        at = b.mul(b.sub(j, I64(1)), I64(self.record.size))
        return b.select(b.icmp_signed("==", j, I64(0)), start,
                        byte_pointer(self.lo, self.segment, at))

    def _recompute(self, start, count):
        b = self.b
        with self.lo.em.for_range(b.sub(count, I64(1)), name="recompute") as i:
            self.body(self.record.leaves(self.lo, self._trip_record(start, i)) + self.consts +
                      self.record.leaves(self.lo, self._trip_record(start, b.add(i, I64(1)))),
                      self.workspace)

    def _walk_back(self, start, count):
        b = self.b
        with self.lo.em.for_range(count, name="back") as i:
            j = b.sub(b.sub(count, I64(1)), i)
            which = self._load(self.back_in_spare, I1)
            self.step(self.record.leaves(self.lo, self._trip_record(start, j)) + self.consts
                      + self.back.pointers(which) + self.back.pointers(b.not_(which)),
                      self.workspace)
            b.store(b.not_(which), self.back_in_spare)


def _libc(module, name, result, params):
    return module_global(module, name,
                         lambda: ir.Function(module, ir.FunctionType(result, params), name))
