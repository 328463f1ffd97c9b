"""Loss functions, numerically stable, eagerly on NumPy arrays and traced alike.

`reduction` is 'mean' (the default), 'sum' or 'none'. With 'none' the result has one loss
per element for mean_squared_error and binary_crossentropy_from_logits (each logit is its
own binary problem, as in PyTorch), and one per example for the softmax losses, whose
class axis is summed over. Targets are cast to the predictions' float dtype (float64 for
integer predictions, as NumPy averages them), so float32 logits give a float32 loss.

Shapes must match exactly, without broadcasting: labels of shape (n,) against logits of
shape (n, 1) would broadcast to an (n, n) loss and train on the wrong objective. A mismatch
is a ValueError naming the function, the shapes and the caller's line.
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ._erf import as_float
from .activations import softplus

REDUCTIONS = ("mean", "sum", "none")


def mean_squared_error(y_true, y_pred, reduction="mean"):
    """(y_pred - y_true)^2, reduced."""
    y_true, y_pred = _same_shape_floats("mean_squared_error", "y_true", y_true,
                                        "y_pred", y_pred)
    return _reduce("mean_squared_error", jnp.square(y_pred - y_true), reduction)


def binary_crossentropy_from_logits(labels, logits, reduction="mean"):
    """-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)) for labels z in [0, 1] and
    logits x, as softplus(x) - x z = max(x, 0) - x z + log1p(exp(-|x|)): finite for any
    finite logits."""
    labels, logits = _same_shape_floats("binary_crossentropy_from_logits", "labels",
                                        labels, "logits", logits)
    return _reduce("binary_crossentropy_from_logits", softplus(logits) - logits * labels,
                   reduction)


def softmax_cross_entropy_from_logits(labels, logits, axis=-1, reduction="mean"):
    """-sum(labels * log_softmax(logits)) over `axis`, for one-hot or probability labels.

    A class whose label is 0 adds nothing, even where its logit is -inf (masked out).
    """
    name = "softmax_cross_entropy_from_logits"
    labels, logits = _same_shape_floats(name, "labels", labels, "logits", logits)
    _check_axis(name, axis, logits)
    log_probabilities = jnp.where(labels != 0, jnp.log_softmax(logits, axis=axis), 0)
    losses = 0.0 - jnp.sum(labels * log_probabilities, axis=axis)  # +0.0 when certain
    return _reduce(name, losses, reduction)


def sparse_softmax_cross_entropy_from_logits(labels, logits, reduction="mean"):
    """-log_softmax(logits)[..., label] for integer class labels of shape
    logits.shape[:-1]. A label outside [0, classes) gives a NaN loss (it cannot raise:
    label values are not known while tracing)."""
    name = "sparse_softmax_cross_entropy_from_logits"
    labels, logits = jnp.asarray(labels), as_float(jnp.asarray(logits))
    _check_sparse(name, labels, logits)
    classes = jnp.shape(logits)[-1]
    # Gather each label's log-probability through a one-hot mask of the class axis.
    one_hot = jnp.expand_dims(labels, -1) == jnp.arange(classes)
    picked = jnp.sum(jnp.where(one_hot, jnp.log_softmax(logits, axis=-1), 0), axis=-1)
    valid = (labels >= 0) & (labels < classes)
    return _reduce(name, jnp.where(valid, 0.0 - picked, np.nan), reduction)


# --- checks and helpers ------------------------------------------------------------------

def _same_shape_floats(function, target_name, target, prediction_name, prediction):
    """target and prediction (arrays, traced values or lists) as arrays in prediction's
    float dtype, after checking that their shapes are equal."""
    target, prediction = jnp.asarray(target), jnp.asarray(prediction)
    target_shape, prediction_shape = jnp.shape(target), jnp.shape(prediction)
    if target_shape != prediction_shape:
        raise ValueError(at_user_line(
            f"{function}: {target_name} of shape {target_shape} and {prediction_name} of "
            f"shape {prediction_shape} differ; their shapes must be equal (they are not "
            f"broadcast)"))
    prediction = as_float(prediction)
    return jnp.astype(target, jnp.result_type(prediction)), prediction


def _check_axis(function, axis, logits):
    ndim = len(jnp.shape(logits))
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(at_user_line(
            f"{function}: axis must be an int, not {axis!r} (under jitflow.function, "
            f"a static argument: static_argnames)"))
    if not -ndim <= axis < ndim:
        raise ValueError(at_user_line(
            f"{function}: axis {axis!r} is not an axis of logits of shape "
            f"{jnp.shape(logits)}"))


def _check_sparse(function, labels, logits):
    labels_shape, logits_shape = jnp.shape(labels), jnp.shape(logits)
    if len(logits_shape) == 0 or labels_shape != logits_shape[:-1]:
        raise ValueError(at_user_line(
            f"{function}: labels of shape {labels_shape} do not fit logits of shape "
            f"{logits_shape}; labels must have the shape of logits without its last "
            f"(class) axis"))
    if jnp.result_type(labels).kind not in "iu":
        raise TypeError(at_user_line(
            f"{function}: labels must be integer class indices, not "
            f"{jnp.result_type(labels)}; for one-hot or probability labels use "
            f"softmax_cross_entropy_from_logits"))


def _reduce(function, losses, reduction):
    if reduction == "mean":
        return jnp.mean(losses)
    if reduction == "sum":
        return jnp.sum(losses)
    if reduction == "none":
        return losses
    raise ValueError(at_user_line(
        f"{function}: reduction {reduction!r} is not one of {', '.join(REDUCTIONS)}"))


__all__ = ["REDUCTIONS", "binary_crossentropy_from_logits", "mean_squared_error",
           "softmax_cross_entropy_from_logits", "sparse_softmax_cross_entropy_from_logits"]
