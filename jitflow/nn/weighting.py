"""How losses and metrics weigh their values, as Keras does.

A loss or metric gives values position by position (`per_position`: one per example, per
time step or per element, the example axis first); they are averaged down to the rank of
their weights (one weight per example, or per step of a sequence: a masked one, or
sample weights of shape (batch, steps)) and then weighted. An output's mask (nn/masks.py) multiplies its examples' weights step by step,
so a masked step weighs nothing: a loss is then the weighted sum over the kept steps
divided by their number, a metric the weighted mean over them.
"""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .masks import boolean


def mean_to_rank(values, rank, what):
    """`values` averaged over every axis past the first `rank` (a clear error naming
    `what` when they have fewer axes)."""
    shape = tuple(jnp.shape(values))
    if len(shape) < rank:
        raise ValueError(at_user_line(
            f"{what}: gave values of shape {shape}; it must give at least {rank} axes "
            f"(one value per example{', per step' if rank > 1 else ''})"))
    axes = tuple(range(rank, len(shape)))
    return jnp.mean(values, axis=axes) if axes else values


def values_at_weights(values, weights, what):
    """`values` averaged to the shape of `weights`, checked to have it."""
    weights_shape = tuple(jnp.shape(weights))
    values = mean_to_rank(values, len(weights_shape), what)
    if tuple(jnp.shape(values)) != weights_shape:
        raise ValueError(at_user_line(
            f"{what}: gave values of shape {tuple(jnp.shape(values))} where its weights "
            f"(one per example, or per step of a masked output) have shape "
            f"{weights_shape}"))
    return values


def masked_weights(sample_weight, rows, mask):
    """(the weights, the count a loss divides by) for a batch: `sample_weight` (one per
    example, or one per step (batch, steps); the padded rows' already zero), `rows` (1
    on the batch's real rows) and the output's mask (None, or a boolean mask of shape
    (batch, steps...)). Without a mask: the sample weights and the number of weights of
    the real rows (Keras' sum_over_batch_size); with one: the sample weights times the
    mask, and the number of kept steps of the real rows (at least 1, so a batch whose
    every step is masked has loss 0, as in Keras)."""
    weights_shape = tuple(jnp.shape(sample_weight))
    if mask is None:
        count = jnp.sum(rows)
        return sample_weight, count if len(weights_shape) < 2 else \
            count * int(np.prod(weights_shape[1:]))
    kept = jnp.asarray(boolean(mask), dtype=np.float64)
    mask_shape = tuple(jnp.shape(kept))
    if len(weights_shape) > 1 and weights_shape != mask_shape:
        raise ValueError(at_user_line(
            f"sample_weight of shape {weights_shape} (one per step) does not fit the "
            f"output's mask of shape {mask_shape}"))
    steps = (1,) * (len(mask_shape) - len(weights_shape))
    weights = jnp.reshape(jnp.asarray(sample_weight, dtype=np.float64),
                          weights_shape + steps) * kept
    real = jnp.reshape(jnp.asarray(rows, dtype=np.float64), (-1,) + (1,) * (
        len(mask_shape) - 1)) * kept
    return weights, jnp.maximum(jnp.sum(real), 1.0)


__all__ = ["mean_to_rank", "values_at_weights", "masked_weights"]
