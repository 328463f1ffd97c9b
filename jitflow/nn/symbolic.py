"""Symbolic tensors: what a model's values will be (shape, dtype), before there are any.

`Input(shape)` makes one; a layer called on symbolic tensors makes new ones and records
a Node (the layer, its input tensors, its output tensors), as TensorFlow.js'
SymbolicTensor and Node do. The output types are not written per layer: the layer's own
computation is traced by jitflow.function on arrays of the input types, twice, with two
batch sizes; a dimension that follows the batch size is the batch dimension (None).
"""
import itertools

import numpy as np

from .. import pytree
from ..errors import at_user_line
from ..function import function
from ..ir.types import as_dtype
from .masks import mask_leaves, masks_tree

# Two batch sizes stand in for the unknown one; a dimension that differs between the two
# traces is the batch dimension.
_PROBE_BATCHES = (2, 3)
_ids = itertools.count()


class SymbolicTensor:
    """A value of a model before it runs: shape (None for the batch size), dtype, name,
    and the Node (layer call) that makes it."""

    def __init__(self, shape, dtype, node, index, name):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.node = node
        self.index = index  # which output of node.layer's call this is
        self.name = name
        self.id = next(_ids)
        # The symbolic mask of this value (a boolean SymbolicTensor), as Keras' tensors
        # carry it, or None; a model computes it with the value.
        self._keras_mask = None

    @property
    def layer(self):
        """The layer that makes this tensor (an InputLayer for an Input)."""
        return self.node.layer

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return (f"<SymbolicTensor {self.name!r} shape={self.shape} dtype={self.dtype} "
                f"from {self.layer.name!r}>")

    def __bool__(self):
        raise TypeError(at_user_line(
            f"symbolic tensor {self.name!r} has no value yet; it stands for a layer's "
            f"output when the model runs"))


class Node:
    """One call of a layer on symbolic tensors: `inputs` (the call's argument, a pytree
    of SymbolicTensors) -> `outputs` (the result, a pytree of SymbolicTensors)."""

    def __init__(self, layer, inputs, options=None):
        self.layer = layer
        self.inputs = inputs
        self.options = dict(options or {})  # the call's static arguments
        self.input_tensors = pytree.flatten(inputs)[0]
        self.outputs = None
        self.output_tensors = []

    def set_outputs(self, outputs):
        self.outputs = outputs
        self.output_tensors = pytree.flatten(outputs)[0]


def is_symbolic(layer, inputs):
    """Whether `inputs` (a pytree), given to `layer`, are symbolic tensors (all of them:
    a mix with arrays is an error)."""
    leaves = pytree.flatten(inputs)[0]
    if not any(isinstance(leaf, SymbolicTensor) for leaf in leaves):
        return False
    _check_all_symbolic(layer, leaves)
    return True


def apply(layer, inputs, training=False, options=None):
    """`layer` called on the symbolic tensors `inputs` (with its static call `options`):
    new symbolic tensors, recorded as a Node of the layer. The outputs carry the masks
    the layer gives for its inputs' masks."""
    leaves, _, structure = pytree.flatten(inputs)
    options = dict(options or {})
    traced = [_trace_types(layer, structure, leaves, batch, training, options)
              for batch in _probe_batches(leaves)]
    node = Node(layer, inputs, options)
    out_structure, masked = traced[0][1], traced[0][2]
    types = list(zip(*(t[0] for t in traced)))
    outputs = []
    for index, value_types in enumerate(types[:len(masked)]):
        name = layer.name if len(masked) == 1 else f"{layer.name}:{index}"
        outputs.append(_tensor(layer, value_types, node, index, name))
    mask_types = iter(types[len(masked):])
    for tensor, has_mask in zip(outputs, masked):
        if has_mask:
            tensor._keras_mask = _tensor(layer, next(mask_types), node, None,
                                         f"{tensor.name}_mask")
    node.set_outputs(pytree.unflatten(out_structure, outputs))
    layer._inbound_nodes.append(node)
    return node.outputs


def _tensor(layer, types, node, index, name):
    return SymbolicTensor(_merged_shape(layer, types), types[0].dtype, node, index, name)


