"""Kernels shared by repeated nodes: a fused node lowered once, into a function of its
own, and called wherever the graph repeats it.

A training step repeats its regions: the hidden layers of a network are the same
computation on the same shapes, forward and backward, and parameters of one shape get
the same update. Lowered inline, every copy is optimized and compiled again (LLVM's time
grows with the code it is given); shared, a copy costs a call. Two fused nodes share a
kernel when their bodies print the same, their constants are equal, and their operands
have the same layouts (dtype, shape, strides, offset, which of them are one buffer).

A kernel reads its buffers' pointers from a frame, an array the caller fills with the
node's input and output buffers and the scratch the kernel asked for while it was
lowered (taken again from the memory plan at every call), so all kernels have the
segments' signature:

    i32 kernel(ptr frame)   or, with threads,   i32 kernel(ptr frame, i64 worker,
                                                          i64 chunks_end, ptr barrier)

Every worker calls it; inside, it splits its nests between them and runs the rest on
worker 0 as the segment's code would (parallel.py). It assumes worker 0 ran code just
before it, so its first split waits at the barrier; that is one wait more than inline
code needs only when nothing ran between two splits.
"""
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
from llvmlite import ir

from ...ir.graph import Lit
from ...ir.printer import format_graph
from ..emitter import I64, PTR, declared_in
from ..views import View

KERNEL = "jitflow_kernel"


@dataclass
class Kernel:
    function: ir.Function
    scratch: list          # (shape, dtype, per_worker) the kernel's frame ends with
    serial_pending: bool   # whether worker 0 ran code after the kernel's last barrier


class SharedKernels:
    def __init__(self, lowering):
        self.lo = lowering
        self._bodies = {id(node): _body_key(node) for node in lowering.graph.nodes
                        if node.op == "fused"}  # (printing a body takes ~0.1 ms)
        bodies = Counter(self._bodies.values())
        self._repeated = {key for key, count in bodies.items() if count > 1}
        self._kernels = {}  # body and operand layouts -> Kernel
        self._module = None

    def enter_module(self, module):
        """Kernels defined in earlier segments' modules are called by name from here."""
        self._module = module

    def lower(self, node, inputs, outputs):
        """Lower fused `node` (operand Views given) through a shared kernel if the graph
        repeats it; returns whether it did."""
        if node.op != "fused":
            return False
        body = self._bodies.get(id(node))
        if body not in self._repeated:
            return False
        views = inputs + outputs
        bases = _distinct_bases(views)
        key = (body, tuple(_layout(view, bases) for view in views))
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = self._define(node, inputs, outputs, bases)
        self._call(kernel, bases)
        return True

    def _define(self, node, inputs, outputs, bases):
        lo = self.lo
        function = ir.Function(self._module, lo.function_type(),
                               f"{KERNEL}.{len(self._kernels)}")
        function.attributes.add("noinline")  # inlined twice, it would be compiled twice
        saved = lo.enter_function(function, serial_pending=True)
        frame = _Frame(lo, function.args[0])
        pointers = {key: frame.next_pointer() for key in bases}
        if lo.size_input is not None:  # n, for run-time sizes (ir/sizes.py)
            lo._n_pointer = frame.next_pointer()

        def rebased(view):
            return view if view.base is None else replace(view, base=pointers[id(view.base)])
        scratch = _ScratchRecorder(frame)
        memory, lo.memory = lo.memory, scratch
        loops = lo.loops_left_to_llvm
        try:
            lo._fused(node, [rebased(v) for v in inputs], [rebased(v) for v in outputs])
        finally:
            lo.memory = memory
        lo.annotate_aliases(loops)
        return Kernel(function, scratch.requests, lo.leave_function(saved))

    def _call(self, kernel, bases):
        lo, b = self.lo, self.lo.builder
        sizes = [lo.size_pointer()] if lo.size_input is not None else []
        pointers = list(bases.values()) + sizes + [
            lo.memory.scratch(shape, dtype, until=lo.node_index, per_worker=per_worker).base
            for shape, dtype, per_worker in kernel.scratch]
        if lo.workers is not None:
            lo.workers.close_serial()  # every worker fills its frame and calls
        frame = lo.entry_alloca(ir.ArrayType(PTR, max(1, len(pointers))))
        for index, pointer in enumerate(pointers):
            b.store(pointer, b.gep(frame, [I64(index)], source_etype=PTR))
        callee = declared_in(self._module, kernel.function)
        if lo.workers is None:
            lo.em.error.merge(b.call(callee, [frame]))
            return
        workers = lo.workers
        lo.em.error.merge(b.call(callee, [frame, workers.worker, workers.chunks_end,
                                          workers.barrier]))
        workers.serial_pending = kernel.serial_pending
        workers.open_serial()


class _Frame:
    """The kernel's side of the frame: slot i's pointer, loaded in its first block."""

    def __init__(self, lo, frame):
        self.lo, self.frame, self.slots = lo, frame, 0

    def next_pointer(self):
        b = ir.IRBuilder(self.lo._allocas)
        slot = b.gep(self.frame, [I64(self.slots)], source_etype=PTR)
        self.slots += 1
        return self.lo.aliases.register(b.load(slot, typ=PTR))


class _ScratchRecorder:
    """Stands in for the memory plan while a kernel is lowered: scratch the kernel asks
    for comes from its frame, and the caller takes it from the plan at each call."""

    def __init__(self, frame):
        self.frame = frame
        self.requests = []

    def scratch(self, shape, dtype, until, per_worker=False):
        self.requests.append((tuple(shape), np.dtype(dtype), per_worker))
        return View.contiguous(self.frame.next_pointer(), dtype, shape)


def _body_key(node):
    """What a fused node computes: its body's text (which numbers values by position),
    its parameters, and the bytes of every constant (the text abbreviates large ones)."""
    (body,) = node.subgraphs
    constants = tuple((lit.type.dtype.str, lit.value.shape, lit.value.tobytes())
                      for member in body.nodes for lit in member.inputs
                      if isinstance(lit, Lit))
    return format_graph(body), repr(sorted(node.params.items())), constants


def _distinct_bases(views):
    """id(buffer pointer) -> pointer, for the views' buffers in order of first use."""
    bases = {}
    for view in views:
        if view.base is not None:
            bases.setdefault(id(view.base), view.base)
    return bases


def _layout(view, bases):
    """Everything lowering reads from a View but its buffer's address."""
    buffer = None if view.base is None else list(bases).index(id(view.base))
    constant = None if view.constant is None else repr(view.constant)
    return (view.dtype.str, view.shape, view.strides, view.offset, constant, buffer)
