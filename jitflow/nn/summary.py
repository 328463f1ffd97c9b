"""model.summary()'s table, in Keras' layout: one row per layer, then the totals."""
import numpy as np

from .. import pytree
from .symbolic import SymbolicTensor

_WIDTHS = (34, 24, 11, 26)  # layer (type), output shape, param #, connected to


def summary_text(model):
    graph = model._functional_or_none()
    columns = ["Layer (type)", "Output Shape", "Param #"]
    if graph is not None and type(model).__name__ != "Sequential":
        columns.append("Connected to")
    widths = _WIDTHS[:len(columns)]
    rule = sum(widths)
    lines = [f'Model: "{model.name}"', "_" * rule, _row(columns, widths), "=" * rule]
    rows = [_layer_rows(layer, graph) for layer in _shown_layers(model, graph)]
    for index, layer_rows in enumerate(rows):
        lines += [_row(cells[:len(columns)], widths) for cells in layer_rows]
        lines.append(("=" if index == len(rows) - 1 else "_") * rule)
    weights = model.weights
    trainable = sum(_size(w) for w in weights if w.trainable)
    total = sum(_size(w) for w in weights)
    lines += [f"Total params: {total:,}", f"Trainable params: {trainable:,}",
              f"Non-trainable params: {total - trainable:,}", "_" * rule]
    return "\n".join(lines)


def _shown_layers(model, graph):
    if graph is None or type(model).__name__ == "Sequential":
        return model.layers
    return graph.layers


def _layer_rows(layer, graph):
    """[[name (type), output shape, params, first connection], [..., next connection]]"""
    nodes = [n for n in graph.nodes if n.layer is layer] if graph is not None else []
    if graph is not None and not nodes:  # an InputLayer
        nodes = layer._inbound_nodes[:1]
    shapes = [_shape_text(node.outputs) for node in nodes] or [_known_shape(layer)]
    links = [link for node in nodes for link in _links(node)] or [""]
    first = [f"{layer.name} ({type(layer).__name__})", shapes[0],
             f"{layer.count_params():,}", links[0]]
    rest = [["", "", "", link] for link in links[1:]]
    return [first] + rest


def _links(node):
    """'dense[0][0]': the layer, which of its calls, which of that call's outputs."""
    return [f"{t.layer.name}[{t.layer._inbound_nodes.index(t.node)}][{t.index}]"
            for t in node.input_tensors]


def _known_shape(layer):
    try:
        return str(layer.output_shape)
    except AttributeError:
        return "?"


def _shape_text(outputs):
    if isinstance(outputs, SymbolicTensor):
        return str(outputs.shape)
    return ", ".join(str(t.shape) for t in pytree.flatten(outputs)[0])


def _size(weight):
    return int(np.prod(weight.shape, dtype=np.int64))


def _row(cells, widths):
    return "".join(_fit(str(cell), width) for cell, width in zip(cells, widths)).rstrip()


def _fit(text, width):
    text = text if len(text) < width else text[:width - 2] + "…"
    return text.ljust(width)
