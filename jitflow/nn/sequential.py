"""Sequential: layers applied one after another, as Keras' and TensorFlow.js' model.

Its input is known from an nn.Input given first (Sequential([nn.Input((4,)), ...])) or
from the first array it is called on; from then on it is also a functional model (the
layers called on that Input), which gives summary() and output_shape.
"""
import numpy as np

from . import layer_registry
from .functional_graph import FunctionalGraph
from .input_layer import InputLayer
from .model import Model
from .input_layer import Input
from .symbolic import SymbolicTensor


class Sequential(Model):
    def __init__(self, layers=(), name=None):
        super().__init__(name=name)
        self._layers = []
        self._input = None  # the symbolic input, once known
        self._graph_cache = None
        for layer in layers:
            self.add(layer)

    def add(self, layer):
        """Append a layer; an nn.Input (or InputLayer) sets the model's input instead."""
        if isinstance(layer, SymbolicTensor) and isinstance(layer.layer, InputLayer):
            layer = layer.layer
        if isinstance(layer, InputLayer):
            self._input = layer.output
        else:
            self._layers.append(layer)
        self._graph_cache = None

    @property
    def layers(self):
        return list(self._layers)

    def _outputs_and_masks(self, x, training, mask):
        """Each layer on the last one's output and mask."""
        for layer in self._layers:
            x, mask = layer.call_with_mask(x, mask, training)
        return x, mask

    def _build_once(self, x):
        """The first input, symbolic or an array, gives the model its nn.Input; a
        symbolic one builds the layers on it (with an unknown batch size) at once."""
        if self._input is None:
            self._input = Input(tuple(x.shape[1:]), np.dtype(x.dtype),
                                name=f"{self.name}_input")
            if isinstance(x, SymbolicTensor):
                self._functional_or_none()
        super()._build_once(x)

    def get_config(self):
        spec = None
        if self._input is not None:
            batch, *shape = self._input.shape
            spec = {"shape": shape, "dtype": self._input.dtype.name, "batch_size": batch}
        return {"name": self.name, "input": spec,
                "layers": [layer_registry.serialize(layer) for layer in self._layers]}

    @classmethod
    def from_config(cls, config):
        model = cls(name=config["name"])
        spec = config["input"]
        if spec is not None:
            model.add(Input(tuple(spec["shape"]), spec["dtype"],
                            batch_size=spec["batch_size"]))
        for entry in config["layers"]:
            model.add(layer_registry.deserialize(entry))
        model._functional_or_none()  # builds the layers on the input
        return model

    def _functional_or_none(self):
        """The layers called on the model's input: a functional graph (None while the
        input is not known)."""
        if self._input is None or not self._layers:
            return None
        if self._graph_cache is None:
            output = self._input
            for layer in self._layers:
                output = layer(output)
            self._graph_cache = FunctionalGraph(self._input, output, self.name)
        return self._graph_cache

