"""Writing jitflow values as ONNX nodes: names, constants, casts.

A GraphWriter collects the nodes of one ONNX graph (the model's, or the body of an If or
a Loop) and knows the ONNX name of every jitflow value it has written. Constants go to
one list of initializers shared by the whole model: the bodies of If and Loop read them
from the outer scope, as they read any other outer value.
"""
import itertools

import numpy as np
from onnx import helper, numpy_helper

from ..ir.graph import Lit, has_effects


class ModelParts:
    """What every graph of one model shares: unique names and the initializers."""

    def __init__(self):
        self._counts = itertools.count()
        self.used = set()
        self.initializers = []
        self._constants = {}  # (dtype, shape, bytes) -> name

    def fresh(self, hint):
        name = hint
        while name in self.used:
            name = f"{hint}_{next(self._counts)}"
        self.used.add(name)
        return name

    def constant(self, array, hint="const"):
        array = np.array(array, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constants:
            name = self.fresh(hint)
            self.initializers.append(numpy_helper.from_array(array, name))
            self._constants[key] = name
        return self._constants[key]


class GraphWriter:
    """`rules` maps a primitive's name to rule(writer, node) -> the ONNX names of the
    node's outputs, written with the writer's methods."""

    def __init__(self, parts, rules, outer=None):
        self.parts, self.rules = parts, rules
        self.nodes = []
        self.env = {} if outer is None else dict(outer.env)  # Var -> ONNX name

    def write(self, nodes):
        """Write jitflow nodes, in order. Results with no elements are empty constants:
        nothing about them depends on the inputs (and ONNX Runtime's kernels differ on
        zero-size shapes, its Expand to a length-0 axis among them)."""
        for node in nodes:
            if all(v.type.size == 0 for v in node.outputs) and not has_effects(node):
                names = [self.constant(np.zeros(v.type.shape, v.type.dtype))
                         for v in node.outputs]
            else:
                names = self.rules[node.op](self, node)
            for var, name in zip(node.outputs, names, strict=True):
                self.env[var] = name

    def inner(self):
        """A writer for a body (of If or Loop) that reads this graph's values."""
        return GraphWriter(self.parts, self.rules, outer=self)

    def read(self, value):
        """The ONNX name of a Var or Lit, in its own dtype."""
        if isinstance(value, Lit):
            return self.constant(value.value)
        return self.env[value]

    def operand(self, value, dtype):
        """The ONNX name of `value` converted to `dtype` (a constant is converted now)."""
        dtype = np.dtype(dtype)
        if isinstance(value, Lit):
            return self.constant(np.asarray(value.value).astype(dtype))
        return self.cast(self.env[value], value.type.dtype, dtype)

    def cast(self, name, source, target):
        if np.dtype(source) == np.dtype(target):
            return name
        return self.add("Cast", [name], to=helper.np_dtype_to_tensor_dtype(np.dtype(target)))

    def constant(self, array, dtype=None):
        array = np.asarray(array) if dtype is None else np.asarray(array, dtype)
        return self.parts.constant(array)

    def ints(self, values):
        """A 1-d int64 constant (shapes, axes, pads)."""
        return self.constant(np.asarray(values, np.int64).reshape(-1))

    def add(self, op_type, inputs, outputs=1, **attributes):
        """Append one node; its output name (or names, when outputs > 1)."""
        names = [self.parts.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, **attributes))
        return names[0] if outputs == 1 else names
