"""Conv1D and Conv2DTranspose, with Keras' constructors and kernel layouts:
Conv1D's kernel is (size, in channels, filters), Conv2DTranspose's (kh, kw, filters,
in channels)."""
from .. import numpy as jnp
from ..errors import at_user_line
from . import activations
from .conv_transpose import conv2d_transpose
from .convolution import conv1d
from .layer import Layer
from .windows import pair


class _Convolution(Layer):
    """activation(convolve(x, kernel, strides, padding) + bias)."""
    paddings = ("valid", "same")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", rng=None, name=None, kernel_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, bias_constraint=None):
        super().__init__(name)
        rules = dict(kernel_regularizer=kernel_regularizer,
                     bias_regularizer=bias_regularizer,
                     kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        for prefix in ("kernel", "bias"):
            self.set_weight_rules(prefix, rules.get(f"{prefix}_regularizer"),
                                  rules.get(f"{prefix}_constraint"))
        if padding not in self.paddings:
            raise ValueError(at_user_line(
                f"{self.name} ({type(self).__name__}): padding must be one of "
                f"{self.paddings}, got {padding!r}"))
        self.filters = int(filters)
        self.padding = padding
        self.activation_arg = activation
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.initializers = kernel_initializer, bias_initializer
        self.rng = rng
        self.kernel_size = self.sizes(kernel_size, "kernel_size", self.name)
        self.strides = self.sizes(strides, "strides", self.name)

    @staticmethod
    def sizes(value, what, name):
        """A size per spatial axis from an int or a sequence (checked)."""
        raise NotImplementedError

    def make_weights(self, kernel_shape, dtype):
        self.kernel = self.add_weight("kernel", kernel_shape, self.initializers[0], dtype,
                                      rng=self.rng)
        self.bias = self.add_weight("bias", (self.filters,), self.initializers[1], dtype) \
            if self.use_bias else None

    def finish(self, y):
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), **convolution_config(self)}


def convolution_config(layer):
    """The constructor arguments a convolution layer (these and Conv2D) saves."""
    return {"filters": layer.filters, "kernel_size": list(layer.kernel_size),
            "strides": list(layer.strides), "padding": layer.padding,
            "activation": activations.serialize(layer.activation_arg, layer.name),
            "use_bias": layer.use_bias, "kernel_initializer": layer.initializers[0],
            "bias_initializer": layer.initializers[1], **layer.rules_config()}


class Conv1D(_Convolution):
    """Over sequences (batch, steps, channels); padding 'valid', 'same' or 'causal'."""
    paddings = ("valid", "same", "causal")

    @staticmethod
    def sizes(value, what, name):
        return _single(value, what, name)  # (defined below)

    def build(self, input_shape, dtype):
        self.make_weights((*self.kernel_size, input_shape[-1], self.filters), dtype)

    def call(self, x, training=False):
        x = jnp.asarray(x, dtype=self.kernel.dtype)
        return self.finish(conv1d(x, self.kernel, self.strides[0], self.padding))


class Conv2DTranspose(_Convolution):
    """The transposed convolution of NHWC images (upsampling by the strides)."""
    sizes = staticmethod(pair)

    def build(self, input_shape, dtype):
        self.make_weights((*self.kernel_size, self.filters, input_shape[-1]), dtype)

    def call(self, x, training=False):
        x = jnp.asarray(x, dtype=self.kernel.dtype)
        return self.finish(conv2d_transpose(x, self.kernel, self.strides, self.padding))


def _single(value, what, name):
    values = (value,) if isinstance(value, int) else tuple(value)
    if len(values) != 1 or not isinstance(values[0], int) or values[0] < 1:
        raise ValueError(at_user_line(f"{name}: {what} must be a positive int, got "
                                      f"{value!r}"))
    return values


__all__ = ["Conv1D", "Conv2DTranspose"]
