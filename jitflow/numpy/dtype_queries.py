"""Questions about dtypes and Python objects: can_cast, promote_types, common_type,
min_scalar_type, mintypecode, isdtype, issubdtype, isscalar, iterable, typename,
may_share_memory and shares_memory.

Each is NumPy's own, asked about what a traced value stands for: an array of its
shape and dtype (one that takes no memory), or a Python scalar for a weakly typed one
(a Python number in the traced function). So np.can_cast(traced, np.float32) reads
the traced value's dtype, and where NumPy refuses an array (issubdtype, promote_types,
isdtype) a traced one is refused the same way. min_scalar_type of a 0-d value depends
on the value: known while tracing, or a ConcretizationError.

Whether two arrays share memory depends on how NumPy laid them out (views, an array
passed twice), which a compiled function does not keep: of traced values only a value
and itself are answered (they share memory when not empty); other pairs raise.
"""
import math

import numpy as _np

from ..errors import at_user_line
from ..trace import Tracer

_PYTHON_SCALARS = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _as_numpy(x):
    """What NumPy would be given in place of a traced value x (others as they are)."""
    if not isinstance(x, Tracer):
        return x
    if x.type.weak:
        return _PYTHON_SCALARS[x.dtype.kind]
    return _np.broadcast_to(_np.zeros((), x.dtype), x.shape)


def can_cast(from_, to, casting="safe"):
    return _np.can_cast(_as_numpy(from_), _as_numpy(to), casting)


def promote_types(type1, type2):
    return _np.promote_types(_as_numpy(type1), _as_numpy(type2))


def common_type(*arrays):
    return _np.common_type(*map(_as_numpy, arrays))


def min_scalar_type(a, /):
    if isinstance(a, Tracer) and a.ndim == 0:
        a = a._value("jitflow.numpy.min_scalar_type of a 0-d value, which depends on the "
                     "value,", "ask about the dtype instead (for an array of one "
                     "element or more NumPy answers its dtype)")
    return _np.min_scalar_type(_as_numpy(a))


def mintypecode(typechars, typeset="GDFgdf", default="d"):
    return _np.mintypecode([_as_numpy(t) for t in typechars], typeset, default)


def isdtype(dtype, kind):
    return _np.isdtype(_as_numpy(dtype), kind)


def issubdtype(arg1, arg2):
    return _np.issubdtype(_as_numpy(arg1), _as_numpy(arg2))


def isscalar(element):
    return _np.isscalar(_as_numpy(element))


def iterable(y):
    return _np.iterable(_as_numpy(y))


def typename(char):
    return _np.typename(char)


def _overlap(name, a, b, max_work):
    if not isinstance(a, Tracer) and not isinstance(b, Tracer):
        return getattr(_np, name)(a, b, max_work=max_work)
    if a is b:  # one value: its memory, which is some unless it is empty
        return math.prod(a.shape) > 0
    raise TypeError(at_user_line(
        f"jitflow.numpy.{name} of a traced value and another value: whether they share "
        f"memory depends on how NumPy laid them out (views, an array passed twice), "
        f"which a compiled function does not keep; ask outside the traced function"))


def may_share_memory(a, b, /, max_work=None):
    return _overlap("may_share_memory", a, b, max_work)


def shares_memory(a, b, /, max_work=None):
    return _overlap("shares_memory", a, b, max_work)


def isfortran(a):
    """NumPy's: a is Fortran-ordered and not also C-ordered. A traced value has no
    memory order (native code reads its arguments in C order, copied there if need
    be), so it is refused, not answered."""
    if not isinstance(a, Tracer):
        return _np.isfortran(a)
    raise TypeError(at_user_line(
        f"jitflow.numpy.isfortran of a traced value {a.dtype}{list(a.shape)}: its memory "
        f"order is the argument's NumPy layout, which a compiled function does not "
        f"keep; ask outside the traced function"))


__all__ = ["can_cast", "common_type", "isdtype", "isfortran", "isscalar", "issubdtype",
           "iterable", "may_share_memory", "min_scalar_type", "mintypecode", "promote_types",
           "shares_memory", "typename"]
