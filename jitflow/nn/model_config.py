"""A functional model's architecture as plain data (for model.save) and back: its
inputs, each layer's registered type and config, and each layer call (node) with the
tensors it takes, the static options it was called with, in computing order.

A tensor is named by where it comes from: ["input", i] for the model's i-th input,
["node", k, j] for the j-th output of the k-th call. Containers of tensors (a merge
layer's list, attention's dict) keep their shape: {"list": [...]}, {"tuple": [...]},
{"dict": {...}}; None stays null.
"""
from .. import pytree
from ..errors import at_user_line
from . import layer_registry
from .input_layer import Input


def functional_config(model):
    graph = model._graph
    refs = {id(t): ["input", i] for i, t in enumerate(graph.input_tensors)}
    layers, nodes = {}, []
    for k, node in enumerate(graph.nodes):
        _remember(layers, node.layer, model)
        nodes.append({"layer": node.layer.name, "inputs": _encoded(node.inputs, refs),
                      "options": dict(node.options)})
        refs.update({id(t): ["node", k, j] for j, t in enumerate(node.output_tensors)})
    return {"name": model.name,
            "inputs": [_input_spec(t.layer) for t in graph.input_tensors],
            "input_structure": _encoded(graph.inputs, refs),
            "layers": [entry for _, entry in layers.values()], "nodes": nodes,
            "outputs": _encoded(graph.outputs, refs)}


def functional_from_config(cls, config):
    layers = {}
    for entry in config["layers"]:
        layer = layer_registry.deserialize(entry)
        layers[layer.name] = layer
    tensors = {("input", i): Input(tuple(spec["shape"]), spec["dtype"], spec["name"],
                                   spec["batch_size"])
               for i, spec in enumerate(config["inputs"])}
    for k, node in enumerate(config["nodes"]):
        args = _decoded(node["inputs"], tensors)
        outputs = layers[node["layer"]](args, **node["options"])
        for j, tensor in enumerate(pytree.flatten(outputs)[0]):
            tensors[("node", k, j)] = tensor
    return cls(_decoded(config["input_structure"], tensors),
               _decoded(config["outputs"], tensors), name=config["name"])


def _remember(layers, layer, model):
    """Add layer's entry to `layers` (name -> (layer, entry)) once; a shared layer is
    called several times, two layers of one name are an error."""
    known = layers.get(layer.name)
    if known is None:
        layers[layer.name] = (layer, layer_registry.serialize(layer))
    elif known[0] is not layer:
        raise ValueError(at_user_line(
            f"Model {model.name!r}: two layers are named {layer.name!r}; a saved model "
            f"names each layer once"))


def _input_spec(input_layer):
    batch, *shape = input_layer.input_shape
    return {"name": input_layer.name, "shape": shape, "batch_size": batch,
            "dtype": input_layer.dtype.name}


def _encoded(tree, refs):
    if tree is None:
        return None
    if isinstance(tree, dict):
        return {"dict": {key: _encoded(value, refs) for key, value in tree.items()}}
    if isinstance(tree, (list, tuple)):
        return {type(tree).__name__: [_encoded(value, refs) for value in tree]}
    return refs[id(tree)]


def _decoded(entry, tensors):
    if entry is None:
        return None
    if isinstance(entry, list):
        return tensors[tuple(entry)]
    (kind, value), = entry.items()
    if kind == "dict":
        return {key: _decoded(item, tensors) for key, item in value.items()}
    items = [_decoded(item, tensors) for item in value]
    return tuple(items) if kind == "tuple" else items


__all__ = ["functional_config", "functional_from_config"]
