"""NumPy's random methods, traced: each takes the arguments NumPy's method takes and
draws from a Draws (numpy_rng.py hands it one per generator and trace).

Shapes follow NumPy's size= rules, dtypes NumPy's (float64 unless dtype= says float32;
int64 for integers), and where NumPy returns a Python number (size=None, scalar
parameters) the result is weakly typed, as that number would be. The numbers themselves
are jitflow's (generator.py), not NumPy's bit stream. Parameters may be traced where
NumPy takes arrays of them (loc, scale, p, ...); the integer bounds and counts, which
decide ranges and shapes, must be constants. Parameters that do not broadcast to size=
are an error for every method (NumPy's integers lets such bounds pass).

NumPy checks parameter values (scale >= 0, 0 <= p <= 1, probabilities that sum to 1);
constant ones are checked here the same way. Traced ones cannot raise: a negative scale
gives NaN, binomial's p outside [0, 1] the count -1, and choice's p is normalized by its
sum, unchecked.
"""
import math
import operator

import numpy as np

from .. import numpy as jnp
from .. import ops
from ..errors import at_user_line
from ..trace import Tracer
from .generator import _shift_right, float_dtype

INTEGERS = (np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_))
WIDEST_RANGE = 2 ** 32  # a 63-bit draw modulo a range this wide is uniform to 2**-31
MOST_TRIALS = 64  # binomial draws a uniform number per trial
LONGEST_PERMUTATION = 4096  # ranking compares every pair: 16.8 million comparisons


# --- Generator's methods ------------------------------------------------------------
def random(draws, size=None, dtype=np.float64, out=None):
    _no_out("random", out)
    dtype = float_dtype(dtype, "random")
    return _numpy_result(draws.uniform(_shape(size, (), "random"), dtype), size)


def standard_normal(draws, size=None, dtype=np.float64, out=None):
    _no_out("standard_normal", out)
    dtype = float_dtype(dtype, "standard_normal")
    return _numpy_result(draws.normal(_shape(size, (), "standard_normal"), dtype), size)


def standard_exponential(draws, size=None, dtype=np.float64, method="zig", out=None):
    _no_out("standard_exponential", out)
    dtype = float_dtype(dtype, "standard_exponential")
    shape = _shape(size, (), "standard_exponential")
    return _numpy_result(draws.exponential(shape, dtype), size)


def normal(draws, loc=0.0, scale=1.0, size=None):
    loc, scale = _float_parameter(loc), _nonnegative(scale, "normal", "scale")
    shape = _shape(size, (loc, scale), "normal")
    return _numpy_result(loc + scale * draws.normal(shape, np.float64), size)


def uniform(draws, low=0.0, high=1.0, size=None):
    low, high = _float_parameter(low), _float_parameter(high)
    shape = _shape(size, (low, high), "uniform")
    return _numpy_result(low + (high - low) * draws.uniform(shape, np.float64), size)


def exponential(draws, scale=1.0, size=None):
    scale = _nonnegative(scale, "exponential", "scale")
    shape = _shape(size, (scale,), "exponential")
    return _numpy_result(scale * draws.exponential(shape, np.float64), size)


def integers(draws, low, high=None, size=None, dtype=np.int64, endpoint=False):
    return _integers(draws, low, high, size, dtype, endpoint, "integers", weak=False)


def binomial(draws, n, p, size=None):
    """Bernoulli trials counted: n must be constant (each count up to 64); p may be
    traced."""
    trials = _integer_bound(n, "binomial", "n")
    if np.any(trials < 0):
        raise ValueError(at_user_line("binomial: n < 0"))
    if np.any(trials > MOST_TRIALS):
        raise _unsupported_value("binomial", "n above 64", f"n up to {MOST_TRIALS}")
    trials = np.asarray(trials, dtype=np.int64)
    p = _probability(p, "binomial")
    shape = _shape(size, (trials, p), "binomial")
    most = int(trials.max(initial=0))
    # trial k of each count is drawn; it counts if it is below that count's n
    hit = draws.uniform(shape + (most,), np.float64) < _trailing_axis(p)
    counted = jnp.arange(most, dtype=np.int64) < _trailing_axis(trials)
    hits = jnp.sum(jnp.asarray(hit & counted, dtype=np.int64), axis=-1)
    if isinstance(p, Tracer):  # a p NumPy would refuse: an impossible count
        hits = jnp.where(jnp.isnan(p), -1, hits)
    return _numpy_result(hits, size)


