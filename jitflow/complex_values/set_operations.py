"""The set functions of complex 1-d arrays, as NumPy 2.4 computes them: union1d,
intersect1d (with return_indices), setdiff1d and setxor1d, in NumPy's order of
complex numbers, on unique's pairwise comparisons (uniques.py).

NumPy takes each array's distinct values with unique (values only: its hash table,
which keeps the first value holding a NaN to occur), then compares them in the
common dtype, where a NaN equals nothing: intersect1d never holds one, setxor1d holds
each array's (so up to two), setdiff1d the first array's. union1d is unique of the
concatenation. Traced arrays take `size=` and `fill_value=` as unique's do.
"""
import numpy as np

from .. import numpy as jnp
from ..numpy import set_operations as real_sets
from ..numpy import uniques as real_uniques
from ..numpy._common import _strong
from ..numpy.selecting import _first_positions, _static_size
from .arrays import jnp_ravel
from .functions import IMPLEMENTATIONS, _complex, _named, as_complex
from .parts import is_complex, parts_of, result_dtype
from .uniques import _Pairs, _unique, in_order

_COUNTED, _FILL = "values the result holds", "the smallest value"


def _as_array(value, strong):
    """A list as the array NumPy makes of it; a Python number too if `strong` (NumPy's
    unique makes an array of each operand; concatenate keeps a number weak)."""
    if isinstance(value, (list, tuple)):
        return jnp.asarray(value)
    if strong and isinstance(value, (bool, int, float, complex)):
        return np.asarray(value)
    return _strong(value) if strong else value  # (a Python number passed in, traced)


def _flat(value, dtype):
    return jnp_ravel(as_complex(value, dtype), dtype)


def _joined(a, b, dtype):
    return IMPLEMENTATIONS["concatenate"]([_flat(a, dtype), _flat(b, dtype)])


@_named("union1d")
def union1d(ar1, ar2, *, size=None, fill_value=None):
    ar1, ar2 = _as_array(ar1, False), _as_array(ar2, False)
    dtype, _ = result_dtype(ar1, ar2)
    return _unique("union1d", _joined(ar1, ar2, dtype), size=size, fill_value=fill_value,
                   first_nan_occurring=True)


def _distinct_of_each(ar1, ar2, assume_unique):
    """(both arrays flattened and joined in the common dtype, the pairs of it, whether
    each element is its array's kept one of its value, [i, j] whether x[i] equals a
    kept x[j] (a NaN equal to nothing))."""
    ar1, ar2 = _as_array(ar1, True), _as_array(ar2, True)
    dtype, _ = result_dtype(ar1, ar2)
    a, b = _flat(ar1, dtype), _flat(ar2, dtype)
    both = IMPLEMENTATIONS["concatenate"]([a, b])
    if assume_unique:
        distinct = jnp.ones(both.shape, bool)
    else:
        distinct = jnp.concatenate([_Pairs(a, True).first_occurrences(True),
                                    _Pairs(b, True).first_occurrences(True)])
    pairs = _Pairs(both, equal_nan=False)
    n = both.shape[0]
    return both, pairs, distinct, jnp.logical_and(pairs.equal(),
                                                  jnp.reshape(distinct, (1, n)))


@_named("intersect1d")
def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted values in both arrays (ar1's of each pair NumPy's sort makes
    neighbours); with return_indices, each one's first index in each array."""
    ar1 = _as_array(ar1, True)
    both, pairs, distinct, equal_distinct = _distinct_of_each(ar1, ar2, assume_unique)
    n = both.shape[0]
    met_later = jnp.greater(real_uniques._count(
        jnp.logical_and(equal_distinct, _later(n)), 1), 0)
    keep = jnp.logical_and(distinct, met_later)
    size = _static_size("intersect1d", keep, size, _COUNTED, _FILL)
    kept = in_order("intersect1d", both, keep, pairs.stably_ahead(), size, fill_value)
    if not return_indices:
        return kept.values
    first_size = _flat(ar1, both.dtype).shape[0]
    in_second = _first_equal_index(both, pairs, first_size, kept)
    return kept.values, kept.indices, in_second


def _later(n):
    """[i, j]: j > i."""
    return jnp.greater(jnp.arange(n).reshape(1, n), jnp.arange(n).reshape(n, 1))


def _first_equal_index(both, pairs, first_size, kept):
    """For each kept value (an element of the first array), the index of the first
    element of the second array equal to it."""
    n, size = both.shape[0], kept.filled.shape[0]
    if first_size in (0, n) or size == 0:  # nothing in common
        return jnp.zeros(size, np.int64)
    second = jnp.arange(n) >= first_size
    equal = jnp.logical_and(pairs.equal(), jnp.reshape(second, (1, n)))
    index = jnp.argmax(equal, axis=1) - first_size
    placed = real_uniques._placed(index.astype(np.int64), kept.slot, size)
    return jnp.where(kept.filled, placed, placed[0])


@_named("setxor1d")
def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values in exactly one of the arrays: those met once among the two
    arrays' distinct values (so each array's NaN is one)."""
    both, pairs, distinct, equal_distinct = _distinct_of_each(ar1, ar2, assume_unique)
    met_once = jnp.less_equal(real_uniques._count(equal_distinct, 1), 1)  # (NaN: 0)
    keep = jnp.logical_and(distinct, met_once)
    size = _static_size("setxor1d", keep, size, _COUNTED, _FILL)
    return in_order("setxor1d", both, keep, pairs.stably_ahead(), size, fill_value).values


@_named("setdiff1d")
def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """ar1's sorted distinct values (its own dtype) that ar2 does not hold; with
    assume_unique, ar1's values in their order."""
    ar1, ar2 = _as_array(ar1, True), _as_array(ar2, True)
    if not is_complex(ar1):  # ar1's dtype, ar2 the complex one
        a = jnp.ravel(jnp.asarray(ar1))
        absent = IMPLEMENTATIONS["isin"](a, ar2, invert=True)
        return real_sets.setdiff_of(a, absent, assume_unique, size, fill_value)
    dtype, _ = result_dtype(ar1)
    a = _flat(ar1, dtype)
    absent = IMPLEMENTATIONS["isin"](a, ar2, invert=True)
    if assume_unique:
        return _in_their_order(a, absent, size, fill_value)
    pairs = _Pairs(a, equal_nan=True)
    keep = jnp.logical_and(pairs.first_occurrences(True), absent)
    size = _static_size("setdiff1d", keep, size, _COUNTED, _FILL)
    return in_order("setdiff1d", a, keep, pairs.ahead(), size, fill_value).values


def _in_their_order(a, absent, size, fill_value):
    size = _static_size("setdiff1d", absent, size, _COUNTED, _FILL)
    positions, filled = _first_positions(absent, size)
    parts = [jnp.take(part, positions) if a.shape[0] else jnp.zeros(size, part.dtype)
             for part in (a.real, a.imag)]
    if fill_value is None:
        fill = [jnp.where(filled[0], part[0], 0) if size else 0 for part in parts]
    else:
        fill = parts_of(fill_value, a.dtype)
    return _complex(*(jnp.where(filled, part, f) for part, f in zip(parts, fill)), a.dtype)
