"""Initializers: the starting values of weights, with Keras' names and formulas.

An initializer is called as init(shape, dtype=np.float32, rng=None) and returns a NumPy
array: concrete values, from which jitflow.Variables are made. `rng` is a
numpy.random.Generator, the explicit random state. With rng=None the values come from
this module's default Generator, seeded with DEFAULT_SEED once, when jitflow.nn is first
imported: a program that makes its weights in the same order gets the same weights on
every run. Random values are drawn in float64 and rounded to `dtype`, so a Generator in
the same state gives the same weights in float32 as in float64, to rounding.

zeros, ones, glorot_uniform, glorot_normal, he_normal, he_uniform, lecun_normal and
lecun_uniform are initializers; constant(value), random_normal(mean, stddev),
random_uniform(minval, maxval), truncated_normal(mean, stddev) and
VarianceScaling(scale, mode, distribution) make one. `get` maps Keras' names to
initializers.

fan_in and fan_out are Keras': (in, out) for a Dense kernel of shape (in, out), and for a
convolution kernel (kh, kw, in, out) the channels times the receptive field kh * kw.
"""
import math

import numpy as np

from ..random import eager_numpy

DEFAULT_SEED = 0
_default_rng = np.random.default_rng(DEFAULT_SEED)

# The standard deviation of a standard normal truncated to [-2, 2]: dividing by it makes
# a truncated normal's spread the one VarianceScaling asks for.
TRUNCATED_STDDEV = 0.87962566103423978


class Initializer:
    """Base class: __call__ checks the arguments and rounds what `_draw` gives."""

    def __call__(self, shape, dtype=np.float32, rng=None):
        shape, dtype = _as_shape(shape), np.dtype(dtype)
        with eager_numpy():  # concrete values, even while a function is traced
            return np.asarray(self._draw(shape, dtype, _generator(rng)), dtype=dtype)

    def _draw(self, shape, dtype, rng):
        raise NotImplementedError

    def __repr__(self):
        arguments = ", ".join(f"{key}={value!r}" for key, value in vars(self).items())
        return f"{type(self).__name__}({arguments})"


class Constant(Initializer):
    """Every element `value` (any dtype)."""

    def __init__(self, value=0.0):
        self.value = value

    def _draw(self, shape, dtype, rng):
        return np.full(shape, self.value, dtype=dtype)


class _Random(Initializer):
    """An initializer of random floats, drawn by `_sample(shape, rng)` in float64."""

    def _draw(self, shape, dtype, rng):
        if dtype.kind != "f":
            raise TypeError(f"{self!r}: random values need a float dtype, not {dtype}")
        return self._sample(shape, rng)


class RandomNormal(_Random):
    """Normal with `mean` and `stddev`."""

    def __init__(self, mean=0.0, stddev=0.05):
        self.mean, self.stddev = _number(self, mean), _number(self, stddev)

    def _sample(self, shape, rng):
        return self.mean + self.stddev * rng.standard_normal(shape)


class RandomUniform(_Random):
    """Uniform on [minval, maxval)."""

    def __init__(self, minval=-0.05, maxval=0.05):
        self.minval, self.maxval = _number(self, minval), _number(self, maxval)

    def _sample(self, shape, rng):
        return rng.uniform(self.minval, self.maxval, shape)


class TruncatedNormal(_Random):
    """Normal with `mean` and `stddev`, values more than 2 stddev from the mean redrawn."""

    def __init__(self, mean=0.0, stddev=0.05):
        self.mean, self.stddev = _number(self, mean), _number(self, stddev)

    def _sample(self, shape, rng):
        return self.mean + self.stddev * _truncated_standard_normal(shape, rng)


class VarianceScaling(_Random):
    """Keras' VarianceScaling: variance scale / n, n = max(1, fan_in, fan_out or their
    mean, as `mode` says), from a normal truncated at 2 stddev ('truncated_normal'), a
    normal ('untruncated_normal') or a uniform ('uniform') distribution."""

    MODES = ("fan_in", "fan_out", "fan_avg")
    DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal"):
        self.scale = _number(self, scale)
        if self.scale <= 0:
            raise ValueError(f"VarianceScaling: scale must be positive, not {scale!r}")
        self.mode = _one_of(mode, self.MODES, "mode")
        self.distribution = _one_of(distribution, self.DISTRIBUTIONS, "distribution")

    def _sample(self, shape, rng):
        variance = self.scale / max(1.0, _fan(shape, self.mode))
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return rng.uniform(-limit, limit, shape)
        if self.distribution == "untruncated_normal":
            return math.sqrt(variance) * rng.standard_normal(shape)
        stddev = math.sqrt(variance) / TRUNCATED_STDDEV
        return stddev * _truncated_standard_normal(shape, rng)


