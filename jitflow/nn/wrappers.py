"""Wrappers around another layer, as Keras': Bidirectional (a recurrent layer run
forwards and a copy of it run backwards over the same sequence, their outputs merged)
and TimeDistributed (a layer applied to every step of a sequence)."""
from .. import numpy as jnp
from ..errors import at_user_line
from . import layer_registry
from .layer import Layer

_MERGES = {"concat": lambda a, b: jnp.concatenate([a, b], axis=-1),
           "sum": lambda a, b: a + b, "mul": lambda a, b: a * b,
           "ave": lambda a, b: (a + b) / 2, None: lambda a, b: [a, b]}


class Bidirectional(Layer):
    """merge_mode 'concat' (default), 'sum', 'mul', 'ave' or None (a list of both).
    The backward layer is `layer`'s copy with go_backwards flipped (or
    `backward_layer`); its output sequence is put back in time order before merging.
    With return_state the result is [output, *forward states, *backward states].
    With a mask, each direction skips the padding; as in Keras, both output zeros on
    masked steps when they return sequences. The backward copy draws its own dropout
    masks (seed + 1)."""
    any_length = True  # sequences of any length
    supports_masking = True

    def __init__(self, layer, merge_mode="concat", backward_layer=None, name=None):
        if merge_mode not in _MERGES:
            raise ValueError(at_user_line(
                f"Bidirectional: merge_mode must be one of {list(_MERGES)}, got "
                f"{merge_mode!r}"))
        for required in ("go_backwards", "return_sequences", "return_state"):
            if not hasattr(layer, required):
                raise TypeError(at_user_line(
                    f"Bidirectional: wraps a recurrent layer (SimpleRNN, LSTM, GRU), got "
                    f"{type(layer).__name__}"))
        super().__init__(name or f"bidirectional_{layer.name}")
        self.merge_mode = merge_mode
        self.forward_layer = layer
        if backward_layer is None:
            config = dict(layer.get_config(), name=f"backward_{layer.name}",
                          go_backwards=not layer.go_backwards)
            if "seed" in config:
                config["seed"] += 1
            backward_layer = type(layer).from_config(config)
        self.backward_layer = backward_layer
        for each in self.layers:
            if hasattr(each, "zero_output_for_mask"):
                each.zero_output_for_mask = each.return_sequences
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state

    @property
    def layers(self):
        return [self.forward_layer, self.backward_layer]

    @property
    def weights(self):
        return self.forward_layer.weights + self.backward_layer.weights

    def call(self, x, training=False, mask=None):
        forward = self.forward_layer(x, training=training, mask=mask)
        backward = self.backward_layer(x, training=training, mask=mask)
        if self.return_state:
            forward, *forward_states = forward
            backward, *backward_states = backward
        if self.return_sequences:
            backward = jnp.flip(backward, axis=1)
        merged = _MERGES[self.merge_mode](forward, backward)
        if not self.return_state:
            return merged
        merged = merged if isinstance(merged, list) else [merged]
        return [*merged, *forward_states, *backward_states]

    def compute_mask(self, inputs, mask=None):
        """The sequence's mask for each returned sequence; states have none."""
        mask = mask[0] if isinstance(mask, (list, tuple)) else mask
        output = mask if self.return_sequences else None
        outputs = [output] if self.merge_mode is not None else [output, output]
        if not self.return_state:
            return outputs[0] if self.merge_mode is not None else outputs
        states = 2 * getattr(self.forward_layer, "state_count", 1)
        return outputs + [None] * states

    def get_config(self):
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": layer_registry.serialize(self.forward_layer),
                "backward_layer": layer_registry.serialize(self.backward_layer)}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["layer"] = layer_registry.deserialize(config["layer"])
        config["backward_layer"] = layer_registry.deserialize(config["backward_layer"])
        return cls(**config)


class TimeDistributed(Layer):
    """`layer` applied to each step of (batch, time, ...): the steps are folded into
    the batch, (batch * time, ...), for one call of the layer, then unfolded. The
    sequence's mask holds for the output's steps."""
    any_length = True  # sequences of any length
    supports_masking = True

    def __init__(self, layer, name=None):
        super().__init__(name or f"time_distributed_{layer.name}")
        self.layer = layer

    @property
    def layers(self):
        return [self.layer]

    @property
    def weights(self):
        return self.layer.weights

    def call(self, x, training=False):
        if len(x.shape) < 3:
            raise ValueError(at_user_line(
                f"{self.name} (TimeDistributed): takes (batch, time, ...), got shape "
                f"{tuple(x.shape)}"))
        batch, steps = x.shape[:2]
        folded = jnp.reshape(x, (batch * steps, *x.shape[2:]))
        y = self.layer(folded, training=training)
        return jnp.reshape(y, (batch, steps, *y.shape[1:]))

    def get_config(self):
        return {**super().get_config(), "layer": layer_registry.serialize(self.layer)}

    @classmethod
    def from_config(cls, config):
        return cls(**dict(config, layer=layer_registry.deserialize(config["layer"])))


__all__ = ["Bidirectional", "TimeDistributed"]
