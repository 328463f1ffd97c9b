"""InputLayer: the layer an nn.Input's symbolic tensor comes from (it has no inputs)."""
from .layer import Layer, _unique_name
from .symbolic import Node, SymbolicTensor, checked_input_dtype, checked_input_shape


class InputLayer(Layer):
    def __init__(self, shape, dtype="float32", name=None, batch_size=None):
        super().__init__(name or _unique_name("input_layer"))
        self.input_shape = checked_input_shape(shape, batch_size, self.name)
        self.dtype = checked_input_dtype(dtype, self.name)
        self.built = True
        node = Node(self, [])
        node.set_outputs(SymbolicTensor(self.input_shape, self.dtype, node, 0, self.name))
        self._inbound_nodes.append(node)

    @property
    def output(self):
        return self._inbound_nodes[0].outputs

    def call(self, x, training=False):
        return x

    def get_config(self):
        batch, *shape = self.input_shape
        return {"name": self.name, "shape": shape, "dtype": self.dtype.name,
                "batch_size": batch}


def Input(shape, dtype="float32", name=None, batch_size=None):
    """A symbolic tensor of `shape` (without the batch axis) and `dtype`, the input of a
    model: shape (batch_size, *shape), batch_size None unless given."""
    return InputLayer(shape, dtype, name, batch_size).output
