"""Layers with Keras' constructors: Dense, Conv2D, MaxPool2D, AvgPool2D, Flatten."""
import math

from .. import numpy as jnp
from . import activations
from .convolution import conv2d
from .convolution_layers import convolution_config
from .layer import Layer
from .pooling import avg_pool2d, max_pool2d
from .windows import pair


class Dense(Layer):
    """activation(x @ kernel + bias) over the last axis of x."""
    supports_masking = True  # a sequence's mask holds for its outputs too

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", rng=None,
                 name=None, kernel_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, bias_constraint=None):
        super().__init__(name)
        self.set_weight_rules("kernel", kernel_regularizer, kernel_constraint)
        self.set_weight_rules("bias", bias_regularizer, bias_constraint)
        self.units = int(units)
        self.activation_arg = activation
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.initializers = kernel_initializer, bias_initializer
        self.rng = rng

    def build(self, input_shape, dtype):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units),
                                      self.initializers[0], dtype, rng=self.rng)
        self.bias = self.add_weight("bias", (self.units,), self.initializers[1], dtype) \
            if self.use_bias else None

    def call(self, x, training=False):
        y = jnp.matmul(jnp.asarray(x, dtype=self.kernel.dtype), self.kernel)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), "units": self.units,
                "activation": activations.serialize(self.activation_arg, self.name),
                "use_bias": self.use_bias, "kernel_initializer": self.initializers[0],
                "bias_initializer": self.initializers[1], **self.rules_config()}


class Conv2D(Layer):
    """activation(conv2d(x, kernel) + bias) over NHWC images."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", rng=None, name=None, kernel_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, bias_constraint=None):
        super().__init__(name)
        self.set_weight_rules("kernel", kernel_regularizer, kernel_constraint)
        self.set_weight_rules("bias", bias_regularizer, bias_constraint)
        self.filters = int(filters)
        self.kernel_size = pair(kernel_size, "kernel_size", self.name)
        self.strides = pair(strides, "strides", self.name)
        self.padding = padding
        self.activation_arg = activation
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.initializers = kernel_initializer, bias_initializer
        self.rng = rng

    def build(self, input_shape, dtype):
        shape = (*self.kernel_size, input_shape[-1], self.filters)
        self.kernel = self.add_weight("kernel", shape, self.initializers[0], dtype,
                                      rng=self.rng)
        self.bias = self.add_weight("bias", (self.filters,), self.initializers[1], dtype) \
            if self.use_bias else None

    def call(self, x, training=False):
        y = conv2d(jnp.asarray(x, dtype=self.kernel.dtype), self.kernel, self.strides,
                   self.padding)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)

    def get_config(self):
        return {**super().get_config(), **convolution_config(self)}


class _Pool(Layer):
    """A pooling layer: `pooling(x, pool_size, strides, padding)` of its subclass."""
    pooling = None

    def __init__(self, pool_size=2, strides=None, padding="valid", name=None):
        super().__init__(name)
        self.options = pool_size, strides, padding

    def call(self, x, training=False):
        return type(self).pooling(x, *self.options)

    def get_config(self):
        pool_size, strides, padding = self.options
        return {**super().get_config(), "pool_size": _listed(pool_size),
                "strides": _listed(strides), "padding": padding}


class MaxPool2D(_Pool):
    pooling = staticmethod(max_pool2d)


class AvgPool2D(_Pool):
    pooling = staticmethod(avg_pool2d)


class Flatten(Layer):
    """(batch, ...) -> (batch, the product of the rest)."""

    def call(self, x, training=False):
        return jnp.reshape(x, (x.shape[0], math.prod(x.shape[1:])))


def _listed(value):
    """A pair as a list (JSON's form of it); an int or None as it is."""
    return list(value) if isinstance(value, (tuple, list)) else value


MaxPooling2D, AveragePooling2D = MaxPool2D, AvgPool2D  # Keras' other names
