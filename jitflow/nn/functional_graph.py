"""The layer graph between a functional model's inputs and outputs: its nodes in an order
that computes each before its uses, and running it on arrays (eager or traced).

Running walks the nodes as TensorFlow.js' execute does: a table from each symbolic
tensor to its value, filled with the inputs, then with each node's layer's outputs.
"""
from .. import numpy as jnp
from .. import pytree
from ..errors import at_user_line
from .masks import mask_leaves, masks_tree
from .symbolic import SymbolicTensor


class FunctionalGraph:
    def __init__(self, inputs, outputs, model_name):
        self.model_name = model_name
        self.inputs, self.outputs = inputs, outputs
        self.input_tensors = self._symbolic_leaves(inputs, "inputs")
        self.output_tensors = self._symbolic_leaves(outputs, "outputs")
        self.input_structure = pytree.flatten(inputs)[2]
        self.output_structure = pytree.flatten(outputs)[2]
        self._check_distinct_inputs()
        self.nodes = self._ordered_nodes()
        self.layers = unique([t.layer for t in self.input_tensors] +
                              [node.layer for node in self.nodes])

    # --- building ---------------------------------------------------------------------
    def _symbolic_leaves(self, tree, what):
        leaves = pytree.flatten(tree)[0]
        if not leaves:
            raise ValueError(at_user_line(f"Model {self.model_name!r}: no {what} given"))
        for leaf in leaves:
            if not isinstance(leaf, SymbolicTensor):
                raise TypeError(at_user_line(
                    f"Model {self.model_name!r}: {what} must be symbolic tensors (from "
                    f"nn.Input and layers called on them), got a {type(leaf).__name__}"))
        return leaves

    def _check_distinct_inputs(self):
        names = [t.name for t in self.input_tensors]
        if len(set(map(id, self.input_tensors))) != len(names):
            raise ValueError(at_user_line(
                f"Model {self.model_name!r}: an input appears twice in inputs {names}"))

    def _ordered_nodes(self):
        """The nodes that compute the outputs from the inputs, each after the nodes that
        compute its inputs."""
        inputs = {id(t) for t in self.input_tensors}
        reached, ordered, done = set(), [], set()
        for output in self.output_tensors:
            self._visit(output, output, inputs, reached, ordered, done)
        unused = [t.name for t in self.input_tensors if id(t) not in reached]
        if unused:
            raise ValueError(at_user_line(
                f"Model {self.model_name!r}: input(s) {unused} are not used to compute any "
                f"of the outputs {[t.name for t in self.output_tensors]}"))
        return ordered

    def _visit(self, tensor, output, inputs, reached, ordered, done):
        if id(tensor) in inputs:
            reached.add(id(tensor))
            return
        node = tensor.node
        if id(node) in done:
            return
        if not node.input_tensors:  # an Input that is not among the model's inputs
            raise ValueError(at_user_line(
                f"Model {self.model_name!r}: output {output.name!r} (shape {output.shape}) "
                f"is not reachable from the inputs "
                f"{[t.name for t in self.input_tensors]}: it needs Input {tensor.name!r}, "
                f"which is not one of them"))
        for source in node.input_tensors:
            self._visit(source, output, inputs, reached, ordered, done)
        done.add(id(node))
        ordered.append(node)

    # --- running ----------------------------------------------------------------------
    def run(self, values, training=False, mask=None):
        """(the outputs' values, their masks) for the inputs' `values` (the inputs'
        structure, a single array for a single input, or a dict by input name) and
        their `mask` (the same structure, or None)."""
        env, masks = {}, {}
        flat_values = self._flat_values(values)
        for tensor, value, given in zip(self.input_tensors, flat_values,
                                        mask_leaves(self.input_structure, mask, "mask")):
            env[id(tensor)] = self._checked_value(tensor, value)
            _keep_mask(tensor, given, env, masks)
        for node in self.nodes:
            structure = pytree.flatten(node.inputs)[2]
            args = pytree.unflatten(structure, [env[id(t)] for t in node.input_tensors])
            in_masks = masks_tree(structure, [masks.get(id(t)) for t in node.input_tensors])
            result, result_mask = node.layer.call_with_mask(args, in_masks, training,
                                                            node.options)
            results, _, out_structure = pytree.flatten(result)
            out_masks = mask_leaves(out_structure, result_mask,
                                    f"{node.layer.name}.compute_mask")
            for tensor, value, out_mask in zip(node.output_tensors, results, out_masks,
                                               strict=True):
                env[id(tensor)] = value
                _keep_mask(tensor, out_mask, env, masks)
        return (pytree.unflatten(self.output_structure,
                                 [env[id(t)] for t in self.output_tensors]),
                masks_tree(self.output_structure,
                           [masks.get(id(t)) for t in self.output_tensors]))

    def _flat_values(self, values):
        names = [t.name for t in self.input_tensors]
        if isinstance(values, dict) and set(values) == set(names) and \
                not isinstance(self.inputs, dict):
            return [values[name] for name in names]
        leaves, _, structure = pytree.flatten(values)
        if structure != self.input_structure:
            if len(leaves) == len(names) and isinstance(values, (list, tuple)) == \
                    isinstance(self.inputs, (list, tuple)):
                return leaves
            raise ValueError(at_user_line(
                f"Model {self.model_name!r}: expected {len(names)} input(s) {names} "
                f"(as given to Model, or a dict by name), got {_described(values)}"))
        return leaves

    def _checked_value(self, tensor, value):
        value = jnp.asarray(value)
        shape = tuple(jnp.shape(value))
        expected = tensor.shape
        fits = len(shape) == len(expected) and all(
            want is None or want == got for want, got in zip(expected, shape))
        if not fits:
            raise ValueError(at_user_line(
                f"Model {self.model_name!r}: input {tensor.name!r} expects shape "
                f"{expected}, got an array of shape {shape}"))
        return jnp.asarray(value, dtype=tensor.dtype)


def _keep_mask(tensor, mask, env, masks):
    """Record the mask of `tensor`'s value (and as the value of its symbolic mask, which
    a layer may take as an input)."""
    if mask is None:
        return
    masks[id(tensor)] = mask
    if tensor._keras_mask is not None:
        env[id(tensor._keras_mask)] = mask


def unique(items):
    """items without repeats (by identity), in their first order."""
    seen, result = set(), []
    for item in items:
        if id(item) not in seen:
            seen.add(id(item))
            result.append(item)
    return result


def _described(values):
    leaves = pytree.flatten(values)[0]
    return f"{type(values).__name__} of {len(leaves)} array(s)"
