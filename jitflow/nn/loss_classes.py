"""Keras' loss classes, over the loss functions of losses.py.

Each gives its losses position by position (`per_position`: per element, or per position
of a sequence for the cross-entropies, whose class axis is summed over) and one loss per
example (`per_example`, their mean over every axis but the first, as Keras does); calling
it reduces them as Keras' "sum_over_batch_size": sum(loss * sample_weight) / the number
of weights (sample weights with a second axis, one per step, weigh each step's loss). With
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
from .weighting import mean_to_rank, values_at_weights

EPSILON = 1e-7  # Keras' backend epsilon: how far probabilities are kept from 0 and 1


class Loss:
    name = "loss"

    def __call__(self, y_true, y_pred, sample_weight=None):
        if sample_weight is None:
            losses = self.per_example(y_true, y_pred)
        else:
            losses = values_at_weights(self.per_position(y_true, y_pred),
                                       jnp.asarray(sample_weight), f"loss {self.name}")
            losses = losses * jnp.asarray(sample_weight, dtype=jnp.result_type(losses))
        count = int(np.prod(jnp.shape(losses))) if jnp.shape(losses) else 1
        return jnp.sum(losses) / count

    def per_example(self, y_true, y_pred):
        """One loss per example: the mean of per_position over every axis but the first."""
        return mean_to_rank(self.per_position(y_true, y_pred), 1, f"loss {self.name}")

    def per_position(self, y_true, y_pred):
        raise NotImplementedError(
            f"{type(self).__name__}: a Loss defines per_position(y_true, y_pred), its "
            f"losses with the example axis first")

    def __repr__(self):
        return f"{type(self).__name__}()"


class MeanSquaredError(Loss):
    name = "mean_squared_error"

    def per_position(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred, reduction="none")


class MeanAbsoluteError(Loss):
    name = "mean_absolute_error"

    def per_position(self, y_true, y_pred):
        y_true, y_pred = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
        return jnp.abs(y_pred - y_true)


class Huber(Loss):
    """0.5 e^2 where |e| <= delta, delta (|e| - 0.5 delta) beyond, for e = y_pred - y_true."""
    name = "huber_loss"

    def __init__(self, delta=1.0):
        self.delta = float(delta)

    def per_position(self, y_true, y_pred):
        y_true, y_pred = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
        error = jnp.abs(y_pred - y_true)
        quadratic = jnp.minimum(error, self.delta)
        return 0.5 * quadratic * quadratic + self.delta * (error - quadratic)


class BinaryCrossentropy(Loss):
    name = "binary_crossentropy"

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def per_position(self, y_true, y_pred):
        if self.from_logits:
            return binary_crossentropy_from_logits(y_true, y_pred, reduction="none")
        y_true, p = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
        p = jnp.clip(p, EPSILON, 1 - EPSILON)
        return 0.0 - (y_true * jnp.log(p) + (1 - y_true) * jnp.log(1 - p))


class CategoricalCrossentropy(Loss):
    name = "categorical_crossentropy"

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def per_position(self, y_true, y_pred):
        """Summed over the classes: one loss per example or per step of a sequence."""
        if self.from_logits:
            return softmax_cross_entropy_from_logits(y_true, y_pred, reduction="none")
        y_true, p = _same_shape_floats(self.name, "y_true", y_true, "y_pred", y_pred)
        p = jnp.clip(p / jnp.sum(p, axis=-1, keepdims=True), EPSILON, 1 - EPSILON)
        return 0.0 - jnp.sum(y_true * jnp.log(p), axis=-1)


class SparseCategoricalCrossentropy(Loss):
    name = "sparse_categorical_crossentropy"

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def per_position(self, y_true, y_pred):
        """One loss per example or per step of a sequence."""
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
    function of (y_true, y_pred) giving losses with the example axis first."""
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
    """A user's function of (y_true, y_pred) giving one loss per example, or one per
    step for an output with a mask of shape (batch, steps)."""

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__name__", "loss")

    def per_position(self, y_true, y_pred):
        return self.fn(y_true, y_pred)

    def per_example(self, y_true, y_pred):
        # As given, not averaged: values of another shape are refused by fit, since a
        # function that forgot its reduction would otherwise train on its mean.
        return self.fn(y_true, y_pred)


__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError", "Huber", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "get"]
