"""Lowering of while and scan nodes: real loops in the generated code.

The condition and body are graphs compiled apart (callees.py), called once per trip
from a loop written here. The carry lives in two sets of buffers, the node's outputs
and a spare set, and each trip's body reads one set and writes the other (a body may
read its input carry after writing part of its output, so it cannot write in place).
Copies inside the loop are memcpy calls, not loop nests: a nest there could be split
between threads, whose other workers wait elsewhere.

A trip whose callee reports an error ends the loop; the error is raised at the call.
"""
import numpy as np
from llvmlite import ir

from ..emitter import I1, I8, I64
from ..errors import OK
from .callees import (Callee, address, buffer, byte_pointer, contiguous_output, memcpy,
                      nbytes, shared_workspace)


class CarrySets:
    """The carry's two sets of buffers: the node's outputs (set 0) and spare ones."""

    def __init__(self, lo, outputs):
        self.lo, self.outputs = lo, [contiguous_output(v, "loop") for v in outputs]
        self.spare = [lo.memory.scratch(v.shape, v.dtype, until=lo.node_index)
                      for v in outputs]

    def pointers(self, which):
        """Pointers of set `which` (an i1 value: 1 is the spare set)."""
        b = self.lo.builder
        return [b.select(which, spare.base, address(self.lo, out))
                for out, spare in zip(self.outputs, self.spare)]

    def start(self, init, in_spare=False):
        """Copy the initial carry into one set (before any hand-made loop)."""
        targets = self.spare if in_spare else self.outputs
        for view, target in zip(init, targets):
            self.lo.copy(view, target)

    def finish(self, which):
        """Leave the carry in the outputs: copied there if it is in the spare set."""
        b = self.lo.builder
        with b.if_then(which):
            for out, spare in zip(self.outputs, self.spare):
                memcpy(self.lo, address(self.lo, out), spare.base, nbytes(out))


def while_loop(lo, node, inputs, outputs):
    cond_graph, body_graph = node.subgraphs
    carried = len(outputs)
    cond, body = Callee(lo, cond_graph, "cond"), Callee(lo, body_graph, "body")
    consts = [buffer(lo, view) for view in inputs[carried:]]
    carry = CarrySets(lo, outputs)
    carry.start(inputs[:carried])
    flag = lo.memory.scratch((), np.dtype(np.bool_), until=lo.node_index).base
    workspace = shared_workspace(lo, [cond, body])
    b = lo.builder
    before = b.block
    head, trip, done = (b.append_basic_block(f"while.{n}") for n in ("head", "trip", "end"))
    b.branch(head)
    b.position_at_end(head)
    which = b.phi(I1, name="in_spare")
    which.add_incoming(ir.Constant(I1, 0), before)
    current = carry.pointers(which)
    status = cond(current + consts + [flag], workspace)
    go_on = b.and_(b.icmp_signed("==", status, ir.Constant(status.type, OK)),
                   b.icmp_unsigned("!=", b.load(flag, typ=I8), I8(0)))
    b.cbranch(go_on, trip, done)
    b.position_at_end(trip)
    status = body(current + consts + carry.pointers(b.not_(which)), workspace)
    which.add_incoming(b.not_(which), b.block)
    b.cbranch(b.icmp_signed("==", status, ir.Constant(status.type, OK)), head, done)
    b.position_at_end(done)
    ended = b.phi(I1, name="ended_in_spare")
    ended.add_incoming(which, head)
    ended.add_incoming(which, trip)
    carry.finish(ended)


def scan(lo, node, inputs, outputs):
    (body_graph,) = node.subgraphs
    length, carried, sliced = node.params["length"], node.params["carries"], node.params["xs"]
    body = Callee(lo, body_graph, "body")
    xs = [Rows(lo, buffer(lo, v), v) for v in inputs[carried:carried + sliced]]
    consts = [buffer(lo, view) for view in inputs[carried + sliced:]]
    ys = [Rows(lo, address(lo, contiguous_output(v, "scan")), v) for v in outputs[carried:]]
    carry = CarrySets(lo, outputs[:carried])
    # Trip i writes set (length - 1 - i) % 2, so the last trip writes the outputs.
    carry.start(inputs[:carried], in_spare=length % 2 == 1)
    workspace = shared_workspace(lo, [body])
    if length == 0:
        return
    b = lo.builder
    with lo.em.for_range(length, name="scan") as i:
        writes = b.trunc(b.sub(I64(length - 1), i), I1)
        row = b.sub(I64(length - 1), i) if node.params["reverse"] else i
        body(carry.pointers(b.not_(writes)) + [x.at(row) for x in xs] + consts +
             carry.pointers(writes) + [y.at(row) for y in ys], workspace)
    lo.em.keep_rolled(i)


class Rows:
    """The rows of a contiguous array along its leading axis."""

    def __init__(self, lo, base, view):
        self.lo, self.base = lo, base
        self.row_bytes = nbytes(view) // max(1, view.shape[0])

    def at(self, row):
        return byte_pointer(self.lo, self.base, self.lo.builder.mul(row, I64(self.row_bytes)))
