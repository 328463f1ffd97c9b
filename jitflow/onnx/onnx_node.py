"""One ONNX node as the load rules see it: its attributes, the opset, static inputs,
and the running of its subgraphs (If, Loop)."""
import numpy as np
from onnx import helper

from ..trace import Tracer


class OnnxNode:
    def __init__(self, proto, opset, run_graph, scope):
        self.proto, self.opset = proto, opset
        self.op_type = proto.op_type
        self.attributes = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        self._run_graph, self._scope = run_graph, scope

    def attr(self, name, default=None):
        value = self.attributes.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def where(self):
        return f"ONNX {self.op_type} node {self.proto.name or self.proto.output[0]!r}"

    def static(self, value, what):
        """`value` as a NumPy array known now (shapes, axes, pads), or a clear error:
        jitflow compiles for static shapes, so these may depend on the inputs' shapes
        but not on their values."""
        if isinstance(value, Tracer):
            raise ValueError(f"{self.where()}: its {what} must be known when the model is "
                             f"compiled, but it is computed from the inputs' values")
        return np.asarray(value)

    def static_ints(self, value, what):
        return [int(v) for v in self.static(value, what).reshape(-1)]

    def run_body(self, graph, values):
        """Run a subgraph on `values` (its inputs, in order), seeing this node's scope."""
        scope = dict(self._scope)
        scope.update((i.name, v) for i, v in zip(graph.input, values, strict=True))
        return self._run_graph(graph, scope, self.opset)

    def fail(self, message):
        return ValueError(f"{self.where()}: {message}")
