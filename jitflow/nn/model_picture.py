"""A model's graph as a Picture (jitflow.drawing): each layer a scope holding the
operations its call traces to, fed by the layers it reads, as TensorBoard shows Keras
models.

Each layer is traced on its inputs' types twice, at two stand-in batch sizes: the
dimensions that change between the two are the batch dimension, drawn as unknown (the
way symbolic.py finds a layer's output shape). A model without a layer graph (a
subclass of Model that defines `call`) is one scope, traced at the input shape it was
built with.
"""
import numpy as np

from .. import pytree
from ..drawing import Picture, picture_of_ir
from ..drawing.from_ir import add_graph, add_outputs, clean_name, input_node, output_type
from ..drawing.picture import OutputType
from ..function import function
from ..ir.passes import optimize

STAND_IN_BATCHES = (2, 3)


def model_picture(model):
    """The Picture of `model`'s inference graph; raises ValueError when the model has
    not been built (its input shape is unknown)."""
    graph = _layer_graph(model)
    if graph is None:
        return _whole_model_picture(model)
    picture = Picture(model.name)
    references = {}
    for tensor in graph.input_tensors:
        references[id(tensor)] = input_node(picture, "", tensor.name, OutputType(
            np.dtype(tensor.dtype), tuple(tensor.shape)), "Input")
    for node in graph.nodes:
        scope = picture.unique_name("", clean_name(node.layer.name))
        inputs = [references[id(t)] for t in node.input_tensors]
        outputs = _add_layer(picture, scope, node, inputs)
        references.update(zip(map(id, node.output_tensors), outputs, strict=True))
    add_outputs(picture, [references[id(t)] for t in graph.output_tensors],
                names=[f"{t.name}_output" for t in graph.output_tensors])
    return picture


def can_draw(model):
    """Whether model_picture can draw `model` now: it has a layer graph, or it was
    built (a subclass: once it has been called on data)."""
    return _layer_graph(model) is not None or (
        model.built and getattr(model, "input_shape", None) is not None)


def _layer_graph(model):
    functional = getattr(model, "_functional_or_none", None)
    if functional is not None:
        return functional()
    return getattr(model, "_graph", None)


def _add_layer(picture, scope, node, inputs):
    """Add the layer's traced operations under `scope`; returns its outputs' references."""
    structure = pytree.flatten(node.inputs)[2]
    drawn = [_traced_picture(node.layer, structure, node.input_tensors, batch)
             for batch in STAND_IN_BATCHES]
    graph, names = drawn[0]
    variables = [input_node(picture, scope, name.rpartition("/")[2], output_type(var.type),
                            "Variable")
                 for name, var in zip(names[len(inputs):], graph.inputs[len(inputs):])]
    first = len(picture.nodes)
    outputs = add_graph(picture, graph, scope, inputs=inputs + variables)
    other = picture_of_ir(drawn[1][0])
    _unknown_where_they_differ(picture.nodes[first:], other.nodes)
    return outputs


def _traced_picture(layer, structure, tensors, batch):
    """(the graph of layer's call on zeros of the tensors' shapes at `batch`, the names
    of its inputs)."""
    arrays = [np.zeros(tuple(batch if d is None else d for d in t.shape), t.dtype)
              for t in tensors]

    def call(*arrays):
        return layer(pytree.unflatten(structure, list(arrays)), training=False)
    graph, names = function(call).trace_with_input_names(*arrays)
    return optimize(graph), names  # without the casts to the dtype a value has


def _unknown_where_they_differ(nodes, others):
    """Mark unknown the dimensions that differ between two tracings of one layer (the
    batch dimension); when the tracings differ in structure, keep the first."""
    others = [n for n in others if n.op not in ("Input", "Output")]
    if [n.op for n in nodes if n.op != "Variable"] != [n.op for n in others]:
        return
    for node, other in zip((n for n in nodes if n.op != "Variable"), others):
        node.outputs = [_merged(a, b) for a, b in zip(node.outputs, other.outputs)]


def _merged(a, b):
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        return a
    dims = tuple(x if x == y else None for x, y in zip(a.shape, b.shape))
    return OutputType(a.dtype, dims)


def _whole_model_picture(model):
    if not can_draw(model):
        raise ValueError(f"Model {model.name!r} has not been built yet: call it on data "
                         f"(or fit it) before drawing its graph")
    dtype = model.weights[0].dtype if model.weights else np.float32
    graph, names = function(lambda x: model(x, training=False)).trace_with_input_names(
        np.zeros(model.input_shape, dtype))
    picture = Picture(model.name)
    scope = picture.unique_name("", clean_name(model.name))
    add_outputs(picture, add_graph(picture, graph, scope, input_names=names))
    return picture
