"""Layers that merge a list of inputs into one, as Keras' Add, Subtract, Multiply,
Average, Maximum, Minimum (elementwise, with broadcasting) and Concatenate."""
import functools

from .. import numpy as jnp
from ..errors import at_user_line
from . import masks
from .layer import Layer


class _Merge(Layer):
    """Combines the inputs pairwise with `combine`. A step is kept (its mask true)
    where every input keeps it, as in Keras."""
    combine = None
    least = 2
    supports_masking = True

    def compute_mask(self, inputs, mask=None):
        if not masks.has_mask(mask):
            return None
        return masks.all_of(mask)

    def call(self, inputs, training=False):
        inputs = self._checked(inputs)
        return functools.reduce(type(self).combine, inputs)

    def _checked(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < self.least:
            raise ValueError(at_user_line(
                f"{self.name} ({type(self).__name__}): takes a list of at least "
                f"{self.least} inputs, got {_described(inputs)}"))
        return list(inputs)


class Add(_Merge):
    combine = staticmethod(jnp.add)


class Multiply(_Merge):
    combine = staticmethod(jnp.multiply)


class Maximum(_Merge):
    combine = staticmethod(jnp.maximum)


class Minimum(_Merge):
    combine = staticmethod(jnp.minimum)


class Subtract(_Merge):
    def call(self, inputs, training=False):
        inputs = self._checked(inputs)
        if len(inputs) != 2:
            raise ValueError(at_user_line(
                f"{self.name} (Subtract): takes exactly 2 inputs, got {len(inputs)}"))
        return inputs[0] - inputs[1]


class Average(_Merge):
    def call(self, inputs, training=False):
        inputs = self._checked(inputs)
        total = functools.reduce(jnp.add, inputs)
        return total / jnp.asarray(len(inputs), dtype=jnp.result_type(total))


class Concatenate(_Merge):
    """The inputs joined along `axis` (the last by default)."""

    def __init__(self, axis=-1, name=None):
        super().__init__(name)
        self.axis = int(axis)

    def call(self, inputs, training=False):
        inputs = self._checked(inputs)
        ranks = {len(x.shape) for x in inputs}
        shapes = [tuple(x.shape) for x in inputs]
        axis = self.axis % ranks.pop() if len(ranks) == 1 else None
        if axis is None or axis == 0 or len({s[:axis] + s[axis + 1:] for s in shapes}) != 1:
            raise ValueError(at_user_line(
                f"{self.name} (Concatenate): inputs of shapes {shapes} cannot be joined "
                f"along axis {self.axis}: they must have one rank and agree on every "
                f"other axis (the batch axis 0 cannot be the one joined)"))
        return jnp.concatenate(inputs, axis=axis)

    def compute_mask(self, inputs, mask=None):
        """Joined along a step axis, the masks are joined too (ones for an input
        without one); joined along the features, a step needs every input's mask."""
        if not masks.has_mask(mask):
            return None
        axis = self.axis % len(inputs[0].shape)
        if axis == len(inputs[0].shape) - 1:
            return masks.all_of(mask)
        return jnp.concatenate(
            [jnp.ones(tuple(x.shape[:-1]), dtype=bool) if m is None else masks.boolean(m)
             for x, m in zip(inputs, mask)], axis=axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


def _described(inputs):
    if isinstance(inputs, (list, tuple)):
        return f"a list of {len(inputs)}"
    return f"a single {type(inputs).__name__}"


__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"]
