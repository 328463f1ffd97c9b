"""Keras' loss classes, over the loss functions of losses.py.

Each gives one loss per example (`per_example`, the mean over the remaining axes of the
elementwise loss, as Keras does), and calling it reduces them as Keras'
"sum_over_batch_size": sum(loss * sample_weight) / number of examples. With
from_logits=False the predictions are probabilities, clipped to [1e-7, 1 - 1e-7] before
their logarithm, as Keras clips them.
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ._erf import as_float
from .loss_functions import (_check_sparse, _same_shape_floats, binary_crossentropy_from_logits,
                     mean_squared_error, softmax_cross_entropy_from_logits,
                     sparse_softmax_cross_entropy_from_logits)

EPSILON = 1e-7  # Keras' backend epsilon: how far probabilities are kept from 0 and 1


class Loss:
    name = "loss"

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = self.per_example(y_true, y_pred)
        count = jnp.shape(losses)[0] if jnp.shape(losses) else 1
        if sample_weight is not None:
            losses = losses * jnp.asarray(sample_weight, dtype=jnp.result_type(losses))
        return jnp.sum(losses) / count

    def per_example(self, y_true, y_pred):
        raise NotImplementedError(type(self).__name__)

    def __repr__(self):
        return f"{type(self).__name__}()"


class MeanSquaredError(Loss):
    name = "mean_squared_error"

    def per_example(self, y_true, y_pred):
        return _mean_over_features(mean_squared_error(y_true, y_pred, reduction="none"))


class MeanAbsoluteError(Loss):
    name = "mean_absolute_error"

    def per_example(self, y_true, y_pred):
        y_true, y_pred = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
        return _mean_over_features(jnp.abs(y_pred - y_true))


class Huber(Loss):
    """0.5 e^2 where |e| <= delta, delta (|e| - 0.5 delta) beyond, for e = y_pred - y_true."""
    name = "huber_loss"

    def __init__(self, delta=1.0):
        self.delta = float(delta)

    def per_example(self, y_true, y_pred):
        y_true, y_pred = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
        error = jnp.abs(y_pred - y_true)
        quadratic = jnp.minimum(error, self.delta)
        return _mean_over_features(0.5 * quadratic * quadratic +
                                   self.delta * (error - quadratic))


class BinaryCrossentropy(Loss):
    name = "binary_crossentropy"

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def per_example(self, y_true, y_pred):
        if self.from_logits:
            losses = binary_crossentropy_from_logits(y_true, y_pred, reduction="none")
        else:
            y_true, p = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
            p = jnp.clip(p, EPSILON, 1 - EPSILON)
            losses = 0.0 - (y_true * jnp.log(p) + (1 - y_true) * jnp.log(1 - p))
        return _mean_over_features(losses)


class CategoricalCrossentropy(Loss):
    name = "categorical_crossentropy"

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def per_example(self, y_true, y_pred):
        """Over the classes, then averaged over any axes between (a sequence's)."""
        if self.from_logits:
            return _mean_over_features(
                softmax_cross_entropy_from_logits(y_true, y_pred, reduction="none"))
        y_true, p = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
        p = jnp.clip(p / jnp.sum(p, axis=-1, keepdims=True), EPSILON, 1 - EPSILON)
        return _mean_over_features(0.0 - jnp.sum(y_true * jnp.log(p), axis=-1))


class SparseCategoricalCrossentropy(Loss):
    name = "sparse_categorical_crossentropy"

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def per_example(self, y_true, y_pred):
        """Over the classes, then averaged over any axes between (a sequence's)."""
        return _mean_over_features(self._per_position(y_true, y_pred))

    def _per_position(self, y_true, y_pred):
        y_true = _squeezed_labels(y_true, y_pred)
        if self.from_logits:
            return sparse_softmax_cross_entropy_from_logits(y_true, y_pred, reduction="none")
        p = as_float(jnp.asarray(y_pred))
        _check_sparse(self.name, y_true, p)
        one_hot = jnp.expand_dims(y_true, -1) == jnp.arange(jnp.shape(p)[-1])
        picked = jnp.sum(jnp.where(one_hot, p, 0), axis=-1)
        valid = (y_true >= 0) & (y_true < jnp.shape(p)[-1])
        return jnp.where(valid, 0.0 - jnp.log(jnp.clip(picked, EPSILON, 1 - EPSILON)),
                         np.nan)


def _mean_over_features(losses):
    """One loss per example: the mean over every axis but the first."""
    axes = tuple(range(1, len(jnp.shape(losses))))
    return jnp.mean(losses, axis=axes) if axes else losses


def _squeezed_labels(labels, logits):
    """Keras takes labels of shape (n, 1) for logits (n, classes): drop that axis."""
    labels = jnp.asarray(labels)
    shape = jnp.shape(labels)
    if len(shape) == len(jnp.shape(logits)) and shape and shape[-1] == 1:
        return jnp.reshape(labels, shape[:-1])
    return labels


_BY_NAME = {
    "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
    "huber": Huber, "huber_loss": Huber,
    "binary_crossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
}


def get(identifier):
    """A Loss from a Loss, a name ('mse', 'sparse_categorical_crossentropy', ...) or a
    function of (y_true, y_pred) giving one loss per example."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if callable(identifier) and not isinstance(identifier, type):
        return FunctionLoss(identifier)
    raise ValueError(at_user_line(
        f"unknown loss {identifier!r}; give a jitflow.nn.losses.Loss, a function of "
        f"(y_true, y_pred) or one of {', '.join(sorted(_BY_NAME))}"))


class FunctionLoss(Loss):
    """A user's function of (y_true, y_pred) giving one loss per example."""

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__name__", "loss")

    def per_example(self, y_true, y_pred):
        return self.fn(y_true, y_pred)


__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError", "Huber", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "get"]