def _trailing_axis(x):
    return jnp.reshape(x, jnp.shape(x) + (1,))


def choice(draws, a, size=None, replace=True, p=None, axis=0, shuffle=True):
    return _choice(draws, a, size, replace, p, axis, "choice")


def permutation(draws, x, axis=0):
    if _is_count(x):
        return _random_order(draws, operator.index(x), "permutation")
    x = x if isinstance(x, Tracer) else np.asarray(x)
    if jnp.ndim(x) == 0:
        raise ValueError(at_user_line("permutation: x must be an integer or at least "
                                      "1-dimensional"))
    axis = axis % jnp.ndim(x)
    return jnp.take(x, _random_order(draws, jnp.shape(x)[axis], "permutation"), axis=axis)


def shuffle(draws, x, axis=0):
    raise TypeError(at_user_line(
        "shuffle(x) cannot be traced: it shuffles x in place, and traced values are not "
        "written in place; use x = rng.permutation(x) instead"))


GENERATOR_METHODS = {
    "random": random, "standard_normal": standard_normal, "normal": normal,
    "uniform": uniform, "integers": integers, "exponential": exponential,
    "standard_exponential": standard_exponential, "binomial": binomial,
    "choice": choice, "permutation": permutation, "shuffle": shuffle,
}


# --- RandomState's methods (and np.random's functions, which are the global one's) ----
def random_sample(draws, size=None):
    return random(draws, size)


def rand(draws, *dims):
    return random(draws, dims or None)


def randn(draws, *dims):
    return standard_normal(draws, dims or None)


def legacy_standard_normal(draws, size=None):
    return standard_normal(draws, size)


def legacy_standard_exponential(draws, size=None):
    return standard_exponential(draws, size)


def randint(draws, low, high=None, size=None, dtype=int):
    # The default dtype `int` gives Python ints where NumPy returns one number
    weak = dtype is int
    return _integers(draws, low, high, size, np.int64 if weak else dtype, False, "randint",
                     weak=weak)


def legacy_choice(draws, a, size=None, replace=True, p=None):
    if not isinstance(a, Tracer) and np.ndim(a) > 1:
        raise ValueError(at_user_line("choice: a must be 1-dimensional"))
    return _choice(draws, a, size, replace, p, 0, "choice")


RANDOM_STATE_METHODS = {
    "random_sample": random_sample, "random": random_sample, "rand": rand, "randn": randn,
    "standard_normal": legacy_standard_normal, "normal": normal, "uniform": uniform,
    "randint": randint, "exponential": exponential,
    "standard_exponential": legacy_standard_exponential, "binomial": binomial,
    "choice": legacy_choice, "permutation": lambda draws, x: permutation(draws, x),
    "shuffle": lambda draws, x: shuffle(draws, x),
}


# --- integers and choices -------------------------------------------------------------
def _integers(draws, low, high, size, dtype, endpoint, what, weak):
    dtype = _integer_dtype(dtype, what)
    if high is None:
        low, high = 0, low
    low, high = _integer_bound(low, what, "low"), _integer_bound(high, what, "high")
    high = high + 1 if endpoint else high
    shape = _shape(size, (low, high), what)
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)  # NumPy checks no bounds for no values
    _check_range(low, high, dtype, what)
    values = _below(draws, np.asarray(high - low, dtype=np.int64), shape) + \
        np.asarray(low, dtype=np.int64)
    result = jnp.asarray(values, dtype=dtype)
    return _numpy_result(result, size) if weak else result


def _below(draws, count, shape):
    """Integers uniform in [0, count) (count a constant array of values up to 2**32):
    the 63 high bits of a draw modulo the count."""
    return jnp.remainder(_shift_right(draws.bits(shape), 1), count)


