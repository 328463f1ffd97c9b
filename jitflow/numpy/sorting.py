"""Sorting: sort, argsort, partition, argpartition, lexsort.

Every sort is stable, whatever `kind` asks for: ties come out in the order they went in,
NumPy's kind="stable" (as in JAX). NaN sorts after every number, and -0.0 equals 0.0.
partition and argpartition sort their axis fully, which is one of the arrangements
NumPy allows (the kth element in place, none larger before it, none smaller after);
NumPy's own arrangement of the other elements is not specified and differs.
"""
import math
import operator

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import normalize_axis
from ._common import _ndim, _shape
from .assorted import take_along_axis
from .creation import asarray
from .shapes import ravel

SORT_KINDS = "qhms"  # quicksort, heapsort, mergesort, stable: by first letter, as NumPy


def _check_sort_options(kind, order, stable):
    if order is not None:
        raise ValueError(at_user_line("Cannot specify order when the array has no fields."))
    if kind is not None and stable is not None:
        raise ValueError(at_user_line("`kind` and keyword parameters can't be provided at "
                                      "the same time. Use only one of them."))
    if kind is not None and (not isinstance(kind, str) or kind[:1].lower() not in
                             SORT_KINDS or not kind):
        raise ValueError(at_user_line(f"sort kind must be one of 'quick', 'heap', or "
                                      f"'stable' (got {kind!r})"))


def _along(a, axis):
    """a and the axis to sort it along: a flattened when axis is None."""
    a = asarray(a)
    if axis is None:
        return ravel(a), 0
    return a, normalize_axis(axis, _ndim(a))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _check_sort_options(kind, order, stable)
    a, axis = _along(a, axis)
    return ops.sort(a, axis=axis)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _check_sort_options(kind, order, stable)
    a, axis = _along(a, axis)
    return ops.argsort(a, axis=axis)


def _check_kth(kth, length, empty):
    """Every kth (an int or a sequence of them) within an axis of `length`, as NumPy
    checks it (an `empty` array has nothing to partition: any integer kth will do)."""
    for k in _np.atleast_1d(_np.asarray(kth, dtype=object)).ravel():
        if isinstance(k, (bool, _np.bool_)):
            raise ValueError(at_user_line("Booleans unacceptable as partition index"))
        try:
            k = operator.index(k)
        except TypeError:
            raise TypeError(at_user_line("Partition index must be integer")) from None
        if not empty and not -length <= k < length:
            raise ValueError(at_user_line(f"kth(={k if k >= 0 else k + length}) out of "
                                          f"bounds ({length})"))


def _partition_options(a, kth, axis, kind, order):
    if kind != "introselect":
        raise ValueError(at_user_line(f"select kind must be 'introselect' (got {kind!r})"))
    if order is not None:
        raise ValueError(at_user_line("Cannot specify order when the array has no fields."))
    a, axis = _along(a, axis)
    _check_kth(kth, _shape(a)[axis], empty=math.prod(_shape(a)) == 0)
    return a, axis


def partition(a, kth, axis=-1, kind="introselect", order=None):
    a, axis = _partition_options(a, kth, axis, kind, order)
    return ops.sort(a, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    a, axis = _partition_options(a, kth, axis, kind, order)
    return ops.argsort(a, axis=axis)


def lexsort(keys, axis=-1):
    """The positions that sort by the last key, its ties by the key before, and so on:
    stable sorts from the first key to the last, each of the order so far."""
    if hasattr(keys, "shape") and _ndim(keys) >= 1 or isinstance(keys, (list, tuple)):
        keys = [asarray(key) for key in keys]
    else:
        raise TypeError(at_user_line("need sequence of keys with len > 0 in lexsort"))
    if not keys:
        raise TypeError(at_user_line("need sequence of keys with len > 0 in lexsort"))
    if any(_shape(key) != _shape(keys[0]) for key in keys):
        raise ValueError(at_user_line(f"all keys need to be the same shape, got "
                                      f"{[_shape(key) for key in keys]}"))
    if _ndim(keys[0]) == 0:
        return asarray(_np.int64(0))
    axis = normalize_axis(axis, _ndim(keys[0]))
    order = ops.argsort(keys[0], axis=axis)
    for key in keys[1:]:
        step = ops.argsort(take_along_axis(key, order, axis=axis), axis=axis)
        order = take_along_axis(order, step, axis=axis)
    return order


__all__ = ["argpartition", "argsort", "lexsort", "partition", "sort"]
