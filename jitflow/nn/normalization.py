"""LayerNorm and BatchNorm (Keras' LayerNormalization and BatchNormalization over the
last axis)."""
from .. import numpy as jnp
from ..ops import stop_gradient
from .layer import Layer


class LayerNorm(Layer):
    """Normalize each example over its last axis, then scale by gamma and shift by
    beta (one of each per feature)."""
    supports_masking = True  # each step is normalized on its own

    def __init__(self, epsilon=1e-3, name=None):
        super().__init__(name)
        self.epsilon = epsilon

    def build(self, input_shape, dtype):
        self.gamma = self.add_weight("gamma", input_shape[-1:], "ones", dtype)
        self.beta = self.add_weight("beta", input_shape[-1:], "zeros", dtype)

    def call(self, x, training=False):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        variance = jnp.var(x, axis=-1, keepdims=True)
        return (x - mean) / jnp.sqrt(variance + self.epsilon) * self.gamma + self.beta

    def get_config(self):
        return {**super().get_config(), "epsilon": self.epsilon}


class BatchNorm(Layer):
    """Normalize each feature (the last axis) by the batch's mean and variance while
    training, and by their moving averages otherwise; then scale and shift. Training
    updates the moving averages: moving = moving * momentum + batch * (1 - momentum)."""
    uses_batch_statistics = True  # fit must not pad its training batches

    def __init__(self, momentum=0.99, epsilon=1e-3, name=None):
        super().__init__(name)
        self.momentum, self.epsilon = momentum, epsilon

    def build(self, input_shape, dtype):
        features = input_shape[-1:]
        self.gamma = self.add_weight("gamma", features, "ones", dtype)
        self.beta = self.add_weight("beta", features, "zeros", dtype)
        self.moving_mean = self.add_weight("moving_mean", features, "zeros", dtype,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", features, "ones", dtype,
                                               trainable=False)

    def call(self, x, training=False):
        if training:
            axes = tuple(range(len(x.shape) - 1))
            mean, variance = jnp.mean(x, axis=axes), jnp.var(x, axis=axes)
            self._follow(self.moving_mean, mean)
            self._follow(self.moving_variance, variance)
        else:
            mean, variance = self.moving_mean.value, self.moving_variance.value
        return (x - mean) / jnp.sqrt(variance + self.epsilon) * self.gamma + self.beta

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "epsilon": self.epsilon}

    def _follow(self, moving, batch):
        """The batch statistic carries no gradient into the moving average."""
        moving.assign(moving * self.momentum + stop_gradient(batch) * (1.0 - self.momentum))


LayerNormalization, BatchNormalization = LayerNorm, BatchNorm  # Keras' names
