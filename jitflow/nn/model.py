"""Model: layers grouped into one layer, as Keras' functional and subclassed models.

    inputs = nn.Input((4,))
    hidden = nn.Dense(8, activation="relu")(inputs)
    model = nn.Model(inputs, nn.Dense(1)(hidden))

A functional model runs the layer graph recorded between its symbolic inputs and
outputs; a subclass of Model defines `call(self, x, training=False)` and keeps its layers
as attributes. Either is a Layer, so models nest, and either trains with compile and fit.
"""
from .. import pytree
from ..errors import at_user_line
from .functional_graph import FunctionalGraph, unique as _unique
from .layer import Layer
from .summary import summary_text
from .symbolic import SymbolicTensor
from .training import Training
from . import model_file, weights_io
from .model_config import functional_config, functional_from_config


class Model(Training, Layer):
    def __init__(self, inputs=None, outputs=None, name=None):
        super().__init__(name)
        self._graph = None
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError(at_user_line(
                    f"Model {self.name!r}: give both inputs and outputs (a functional "
                    f"model), or neither (a subclass that defines call)"))
            self._graph = FunctionalGraph(inputs, outputs, self.name)
            self.built = True

    def call(self, x, training=False, mask=None):
        return self._outputs_and_masks(x, training, mask)[0]

    def compute_mask(self, inputs, mask=None):
        if type(self).call is not Model.call:  # a subclass's own call
            return super().compute_mask(inputs, mask)
        return self._outputs_and_masks(inputs, False, mask)[1]

    def call_with_mask(self, x, mask, training=False, options=None):
        """The outputs and their masks from one run of the layers."""
        if type(self).call is not Model.call or options:
            return super().call_with_mask(x, mask, training, options)
        self._build_once(x)
        return self._outputs_and_masks(x, training, mask)

    def _outputs_and_masks(self, x, training, mask):
        if self._graph is None:
            raise NotImplementedError(
                f"Model {self.name!r}: a Model without inputs and outputs is a subclass "
                f"that defines call(self, x, training=False)")
        return self._graph.run(x, training=training, mask=mask)

    def _build_once(self, x):
        """A model's layers build and check their own inputs."""
        if not self.built and not isinstance(x, (list, tuple, dict)):
            self.input_shape = tuple(x.shape)
        self.built = True

    # --- structure --------------------------------------------------------------------
    @property
    def layers(self):
        """The model's layers: a functional model's in the order they compute (its
        InputLayers first), a subclass's in the order it set them as attributes."""
        if self._graph is not None:
            return list(self._graph.layers)
        return _attribute_layers(self)

    def get_layer(self, name=None, index=None):
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise IndexError(at_user_line(
                    f"Model {self.name!r}: layer index {index} is out of range for "
                    f"{len(layers)} layers"))
            return layers[index]
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(at_user_line(
            f"Model {self.name!r} has no layer named {name!r}; its layers are "
            f"{[layer.name for layer in layers]}"))

    @property
    def inputs(self):
        return list(self._functional().input_tensors)

    @property
    def outputs(self):
        return list(self._functional().output_tensors)

    @property
    def input(self):
        return self._functional().inputs

    @property
    def output(self):
        return self._functional().outputs

    @property
    def output_shape(self):
        if self._functional_or_none() is None:
            return super().output_shape
        outputs = self.outputs
        shapes = [t.shape for t in outputs]
        return shapes[0] if isinstance(self.output, SymbolicTensor) else shapes

    def _functional(self):
        graph = self._functional_or_none()
        if graph is None:
            raise AttributeError(
                f"Model {self.name!r} is a subclass without symbolic inputs and outputs; "
                f"it has no inputs or outputs until called")
        return graph

    def _functional_or_none(self):
        return self._graph

    # --- weights ----------------------------------------------------------------------
    @property
    def weights(self):
        weights = list(self._weights)
        for layer in self.layers:
            weights += layer.weights
        return _unique(weights)

    @property
    def trainable_variables(self):
        return [w for w in self.weights if w.trainable]

    @property
    def non_trainable_variables(self):
        return [w for w in self.weights if not w.trainable]

    def get_weights(self):
        """The weights' values, as NumPy arrays in the order of `weights`."""
        return weights_io.get_weights(self)

    def set_weights(self, arrays):
        weights_io.set_weights(self, arrays)

    def save_weights(self, path):
        """Write the weights to a file, each under its name ("layer/variable"): in the
        safetensors format for a path ending in .safetensors, .npz otherwise."""
        weights_io.save_weights(self, path)

    def load_weights(self, path):
        """Read weights save_weights wrote, matched by name."""
        weights_io.load_weights(self, path)

    # --- saving -----------------------------------------------------------------------
    def save(self, path):
        """Write the model to one file: its architecture, weights, compile arguments and
        optimizer state (nn.load_model reads it back; fit then goes on where it
        stopped). No code is saved: layers are named by their registered type."""
        model_file.save_model(self, path)

    def get_config(self):
        if self._graph is None:
            raise NotImplementedError(at_user_line(
                f"Model {self.name!r}: a subclassed model saves when its class defines "
                f"get_config() (its constructor's arguments) and is registered with "
                f"@jitflow.nn.register_layer"))
        return functional_config(self)

    @classmethod
    def from_config(cls, config):
        if "nodes" in config:
            return functional_from_config(cls, config)
        return cls(**config)

    def summary(self, print_fn=print):
        """Print the layers as Keras does: name (type), output shape, parameters and,
        for a functional model, the layers each is connected to; then the totals."""
        print_fn(summary_text(self))


def _attribute_layers(model):
    """The Layers among `model`'s attributes, in lists, tuples and dicts too."""
    found = []
    for name, value in vars(model).items():
        if name.startswith("_inbound"):
            continue
        for leaf in pytree.flatten(value)[0] if isinstance(value, (list, tuple, dict)) \
                else [value]:
            if isinstance(leaf, Layer) and leaf is not model:
                found.append(leaf)
    return _unique(found)
