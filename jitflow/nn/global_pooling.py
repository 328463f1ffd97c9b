"""Global pooling layers: the mean or maximum of each channel over all steps (1-D,
(batch, steps, channels)) or all positions (2-D, NHWC), as in Keras."""
from .. import numpy as jnp
from ..errors import at_user_line
from . import masks
from .layer import Layer


class _GlobalPooling(Layer):
    reduce = None
    rank = None  # the input's rank: 3 for sequences, 4 for images

    def __init__(self, keepdims=False, name=None):
        super().__init__(name)
        self.keepdims = bool(keepdims)

    def call(self, x, training=False):
        self._check_rank(x)
        axes = tuple(range(1, self.rank - 1))
        return type(self).reduce(x, axis=axes, keepdims=self.keepdims)

    def _check_rank(self, x):
        if len(x.shape) != self.rank:
            kind = "(batch, steps, channels)" if self.rank == 3 else "NHWC images"
            raise ValueError(at_user_line(
                f"{self.name} ({type(self).__name__}): takes {kind}, {self.rank}-D, got "
                f"shape {tuple(x.shape)}"))

    def get_config(self):
        return {**super().get_config(), "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling):
    """With a mask, the mean over the unmasked steps only (NaN where every step of an
    example is masked, as in Keras)."""
    reduce, rank = staticmethod(jnp.mean), 3
    supports_masking = True

    def call(self, x, training=False, mask=None):
        if mask is None:
            return super().call(x, training)
        self._check_rank(x)
        weights = jnp.asarray(masks.sequence_mask(self, mask, x), dtype=x.dtype)[..., None]
        total = jnp.sum(x * weights, axis=1, keepdims=self.keepdims)
        return total / jnp.sum(weights, axis=1, keepdims=self.keepdims)

    def compute_mask(self, inputs, mask=None):
        return None  # the steps are gone


class GlobalMaxPooling1D(_GlobalPooling):
    reduce, rank = staticmethod(jnp.max), 3


class GlobalAveragePooling2D(_GlobalPooling):
    reduce, rank = staticmethod(jnp.mean), 4


class GlobalMaxPooling2D(_GlobalPooling):
    reduce, rank = staticmethod(jnp.max), 4


__all__ = ["GlobalAveragePooling1D", "GlobalMaxPooling1D", "GlobalAveragePooling2D",
           "GlobalMaxPooling2D"]
