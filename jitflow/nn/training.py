"""Training: what a Model adds for training and inference."""
import numpy as np


class Training:
    def predict(self, x, batch_size=None):
        """The model's outputs for x as a NumPy array, in batches of `batch_size` rows
        (all at once by default), in inference mode."""
        x = np.asarray(x)
        if batch_size is None or len(x) <= batch_size:
            return np.asarray(self(x, training=False))
        return np.concatenate([np.asarray(self(x[i:i + batch_size], training=False))
                               for i in range(0, len(x), batch_size)])
