"""unique of complex values, and its array-API forms (unique_values, unique_counts,
unique_inverse, unique_all), as NumPy 2 computes them: the distinct values in NumPy's
order of complex numbers, every element compared with every other as the real unique
does (numpy/uniques.py: at most MAX_ELEMENTS elements, `size=` when traced).

With equal_nan=True every value holding a NaN (in either part) is one value, and
which of them stands for the rest depends on NumPy's path. Asked for the values alone,
NumPy finds them with a hash table, which keeps the first to occur; asked for indices,
the inverse or counts, it sorts, and keeps the first in its order of complex numbers
(R + nanj before nan + Rj, each by R; among equal ones the first to occur). Both
are followed here.
"""
from collections import namedtuple

import numpy as np

from .. import numpy as jnp
from .. import ops
from ..errors import at_user_line
from ..numpy import uniques as real_uniques
from ..numpy.selecting import _static_size
from .arrays import jnp_ravel
from .functions import _complex, _named, as_complex
from .statistics import _sorts_before


@_named("unique")
def unique(ar, return_index=False, return_inverse=False, return_counts=False,
           axis=None, *, equal_nan=True, sorted=True, size=None, fill_value=None):
    if axis is not None:
        raise NotImplementedError(at_user_line(
            "jitflow.numpy.unique of complex values: axis= is not supported (unique of "
            "the flattened array is)"))
    hashed = not (return_index or return_inverse or return_counts)
    return _unique("unique", ar, return_index, return_inverse, return_counts, equal_nan,
                   size, fill_value, first_nan_occurring=hashed)


@_named("unique_values")
def unique_values(x, *, size=None, fill_value=None):
    return _unique("unique_values", x, equal_nan=False, size=size, fill_value=fill_value)


@_named("unique_counts")
def unique_counts(x, *, size=None, fill_value=None):
    return real_uniques.UniqueCountsResult(*_unique(
        "unique_counts", x, return_counts=True, equal_nan=False, size=size,
        fill_value=fill_value))


@_named("unique_inverse")
def unique_inverse(x, *, size=None, fill_value=None):
    return real_uniques.UniqueInverseResult(*_unique(
        "unique_inverse", x, return_inverse=True, equal_nan=False, size=size,
        fill_value=fill_value))


@_named("unique_all")
def unique_all(x, *, size=None, fill_value=None):
    return real_uniques.UniqueAllResult(*_unique(
        "unique_all", x, True, True, True, equal_nan=False, size=size,
        fill_value=fill_value))


def _unique(name, ar, return_index=False, return_inverse=False, return_counts=False,
            equal_nan=True, size=None, fill_value=None, first_nan_occurring=False):
    z = as_complex(ar)
    x = jnp_ravel(z, z.dtype)
    n = x.shape[0]
    if n > real_uniques.MAX_ELEMENTS:
        raise NotImplementedError(at_user_line(
            f"jitflow.numpy.{name} of {n} complex elements: without a sort it compares "
            f"every pair, which jitflow does for at most {real_uniques.MAX_ELEMENTS}"))
    pairs = _Pairs(x, equal_nan)
    first = pairs.first_occurrences(first_nan_occurring)
    size = _static_size(name, first, size, "distinct values there are", "the smallest value")
    kept = in_order(name, x, first, pairs.ahead(), size, fill_value)
    results = [kept.values]
    if return_index:
        results.append(kept.indices)
    if return_inverse:
        results.append(jnp.reshape(kept.place, z.shape))
    if return_counts:
        counts = real_uniques._placed(real_uniques._count(pairs.same, 1), kept.slot, size)
        results.append(jnp.where(kept.filled, counts, np.int64(0)))
    return results[0] if len(results) == 1 else tuple(results)


Kept = namedtuple("Kept", "values indices place slot filled")


