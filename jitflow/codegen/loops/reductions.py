"""Lowering of regions: fused bodies with reductions, and reductions on their own (a
region of one node). regions.py decides what each phase computes, row_loops.py and
column_loops.py emit the loops, and `_by_rows` picks between them.
"""
import math

from ...ir.graph import Graph, Lit, Var
from ...ir.passes.fuse import REDUCTIONS, in_memory_order
from .accumulate import lanes
from .column_loops import lower_columns
from .regions import Region
from .row_loops import lower_rows


def lower_region(lo, body, inputs, outputs):
    """body: the region's graph; inputs / outputs: Views of its inputs and outputs."""
    region = Region(body)
    operands = dict(zip(body.inputs, inputs))
    operands.update({lit: lo._constant(lit) for node in body.nodes for lit in node.inputs
                     if isinstance(lit, Lit)})
    inline_checks = lo._check_fused_python_ints(body, operands)
    order = _memory_order(region, operands)
    if _by_rows(region, order):
        lower_rows(lo, region, operands, outputs, inline_checks)
    else:
        lower_columns(lo, region, operands, outputs, inline_checks, order)


def reduce(lo, node, inputs, outputs):
    """A reduction on its own: the region whose body is just that node."""
    operand, result = Var(node.inputs[0].type), Var(node.outputs[0].type)
    body = Graph([operand], [node.replace(inputs=[operand], outputs=[result])], [result])
    lower_region(lo, body, inputs, outputs)


def _by_rows(region, order):
    """Rows, when the region reads its own reductions (it must: only rows finish them
    early), or when the axis its operand walks contiguously is reduced and the rows are
    not short: then vector accumulators take whole vectors of a row. Otherwise the
    domain is walked in memory order folding each element into its output slot:
    vectorized over the kept contiguous axis, or, for short rows, at a cost per element
    rather than per row. A float product is always walked in memory order: it must
    fold its elements one by one in NumPy's order (fuse.py). The two fold in other
    orders, so a row's length that is a run-time size (ir/sizes.py) decides as each
    size would (a DynamicDecision where sizes of the range would decide apart)."""
    if len(region.phases) > 1 or region.phases[0].after:
        return True
    if any(in_memory_order(node) for node in region.body.nodes):
        return False
    long_axes = [axis for axis in order if region.shape[axis] != 1]
    if not long_axes or long_axes[-1] not in region.axes:
        return not long_axes
    row = math.prod(region.shape[axis] for axis in region.axes)
    dtypes = [n.outputs[0].type.dtype for n in region.body.nodes if n.op in REDUCTIONS]
    return bool(row >= min(lanes(dtype) for dtype in dtypes) // 2)


def _memory_order(region, operands):
    """The domain's axes from outer to inner, in the memory order of its first operand
    that spans the domain (C order when none does)."""
    shape = region.shape
    for value, view in operands.items():
        if view.base is not None and tuple(view.shape) == tuple(shape):
            return sorted(range(len(shape)), key=lambda axis: -abs(view.strides[axis]))
    return list(range(len(shape)))
