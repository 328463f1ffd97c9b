"""Whether a NumPy array that `a += traced` writes into is reachable another way.

While a function is traced, `a = np.zeros(3); a += x` cannot write x into `a`'s memory
(x has no value yet): the name `a` takes the traced result instead, and code that reads
`a` afterwards sees it. A second way to the same array (`b = a`, a view `v = a[1:]`, a
list holding it) would still show NumPy the old contents: a silent wrong answer. So the
write counts the array's references: a plain local array has exactly as many as the
same statement gives an array nobody else holds, and any more mean another way to it.

That baseline is measured once by running the statement itself, with a probe in place
of the traced value, through the same NumPy path (ndarray.__iadd__ hands the ufunc to
the operand's __array_ufunc__): reference counts differ between Python versions, and
measuring them keeps the test true on each. A view adds the question whether its base
is held elsewhere, measured the same way. (A debugger that took a snapshot of the
frame's locals holds one more reference too: the write then raises, never misleads.)
"""
import sys

import numpy as np

_BASELINE = {}  # "array": references to a lone target; "base": to a lone view's base


def references(kwargs):
    """(references to out's array, to its base) while a ufunc's __array_ufunc__ runs, to
    be compared by is_shared() below. Call it from __array_ufunc__'s callee, with the
    same kwargs dict, before anything else keeps the array."""
    array = kwargs["out"][0]
    base = array.base if isinstance(array, np.ndarray) else None
    return sys.getrefcount(array), (sys.getrefcount(base) if base is not None else 0)


def is_shared(counted):
    """Whether the array counted by references() is reachable other than by the one name
    (or container slot) the in-place operator writes back to."""
    if not _BASELINE:
        _measure_baseline()
    array, base = counted
    return array > _BASELINE["array"] or (base > 0 and base > _BASELINE["base"])


class _Probe:
    """Stands for a traced value in the baseline measurement: its __array_ufunc__ is
    reached as the Tracer's is, and counts as dispatch_ufunc counts."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _counted(inputs, kwargs)


def _counted(inputs, kwargs):
    # dispatch_ufunc's frame holds inputs and kwargs as this one does
    return references(kwargs)


def _measure_baseline():
    lone = np.zeros(2)
    lone += _Probe()  # the name now holds the counts, as it would hold the traced result
    view = np.zeros(2)[1:]
    view += _Probe()
    _BASELINE.update(array=lone[0], base=view[1])
