"""Embedding: integer tokens -> rows of a learned table, as Keras' Embedding."""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .layer import Layer


class Embedding(Layer):
    """(batch, ...) integer indices in [0, input_dim) -> (batch, ..., output_dim): the
    rows of `embeddings`, a (input_dim, output_dim) weight. An index out of range takes
    no row NumPy would not (a negative one counts from the end, as in NumPy's take).
    With mask_zero, index 0 is padding: the output's mask is false there (Keras')."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 dtype="float32", rng=None, name=None, embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False):
        super().__init__(name)
        self.mask_zero = bool(mask_zero)
        self.set_weight_rules("embeddings", embeddings_regularizer, embeddings_constraint)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = embeddings_initializer
        self.dtype = np.dtype(dtype)
        self.rng = rng

    def build(self, input_shape, dtype):
        initializer = self.embeddings_initializer
        if initializer == "uniform":  # Keras' default: uniform in [-0.05, 0.05]
            initializer = "random_uniform"
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          initializer, self.dtype, rng=self.rng)

    def _check_input(self, x):
        """Index arrays of any shape pick rows of the one table."""

    def call(self, x, training=False):
        if np.dtype(x.dtype).kind not in "iu":
            raise TypeError(at_user_line(
                f"{self.name} (Embedding): takes integer token indices, got {x.dtype}"))
        return jnp.take(self.embeddings, x, axis=0)

    def compute_mask(self, inputs, mask=None):
        return jnp.not_equal(inputs, 0) if self.mask_zero else None

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim,
                "embeddings_initializer": self.embeddings_initializer,
                "dtype": self.dtype.name, "mask_zero": self.mask_zero,
                **self.rules_config()}


__all__ = ["Embedding"]
