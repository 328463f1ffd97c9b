"""Tidy the operands that nodes owning subgraphs pass through to them: a constant
(Lit) operand goes into the subgraphs themselves (where folding and simplification can
use it), an operand passed twice is passed once, and one no subgraph reads is dropped.

Only the operands that every trip or branch sees unchanged are touched: a switch's
after its index, a loop's constants (while: after the carry; scan: after the carry and
the rows of xs). Not while_grad's: it has a result (a cotangent) per constant.
"""
from ..graph import Graph, Lit, Var
from .rewrite import rewrite

# op -> (the node's operand that is each subgraph's input 0, the first input it may tidy)
PASSED_THROUGH = {
    "switch": lambda node: (1, 0),
    "while": lambda node: (0, len(node.subgraphs[1].outputs)),
    "scan": lambda node: (0, node.params["carries"] + node.params["xs"]),
}


def tidy_operands(graph):
    return rewrite(graph, _tidied, tidy_operands)


def _tidied(node, producers):
    if node.op not in PASSED_THROUGH:
        return None
    offset, first = PASSED_THROUGH[node.op](node)
    count = len(node.subgraphs[0].inputs)
    drop, replace = set(), {}  # graph input positions; position -> what replaces it
    seen = {}
    for p in range(first, count):
        operand = node.inputs[offset + p]
        if isinstance(operand, Lit):
            replace[p] = operand
        elif operand in seen:
            replace[p] = seen[operand]
        elif not any(_reads(g, g.inputs[p]) for g in node.subgraphs):
            drop.add(p)
        else:
            seen[operand] = p
            continue
        drop.add(p)
    if not drop:
        return None
    subgraphs = tuple(_without(g, drop, replace) for g in node.subgraphs)
    inputs = [v for i, v in enumerate(node.inputs) if i - offset not in drop]
    return node.replace(inputs=inputs, subgraphs=subgraphs)


def _reads(graph, var):
    return var in graph.outputs or any(var in n.inputs for n in graph.nodes)


def _without(graph, drop, replace):
    """`graph` without the inputs at `drop`, their uses replaced as `replace` says (a
    Lit, or the position of the input that stands for the same value)."""
    renamed = {graph.inputs[p]: (r if isinstance(r, Lit) else graph.inputs[r])
               for p, r in replace.items()}
    nodes = [n.replace(inputs=[renamed.get(v, v) if isinstance(v, Var) else v
                               for v in n.inputs]) for n in graph.nodes]
    outputs = [renamed.get(v, v) if isinstance(v, Var) else v for v in graph.outputs]
    return Graph([v for p, v in enumerate(graph.inputs) if p not in drop], nodes, outputs)