def _check_range(low, high, dtype, what):
    info = np.iinfo(dtype) if dtype.kind != "b" else None
    lowest, highest = (0, 1) if info is None else (info.min, info.max)
    if np.any(low < lowest):
        raise ValueError(at_user_line(f"{what}: low is out of bounds for {dtype}"))
    if np.any(high - 1 > highest):
        raise ValueError(at_user_line(f"{what}: high is out of bounds for {dtype}"))
    if np.any(low >= high):
        raise ValueError(at_user_line(f"{what}: low >= high"))
    if np.any(high - low > WIDEST_RANGE):
        raise _unsupported_value(what, "a range wider than 2**32",
                                 "ranges of at most 2**32 values")


def _choice(draws, a, size, replace, p, axis, what):
    population = _population(a, axis, what)
    shape = _shape(size, (), what)
    count = int(np.prod(shape, dtype=np.int64))
    if population == 0 and count > 0:
        raise ValueError(at_user_line(f"{what}: a cannot be empty unless no samples are "
                                      f"taken"))
    if not replace and count > 1:
        index = _sample_without_replacement(draws, population, shape, p, what)
    elif p is None:
        index = _below(draws, np.asarray(max(population, 1), np.int64), shape)
    else:
        index = _by_probability(draws, _probabilities(p, population, what), shape)
    if _is_count(a):
        return _numpy_result(index, size)
    return jnp.take(a, index, axis=axis)


def _sample_without_replacement(draws, population, shape, p, what):
    """The first values of a random order of the population."""
    if p is not None:
        raise _unsupported_value(what, "replace=False and p=", "replace=False without p")
    count = int(np.prod(shape, dtype=np.int64))
    if count > population:
        raise ValueError(at_user_line(f"{what}: cannot take a larger sample than the "
                                      f"population ({population}) when replace is False"))
    return jnp.reshape(_random_order(draws, population, what)[:count], shape)


def _random_order(draws, count, what):
    """A uniformly random permutation of range(count). Each index gets a random 63-bit
    key whose low bits are replaced by the index, so no two keys are equal (random parts
    that tie, which the index then orders, have a chance below 2**-27); its rank among
    the keys is its place. There is no sort primitive: ranking compares all pairs."""
    if count > LONGEST_PERMUTATION:
        raise _unsupported_value(what, f"{count} items",
                                 f"permutations of up to {LONGEST_PERMUTATION} items")
    index = jnp.arange(count, dtype=np.int64)
    room = 2 ** max(1, (count - 1).bit_length())
    keys = jnp.floor_divide(_shift_right(draws.bits((count,)), 1), room) * room + index
    rank = jnp.sum(jnp.asarray(keys[None, :] < keys[:, None], dtype=np.int64), axis=1)
    placed = rank[:, None] == index[None, :]  # placed[i, k]: index i goes to place k
    return jnp.sum(jnp.where(placed, index[:, None], 0), axis=0)


def _by_probability(draws, p, shape):
    """The index whose cumulative probability first exceeds a uniform draw (NumPy's
    searchsorted(cdf, u, side='right'), as a count of the cdf values <= u)."""
    cdf = jnp.cumsum(p)
    cdf = cdf / cdf[-1]
    unit = draws.uniform(shape, np.float64)
    below = jnp.reshape(unit, jnp.shape(unit) + (1,)) >= cdf
    return jnp.sum(jnp.asarray(below, dtype=np.int64), axis=-1)


def _population(a, axis, what):
    if _is_count(a):
        count = operator.index(a)
        if count < 0:
            raise ValueError(at_user_line(f"{what}: a must be a positive integer"))
        return count
    if jnp.ndim(a) == 0:
        raise ValueError(at_user_line(f"{what}: a must be a sequence or an integer, not a "
                                      f"0-d array"))
    return jnp.shape(a)[axis]


def _is_count(a):
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def _probabilities(p, count, what):
    if not isinstance(p, Tracer):
        p = np.asarray(p, dtype=np.float64)
        _check_probabilities(p, count, what)
    elif jnp.shape(p) != (count,):
        raise ValueError(at_user_line(f"{what}: p must be 1-dimensional and as long as a "
                                      f"({count}), got shape {jnp.shape(p)}"))
    return jnp.asarray(p, dtype=np.float64)


