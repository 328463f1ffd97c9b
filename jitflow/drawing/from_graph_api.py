"""Graphs of the graph API (jitflow.v1) as Pictures.

They are read through what every such graph offers (`get_operations()`, and each
operation's `name`, `type`, `inputs`, `outputs` and `control_inputs`), so this layer
does not import the one that defines them. Their names are already scoped.
"""
from .picture import OutputType, Picture, PictureNode, reference


def is_graph_api_graph(obj):
    return callable(getattr(obj, "get_operations", None))


def picture_of_operations(graph, name="graph"):
    picture = Picture(name)
    for operation in graph.get_operations():
        picture.add(PictureNode(
            operation.name, operation.type,
            [reference(t.op.name, t.value_index) for t in operation.inputs],
            [_output_type(t) for t in operation.outputs],
            control_inputs=[op.name for op in getattr(operation, "control_inputs", ())],
            attrs={key: str(value) for key, value in
                   sorted(getattr(operation, "attrs", {}).items())}))
    return picture


def _output_type(tensor):
    dims = getattr(tensor.shape, "dims", None)
    return OutputType(tensor.dtype, None if dims is None else tuple(dims))
