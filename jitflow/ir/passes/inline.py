"""Inline calls: a node whose primitive is a call of its subgraph (custom_vjp and
custom_jvp functions) is replaced by the subgraph's nodes. Their rules only matter while
derivatives are taken, during tracing; afterwards the body is ordinary code, open to
every other pass."""
from ..graph import Graph, Lit, Node, Var


def inline(graph):
    if not any(node.prim.is_call for node in graph.nodes):
        return graph
    renamed, nodes = {}, []
    for node in graph.nodes:
        inputs = [_read(renamed, v) for v in node.inputs]
        if node.prim.is_call:
            (body,) = node.subgraphs
            outs = _splice(body, inputs, nodes)
            renamed.update(zip(node.outputs, outs))
        else:
            nodes.append(node.replace(inputs=inputs))
    return Graph(graph.inputs, nodes, [_read(renamed, v) for v in graph.outputs])


def _read(renamed, value):
    return value if isinstance(value, Lit) else renamed.get(value, value)


def _splice(body, inputs, nodes):
    """Append `body`'s nodes, with fresh Vars, reading `inputs`; returns its outputs."""
    local = dict(zip(body.inputs, inputs))
    for node in inline(body).nodes:
        outputs = [Var(v.type) for v in node.outputs]
        nodes.append(Node(node.prim, [_read(local, v) for v in node.inputs], node.params,
                          outputs, node.subgraphs))
        local.update(zip(node.outputs, outputs))
    return [_read(local, v) for v in body.outputs]
