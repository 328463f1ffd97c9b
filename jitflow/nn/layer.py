"""Layer: the base of jitflow.nn's layers, as TensorFlow.js and Keras shape them.

A layer makes its weights on its first call, from the shape of that first input
(`build`), so a model is written without input sizes. Weights are jitflow.Variables:
a layer called inside @jitflow.function reads them as inputs of the compiled step, and
an optimizer's assignments to them are written back after it.
"""
import inspect

import numpy as np

from .. import pytree
from ..errors import at_user_line
from ..random import eager_numpy
from ..variables import Variable
from . import constraints, initializers, layer_registry, masks, regularizers, symbolic

_counts = {}
# The weight a Keras regularizer or constraint argument names, where the names differ.
_RULE_OF_WEIGHT = {"recurrent_kernel": "recurrent"}


class Layer:
    uses_batch_statistics = False  # whether training outputs depend on the whole batch
    # Layers over sequences take any length: later inputs keep the rank and the last
    # axis (the features) only.
    any_length = False
    # Whether the layer passes its input's mask on (compute_mask's default) rather than
    # dropping it; a layer whose call takes `mask` is given its input's mask.
    supports_masking = False
    _call_takes_mask = False

    def __init_subclass__(cls, **kwargs):
        """jitflow's own layer types register under their class name (for load_model);
        a user's register with @nn.register_layer."""
        super().__init_subclass__(**kwargs)
        cls._call_takes_mask = "mask" in inspect.signature(cls.call).parameters
        if cls.__module__.startswith("jitflow.") and not cls.__name__.startswith("_"):
            layer_registry.register_layer(cls)

    def __init__(self, name=None):
        self.name = name or _unique_name(type(self).__name__.lower())
        self.built = False
        self._weights = []
        self.input_shape = None
        self._inbound_nodes = []  # its calls on symbolic tensors (symbolic.Node)
        self._rules = {}  # argument prefix ("kernel") -> (regularizer, constraint) given
        self._penalties = []  # (weight, regularizer)
        self._constraints = []  # (weight, constraint)

    def __call__(self, x, training=False, mask=None, **options):
        """The layer's outputs for x (an array, or a list or dict of them for layers
        with several inputs): computed for arrays (eager or traced); for symbolic
        tensors (nn.Input), symbolic outputs whose shapes and dtypes the layer's traced
        computation gives, with the call recorded for nn.Model. `options` are the
        layer's static call arguments (such as use_causal_mask), kept with the call.
        `mask` is x's mask (nn/masks.py), for arrays; symbolic tensors carry theirs."""
        if symbolic.is_symbolic(self, x):
            if mask is not None:
                raise TypeError(at_user_line(
                    f"{self.name}: a symbolic tensor's mask comes from the layer that "
                    f"makes it (Embedding(mask_zero=True), Masking); mask= is for arrays"))
            self._build_once(x)
            return symbolic.apply(self, x, training=training, options=options)
        self._build_once(x)
        if masks.has_mask(mask):
            if self._call_takes_mask:
                options = dict(options, mask=mask)
            elif not self.supports_masking:
                masks.warn_dropped(self)
        return self.call(x, training=training, **options)

    def compute_mask(self, inputs, mask=None):
        """The mask of the layer's output, given its inputs and their mask: the input's
        mask for a layer that supports masking, None otherwise (as in Keras)."""
        return mask if self.supports_masking else None

    def call_with_mask(self, x, mask, training=False, options=None):
        """(the outputs, their mask) for x and its mask: what models run."""
        options = options or {}
        return self(x, training=training, mask=mask, **options), \
            self.compute_mask(x, mask)

    def _build_once(self, x):
        if not self.built:
            self.input_shape = _shapes(x)
            self.build(self.input_shape, _weight_dtype(pytree.flatten(x)[0][0]))
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
        regularizer, constraint = self._rules.get(_RULE_OF_WEIGHT.get(name, name),
                                                  (None, None))
        if regularizer is not None:
            self._penalties.append((weight, regularizers.get(regularizer)))
        if constraint is not None:
            self._constraints.append((weight, constraints.get(constraint)))
        return weight

    # --- regularizers and constraints ----------------------------------------------------
    def set_weight_rules(self, prefix, regularizer=None, constraint=None):
        """Keras' <prefix>_regularizer and <prefix>_constraint arguments ("kernel",
        "bias", "recurrent", "embeddings"), for the weight add_weight will make."""
        regularizers.get(regularizer)  # an unknown name is an error now, not at build
        constraints.get(constraint)
        self._rules[prefix] = (regularizer, constraint)

    @property
    def losses(self):
        """The regularization penalties of the layer's weights and of the layers inside
        it, computed from their current values (fit adds them to the loss)."""
        penalties = [regularizer(weight.value) for weight, regularizer in self._penalties]
        for inner in getattr(self, "layers", []):
            penalties += inner.losses
        return penalties

    def weight_constraints(self):
        """[(weight, constraint)] of the layer and the layers inside it."""
        pairs = list(self._constraints)
        for inner in getattr(self, "layers", []):
            pairs += inner.weight_constraints()
        return pairs

    def rules_config(self):
        """The regularizer and constraint arguments, for get_config."""
        config = {}
        for prefix, (regularizer, constraint) in self._rules.items():
            what = f"{self.name}: {prefix}"
            config[f"{prefix}_regularizer"] = regularizers.serialize(regularizer, what)
            config[f"{prefix}_constraint"] = constraints.serialize(constraint, what)
        return config

    @property
    def weights(self):
        return list(self._weights)

    @property
    def trainable_variables(self):
        return [w for w in self.weights if w.trainable]

    @property
    def non_trainable_variables(self):
        return [w for w in self.weights if not w.trainable]

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
        if not hasattr(x, "shape"):
            self._check_inputs(x)
        elif not _same_but_batch(tuple(x.shape), self.input_shape, self.any_length):
            raise ValueError(at_user_line(
                f"{self.name}: built for inputs of shape (batch, "
                f"{', '.join(map(str, self.input_shape[1:]))}), called on {tuple(x.shape)}"))

    def _check_inputs(self, x):
        shapes = _shapes(x)
        if not _same_but_batch(shapes, self.input_shape, self.any_length):
            raise ValueError(at_user_line(
                f"{self.name}: built for inputs of shapes {self.input_shape}, called on "
                f"{shapes} (only the batch size may change)"))

    def get_config(self):
        """The constructor's arguments that rebuild this layer (without its weights):
        a dict of plain values, for model.save. Each layer type lists its own."""
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}>"

    def __setstate__(self, state):
        """Unpickled: layers made from now on are named after it, never like it."""
        state.setdefault("_inbound_nodes", [])
        for name in ("_penalties", "_constraints"):
            state.setdefault(name, [])
        state.setdefault("_rules", {})
        self.__dict__.update(state)
        _reserve(type(self).__name__.lower(), self.name)


def _weight_dtype(x):
    """Weights take a float input's dtype, float32 otherwise."""
    dtype = np.dtype(x.dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float32)


def _shapes(x):
    """The shape of an array; for a list, tuple or dict of arrays, the same container
    of their shapes (None stays None)."""
    if isinstance(x, (list, tuple)):
        return [_shapes(item) for item in x]
    if isinstance(x, dict):
        return {key: _shapes(value) for key, value in x.items()}
    return None if x is None else tuple(x.shape)


def _same_but_batch(shapes, built, any_length=False):
    """Whether two containers of shapes (from _shapes) differ in batch sizes only (and
    with any_length, in the axes between the batch and the last)."""
    if isinstance(shapes, tuple) and isinstance(built, tuple):
        if any_length:
            return len(shapes) == len(built) and shapes[-1:] == built[-1:]
        return shapes[1:] == built[1:]
    if isinstance(shapes, dict) and isinstance(built, dict):
        return list(shapes) == list(built) and all(
            _same_but_batch(shapes[key], built[key], any_length) for key in shapes)
    if isinstance(shapes, list) and isinstance(built, list):
        return len(shapes) == len(built) and all(
            _same_but_batch(s, b, any_length) for s, b in zip(shapes, built))
    return shapes is None and built is None


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
