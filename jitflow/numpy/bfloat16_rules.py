"""bfloat16 in jitflow.numpy: the ufuncs computed as ml_dtypes' loops compute them, the
other functions that take it named, and every other one refused.

NumPy's ufuncs of bfloat16 as ml_dtypes' loops compute them: every operand widened to
float32 (exactly), NumPy's float32 loop run there, and each bfloat16 result rounded
once. jitflow.numpy's functions for those ufuncs are wrapped here, so that one built
of several primitives (log10, deg2rad, hypot, ...) rounds once too, and no Python
float among its constants turns the result into float32 (bfloat16 + 1.0 is float32 in
NumPy with ml_dtypes).

nextafter and spacing step through bfloat16's own bits, which float32 code cannot:
they are refused for bfloat16.

The other functions' bodies are written for NumPy's own dtypes, where a Python float
constant keeps an array's dtype; with bfloat16 it makes float32. So a function takes
bfloat16 operands (or a bfloat16 dtype=) only when it is in TAKING_BFLOAT16, each
checked against NumPy with ml_dtypes (tests/test_bfloat16*.py); every other one raises
a TypeError saying so, never a result in another dtype. NumPy's functions written in
Python test for np.inexact, which bfloat16 is not (its kind is "V"): nansum and
nan_to_num keep its NaN as they would an integer's, and jitflow's, which test the kind,
do the same (nanmax and nanmin, which NumPy computes by fmax.reduce, skip it).
"""
import functools

import numpy as np

from ..errors import at_user_line
from ..ir.types import bfloat16, is_bfloat16, type_of_value, ufunc_loop_dtypes
from ..trace import Tracer, constant_type

BIT_STEPPING = ("nextafter", "spacing")
# ufuncs whose bfloat16 loop is not the float32 one: computed by the primitives on
# bfloat16 itself, whose native rules follow ml_dtypes (sign keeps -0.0)
OWN_BFLOAT16_LOOP = ("sign",)


def computed_in_float32(ufunc, function):
    """`function` (jitflow.numpy's `ufunc`) with bfloat16 loops computed in float32."""
    if bfloat16 is None:
        return function

    @functools.wraps(function)
    def computing(*args, **kwargs):
        if not any(_holds_bfloat16(a) for a in args) or "dtype" in kwargs:
            return function(*args, **kwargs)
        loop = _loop(ufunc, args)
        outputs = loop[ufunc.nin:] if loop is not None else ()
        if not any(is_bfloat16(d) for d in outputs) or ufunc.__name__ in OWN_BFLOAT16_LOOP:
            return function(*args, **kwargs)
        if ufunc.__name__ in BIT_STEPPING:
            raise TypeError(at_user_line(
                f"{ufunc.__name__} of bfloat16 is not supported (it steps through "
                f"bfloat16's own bits); cast to float32 first"))
        widened = [_cast(a, np.float32) if _holds_bfloat16(a) else a for a in args]
        result = function(*widened, **kwargs)
        if ufunc.nout == 1:
            return _cast(result, bfloat16) if is_bfloat16(outputs[0]) else result
        return tuple(_cast(r, bfloat16) if is_bfloat16(d) else r
                     for r, d in zip(result, outputs))
    return computing


def _holds_bfloat16(value):
    dtype = getattr(value, "dtype", None)  # (a NumPy scalar type's is no np.dtype)
    return isinstance(dtype, np.dtype) and is_bfloat16(dtype)


def _loop(ufunc, args):
    """NumPy's loop dtypes for `args`, or None where it has none (the function raises)."""
    try:
        return ufunc_loop_dtypes(ufunc, [_type(a) for a in args])
    except (TypeError, ValueError):
        return None


def _type(value):
    return constant_type(value) if isinstance(value, Tracer) else type_of_value(value)


def _cast(value, dtype):
    from .elementwise import astype  # (elementwise's functions are wrapped by this)
    return astype(value, dtype)


TAKING_BFLOAT16 = frozenset({
    # reductions and running sums (sum and prod round every step, as NumPy's loops)
    "sum", "prod", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "ptp",
    "cumsum", "cumprod", "var", "std", "nansum", "nanmax", "nanmin",
    # rearrangements
    "ravel", "reshape", "transpose", "flip", "concatenate", "stack", "hstack", "vstack",
    "row_stack",
    "tile", "repeat", "pad", "take", "broadcast_to", "squeeze", "expand_dims",
    "swapaxes", "moveaxis", "atleast_1d", "atleast_2d", "atleast_3d", "where",
    "diagonal", "trace", "tril", "triu",
    # sorting (as float32 values) and contractions (matmul in float32; dot rounds)
    "sort", "argsort", "matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum",
    # conversions and creation
    "astype", "asarray", "array", "copy", "clip", "round", "around", "nan_to_num",
    "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
    "empty_like", "result_type", "can_cast", "promote_types", "shape", "ndim", "size",
})


def refused_for_bfloat16(name, function):
    """`function` (jitflow.numpy's `name`), raising for bfloat16 unless it takes it."""
    if bfloat16 is None or name in TAKING_BFLOAT16 or \
            isinstance(getattr(np, name, None), np.ufunc):  # (computed_in_float32's)
        return function

    @functools.wraps(function)
    def refusing(*args, **kwargs):
        if any(_names_bfloat16(a) for a in args) or \
                any(_names_bfloat16(v) for v in kwargs.values()):
            raise TypeError(at_user_line(
                f"jitflow.numpy.{name} of bfloat16 is not supported; cast to float32 "
                f"first"))
        return function(*args, **kwargs)
    return refusing


def _names_bfloat16(value):
    """value is a bfloat16 array or traced value, the bfloat16 type or dtype, or a list
    or tuple holding one."""
    if isinstance(value, (list, tuple)):
        return any(_names_bfloat16(v) for v in value)
    if value is bfloat16.type or isinstance(value, np.dtype):
        return is_bfloat16(value)
    return _holds_bfloat16(value)
