"""The set functions of NumPy's 1-d arrays: intersect1d, union1d, setdiff1d, setxor1d.

Built on unique's way (uniques.py): every element is compared with every other, which
decides which elements are kept and each one's place in NumPy's sorted order (NaN
last); one scatter puts them in place. As NumPy does, intersect1d and setxor1d take
each array's distinct values in its own dtype, then compare them in the common dtype:
intersect1d keeps a value met twice there (the first of the two), setxor1d one met
once (two of one array's values that the cast makes equal count as a meeting, as in
NumPy). union1d is unique of the concatenation; setdiff1d keeps the first array's
distinct values (its dtype) that the second does not hold. assume_unique=True skips nothing: the results agree
with NumPy's wherever the arrays are unique, as NumPy asks, and setdiff1d then keeps
the first array's order, as NumPy's does.

How many values a result holds is known only at run time, so traced arrays take a
static `size=` as unique's do: the first `size` values, and past the count
`fill_value` (by default the result's first value: the smallest; 0 for an empty
result) and, for intersect1d's return_indices, the first value's indices.
"""
import numpy as _np

from .. import ops
from ..trace import Tracer
from ._common import _dtype_of, _shape
from .creation import asarray
from .membership import isin
from .reductions import argmax
from .selecting import _fills, _first_positions, _static_size
from .shapes import concatenate, ravel, reshape
from .uniques import (_count, _first_occurrences, _placed, _sorted_kept, _sorted_slots,
                      _unique)

_COUNTED = "values the result holds"
_FILL = "the smallest value"


def _flat_in_common_dtype(ar1, ar2):
    a, b = ravel(asarray(ar1)), ravel(asarray(ar2))
    common = _np.result_type(_dtype_of(a), _dtype_of(b))
    return ops.cast(a, common), ops.cast(b, common)


def _sorted_values(name, x, keep, size, fill_value, equal_nan=True, stable=False):
    """(the kept elements of the 1-d `x` in sorted order in `size` slots, their
    indices in x, the slots, whether each slot is filled)."""
    size = _static_size(name, keep, size, _COUNTED, _FILL)
    _, slot, filled = _sorted_slots(x, keep, size, equal_nan, stable)
    values, indices = _sorted_kept(name, x, slot, filled, size, fill_value)
    return values, indices, slot, filled


def _distinct_of_each(name, ar1, ar2):
    """NumPy's concatenation of the two arrays' distinct values (each array's own
    unique, NaNs one value), in the common dtype: (the elements of both flattened,
    whether each is its value's first occurrence in its own array, [i, j] whether
    elements i and j are equal in the common dtype (NaN equal to nothing))."""
    a, b = ravel(asarray(ar1)), ravel(asarray(ar2))
    common = _np.result_type(_dtype_of(a), _dtype_of(b))
    both = concatenate([ops.cast(a, common), ops.cast(b, common)])
    distinct = concatenate([_first_occurrences(name, a)[1], _first_occurrences(name, b)[1]])
    n = _shape(both)[0]
    equal = ops.equal(reshape(both, (n, 1)), reshape(both, (1, n)))
    return both, distinct, ops.logical_and(equal, reshape(distinct, (1, n)))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted values in both arrays; with return_indices, the index of each one's
    first occurrence in each array. As NumPy finds them: values that meet twice among
    the two arrays' distinct values in the common dtype (so also two of one array's
    that the cast to it makes equal)."""
    if return_indices:
        return _intersect_with_indices(ar1, ar2, size, fill_value)
    both, distinct, equal_distinct = _distinct_of_each("intersect1d", ar1, ar2)
    n = _shape(both)[0]
    later = ops.greater(ops.iota((1, n), _np.int64, axis=1),
                        ops.iota((n, 1), _np.int64, axis=0))
    # NumPy keeps the first of each pair its sort makes neighbours: ar1's element
    met_later = ops.greater(_count(ops.logical_and(equal_distinct, later), 1),
                            _np.int64(0))
    keep = ops.logical_and(distinct, met_later)
    return _sorted_values("intersect1d", both, keep, size, fill_value, stable=True)[0]


def _intersect_with_indices(ar1, ar2, size, fill_value):
    a, b = _flat_in_common_dtype(ar1, ar2)
    _, first = _first_occurrences("intersect1d", a)
    keep = ops.logical_and(first, isin(a, b))
    values, index1, slot, filled = _sorted_values("intersect1d", a, keep, size,
                                                  fill_value)
    return values, index1, _first_in_other(a, b, slot, filled)


def _first_in_other(a, b, slot, filled):
    """The index in b of the first element equal to each placed element of a."""
    n, m = _shape(a)[0], _shape(b)[0]
    size = _shape(filled)[0]
    if n == 0 or m == 0 or size == 0:
        return ops.broadcast_to(_np.int64(0), (size,))
    equal = ops.equal(reshape(a, (n, 1)), reshape(b, (1, m)))
    index = _placed(ops.cast(argmax(equal, axis=1), _np.int64), slot, size)
    return ops.where(filled, index, index[0])


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted values in either array (in the dtype NumPy's concatenation of the two
    gives, where a Python number is weakly typed)."""
    dtype = _np.concatenate([_dtype_probe(ar1), _dtype_probe(ar2)], axis=None).dtype
    both = concatenate([ops.cast(ravel(asarray(a)), dtype) for a in (ar1, ar2)])
    return _unique("union1d", both, size=size, fill_value=fill_value)


