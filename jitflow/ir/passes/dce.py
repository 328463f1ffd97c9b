"""Dead-code elimination: drop nodes without effects none of whose outputs are used."""
from ..graph import Graph, Var, has_effects


def dce(graph):
    live = {v for v in graph.outputs if isinstance(v, Var)}
    kept = []
    for node in reversed(graph.nodes):
        if not has_effects(node) and not any(v in live for v in node.outputs):
            continue
        node = _dce_subgraphs(node)
        kept.append(node)
        live.update(v for v in node.inputs if isinstance(v, Var))
    if len(kept) == len(graph.nodes) and all(
            a is b for a, b in zip(reversed(kept), graph.nodes)):
        return graph
    return Graph(graph.inputs, reversed(kept), graph.outputs)


def _dce_subgraphs(node):
    subgraphs = tuple(dce(g) for g in node.subgraphs)
    if all(a is b for a, b in zip(subgraphs, node.subgraphs)):
        return node
    return node.replace(subgraphs=subgraphs)
