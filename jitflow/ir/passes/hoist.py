"""Loop-invariant code motion: work in a loop's body (or condition) that reads only the
loop's constant inputs is done once, before the loop, and handed in as a new constant.

A loop node's subgraphs take (per-trip values..., constants...); the constants are the
node's operands from `first_constant` on (while: after the carry; scan: after the
carry and the rows of xs). Every subgraph of a node takes the same inputs, so each gets
an input for every value hoisted out of any of them.

Not hoisted: nodes that can raise at run time (an index out of bounds, an integer to a
negative power, a Python int that does not fit): with a loop of no trips they would
raise where the loop would not. Nor nodes reading only literals (they cost nothing
inside, and folding handles them), nor view-like nodes (free inside, but a copy when
handed in: callees take contiguous buffers). Branches are left alone: hoisting would
run work the untaken branch never asked for.
"""
import numpy as np

from ..graph import Graph, Lit, Node, Var
from ..primitive import VIEW_OPS

LOOPS = {
    "while": lambda node: len(node.subgraphs[1].outputs),
    "scan": lambda node: node.params["carries"] + node.params["xs"],
}
MAY_RAISE = {"gather", "scatter_add", "scatter", "pow"}


def hoist(graph):
    nodes, changed = [], False
    for node in graph.nodes:
        subgraphs = tuple(hoist(g) for g in node.subgraphs)
        if any(a is not b for a, b in zip(subgraphs, node.subgraphs)):
            node, changed = node.replace(subgraphs=subgraphs), True
        if node.op in LOOPS:
            moved, node = _hoisted(node)
            nodes += moved
            changed |= bool(moved)
        nodes.append(node)
    return Graph(graph.inputs, nodes, graph.outputs) if changed else graph


def _hoisted(node):
    """The nodes moved out of `node`'s subgraphs (outside it, reading its operands),
    and the node taking their results as new constants."""
    first = LOOPS[node.op](node)
    moved, handed_in, kept_graphs = [], [], []
    for graph in node.subgraphs:
        outside, inside, graph = _split(graph, node.inputs, first)
        moved += outside
        handed_in.append(inside)
        kept_graphs.append(graph)
    if not moved:
        return [], node
    subgraphs = []
    for k, graph in enumerate(kept_graphs):
        inputs = list(graph.inputs)
        for j, values in enumerate(handed_in):
            inputs += [v if j == k else Var(v.type) for v, _ in values]
        subgraphs.append(Graph(inputs, graph.nodes, graph.outputs))
    extra = [outer for values in handed_in for _, outer in values]
    return moved, Node(node.prim, list(node.inputs) + extra, node.params, node.outputs,
                       subgraphs)


def _split(graph, operands, first):
    """The invariant nodes of `graph` as nodes outside (renamed onto the loop's
    operands), the (inside Var, outside Var) pairs the rest still reads, and the graph
    without them."""
    outer_of = {var: operand for var, operand in zip(graph.inputs[first:], operands[first:])}
    invariant = set(graph.inputs[first:])
    outside, kept, moved = [], [], set()
    for node in graph.nodes:
        if _movable(node, invariant):
            outputs = [Var(v.type) for v in node.outputs]
            outside.append(Node(node.prim, [v if isinstance(v, Lit) else outer_of[v]
                                            for v in node.inputs], node.params, outputs))
            outer_of.update(zip(node.outputs, outputs))
            invariant.update(node.outputs)
            moved.update(node.outputs)
        else:
            kept.append(node)
    if not outside:
        return [], [], graph
    read = [v for n in kept for v in n.inputs] + list(graph.outputs)
    needed = list(dict.fromkeys(v for v in read if isinstance(v, Var) and v in moved))
    return outside, [(v, outer_of[v]) for v in needed], Graph(graph.inputs, kept,
                                                               graph.outputs)


def _movable(node, invariant):
    reads = [v for v in node.inputs if not isinstance(v, Lit)]
    return (node.prim.pure and not node.subgraphs and node.op not in MAY_RAISE
            and node.op not in VIEW_OPS and reads and all(v in invariant for v in reads)
            and not _python_int_into_narrow_int(node))


def _python_int_into_narrow_int(node):
    """A Python int meeting an integer array it may not fit (one narrower than int64, or
    unsigned): checked at run time for overflow."""
    types = [v.type for v in node.inputs]
    return any(t.weak and t.dtype.kind in "iu" for t in types) and \
        any(not t.weak and (t.dtype.kind == "u" or t.dtype.kind == "i" and
                            t.dtype.itemsize < 8) for t in types)
