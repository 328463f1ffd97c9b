"""jitflow.debug.bisect(fn, *args): where compiled results and the reference drift apart.

The traced graph is run twice with every intermediate value kept: on the reference
interpreter (NumPy, as eager code computes) and as native code. Walking the nodes in
program order, the first whose native result differs beyond rounding while its operands
agree is the operation that drifts; a node whose operands already differ only inherits
the difference.
"""
from dataclasses import dataclass

import numpy as np

from ..codegen import NativeGraph
from ..control_flow.while_grad import backward_step_graph
from ..function import function
from ..ir.graph import Graph, Var
from ..ir.interpret import eval_graph
from ..ir.passes import optimize
from ..ir.printer import format_graph

ULPS = 64  # rounding allowed per operation: fused code reorders and contracts


@dataclass
class Drift:
    """The first operation whose native result leaves the reference's."""
    node: str  # the node as the IR prints it (its operands numbered from %0)
    max_abs: float  # the largest difference in its result
    max_rel: float

    def __str__(self):
        return (f"native code drifts from the reference at\n  {self.node}\n"
                f"by up to {self.max_abs:g} ({self.max_rel:g} relative), its operands "
                f"agreeing")


def bisect(fn, *args, ulps=ULPS):
    """The Drift of fn's first operation whose native result differs from the
    reference interpreter's (beyond `ulps` units in the last place) while its operands
    agree, or None when every value agrees."""
    compiled = function(fn)
    graph = compiled.trace(*args)
    leaves = compiled._split(compiled._bind(args, {}))[0]  # as the trace took them
    kept = [v for node in graph.nodes for v in node.outputs]
    probe = Graph(graph.inputs, graph.nodes, kept)
    reference = eval_graph(probe, leaves)
    native = NativeGraph(optimize(probe), "bisect", python_entry=False,
                         backward_step=backward_step_graph).run(leaves)
    values = {var: (r, n) for var, r, n in zip(kept, reference, native)}
    for node in graph.nodes:
        drift = _drift(node, values, ulps)
        if drift is not None:
            return drift
    return None


def _drift(node, values, ulps):
    operands = [v for v in node.inputs if isinstance(v, Var) and v in values]
    if any(not _agree(*values[v], ulps) for v in operands):
        return None  # inherited from an operand
    for out in node.outputs:
        reference, native = values[out]
        if not _agree(reference, native, ulps):
            difference = np.abs(np.asarray(native, np.float64) -
                                np.asarray(reference, np.float64))
            scale = np.maximum(np.abs(np.asarray(reference, np.float64)), 1e-300)
            return Drift(_shown(node), float(np.nanmax(difference)),
                         float(np.nanmax(difference / scale)))
    return None


def _shown(node):
    """The node as the IR prints it, its operands numbered from %0."""
    operands = list(dict.fromkeys(v for v in node.inputs if isinstance(v, Var)))
    text = format_graph(Graph(operands, [node], list(node.outputs)))
    return next(line.strip() for line in text.splitlines() if f"= {node.prim.name}" in line)


def _agree(reference, native, ulps):
    reference, native = np.asarray(reference), np.asarray(native)
    if reference.shape != native.shape:
        return False
    if reference.dtype.kind not in "fc":
        return np.array_equal(reference, native)
    same_nan = np.isnan(reference) == np.isnan(native)
    tolerance = ulps * np.finfo(reference.dtype).eps
    with np.errstate(all="ignore"):
        finite = np.abs(reference[np.isfinite(reference)])
        scale = float(finite.max()) if finite.size else 0.0  # (near 0: the array's size)
        close = np.isclose(native, reference, rtol=tolerance, atol=tolerance * scale,
                           equal_nan=True)
    return bool(same_nan.all() and close.all())
