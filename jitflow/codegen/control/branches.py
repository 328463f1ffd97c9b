"""Lowering of switch nodes: real branches in the generated code.

Each branch is a graph compiled apart (callees.py). The clamped index picks which one
is called, on the node's operand buffers (contiguous copies where needed) and output
buffers.
"""
import numpy as np

from ..emitter import I64
from .callees import Callee, address, buffer, contiguous_output, shared_workspace


def switch(lo, node, inputs, outputs):
    branches = [Callee(lo, graph, f"branch{k}") for k, graph in enumerate(node.subgraphs)]
    pointers = [buffer(lo, view) for view in inputs[1:]] + \
        [address(lo, contiguous_output(view, "switch")) for view in outputs]
    workspace = shared_workspace(lo, branches)
    b = lo.builder
    index = _clamped_index(lo, inputs[0], len(branches))
    done = b.append_basic_block("switch.end")
    blocks = [b.append_basic_block(f"switch.{k}") for k in range(len(branches))]
    choice = b.switch(index, blocks[0])
    for k, (block, branch) in enumerate(zip(blocks, branches)):
        choice.add_case(I64(k), block)
        b.position_at_end(block)
        branch(pointers, workspace)
        b.branch(done)
    b.position_at_end(done)


def _clamped_index(lo, view, count):
    b = lo.builder
    index = lo.em.cast(lo.read(view, I64(view.offset)), view.dtype, np.dtype(np.int64))
    index = b.select(b.icmp_signed("<", index, I64(0)), I64(0), index)
    return b.select(b.icmp_signed(">", index, I64(count - 1)), I64(count - 1), index)
