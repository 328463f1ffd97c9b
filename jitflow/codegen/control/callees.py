"""Graphs compiled apart and called from generated code: the branches of a switch, the
condition and body of a loop.

Each is compiled by the Lowering's `compile_graph` (a NativeGraph, handed in by the
runtime that lowers through this module) on ONE thread: it runs on worker 0 inside the
caller's serial code, and a callee using the pool while the other workers wait at the
caller's barrier could deadlock. The caller calls its entry with a pointer array like
the one Python's calls pass: input buffers, output buffers, a workspace carved from the
caller's. Its status joins the caller's.

The entry is a symbol named by a hash of the callee's code, registered with the linker,
so the caller's module text (and its disk-cache key) holds no address.
"""
import hashlib

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from ..emitter import I8, I32, I64, PTR

ENTRY_TYPE = ir.FunctionType(I32, [PTR])  # i32 entry(ptr slots)


class Callee:
    """One graph compiled apart, with a pointer array in the caller's frame."""

    def __init__(self, lo, graph, name):
        self.native = lo.compile_graph(graph, f"{lo.name}.{name}", threads=1,
                                       python_entry=False)
        lo.callees.append(self.native)  # its machine code lives as long as the caller's
        lo.callee_nodes.append(lo.node_index)  # the node that calls it (for profiles)
        self.lo = lo
        self.slots = lo.entry_alloca(
            ir.ArrayType(PTR, len(graph.inputs) + len(graph.outputs) + 1))

    @property
    def workspace_size(self):
        return self.native.workspace_size

    def __call__(self, pointers, workspace):
        """Call it on `pointers` (its inputs' then outputs' buffers); returns the
        status, which is also merged into the caller's."""
        b = self.lo.builder
        for i, pointer in enumerate(list(pointers) + [workspace]):
            b.store(pointer, b.gep(self.slots, [I64(i)], source_etype=PTR))
        status = b.call(_entry(self.lo.module, self.native), [self.slots])
        self.lo.em.error.merge(status)
        return status


def _entry(module, native):
    """The callee's entry in `module`, as a symbol the linker resolves."""
    name = "jitflow_callee_" + hashlib.sha256(native.llvm_ir.encode()).hexdigest()[:24]
    if getattr(native, "profiled", False):  # its own counters: another graph's copy of the code has others
        name += f"_{id(native):x}"
    llvm.add_symbol(name, native.entry_address())
    return module.globals.get(name) or ir.Function(module, ENTRY_TYPE, name)


def shared_workspace(lo, callees):
    """Workspace for callees that run one after another: as large as the largest's."""
    size = max([c.workspace_size for c in callees] + [1])
    return lo.memory.scratch((size,), np.dtype(np.uint8), until=lo.node_index).base


def buffer(lo, view):
    """A pointer to `view`'s elements, contiguous: the view's own memory, or a copy."""
    if view.is_contiguous():
        return address(lo, view)
    copy = lo.memory.scratch(view.shape, view.dtype, until=lo.node_index)
    lo.copy(view, copy)
    return copy.base


def address(lo, view):
    return lo.em.element_pointer(view.base, view.dtype, I64(view.offset))


def contiguous_output(view, what):
    if not view.is_contiguous():
        raise NotImplementedError(f"{what}: an output buffer is not contiguous")
    return view


def byte_pointer(lo, base, byte_offset):
    """base + byte_offset (an i64 value or int)."""
    offset = byte_offset if isinstance(byte_offset, ir.Value) else I64(byte_offset)
    return lo.builder.gep(base, [offset], source_etype=I8)


def memcpy(lo, target, source, nbytes):
    """Copy bytes with llvm.memcpy: no loop nest, so it may sit inside hand-made loops
    (a nest there could be split between threads)."""
    copy = lo.module.declare_intrinsic("llvm.memcpy", [PTR, PTR, I64])
    count = nbytes if isinstance(nbytes, ir.Value) else I64(nbytes)
    lo.builder.call(copy, [target, source, count, ir.Constant(ir.IntType(1), 0)])


def nbytes(view):
    return view.size * view.dtype.itemsize
