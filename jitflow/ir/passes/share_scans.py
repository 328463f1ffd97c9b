"""One scan where two would compute the same thing: a scan whose body is another's with
more results (the same inputs, nodes and first results), on the same operands, gives
the other's results too.

Reverse mode makes such pairs: the vjp of a scan runs the same scan again, keeping each
step's carry as an extra result. Shared, the forward steps run once. This pass runs
before any pass rewrites bodies, while the two bodies still share their nodes.
"""
from collections import defaultdict

from ..graph import Graph, Lit


def share_scans(graph):
    wider = _wider_scans(graph)
    if not wider:
        return graph
    renamed, nodes, placed = {}, [], set()

    def renaming(node):
        return node.replace(inputs=[v if isinstance(v, Lit) else renamed.get(v, v)
                                    for v in node.inputs])
    for node in graph.nodes:
        keeper = wider.get(node, node)
        if keeper in placed:
            renamed.update(zip(node.outputs, keeper.outputs))
            continue
        placed.add(keeper)
        nodes.append(renaming(keeper))
        renamed.update(zip(node.outputs, nodes[-1].outputs))
    outputs = [v if isinstance(v, Lit) else renamed.get(v, v) for v in graph.outputs]
    return Graph(graph.inputs, nodes, outputs)


def _wider_scans(graph):
    """{scan: the scan with the most results that computes its results too}, for the
    scans another one covers."""
    groups = defaultdict(list)
    for node in graph.nodes:
        if node.op == "scan":
            body = node.subgraphs[0]
            operands = tuple(v.key() if isinstance(v, Lit) else id(v) for v in node.inputs)
            groups[(operands, node.params_key(), id(body.inputs), id(body.nodes))].append(node)
    wider = {}
    for group in groups.values():
        widest = max(group, key=lambda n: len(n.outputs))
        for node in group:
            mine, theirs = node.subgraphs[0].outputs, widest.subgraphs[0].outputs
            if node is not widest and theirs[:len(mine)] == mine:
                wider[node] = widest
    return wider
