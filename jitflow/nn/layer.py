"""Layer: the base of jitflow.nn's layers, as TensorFlow.js and Keras shape them.

A layer makes its weights on its first call, from the shape of that first input
(`build`), so a model is written without input sizes. Weights are jitflow.Variables:
a layer called inside @jitflow.function reads them as inputs of the compiled step, and
an optimizer's assignments to them are written back after it.
"""
import numpy as np

from ..errors import at_user_line
from ..random import eager_numpy
from ..variables import Variable
from . import initializers, symbolic

_counts = {}


class Layer:
    uses_batch_statistics = False  # whether training outputs depend on the whole batch

    def __init__(self, name=None):
        self.name = name or _unique_name(type(self).__name__.lower())
        self.built = False
        self._weights = []
        self.input_shape = None
        self._inbound_nodes = []  # its calls on symbolic tensors (symbolic.Node)

    def __call__(self, x, training=False):
        """The layer's outputs for x: computed for arrays (eager or traced); for symbolic
        tensors (nn.Input), symbolic outputs whose shapes and dtypes the layer's traced
        computation gives, with the call recorded for nn.Model."""
        if symbolic.is_symbolic(self, x):
            self._build_once(x)
            return symbolic.apply(self, x, training=training)
        self._build_once(x)
        return self.call(x, training=training)

    def _build_once(self, x):
        if not self.built:
            self.input_shape = tuple(x.shape)
            self.build(self.input_shape, _weight_dtype(x))
            self.built = True
        else:
            self._check_input(x)

    def build(self, input_shape, dtype):
        """Make the weights for inputs of `input_shape` (the batch axis included)."""

    def call(self, x, training=False):
        raise NotImplementedError

    def add_weight(self, name, shape, initializer, dtype, trainable=True, rng=None):
        init = initializers.get(initializer)
        with eager_numpy():  # initial values, even when the layer is built while traced
            value = init(shape, dtype=dtype, rng=rng)
        weight = Variable(value, name=f"{self.name}/{name}", trainable=trainable)
        self._weights.append(weight)
        return weight

    @property
    def weights(self):
        return list(self._weights)

    @property
    def trainable_variables(self):
        return [w for w in self._weights if w.trainable]

    @property
    def non_trainable_variables(self):
        return [w for w in self._weights if not w.trainable]

    def count_params(self):
        """The number of scalars in the layer's weights."""
        return sum(int(np.prod(w.shape, dtype=np.int64)) for w in self.weights)

    @property
    def output_shape(self):
        """The shape of the layer's output on symbolic inputs (None for the batch)."""
        nodes = getattr(self, "_inbound_nodes", [])
        if not nodes:
            raise AttributeError(f"{self.name}: output_shape is known once the layer has "
                                 f"been called on symbolic tensors (nn.Input)")
        shapes = {_shapes_of(node.outputs) for node in nodes}
        if len(shapes) > 1:
            raise AttributeError(f"{self.name}: called on inputs of several shapes, its "
                                 f"outputs have shapes {sorted(map(str, shapes))}")
        return shapes.pop()

    def _check_input(self, x):
        """Later inputs may change the batch size only."""
        if tuple(x.shape[1:]) != self.input_shape[1:]:
            raise ValueError(at_user_line(
                f"{self.name}: built for inputs of shape (batch, "
                f"{', '.join(map(str, self.input_shape[1:]))}), called on {tuple(x.shape)}"))

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"

    def __setstate__(self, state):
        """Unpickled: layers made from now on are named after it, never like it."""
        state.setdefault("_inbound_nodes", [])
        self.__dict__.update(state)
        _reserve(type(self).__name__.lower(), self.name)


def _weight_dtype(x):
    """Weights take a float input's dtype, float32 otherwise."""
    dtype = np.dtype(x.dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float32)


def _shapes_of(outputs):
    if isinstance(outputs, symbolic.SymbolicTensor):
        return outputs.shape
    if isinstance(outputs, dict):
        return tuple((key, _shapes_of(value)) for key, value in outputs.items())
    return tuple(_shapes_of(output) for output in outputs)


def _unique_name(base):
    count = _counts.get(base, 0)
    _counts[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def _reserve(base, name):
    """Count `name` as made, if it is one _unique_name(base) makes."""
    suffix = name[len(base) + 1:] if name.startswith(base + "_") else None
    if name == base:
        _counts[base] = max(_counts.get(base, 0), 1)
    elif suffix is not None and suffix.isdigit():
        _counts[base] = max(_counts.get(base, 0), int(suffix) + 1)
