"""Recurrent layers with Keras' constructors and weight layouts: SimpleRNN, LSTM, GRU.

Each runs over (batch, time, features) as one jitflow.scan over the time axis, so a
compiled step holds one loop, whatever the sequence length, and its gradient is a scan
running backwards (never a Python loop unrolled into the graph). The input's part of
every step, x @ kernel + bias, is one matrix product over all steps before the scan; the
scan's body does the recurrent product and the gates.

Keras' layouts: kernel (features, gates * units), recurrent_kernel (units, gates *
units), gates ordered (i, f, c, o) for LSTM and (z, r, h) for GRU; GRU with reset_after
(Keras' default) has a bias of shape (2, 3 * units), for the input and the recurrent
products.

Masks as in Keras: a masked step leaves every state as it was and outputs the previous
output (the first state), or zeros with zero_output_for_mask. Dropout as in Keras: while
training, one mask over the input's features and one over the recurrent state's units
are drawn per call (per batch) from the layer's Generator(seed) and used at every step;
the recurrent one multiplies the state only where it enters the recurrent product.
"""
import numpy as np

from .. import numpy as jnp
from ..control_flow import scan
from ..errors import at_user_line
from ..random import Generator
from . import activations, initializers, masks
from .layer import Layer


class _Recurrent(Layer):
    any_length = True  # sequences of any length
    gates = 1  # how many blocks of `units` columns the kernels have
    state_count = 1
    supports_masking = True

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", return_sequences=False, return_state=False,
                 go_backwards=False, rng=None, name=None, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=0, zero_output_for_mask=False):
        super().__init__(name)
        self.dropout = _rate(dropout, "dropout", self.name)
        self.recurrent_dropout = _rate(recurrent_dropout, "recurrent_dropout", self.name)
        self.seed = int(seed)
        self.generator = Generator(self.seed, name=self.name) \
            if self.dropout or self.recurrent_dropout else None
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.set_weight_rules("kernel", kernel_regularizer, kernel_constraint)
        self.set_weight_rules("recurrent", recurrent_regularizer, recurrent_constraint)
        self.set_weight_rules("bias", bias_regularizer, bias_constraint)
        self.units = int(units)
        self.activation_arg = activation
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.initializers = kernel_initializer, recurrent_initializer, bias_initializer
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.rng = rng

    def __call__(self, x, training=False, initial_state=None, **options):
        """layer(x) or layer(x, initial_state=[h, (c)]), each state (batch, units)."""
        if initial_state is not None:
            x = [x, *_as_list(initial_state)]
        return super().__call__(x, training=training, **options)

    # --- weights ------------------------------------------------------------------------
    def build(self, input_shape, dtype):
        features = _sequence_shape(input_shape, self.name)[-1]
        columns = self.gates * self.units
        self.kernel = self.add_weight("kernel", (features, columns), self.initializers[0],
                                      dtype, rng=self.rng)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, columns),
                                                self.initializers[1], dtype, rng=self.rng)
        self.bias = self.add_weight("bias", self.bias_shape(), self.bias_initializer(),
                                    dtype) if self.use_bias else None

    def bias_shape(self):
        return (self.gates * self.units,)

    def bias_initializer(self):
        return self.initializers[2]

    def input_bias(self):
        return self.bias

    # --- the computation ----------------------------------------------------------------
    def call(self, x, training=False, mask=None):
        x, states = self._inputs_and_states(x)
        mask = masks.sequence_mask(self, mask, x)
        if training and self.dropout:
            x = x * self._dropout_mask((x.shape[0], x.shape[2]), self.dropout)[:, None]
        projected = jnp.matmul(x, self.kernel)
        if self.bias is not None:
            projected = projected + self.input_bias()
        steps = jnp.transpose(projected, (1, 0, 2))  # time first, for the scan
        keep = None if mask is None else jnp.transpose(mask, (1, 0))
        if self.go_backwards:
            steps = steps[::-1]
            keep = None if keep is None else keep[::-1]
        final, outputs = self._scan(states, steps, keep, self._recurrent_mask(
            states[0].shape, training))
        if self.return_sequences:
            result = jnp.transpose(outputs, (1, 0, 2))
        else:
            result = outputs[-1]
        return [result, *final] if self.return_state else result

    def _scan(self, states, steps, keep, recurrent_mask):
        """scan of step over the time-first projected inputs; where `keep` (time,
        batch) is false, the states stay and the output repeats (or is zero)."""
        if keep is None:
            return scan(lambda state, step: self.step(state, step, recurrent_mask),
                        states, steps)

        def masked_step(old, step_and_keep):
            step, kept = step_and_keep
            new, output = self.step(old, step, recurrent_mask)
            kept = kept[:, None]
            previous = jnp.zeros_like(output) if self.zero_output_for_mask else old[0]
            return (tuple(jnp.where(kept, n, o) for n, o in zip(new, old)),
                    jnp.where(kept, output, previous))
        return scan(masked_step, states, (steps, keep))

    def _dropout_mask(self, shape, rate):
        """0 with probability rate, 1 / (1 - rate) otherwise (Keras' scaling)."""
        kept = self.generator.uniform(shape, self.kernel.dtype) >= rate
        return jnp.where(kept, 1.0 / (1.0 - rate), 0.0).astype(self.kernel.dtype)

    def _recurrent_mask(self, shape, training):
        if not (training and self.recurrent_dropout):
            return None
        return self._dropout_mask(tuple(shape), self.recurrent_dropout)

    def compute_mask(self, inputs, mask=None):
        """The sequence's mask for returned sequences; states have none."""
        mask = mask[0] if isinstance(mask, (list, tuple)) else mask
        output = mask if self.return_sequences else None
        return [output] + [None] * self.state_count if self.return_state else output

    def step(self, states, projected, recurrent_mask=None):
        """(the new states, this step's output) from the states and x_t @ kernel + b;
        recurrent_mask (dropout) multiplies h where it enters the recurrent product."""
        raise NotImplementedError

    def _inputs_and_states(self, x):
        given = list(x) if isinstance(x, (list, tuple)) else [x]
        x = jnp.asarray(given[0], dtype=self.kernel.dtype)
        _sequence_shape(tuple(x.shape), self.name)
        batch = x.shape[0]
        if len(given) == 1:
            zeros = jnp.zeros((batch, self.units), dtype=self.kernel.dtype)
            return x, tuple(zeros for _ in range(self.state_count))
        states = tuple(jnp.asarray(s, dtype=self.kernel.dtype) for s in given[1:])
        if len(states) != self.state_count or any(
                tuple(s.shape) != (batch, self.units) for s in states):
            raise ValueError(at_user_line(
                f"{self.name} ({type(self).__name__}): initial_state must be "
                f"{self.state_count} array(s) of shape ({batch}, {self.units}), got "
                f"shapes {[tuple(s.shape) for s in states]}"))
        return x, states

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation_arg, self.name),
                "use_bias": self.use_bias, "kernel_initializer": self.initializers[0],
                "recurrent_initializer": self.initializers[1],
                "bias_initializer": self.initializers[2],
                "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed, "zero_output_for_mask": self.zero_output_for_mask,
                **self.rules_config()}


