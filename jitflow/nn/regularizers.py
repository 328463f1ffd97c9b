"""Weight regularizers, as Keras': a penalty of a weight added to the training loss.

    nn.Dense(8, kernel_regularizer=nn.regularizers.L2(1e-3))   # or "l2" (0.01)

fit adds every layer's penalties (model.losses) to the loss it minimizes and reports.
"""
from .. import numpy as jnp
from ..errors import at_user_line
from .constructor_config import decoded, encoded


class Regularizer:
    def __call__(self, weight):
        raise NotImplementedError(type(self).__name__)


class L1L2(Regularizer):
    """l1 * sum(|w|) + l2 * sum(w ** 2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, weight):
        penalty = 0.0
        if self.l1:
            penalty = penalty + self.l1 * jnp.sum(jnp.abs(weight))
        if self.l2:
            penalty = penalty + self.l2 * jnp.sum(jnp.square(weight))
        return penalty

    def __repr__(self):
        return f"{type(self).__name__}(l1={self.l1}, l2={self.l2})"


class L1(L1L2):
    """l1 * sum(|w|)."""

    def __init__(self, l1=0.01):
        super().__init__(l1=l1)


class L2(L1L2):
    """l2 * sum(w ** 2)."""

    def __init__(self, l2=0.01):
        super().__init__(l2=l2)


_CLASSES = {cls.__name__: cls for cls in (L1L2, L1, L2)}
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": lambda: L1L2(0.01, 0.01)}


def get(identifier):
    """A regularizer from None, a name ('l1', 'l2', 'l1_l2', with Keras' 0.01) or a
    callable of the weight giving its penalty."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):  # as serialize() saved it
        return decoded(identifier, _CLASSES, "regularizers")
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    raise ValueError(at_user_line(
        f"unknown regularizer {identifier!r}: expected None, a callable or one of "
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
        f"give it by name or as a jitflow.nn.regularizers object"))


__all__ = ["Regularizer", "L1L2", "L1", "L2", "get", "serialize"]