def _check_all_symbolic(layer, leaves):
    kinds = {isinstance(leaf, SymbolicTensor) for leaf in leaves}
    if kinds != {True}:
        raise TypeError(at_user_line(
            f"{layer.name} ({type(layer).__name__}): called on a mix of symbolic tensors "
            f"and arrays; call a layer on symbolic tensors only (nn.Input) to build a "
            f"model, or on arrays only to compute"))


def _probe_batches(leaves):
    """The batch sizes to trace with: the known one, or two stand-ins for None."""
    known = {leaf.shape[0] for leaf in leaves if leaf.ndim and leaf.shape[0] is not None}
    unknown = any(leaf.ndim and leaf.shape[0] is None for leaf in leaves)
    if unknown:
        return _PROBE_BATCHES
    return (known.pop() if known else 1,)


def _trace_types(layer, structure, leaves, batch, training, options):
    """(the output TensorTypes and then their masks', the output structure, which
    outputs have a mask) of layer's call on arrays of the symbolic tensors' types (and
    masks), with `batch` for an unknown batch size."""
    in_masks = [leaf._keras_mask for leaf in leaves]
    arrays = [_stand_in(tensor, batch)
              for tensor in leaves + [m for m in in_masks if m is not None]]
    out = {}

    def probe(*arrays):
        values, given = list(arrays[:len(leaves)]), iter(arrays[len(leaves):])
        masks = masks_tree(structure, [None if m is None else next(given)
                                       for m in in_masks])
        result, result_mask = layer.call_with_mask(
            pytree.unflatten(structure, values), masks, training, options)
        flat, _, out["structure"] = pytree.flatten(result)
        out_masks = mask_leaves(out["structure"], result_mask, f"{layer.name}.compute_mask")
        out["masked"] = [m is not None for m in out_masks]
        return flat + [m for m in out_masks if m is not None]
    try:
        graph = function(probe).trace(*arrays)
    except (ValueError, TypeError, IndexError) as error:
        shapes = ", ".join(str(leaf.shape) for leaf in leaves)
        raise type(error)(f"{layer.name} ({type(layer).__name__}) called on symbolic "
                          f"inputs of shape {shapes}: {error}") from error
    return graph.out_types, out["structure"], out["masked"]


def _stand_in(tensor, batch):
    """An array of a symbolic tensor's type (ones, so a mask keeps every step)."""
    shape = tuple(batch if d is None else d for d in tensor.shape)
    fill = np.ones if tensor.dtype == np.bool_ else np.zeros
    return fill(shape, tensor.dtype)


def _merged_shape(layer, types):
    """A dimension that changes with the stand-in batch size is the batch dimension."""
    shapes = [t.shape for t in types]
    if len({len(s) for s in shapes}) != 1:
        raise ValueError(at_user_line(
            f"{layer.name} ({type(layer).__name__}): the rank of its output depends on "
            f"the batch size (shapes {shapes} for batches of {_PROBE_BATCHES}); a "
            f"symbolic tensor cannot describe it"))
    return tuple(dims[0] if len(set(dims)) == 1 else None for dims in zip(*shapes))


# --- the checks of an Input (input_layer.py) -------------------------------------

def checked_input_shape(shape, batch_size, name):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(shape)
    for dim in shape:
        if dim is None or not isinstance(dim, (int, np.integer)) or dim < 0:
            raise ValueError(at_user_line(
                f"Input {name!r}: shape {shape} must be non-negative ints (without the "
                f"batch axis); only the batch size may be unknown"))
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer))
                                   or batch_size < 1):
        raise ValueError(at_user_line(
            f"Input {name!r}: batch_size must be a positive int or None, got "
            f"{batch_size!r}"))
    return (batch_size, *map(int, shape))


def checked_input_dtype(dtype, name):
    try:
        return as_dtype(dtype, what=f"Input {name!r}")
    except TypeError as error:
        raise TypeError(at_user_line(str(error))) from None


__all__ = ["SymbolicTensor", "Node", "is_symbolic", "apply"]
