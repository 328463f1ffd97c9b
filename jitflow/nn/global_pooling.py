"""Global pooling layers: the mean or maximum of each channel over all steps (1-D,
(batch, steps, channels)) or all positions (2-D, NHWC), as in Keras."""
from .. import numpy as jnp
from ..errors import at_user_line
from .layer import Layer


class _GlobalPooling(Layer):
    reduce = None
    rank = None  # the input's rank: 3 for sequences, 4 for images

    def __init__(self, keepdims=False, name=None):
        super().__init__(name)
        self.keepdims = bool(keepdims)

    def call(self, x, training=False):
        if len(x.shape) != self.rank:
            kind = "(batch, steps, channels)" if self.rank == 3 else "NHWC images"
            raise ValueError(at_user_line(
                f"{self.name} ({type(self).__name__}): takes {kind}, {self.rank}-D, got "
                f"shape {tuple(x.shape)}"))
        axes = tuple(range(1, self.rank - 1))
        return type(self).reduce(x, axis=axes, keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling):
    reduce, rank = staticmethod(jnp.mean), 3


class GlobalMaxPooling1D(_GlobalPooling):
    reduce, rank = staticmethod(jnp.max), 3


class GlobalAveragePooling2D(_GlobalPooling):
    reduce, rank = staticmethod(jnp.mean), 4


class GlobalMaxPooling2D(_GlobalPooling):
    reduce, rank = staticmethod(jnp.max), 4


__all__ = ["GlobalAveragePooling1D", "GlobalMaxPooling1D", "GlobalAveragePooling2D",
           "GlobalMaxPooling2D"]
