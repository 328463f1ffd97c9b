"""Masking: marks as padding the steps of a sequence whose features all equal
`mask_value`, as Keras' Masking layer."""
from .. import numpy as jnp
from .layer import Layer


class Masking(Layer):
    """(batch, time, features) -> the same with the padding steps zeroed, and the mask
    (batch, time): false on a step whose features all equal mask_value."""
    supports_masking = True
    any_length = True  # sequences of any length

    def __init__(self, mask_value=0.0, name=None):
        super().__init__(name)
        self.mask_value = float(mask_value)

    def _kept(self, x, keepdims=False):
        return jnp.any(jnp.not_equal(x, self.mask_value), axis=-1, keepdims=keepdims)

    def call(self, x, training=False):
        return x * jnp.asarray(self._kept(x, keepdims=True), dtype=x.dtype)

    def compute_mask(self, inputs, mask=None):
        return self._kept(inputs)

    def get_config(self):
        return {**super().get_config(), "mask_value": self.mask_value}


__all__ = ["Masking"]
