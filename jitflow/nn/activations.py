"""Activation functions, with Keras' names and defaults.

Each works eagerly on NumPy arrays and traced inside @jitflow.function, and is
differentiable, being made of jitflow.numpy functions. A float32 input gives a float32
result. Where a formula has branches, every branch stays finite for every input, so that
derivatives are never 0 * inf = NaN.

`get` maps Keras' activation names to these functions.
"""
import math

from .. import numpy as jnp
from ._erf import float_dtype, normal_cdf

# SELU's constants (Klambauer et al., 2017), as Keras gives them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946

sigmoid = jnp.sigmoid
tanh = jnp.tanh
softmax = jnp.softmax          # softmax(x, axis=-1), max subtracted first
log_softmax = jnp.log_softmax  # log_softmax(x, axis=-1), stable for huge logits


def linear(x):
    """The identity: the activation of a layer that has none."""
    return x


def relu(x):
    """max(x, 0); NaN stays NaN, as with NumPy's maximum."""
    return jnp.relu(x)


def leaky_relu(x, negative_slope=0.2):
    """x where x >= 0, else negative_slope * x. The default is Keras 3's for this function
    (0.2; its LeakyReLU layer defaults to 0.3)."""
    return jnp.where(x >= 0, x, x * _parameter(negative_slope, x))


def elu(x, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1)."""
    # exp of the positive inputs would overflow in the branch not taken; zero them first.
    negative = jnp.where(x > 0, 0, x)
    return jnp.where(x > 0, x, _parameter(alpha, x) * jnp.expm1(negative))


def selu(x):
    """SELU_SCALE * elu(x, SELU_ALPHA): self-normalizing for lecun_normal weights."""
    return SELU_SCALE * elu(x, SELU_ALPHA)


def softplus(x):
    """log(1 + exp(x)), as max(x, 0) + log1p(exp(-|x|)): no overflow for large x."""
    return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.absolute(x)))


def silu(x):
    """x * sigmoid(x), also called swish."""
    return x * jnp.sigmoid(x)


swish = silu


def gelu(x, approximate=False):
    """x * P(X <= x) for standard normal X (Keras' default, exact form), or with
    approximate=True the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    The exact form's normal CDF is an erf composite within a few ulp (jitflow has no erf
    primitive). The tanh form is computed as x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)),
    the same function, without 1 + tanh cancelling to 0 for negative x.
    """
    if not approximate:
        return x * normal_cdf(x)
    inner = (2 * math.sqrt(2 / math.pi)) * (x + 0.044715 * (x * x * x))
    return x * jnp.sigmoid(inner)


def _parameter(value, x):
    """A parameter (a number, or a traced scalar: it may be learned) in x's float dtype,
    so that a float64 NumPy scalar does not turn float32 activations into float64."""
    return jnp.astype(value, float_dtype(x))


_BY_NAME = {"linear": linear, "relu": relu, "leaky_relu": leaky_relu, "elu": elu,
            "selu": selu, "softplus": softplus, "silu": silu, "swish": swish,
            "gelu": gelu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
            "log_softmax": log_softmax}


def get(identifier):
    """The activation `identifier` names (Keras' names; None is 'linear'), or
    `identifier` itself if it is callable."""
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(f"unknown activation {identifier!r}: expected a callable, None or "
                     f"one of {', '.join(sorted(_BY_NAME))}")


__all__ = ["elu", "gelu", "get", "leaky_relu", "linear", "log_softmax", "relu", "selu",
           "sigmoid", "silu", "softmax", "softplus", "swish", "tanh"]


def serialize(activation, layer_name):
    """The name a layer's `activation` argument is saved under (None stays None)."""
    if activation is None or isinstance(activation, str):
        return activation
    for name, function in _BY_NAME.items():
        if function is activation:
            return name
    raise ValueError(f"{layer_name}: its activation {activation!r} is a Python function, "
                     f"which a saved model cannot hold; give the activation by name")
