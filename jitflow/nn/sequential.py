"""Sequential: layers applied one after another, as Keras' and TensorFlow.js' model."""
import numpy as np

from .layer import Layer


class Sequential(Layer):
    def __init__(self, layers=(), name=None):
        super().__init__(name)
        self.layers = list(layers)

    def add(self, layer):
        self.layers.append(layer)

    def __call__(self, x, training=False):
        for layer in self.layers:
            x = layer(x, training=training)
        self.built = True
        return x

    def predict(self, x, batch_size=None):
        """The model's outputs for x as a NumPy array, in batches of `batch_size` rows
        (all at once by default), in inference mode."""
        x = np.asarray(x)
        if batch_size is None or len(x) <= batch_size:
            return np.asarray(self(x, training=False))
        return np.concatenate([np.asarray(self(x[i:i + batch_size], training=False))
                               for i in range(0, len(x), batch_size)])

    @property
    def weights(self):
        return [w for layer in self.layers for w in layer.weights]

    @property
    def trainable_variables(self):
        return [w for layer in self.layers for w in layer.trainable_variables]

    @property
    def non_trainable_variables(self):
        return [w for layer in self.layers for w in layer.non_trainable_variables]