def _check_probabilities(p, count, what):
    if p.shape != (count,):
        raise ValueError(at_user_line(f"{what}: p must be 1-dimensional and as long as a "
                                      f"({count}), got shape {p.shape}"))
    if not (p >= 0).all():
        raise ValueError(at_user_line(f"{what}: probabilities are not non-negative"))
    if abs(p.sum() - 1.0) > np.sqrt(np.finfo(np.float64).eps):
        raise ValueError(at_user_line(f"{what}: probabilities do not sum to 1"))


# --- parameters -----------------------------------------------------------------------
def _float_parameter(value):
    return jnp.asarray(value, dtype=np.float64)


def _nonnegative(value, what, name):
    """A scale: a constant is checked as NumPy checks it; a traced one gives NaN where it
    is negative (NumPy raises, which compiled code cannot do)."""
    if not isinstance(value, Tracer):
        value = np.asarray(value, dtype=np.float64)
        if (value < 0).any() or np.isnan(value).any():
            raise ValueError(at_user_line(f"{what}: {name} < 0"))
        return value
    value = jnp.asarray(value, dtype=np.float64)
    return jnp.where(value >= 0, value, np.nan)


def _probability(value, what):
    """A probability: checked when constant, NaN outside [0, 1] when traced."""
    if not isinstance(value, Tracer):
        value = np.asarray(value, dtype=np.float64)
        if not ((value >= 0) & (value <= 1)).all():
            raise ValueError(at_user_line(f"{what}: p < 0, p > 1 or p is NaN"))
        return value
    value = jnp.asarray(value, dtype=np.float64)
    return jnp.where((value >= 0) & (value <= 1), value, np.nan)


def _integer_bound(value, what, name):
    if isinstance(value, Tracer):
        raise TypeError(at_user_line(
            f"{what}: {name} is a traced value; in compiled code the bounds must be "
            f"constants (they decide the range drawn from)"))
    array = np.asarray(value)
    if array.dtype.kind not in "biu":
        raise TypeError(at_user_line(f"{what}: {name} must be an integer, got "
                                     f"{array.dtype}"))
    return array.astype(object)  # Python ints: no wrapping while the range is checked


# --- shapes and dtypes ----------------------------------------------------------------
def _shape(size, parameters, what):
    """NumPy's size= rule: None gives the parameters' broadcast shape; otherwise `size`
    is the shape, and the parameters must broadcast to it."""
    shapes = [jnp.shape(p) for p in parameters]
    try:
        broadcast = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(at_user_line(f"{what}: the parameters' shapes {shapes} do not "
                                      f"broadcast together")) from None
    if size is None:
        return broadcast
    try:
        shape = (operator.index(size),) if np.ndim(size) == 0 else \
            tuple(operator.index(n) for n in size)
    except TypeError:
        raise TypeError(at_user_line(f"{what}: size must be an int or a tuple of ints, "
                                     f"got {size!r}")) from None
    if any(n < 0 for n in shape):
        raise ValueError(at_user_line(f"{what}: negative dimensions are not allowed "
                                      f"(size={size!r})"))
    if np.broadcast_shapes(broadcast, shape) != shape:
        raise ValueError(at_user_line(f"{what}: the parameters' shapes {shapes} do not "
                                      f"broadcast to size {shape}"))
    return shape


def _numpy_result(value, size):
    """Where NumPy returns a Python number (size=None and a 0-d result), a weakly typed
    value, as that number is in NumPy's promotion rules."""
    if size is not None or jnp.ndim(value) != 0:
        return value
    dtype = np.float64 if value.dtype.kind == "f" else np.int64
    return ops.cast(value, dtype, weak=True)


def _integer_dtype(dtype, what):
    dtype = np.dtype(dtype)
    if dtype not in INTEGERS:
        raise TypeError(at_user_line(
            f"{what}: dtype {dtype} is not supported in compiled code (jitflow has "
            f"{', '.join(map(str, INTEGERS))})"))
    return dtype


def _no_out(what, out):
    if out is not None:
        raise TypeError(at_user_line(f"{what}(out=...) cannot be traced: traced values "
                                     f"are not written in place; use the result"))


def _unsupported_value(what, given, supported):
    return TypeError(at_user_line(f"{what} with {given} cannot be traced; compiled code "
                                  f"supports {supported} (or draw outside the compiled "
                                  f"function and pass the result in)"))