class Orthogonal(_Random):
    """gain times a random orthogonal matrix (rows or columns orthonormal, whichever
    are fewer), of the shape (product of all axes but the last, last axis): the Q of
    the QR decomposition of a standard normal matrix, its signs fixed by R's diagonal
    so that Q is uniformly distributed."""

    def __init__(self, gain=1.0):
        self.gain = _number(self, gain)

    def _sample(self, shape, rng):
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: the shape must have at least 2 axes, got "
                             f"{shape}")
        rows, columns = math.prod(shape[:-1]), shape[-1]
        normal = rng.standard_normal((max(rows, columns), min(rows, columns)))
        q, r = np.linalg.qr(normal)
        q = q * np.sign(np.diag(r))
        q = q if rows >= columns else q.T
        return np.ascontiguousarray(self.gain * q.reshape(shape))


def compute_fans(shape):
    """(fan_in, fan_out) as Keras computes them: (1, 1) for a scalar, (n, n) for a
    vector, (in, out) for a matrix, and for (..., in, out) kernels both times the product
    of the leading (receptive field) dimensions."""
    shape = _as_shape(shape)
    if len(shape) < 2:
        return (shape[0], shape[0]) if shape else (1, 1)
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


def _fan(shape, mode):
    fan_in, fan_out = compute_fans(shape)
    return {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]


def _truncated_standard_normal(shape, rng):
    """Standard normal values, every one beyond +-2 redrawn until none is."""
    values = np.asarray(rng.standard_normal(shape), dtype=np.float64)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = rng.standard_normal(np.count_nonzero(outside))
        outside = np.abs(values) > 2
    return values


# --- argument checks ---------------------------------------------------------------------

def _as_shape(shape):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if not all(isinstance(n, (int, np.integer)) and n >= 0 for n in shape):
        raise ValueError(f"an initializer's shape must be non-negative integers, not "
                         f"{shape!r}")
    return tuple(int(n) for n in shape)


def _generator(rng):
    if rng is None:
        return _default_rng
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng("
                        f"seed)) or None, not {type(rng).__name__}")
    return rng


def _number(initializer, value):
    """value as a float: a parameter, not a shape passed where the initializer it makes
    will take one (truncated_normal((3, 4)) instead of truncated_normal()((3, 4)))."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float,
                                                                     np.number)):
        raise TypeError(f"{type(initializer).__name__}: parameters are numbers, not "
                        f"{value!r}; it makes an initializer, which is called with the "
                        f"shape: {type(initializer).__name__}(...)(shape)")
    return float(value)


def _one_of(value, allowed, what):
    if value not in allowed:
        raise ValueError(f"VarianceScaling: {what} {value!r} is not one of "
                         f"{', '.join(allowed)}")
    return value


# --- the parameter-free initializers, and the constructors under Keras' names ------------

zeros = Constant(0.0)
ones = Constant(1.0)
glorot_uniform = VarianceScaling(1.0, "fan_avg", "uniform")
glorot_normal = VarianceScaling(1.0, "fan_avg", "truncated_normal")
he_normal = VarianceScaling(2.0, "fan_in", "truncated_normal")
he_uniform = VarianceScaling(2.0, "fan_in", "uniform")
lecun_normal = VarianceScaling(1.0, "fan_in", "truncated_normal")
lecun_uniform = VarianceScaling(1.0, "fan_in", "uniform")
constant = Constant
random_normal = RandomNormal
random_uniform = RandomUniform
truncated_normal = TruncatedNormal
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal  # Glorot's other name

_BY_NAME = {"zeros": zeros, "ones": ones, "glorot_uniform": glorot_uniform,
            "glorot_normal": glorot_normal, "xavier_uniform": xavier_uniform,
            "xavier_normal": xavier_normal, "he_normal": he_normal,
            "he_uniform": he_uniform,
            "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform,
            "random_normal": RandomNormal(), "random_uniform": RandomUniform(),
            "truncated_normal": TruncatedNormal(), "orthogonal": Orthogonal()}


def get(identifier):
    """The initializer `identifier` names (Keras' names; the parametrized ones with
    Keras' defaults), `identifier` itself if it is a callable init(shape, dtype, rng),
    or the initializer a class such as truncated_normal makes with its defaults."""
    if isinstance(identifier, type):
        return identifier()  # a constructor, such as truncated_normal: its defaults
    if callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    raise ValueError(f"unknown initializer {identifier!r}: expected a callable "
                     f"init(shape, dtype, rng) or one of {', '.join(sorted(_BY_NAME))}")


__all__ = ["Constant", "DEFAULT_SEED", "Initializer", "Orthogonal", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "VarianceScaling", "compute_fans", "constant", "get",
           "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "lecun_normal",
           "lecun_uniform", "ones", "random_normal", "random_uniform", "truncated_normal",
           "xavier_normal", "xavier_uniform", "zeros"]