def in_order(name, x, keep, ahead, size, fill_value):
    """The kept elements of the 1-d complex `x` in `size` slots, in the order `ahead`
    ([i, j]: x[j] goes before x[i]) gives: their values (past the count fill_value, by
    default the first value), their indices in x (past the count the first's), each
    element's place among the kept, its slot (`size` when not kept or past the size),
    and whether each slot is filled."""
    n = x.shape[0]
    place = real_uniques._count(jnp.logical_and(ahead, jnp.reshape(keep, (1, n))), 1)
    slot = jnp.where(jnp.logical_and(keep, jnp.less(place, size)), place, size)
    filled = jnp.less(ops.iota((size,), np.int64), real_uniques._count(keep, 0))
    values = _kept_values(name, x, slot, filled, size, fill_value)
    indices = real_uniques._placed(ops.iota((n,), np.int64), slot, size)
    indices = jnp.where(filled, indices, indices[0] if n and size else 0)
    return Kept(values, indices, place, slot, filled)


class _Pairs:
    """Every element of the 1-d complex `x` against every other: [i, j] compares x[i]
    (a column) with x[j] (a row)."""

    def __init__(self, x, equal_nan):
        n = x.shape[0]
        self.column = _complex(jnp.reshape(x.real, (n, 1)), jnp.reshape(x.imag, (n, 1)),
                               x.dtype)
        self.row = _complex(jnp.reshape(x.real, (1, n)), jnp.reshape(x.imag, (1, n)),
                            x.dtype)
        nan = jnp.logical_or(jnp.isnan(x.real), jnp.isnan(x.imag))
        self.both_nan = jnp.logical_and(jnp.reshape(nan, (n, 1)), jnp.reshape(nan, (1, n)))
        self.earlier = jnp.less(ops.iota((1, n), np.int64, axis=1),
                                ops.iota((n, 1), np.int64, axis=0))
        self.before = _sorts_before(self.row, self.column)  # x[j] sorts before x[i]
        self.alike = jnp.logical_not(jnp.logical_or(
            self.before, _sorts_before(self.column, self.row)))
        self.equal_nan = equal_nan
        self.same = self._same(n)

    def _same(self, n):
        """Whether x[i] and x[j] are one value: equal parts; with equal_nan every NaN
        the same, without it each NaN its own (only itself)."""
        same = self.equal()
        if self.equal_nan:
            return jnp.logical_or(same, self.both_nan)
        itself = jnp.equal(ops.iota((n, 1), np.int64, axis=0),
                           ops.iota((1, n), np.int64, axis=1))
        return jnp.logical_or(same, itself)

    def equal(self):
        """Whether x[i] == x[j] as complex numbers (a NaN equal to nothing)."""
        return jnp.logical_and(jnp.equal(self.column.real, self.row.real),
                               jnp.equal(self.column.imag, self.row.imag))

    def first_occurrences(self, first_nan_occurring):
        """Whether each element is the one kept of its value: the first to occur, or
        for the NaNs (unless first_nan_occurring) the first in sorted order."""
        precedes = self.earlier if first_nan_occurring else self.stably_ahead()
        follows_one = real_uniques._count(jnp.logical_and(self.same, precedes), 1)
        return jnp.equal(follows_one, 0)

    def stably_ahead(self):
        """Whether x[j] goes before x[i] in a stable sort: NumPy's order, then the
        order they occur in."""
        return jnp.logical_or(self.before, jnp.logical_and(self.alike, self.earlier))

    def ahead(self):
        """Whether x[j]'s value goes before x[i]'s in the result: NumPy's order, the
        NaNs one value with equal_nan, else each its own in a stable sort's order."""
        if self.equal_nan:
            return jnp.logical_and(self.before, jnp.logical_not(self.both_nan))
        tied_nans = jnp.logical_and(self.both_nan, jnp.logical_and(self.alike, self.earlier))
        return jnp.logical_or(self.before, tied_nans)


def _kept_values(name, x, slot, filled, size, fill_value):
    """The kept values in their slots; past the count, fill_value (by default the
    smallest value kept)."""
    real = real_uniques._placed(x.real, slot, size)
    imag = real_uniques._placed(x.imag, slot, size)
    if fill_value is None:
        fill = (real[0], imag[0]) if x.shape[0] and size else (0.0, 0.0)
    else:
        if np.ndim(fill_value) != 0:
            raise ValueError(at_user_line(f"jitflow.numpy.{name}: fill_value must be a "
                                          f"scalar, got shape {np.shape(fill_value)}"))
        given = as_complex(fill_value, x.dtype)
        fill = (given.real, given.imag)
    return _complex(jnp.where(filled, real, fill[0]), jnp.where(filled, imag, fill[1]),
                    x.dtype)