class SimpleRNN(_Recurrent):
    """h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)."""

    def step(self, states, projected, recurrent_mask=None):
        (h,) = states
        h = self.activation(projected + jnp.matmul(_dropped(h, recurrent_mask),
                                                   self.recurrent_kernel))
        return (h,), h


class LSTM(_Recurrent):
    """Long short-term memory: states (h, c); with unit_forget_bias the forget gate's
    bias starts at 1, as in Keras."""
    gates, state_count = 4, 2

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 unit_forget_bias=True, **options):
        super().__init__(units, activation, **options)
        self.recurrent_activation_arg = recurrent_activation
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    def bias_initializer(self):
        if not self.unit_forget_bias:
            return self.initializers[2]
        units, base = self.units, self.initializers[2]

        def forget_gate_ones(shape, dtype=np.float32, rng=None):
            from_base = np.asarray(initializers.get(base)(shape, dtype=dtype, rng=rng))
            from_base[units:2 * units] = 1
            return from_base
        return forget_gate_ones

    def step(self, states, projected, recurrent_mask=None):
        h, c = states
        z = projected + jnp.matmul(_dropped(h, recurrent_mask), self.recurrent_kernel)
        u, gate = self.units, self.recurrent_activation
        i, f, o = gate(z[:, :u]), gate(z[:, u:2 * u]), gate(z[:, 3 * u:])
        c = f * c + i * self.activation(z[:, 2 * u:3 * u])
        h = o * self.activation(c)
        return (h, c), h

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(
                    self.recurrent_activation_arg, self.name),
                "unit_forget_bias": self.unit_forget_bias}


class GRU(_Recurrent):
    """Gated recurrent unit: z (update) and r (reset) gates; with reset_after (Keras'
    default) the reset gate multiplies the recurrent product, which has its own bias;
    otherwise it multiplies h before the product."""
    gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid",
                 reset_after=True, **options):
        super().__init__(units, activation, **options)
        self.recurrent_activation_arg = recurrent_activation
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def input_bias(self):
        return self.bias[0] if self.reset_after else self.bias

    def step(self, states, projected, recurrent_mask=None):
        (h,) = states
        u, gate = self.units, self.recurrent_activation
        h_in = _dropped(h, recurrent_mask)  # h where it enters the recurrent products
        if self.reset_after:
            recurrent = jnp.matmul(h_in, self.recurrent_kernel)
            if self.bias is not None:
                recurrent = recurrent + self.bias[1]
            z = gate(projected[:, :u] + recurrent[:, :u])
            r = gate(projected[:, u:2 * u] + recurrent[:, u:2 * u])
            candidate = self.activation(projected[:, 2 * u:] + r * recurrent[:, 2 * u:])
        else:
            gates = jnp.matmul(h_in, self.recurrent_kernel[:, :2 * u])
            z = gate(projected[:, :u] + gates[:, :u])
            r = gate(projected[:, u:2 * u] + gates[:, u:])
            candidate = self.activation(
                projected[:, 2 * u:] + jnp.matmul(r * h_in, self.recurrent_kernel[:, 2 * u:]))
        h = z * h + (1 - z) * candidate
        return (h,), h

    def get_config(self):
        return {**super().get_config(),
                "recurrent_activation": activations.serialize(
                    self.recurrent_activation_arg, self.name),
                "reset_after": self.reset_after}


def _sequence_shape(input_shape, name):
    """The shape of x (the first input when initial states are given): 3-D."""
    shape = input_shape[0] if isinstance(input_shape, list) else input_shape
    if len(shape) != 3:
        raise ValueError(at_user_line(
            f"{name}: a recurrent layer takes (batch, time, features), got shape "
            f"{tuple(shape)}"))
    return shape


def _dropped(h, recurrent_mask):
    return h if recurrent_mask is None else h * recurrent_mask


def _rate(rate, what, name):
    rate = float(rate)
    if not 0.0 <= rate < 1.0:
        raise ValueError(at_user_line(f"{name}: {what} must be in [0, 1), got {rate}"))
    return rate


def _as_list(states):
    return list(states) if isinstance(states, (list, tuple)) else [states]


__all__ = ["SimpleRNN", "LSTM", "GRU"]
