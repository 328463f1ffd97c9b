"""Conversions and type questions answered from what is known when tracing: asanyarray,
ascontiguousarray, asfortranarray, require, asarray_chkfinite (whose check of the
values runs with the program); iscomplex, isreal, iscomplexobj, isrealobj
and real_if_close (jitflow has no complex dtype, so these give a real array's answers:
nothing complex, everything real); bitwise_invert; and the index arrays of triangles
and diagonals (tril_indices, triu_indices, diag_indices and their _from forms), which
depend on shapes only and so are NumPy's own constant arrays.

A traced array has no memory layout of its own: the layout requests give its values.
"""
import numpy as _np

from ..errors import at_user_line
from ..ops.debug import raise_at_run_time
from ..trace import Tracer
from ._common import _dtype_of, _ndim, _python_scalar, _shape
from .assorted import _real_only
from .creation import asarray, ones, zeros
from .elementwise import astype, invert
from .shapes import reshape

bitwise_invert = invert

# require's flags, each name by its letter (NumPy's spellings)
_FLAGS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
          "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
          "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


NOT_FINITE = "array must not contain infs or NaNs"


def asarray_chkfinite(a, dtype=None, order=None):
    """asarray, raising NumPy's ValueError where a float array holds inf or NaN: for a
    traced value, at every run where it does (`order` changes no value here)."""
    result = asarray(a, dtype)
    if _dtype_of(result).kind not in "fc":
        return result
    if isinstance(result, Tracer):
        raise_at_run_time(lambda values: not _np.isfinite(values).all(), NOT_FINITE,
                          "asarray_chkfinite: infs or NaNs", result)
    elif not _np.isfinite(result).all():
        raise ValueError(at_user_line(NOT_FINITE))
    return result


def _converted(a, dtype):
    a = asarray(a)
    return a if dtype is None else astype(a, dtype)


def asanyarray(a, dtype=None, order=None, *, like=None):
    return _converted(a, dtype)


def _laid_out(numpy_function, a, dtype):
    a = _converted(a, dtype)
    if not isinstance(a, Tracer):
        return numpy_function(a)
    return reshape(a, (1,)) if _ndim(a) == 0 else a  # at least one axis, as NumPy's


def ascontiguousarray(a, dtype=None, *, like=None):
    return _laid_out(_np.ascontiguousarray, a, dtype)


def asfortranarray(a, dtype=None, *, like=None):
    return _laid_out(_np.asfortranarray, a, dtype)


def require(a, dtype=None, requirements=None, *, like=None):
    wanted = {_FLAGS[flag.upper()] for flag in (requirements or ())}
    if {"C", "F"} <= wanted:
        raise ValueError(at_user_line('Cannot specify both "C" and "F" order'))
    a = _converted(a, dtype)
    if isinstance(a, Tracer):
        return a
    order = "F" if "F" in wanted else "C" if "C" in wanted else "A"
    copy = "O" in wanted or not a.flags.writeable and "W" in wanted
    return _np.array(a, order=order, copy=True if copy else None)


def _bools(x, value):
    result = (ones if value else zeros)(_shape(x), _np.bool_)
    return result if isinstance(x, Tracer) or _ndim(x) else result[()]


def iscomplex(x):
    return _bools(_real_only("iscomplex", x), False)


def isreal(x):
    if isinstance(x, (bool, int, float)):  # NumPy compares the Python number's .imag
        return True
    return _bools(_real_only("isreal", x), True)


def iscomplexobj(x):
    return _dtype_of(asarray(x)).kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def real_if_close(a, tol=100):
    return _real_only("real_if_close", a)


def _size(value, what):
    return None if value is None else int(_python_scalar(value, what))


def tril_indices(n, k=0, m=None):
    return _np.tril_indices(_size(n, "tril_indices: n"), _size(k, "tril_indices: k"),
                            _size(m, "tril_indices: m"))


def triu_indices(n, k=0, m=None):
    return _np.triu_indices(_size(n, "triu_indices: n"), _size(k, "triu_indices: k"),
                            _size(m, "triu_indices: m"))


def diag_indices(n, ndim=2):
    return _np.diag_indices(_size(n, "diag_indices: n"), _size(ndim, "diag_indices: ndim"))


def _matrix_shape(arr):
    if _ndim(arr) != 2:
        raise ValueError(at_user_line("input array must be 2-d"))
    return _shape(arr)


def tril_indices_from(arr, k=0):
    rows, columns = _matrix_shape(arr)
    return tril_indices(rows, k, columns)


def triu_indices_from(arr, k=0):
    rows, columns = _matrix_shape(arr)
    return triu_indices(rows, k, columns)


def diag_indices_from(arr):
    shape = _shape(arr)
    if len(shape) < 2:
        raise ValueError(at_user_line("input array must be at least 2-d"))
    if len(set(shape)) != 1:
        raise ValueError(at_user_line("All dimensions of input must be of equal length"))
    return diag_indices(shape[0], len(shape))


__all__ = ["asanyarray", "asarray_chkfinite", "ascontiguousarray", "asfortranarray",
           "bitwise_invert", "diag_indices", "diag_indices_from", "iscomplex", "iscomplexobj", "isreal",
           "isrealobj", "real_if_close", "require", "tril_indices", "tril_indices_from",
           "triu_indices", "triu_indices_from"]
