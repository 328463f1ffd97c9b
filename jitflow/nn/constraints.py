"""Weight constraints, as Keras': after each optimizer step fit replaces the weight by
constraint(weight), inside the same compiled step.

Norms are taken over `axis` (0: for a Dense kernel (in, out), each unit's incoming
weights); epsilon keeps an all-zero column finite, as in Keras.
"""
from .. import numpy as jnp
from ..errors import at_user_line
from .constructor_config import decoded, encoded

EPSILON = 1e-7


class Constraint:
    def __call__(self, weight):
        raise NotImplementedError(type(self).__name__)


class NonNeg(Constraint):
    """Negative elements become 0."""

    def __call__(self, weight):
        return weight * jnp.astype(weight >= 0, weight.dtype)


class MinMaxNorm(Constraint):
    """Each norm moved into [min_value, max_value], `rate` of the way."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value = float(min_value), float(max_value)
        self.rate, self.axis = float(rate), axis

    def __call__(self, weight):
        norms = jnp.sqrt(jnp.sum(jnp.square(weight), axis=self.axis, keepdims=True))
        clipped = jnp.clip(norms, self.min_value, self.max_value)
        desired = self.rate * clipped + (1 - self.rate) * norms
        return weight * (desired / (EPSILON + norms))


class MaxNorm(MinMaxNorm):
    """Norms above max_value scaled down to it."""

    def __init__(self, max_value=2.0, axis=0):
        super().__init__(0.0, max_value, 1.0, axis)


class UnitNorm(Constraint):
    """Every norm scaled to 1."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, weight):
        norms = jnp.sqrt(jnp.sum(jnp.square(weight), axis=self.axis, keepdims=True))
        return weight / (EPSILON + norms)


_CLASSES = {cls.__name__: cls for cls in (NonNeg, MinMaxNorm, MaxNorm, UnitNorm)}
_BY_NAME = {"non_neg": NonNeg, "max_norm": MaxNorm, "unit_norm": UnitNorm,
            "min_max_norm": MinMaxNorm}


def get(identifier):
    """A constraint from None, a name ('max_norm', 'non_neg', 'unit_norm',
    'min_max_norm', with Keras' defaults) or a callable of the weight."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):  # as serialize() saved it
        return decoded(identifier, _CLASSES, "constraints")
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    raise ValueError(at_user_line(
        f"unknown constraint {identifier!r}: expected None, a callable or one of "
        f"{', '.join(sorted(_BY_NAME))}"))


def serialize(identifier, what):
    """What a layer's config holds for its argument: a name as it is, one of this
    module's objects as {class_name, config}."""
    if identifier is None or isinstance(identifier, str):
        return identifier
    if type(identifier) in _CLASSES.values():
        return encoded(identifier, what)
    raise ValueError(at_user_line(
        f"{what}: {identifier!r} is a Python function, which a saved model cannot hold; "
        f"give it by name or as a jitflow.nn.constraints object"))


__all__ = ["Constraint", "NonNeg", "MinMaxNorm", "MaxNorm", "UnitNorm", "get", "serialize"]
