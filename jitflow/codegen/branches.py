"""Lowering of switch nodes: real branches in the generated code.

Each branch is compiled as a graph of its own (a NativeGraph on one thread: it runs on
worker 0, between the barriers of the serial code around it) and called through its
entry point, with a pointer array like the one Python's calls pass: the node's operand
buffers, its output buffers, and a workspace carved from the caller's. The index picks
the call (clamped into range); the callee's status joins the caller's.

The callee's entry is a symbol named by a hash of its code, registered with the linker,
so the caller's module text (and its disk-cache key) does not hold an address.
"""
import hashlib

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from .emitter import I32, I64, PTR

ENTRY_TYPE = ir.FunctionType(I32, [PTR])  # i32 entry(ptr slots)


def switch(lo, node, inputs, outputs):
    from .runtime import NativeGraph  # runtime lowers through this module
    branches = [NativeGraph(graph, f"{lo.name}.branch{k}", threads=1, python_entry=False)
                for k, graph in enumerate(node.subgraphs)]
    lo.callees.extend(branches)  # their machine code lives as long as the caller's
    slots = _slots(lo, inputs[1:], outputs, max(b.workspace_size for b in branches))
    b = lo.builder
    index = _clamped_index(lo, inputs[0], len(branches))
    done = b.append_basic_block("switch.end")
    blocks = [b.append_basic_block(f"switch.{k}") for k in range(len(branches))]
    choice = b.switch(index, blocks[0])
    for k, (block, branch) in enumerate(zip(blocks, branches)):
        choice.add_case(I64(k), block)
        b.position_at_end(block)
        lo.em.error.merge(b.call(_entry(lo.module, branch), [slots]))
        b.branch(done)
    b.position_at_end(done)


def _slots(lo, operands, outputs, workspace_size):
    """The pointer array: operands (contiguous copies where they are not), outputs,
    workspace."""
    pointers = [_buffer(lo, view) for view in operands]
    for view in outputs:
        if not view.is_contiguous():
            raise NotImplementedError("switch: an output buffer is not contiguous")
        pointers.append(_address(lo, view))
    workspace = lo.memory.scratch((max(1, workspace_size),), np.dtype(np.uint8),
                                  until=lo.node_index)
    pointers.append(workspace.base)
    slots = lo.entry_alloca(ir.ArrayType(PTR, len(pointers)))
    for i, pointer in enumerate(pointers):
        lo.builder.store(pointer, lo.builder.gep(slots, [I64(i)], source_etype=PTR))
    return slots


def _buffer(lo, view):
    if view.is_contiguous():
        return _address(lo, view)
    copy = lo.memory.scratch(view.shape, view.dtype, until=lo.node_index)
    lo.copy(view, copy)
    return copy.base


def _address(lo, view):
    return lo.em.element_pointer(view.base, view.dtype, I64(view.offset))


def _clamped_index(lo, view, count):
    b = lo.builder
    index = lo.em.cast(lo.read(view, I64(view.offset)), view.dtype, np.dtype(np.int64))
    index = b.select(b.icmp_signed("<", index, I64(0)), I64(0), index)
    return b.select(b.icmp_signed(">", index, I64(count - 1)), I64(count - 1), index)


def _entry(module, branch):
    """The branch's entry in `module`, as a symbol the linker resolves."""
    name = "jitflow_branch_" + hashlib.sha256(branch.llvm_ir.encode()).hexdigest()[:24]
    llvm.add_symbol(name, branch.entry_address())
    return module.globals.get(name) or ir.Function(module, ENTRY_TYPE, name)
