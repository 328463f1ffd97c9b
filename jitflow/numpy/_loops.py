"""The dtypes a NumPy ufunc computes in, for ufuncs jitflow builds from other
primitives: each operand is cast to its loop's input dtype first, so that the
composition computes in the dtype NumPy's loop does (NEP 50 promotion included)."""
import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..ir.types import SUPPORTED_DTYPES, is_bfloat16, ufunc_loop_dtypes
from ..trace import Tracer, constant_type
from ._common import _dtype_of, _no_out, _strong
from .elementwise import _cast_for_loop


def in_loop_dtypes(ufunc, *args):
    """(args cast to the input dtypes of NumPy's loop for `ufunc`, the output dtype).

    A Python number (weak) joins a float loop as a value of its dtype, as NumPy converts
    it; in an integer loop it stays weak, so the primitives raise OverflowError where it
    does not fit, as NumPy does. No loop, or a dtype jitflow lacks (NumPy computes the
    float ufuncs of bool in float16), is a TypeError naming both."""
    types = [constant_type(a) for a in args]
    try:
        loop = ufunc_loop_dtypes(ufunc, types)
    except TypeError as error:
        raise TypeError(at_user_line(f"numpy.{ufunc.__name__}: {error}")) from None
    if any(d not in SUPPORTED_DTYPES for d in loop):
        raise TypeError(at_user_line(
            f"NumPy computes {ufunc.__name__} of "
            f"{', '.join(str(t.dtype) for t in types)} in {loop[-1]}, which jitflow "
            f"does not support; cast the input first"))
    cast = [_to_dtype(a, t, d) for a, t, d in zip(args, types, loop)]
    return cast, loop[-1]


def _to_dtype(value, value_type, dtype):
    if value_type.weak and dtype.kind != "f":
        return value
    if value_type.dtype == dtype and not value_type.weak:
        return value
    if isinstance(value, Tracer):
        return ops.cast(value, dtype)
    return _np.asarray(value).astype(dtype)


def _cast(value, dtype):
    if isinstance(value, Tracer):
        return ops.cast(value, dtype)
    return _np.asarray(value).astype(dtype)


def _narrowed(result, dtype):
    """A half (bfloat16) loop's float32 results rounded to `dtype` (a tuple's, each)."""
    if isinstance(result, tuple):
        return tuple(_narrowed(r, dtype) for r in result)
    return _strong(_cast(result, dtype) if _dtype_of(result) == _np.float32 else result)


def _computed_in_float32(dtype):
    return dtype == _np.float16 or is_bfloat16(dtype)


def composite_ufunc(ufunc, half_in_float32=True):
    """NumPy's `ufunc` built by the decorated body(*args, dtype=out dtype), which gets
    the operands already in the loop's dtypes; out=, where= and dtype= as the
    primitives' ufuncs take them (elementwise.py). A float16 loop is computed in
    float32 and rounded once, as NumPy's half loops are (and ml_dtypes' bfloat16 loops),
    unless `half_in_float32` is False (a body exact in half whose primitives treat
    halves their own way)."""
    def decorate(body):
        name = ufunc.__name__

        def function(*args, out=None, where=True, dtype=None):
            _no_out(name, out, where)
            if len(args) != ufunc.nin:
                raise TypeError(at_user_line(f"{name}() takes {ufunc.nin} arguments, "
                                             f"got {len(args)}"))
            if dtype is not None:
                args = _cast_for_loop(name, args, dtype)
            operands, out_dtype = in_loop_dtypes(ufunc, *args)
            if _computed_in_float32(out_dtype) and half_in_float32:  # rounded once
                wide = _np.dtype(_np.float32)
                operands = [_cast(a, wide) if _dtype_of(a) == out_dtype else a
                            for a in operands]
                return _narrowed(body(*operands, dtype=wide), out_dtype)
            return _strong(body(*operands, dtype=out_dtype))
        function.__name__ = function.__qualname__ = name
        function.__doc__ = f"NumPy's {name}, on arrays and traced values.\n\n{body.__doc__}"
        return function
    return decorate
