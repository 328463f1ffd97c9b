"""The loop every pass shares: walk the nodes in order, rewriting them one at a time."""
from ..graph import Graph, Lit, Node


def rewrite(graph, visit, graph_pass):
    """Rebuild `graph`, giving each node (inputs already renamed) to visit(node, producers).

    visit returns None to keep the node, a Node to put in its place (defining the same
    output Vars), or a tuple of values (Vars or Lits) that replace its outputs. Subgraphs
    are first rewritten by `graph_pass` itself. Returns `graph` unchanged, the same
    object, when nothing changed, so the pipeline can tell when it is done.
    """
    renamed = {}
    producers = {}  # Var -> the node of the new graph that defines it
    nodes = []
    changed = False
    for node in graph.nodes:
        new = _renamed(node, renamed, graph_pass)
        replacement = visit(new, producers)
        if isinstance(replacement, tuple):
            renamed.update(zip(node.outputs, replacement))
            changed = True
            continue
        if isinstance(replacement, Node):
            new = replacement
        changed |= new is not node
        nodes.append(new)
        for var in new.outputs:
            producers[var] = new
    if not changed:
        return graph
    outputs = [renamed.get(v, v) if not isinstance(v, Lit) else v for v in graph.outputs]
    return Graph(graph.inputs, nodes, outputs)


def _renamed(node, renamed, graph_pass):
    inputs = tuple(renamed.get(v, v) if not isinstance(v, Lit) else v for v in node.inputs)
    subgraphs = tuple(graph_pass(g) for g in node.subgraphs)
    same_inputs = all(a is b for a, b in zip(inputs, node.inputs))
    same_subgraphs = all(a is b for a, b in zip(subgraphs, node.subgraphs))
    if same_inputs and same_subgraphs:
        return node
    return node.replace(inputs=inputs, subgraphs=subgraphs)
