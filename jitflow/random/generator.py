"""Random numbers that compile: jitflow.random.Generator(seed).

Each draw is a pure function of the seed, the number of draws before it and each
element's index (SplitMix64's mixing function, in wrapping int64 arithmetic), written
with jitflow.numpy (`stream_bits`; `Draws` builds the distributions on it). The draw
counter is a jitflow.Variable, so inside @jitflow.function every call draws new numbers,
and exactly the numbers an eager run of the same steps draws: a compiled training step
with dropout or sampled noise repeats bit for bit.
"""
import math

import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..variables import Variable

GOLDEN = 0x9E3779B97F4A7C15 - 2 ** 64  # SplitMix64's increment, as a signed int64
MIX = (0xBF58476D1CE4E5B9 - 2 ** 64, 0x94D049BB133111EB - 2 ** 64)
SHIFTS = (30, 27, 31)
FRACTION_BITS = {np.dtype(np.float32): 24, np.dtype(np.float64): 53}


class Draws:
    """Distributions built on `bits(shape)`: uniformly distributed int64 values, new
    ones at every call."""

    def bits(self, shape):
        raise NotImplementedError

    def uniform(self, shape, dtype=np.float32, low=0.0, high=1.0):
        """Uniform values in [low, high)."""
        dtype = float_dtype(dtype, "Generator.uniform")
        fraction = FRACTION_BITS[dtype]
        unit = jnp.asarray(_shift_right(self.bits(shape), 64 - fraction), dtype=dtype) * \
            (2.0 ** -fraction)
        return unit if (low, high) == (0.0, 1.0) else low + (high - low) * unit

    def normal(self, shape, dtype=np.float32, mean=0.0, stddev=1.0):
        """Normally distributed values (Box-Muller on two uniform draws)."""
        dtype = float_dtype(dtype, "Generator.normal")
        radius = jnp.sqrt(-2.0 * jnp.log1p(-self.uniform(shape, dtype)))  # 1-u in (0, 1]
        angle = (2.0 * np.pi) * self.uniform(shape, dtype)
        standard = radius * jnp.cos(angle)
        return standard if (mean, stddev) == (0.0, 1.0) else mean + stddev * standard

    def exponential(self, shape, dtype=np.float32):
        """Exponentially distributed values of mean 1 (-log(1 - u), finite)."""
        return -jnp.log1p(-self.uniform(shape, dtype))

    def bernoulli(self, p, shape):
        """Booleans, True with probability p."""
        return self.uniform(shape, np.float64) < p


class Generator(Draws):
    def __init__(self, seed=0, name="generator"):
        self.seed = int(seed)
        self.draws = Variable(np.int64(0), name=f"{name}/draws", trainable=False)

    def bits(self, shape):
        """Uniformly distributed int64 values of `shape`, and a new draw."""
        shape = _shape(shape)
        draw = self.draws.value
        self.draws.assign_add(1)
        return stream_bits(_mix_seed(self.seed), draw, shape)


def stream_bits(key, draw, shape):
    """Draw number `draw` (an int64) of the stream `key` (a mixed seed, an int64): one
    SplitMix64 output per element of `shape`. Either may be traced."""
    draw = jnp.broadcast_to(draw, shape)  # arrays wrap silently
    index = jnp.reshape(jnp.arange(math.prod(shape), dtype=np.int64), shape)
    stream = _mix(draw * GOLDEN + key)
    return _mix(stream + (index + 1) * GOLDEN)


def mix_seed(seed):
    """The stream of an int64 seed that may be traced (_mix_seed's work, with jnp)."""
    return _mix(jnp.asarray(seed, dtype=np.int64) * GOLDEN)


def _mix(z):
    """SplitMix64's finalizer: three xor-shifts and two multiplications, wrapping."""
    z = jnp.bitwise_xor(z, _shift_right(z, SHIFTS[0])) * MIX[0]
    z = jnp.bitwise_xor(z, _shift_right(z, SHIFTS[1])) * MIX[1]
    return jnp.bitwise_xor(z, _shift_right(z, SHIFTS[2]))


def _mix_seed(seed):
    """The seed's own starting point, mixed in Python (it is a constant)."""
    z = (seed * (GOLDEN + 2 ** 64)) % 2 ** 64
    for shift, factor in zip(SHIFTS, (*MIX, None)):
        z ^= z >> shift
        z = z if factor is None else (z * (factor + 2 ** 64)) % 2 ** 64
    return z - 2 ** 64 if z >= 2 ** 63 else z


def _shift_right(z, k):
    """The logical right shift of int64 values: floor division by 2**k is the arithmetic
    shift; the mask clears the copies of the sign bit."""
    return jnp.bitwise_and(jnp.floor_divide(z, 2 ** k), 2 ** (64 - k) - 1)


def _shape(shape):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not all(isinstance(n, (int, np.integer)) and n >= 0 for n in shape):
        raise ValueError(at_user_line(f"Generator: a shape must be non-negative ints, got "
                                      f"{shape!r}"))
    return tuple(int(n) for n in shape)


def float_dtype(dtype, what):
    """`dtype` as a NumPy dtype, if it is one random floats are drawn in."""
    dtype = np.dtype(dtype)
    if dtype not in FRACTION_BITS:
        raise TypeError(at_user_line(f"{what}: dtype must be float32 or float64, got "
                                     f"{dtype}"))
    return dtype
