"""Dropout, with an explicit, reproducible random state (jitflow.random.Generator)."""
from .. import numpy as jnp
from ..errors import at_user_line
from ..random import Generator
from .layer import Layer


class Dropout(Layer):
    """While training, zero each element with probability `rate` and scale the rest by
    1 / (1 - rate); otherwise pass the input through. The mask comes from the layer's
    own Generator(seed): inside a compiled step every call draws a new mask, the mask
    an eager run of the same steps draws."""
    supports_masking = True

    def __init__(self, rate, seed=0, name=None):
        super().__init__(name)
        if not 0.0 <= rate < 1.0:
            raise ValueError(at_user_line(f"{self.name}: rate must be in [0, 1), got {rate}"))
        self.rate = float(rate)
        self.seed = int(seed)
        self.generator = Generator(seed, name=self.name)

    def call(self, x, training=False):
        if not training or self.rate == 0.0:
            return x
        keep = self.generator.uniform(x.shape, x.dtype) >= self.rate
        return jnp.where(keep, x / (1.0 - self.rate), 0.0).astype(x.dtype)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}