def _dtype_probe(a):
    """What stands for `a` when NumPy decides the dtype of a concatenation: a Python
    number as it is (a weakly typed traced one as a number of its kind), an array as
    an empty one of its dtype."""
    if isinstance(a, (int, float, bool)):
        return a
    if isinstance(a, Tracer) and a.type.weak:
        return _dtype_of(a).type(0).item()
    return _np.empty(0, _dtype_of(asarray(a)))


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values of ar1 not in ar2 (with assume_unique, in ar1's order)."""
    a = ravel(asarray(ar1))
    return setdiff_of(a, isin(a, ar2, invert=True), assume_unique, size, fill_value)


def setdiff_of(a, absent, assume_unique, size, fill_value):
    """setdiff1d of the 1-d `a`, whose elements `absent` the second array does not
    hold (complex_values/set_operations.py finds them for a complex second array)."""
    if not assume_unique:
        keep = ops.logical_and(_first_occurrences("setdiff1d", a)[1], absent)
        return _sorted_values("setdiff1d", a, keep, size, fill_value)[0]
    size = _static_size("setdiff1d", absent, size, _COUNTED, _FILL)
    positions, filled = _first_positions(absent, size)
    if _shape(a)[0] == 0 or size == 0:
        return ops.broadcast_to(_fills("setdiff1d", fill_value, 1, _dtype_of(a))[0],
                                (size,))
    taken = ops.gather(a, positions, axis=0)
    if fill_value is None:
        fill = ops.where(filled[0], taken[0], _np.zeros((), _dtype_of(a)))
    else:
        (fill,) = _fills("setdiff1d", fill_value, 1, _dtype_of(a))
    return ops.where(filled, taken, fill)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values in exactly one of the arrays: as NumPy finds them, those met
    once among the two arrays' distinct values in the common dtype (so a NaN in each
    array gives two NaNs, NaN being equal to nothing)."""
    both, distinct, equal_distinct = _distinct_of_each("setxor1d", ar1, ar2)
    met_once = ops.less_equal(_count(equal_distinct, 1), _np.int64(1))  # (NaN: 0)
    keep = ops.logical_and(distinct, met_once)
    return _sorted_values("setxor1d", both, keep, size, fill_value, stable=True)[0]


__all__ = ["intersect1d", "setdiff1d", "setxor1d", "union1d"]
