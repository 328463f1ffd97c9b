"""jitflow.nn.losses: the loss functions (loss_functions.py: numerically stable, eager
and traced alike) and Keras' loss classes built on them (loss_classes.py)."""
from .loss_classes import (BinaryCrossentropy, CategoricalCrossentropy, Huber, Loss,
                           MeanAbsoluteError, MeanSquaredError,
                           SparseCategoricalCrossentropy, get)
from .loss_functions import (REDUCTIONS, binary_crossentropy_from_logits,
                             mean_squared_error, softmax_cross_entropy_from_logits,
                             sparse_softmax_cross_entropy_from_logits)

__all__ = ["REDUCTIONS", "binary_crossentropy_from_logits", "mean_squared_error",
           "softmax_cross_entropy_from_logits", "sparse_softmax_cross_entropy_from_logits",
           "Loss", "MeanSquaredError", "MeanAbsoluteError", "Huber", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "get"]
