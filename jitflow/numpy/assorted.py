"""NumPy functions that are short compositions of the others: divmod; the complex
parts of real arrays (conjugate, real, imag, angle); nanvar and nanstd; array_equal and
array_equiv; cross, diagflat, ediff1d, select, take_along_axis, polyval, correlate,
convolve and gradient.

jitflow has no complex dtype, so conjugate, real, imag and angle take real arrays,
whose conjugate and real part are themselves, imaginary part zeros and angle 0 or pi
(NumPy's arctan2(0, x): pi for negative numbers and -0.0).
"""
import builtins

import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..contract import matmul
from ..ir.types import normalize_axis, result_dtype
from ..trace import Tracer, constant_type
from ._common import _dtype_of, _ndim, _no_out, _shape, _strong
from .creation import arange, asarray, zeros
from .elementwise import (add, arctan2, astype, divide, equal, floor_divide, isnan, multiply,
                          remainder, sqrt, subtract, where)
from .matrices import diag
from .reductions import all, sum, var
from .shapes import broadcast_to, concatenate, moveaxis, ravel, reshape, stack


def divmod(x1, x2, out=(None, None), where=True):
    _no_out("divmod", None if out == (None, None) else out, where)
    return floor_divide(x1, x2), remainder(x1, x2)


def _real_only(name, x):
    x = asarray(x)
    if _dtype_of(x).kind == "c":
        raise NotImplementedError(at_user_line(f"jitflow.numpy.{name}: jitflow has no "
                                               f"complex dtype"))
    return x


def conjugate(x, out=None, where=True):
    _no_out("conjugate", out, where)
    # a new array, as NumPy's; of bool, an int8 one (NumPy has no bool loop)
    dtype = _np.dtype(_np.int8) if _dtype_of(x) == _np.bool_ else _dtype_of(x)
    return ops.cast(_real_only("conjugate", x), dtype)


conj = conjugate


def real(val):
    return _real_only("real", val)


def imag(val):
    x = _real_only("imag", val)
    return zeros(_shape(x), _dtype_of(x))


def angle(z, deg=False):
    x = _real_only("angle", z)
    result = arctan2(0, x)  # NumPy's: a Python 0 (int8 gives float16, bool float64)
    return multiply(result, 180 / _np.pi) if deg else result


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """NumPy's recipe: the mean of the numbers, the squares of their deviations summed
    and divided by their count less ddof; NaN where that is not positive."""
    _no_out("nanvar", out)
    a = asarray(a)
    if _dtype_of(a).kind != "f":
        return var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    missing = isnan(a)
    count = sum(ops.logical_not(missing), axis=axis, dtype=_np.intp, keepdims=True)
    values = where(missing, 0, a)
    totals = sum(values, axis=axis, dtype=dtype, keepdims=True)
    # NumPy divides by the counts in place: the quotients keep the sums' dtype
    mean = divide(totals, astype(count, _dtype_of(totals)))
    deviations = where(missing, 0, subtract(values, mean))
    total = sum(multiply(deviations, deviations), axis=axis, dtype=dtype, keepdims=keepdims)
    freedom = subtract(count if keepdims else _squeezed(count, axis, _ndim(a)), ddof)
    result = divide(total, astype(freedom, _dtype_of(total)))
    return _strong(where(ops.less_equal(freedom, 0), _np.nan, result))


def _squeezed(count, axis, ndim):
    axes = range(ndim) if axis is None else \
        [normalize_axis(a, ndim) for a in (axis if isinstance(axis, tuple) else (axis,))]
    shape = [size for i, size in enumerate(_shape(count)) if i not in set(axes)]
    return reshape(count, shape)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return sqrt(nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if _shape(a1) != _shape(a2):
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = ops.logical_or(same, ops.logical_and(isnan(a1), isnan(a2)))
    return _as_bool(all(same))


def array_equiv(a1, a2):
    a1, a2 = asarray(a1), asarray(a2)
    try:
        shape = _np.broadcast_shapes(_shape(a1), _shape(a2))
    except ValueError:
        return False
    return _as_bool(all(equal(broadcast_to(a1, shape), broadcast_to(a2, shape))))


def _as_bool(value):
    return value if isinstance(value, Tracer) else builtins.bool(value)


def diagflat(v, k=0):
    return diag(ravel(v), k)


def ediff1d(ary, to_end=None, to_begin=None):
    flat = ravel(asarray(ary))
    middle = subtract(flat[1:], flat[:-1])  # (of no elements too: bools raise)
    pieces = [astype(ravel(asarray(piece)), _dtype_of(flat))
              for piece in (to_begin, middle, to_end) if piece is not None]
    return concatenate(pieces) if len(pieces) > 1 else middle


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError(at_user_line("list of cases must be same length as list of "
                                      "conditions"))
    if not condlist:
        raise ValueError(at_user_line("select with an empty condition list is not "
                                      "possible"))
    # NumPy's result_type of the choices and the default, Python numbers weak (NEP 50)
    dtype, _ = result_dtype(*(constant_type(v) for v in [*choicelist, default]))
    choices = [asarray(c) for c in choicelist]
    result = astype(asarray(default), dtype)
    for condition, choice in reversed(list(zip(condlist, choices))):
        if _dtype_of(condition) != _np.bool_:
            raise TypeError(at_user_line(f"invalid entry in condlist: should be boolean "
                                         f"ndarray, got {_dtype_of(condition)}"))
        result = where(condition, astype(choice, dtype), result)
    return result


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's cross product of 3-vectors (or of 2-vectors: the z component), by its
    formula, each product rounded then subtracted, along the axes named."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(asarray(a), axisa, -1), moveaxis(asarray(b), axisb, -1)
    sizes = (_shape(a)[-1], _shape(b)[-1])
    if sizes == (2, 2):
        return subtract(multiply(a[..., 0], b[..., 1]), multiply(a[..., 1], b[..., 0]))
    if sizes != (3, 3):
        raise ValueError(at_user_line(
            f"jitflow.numpy.cross takes two vectors of 3 (or two of 2) elements along "
            f"the axes given, got {sizes[0]} and {sizes[1]}"))
    parts = [subtract(multiply(a[..., i], b[..., j]), multiply(a[..., j], b[..., i]))
             for i, j in ((1, 2), (2, 0), (0, 1))]
    return moveaxis(stack(parts, axis=-1), -1, axisc)


def polyval(p, x):
    """Horner's rule in NumPy's order: y = y * x + p[i], from zeros like x."""
    p, x = asarray(p), asarray(x)
    y = zeros(_shape(x), _dtype_of(x))
    for i in range(_shape(p)[0]):
        y = add(multiply(y, x), p[i])
    return y


def correlate(a, v, mode="valid"):
    """NumPy's correlate of real vectors: out[k] = sum over j of a[k + j] v[j], the
    shorter vector the window, and the result reversed when v was the longer one, as
    NumPy does. Windows wholly inside a are one matrix product; a window reaching past
    an end (modes 'same' and 'full') sums only the terms inside, as NumPy's does, so
    that an inf or NaN of v meets no padding zero (0 * nan would make it NaN)."""
    a, v = ravel(asarray(a)), ravel(asarray(v))
    n, m = _shape(a)[0], _shape(v)[0]
    if n == 0 or m == 0:
        raise ValueError(at_user_line(f"{'a' if n == 0 else 'v'} cannot be empty"))
    if _np.result_type(_dtype_of(a), _dtype_of(v)) == _np.float16:
        # NumPy's half dot multiplies and sums in float32, rounding once at the end
        # (65504 * -3 + inf is inf, not half's -inf + inf)
        return astype(correlate(astype(a, _np.float32), astype(v, _np.float32), mode),
                      _np.float16)
    inverted = n < m
    if inverted:
        a, v, n, m = v, a, m, n
    left, right = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1),
                   "full": (m - 1, m - 1)}.get(mode, (None, None))
    if left is None:
        raise ValueError(at_user_line(f"mode must be one of 'valid', 'same', or 'full' "
                                      f"(got {mode!r})"))
    inside = n - m + 1
    pieces = [_edge_windows(a, v, _np.arange(-left, 0)),
              matmul(a[_np.arange(inside)[:, None] + _np.arange(m)[None, :]], v),
              _edge_windows(a, v, _np.arange(inside, inside + right))]
    result = concatenate([p for p in pieces if p is not None])
    return result[::-1] if inverted else result


def _edge_windows(a, v, starts):
    """sum over j of a[s + j] v[j] for windows starting at `starts`, each over the j
    where s + j lies inside a."""
    if starts.size == 0:
        return None
    n, m = _shape(a)[0], _shape(v)[0]
    positions = starts[:, None] + _np.arange(m)[None, :]
    inside = (positions >= 0) & (positions < n)
    products = multiply(a[_np.clip(positions, 0, n - 1)], v)
    dtype = _dtype_of(products)  # (a sum of int32 would be int64; matmul keeps int32)
    return sum(where(inside, products, zeros((), dtype)), axis=1, dtype=dtype)


def convolve(a, v, mode="full"):
    a, v = ravel(asarray(a)), ravel(asarray(v))
    if _shape(v)[0] > _shape(a)[0]:
        a, v = v, a
    return correlate(a, v[::-1], mode)


def gradient(f, *varargs, axis=None, edge_order=1):
    """NumPy's gradient with uniform spacings (one for all axes, or one per axis):
    central differences inside, one-sided ones of first or second order at the edges,
    each by NumPy's formula; integers in float64."""
    f = asarray(f)
    if _dtype_of(f).kind != "f":
        f = astype(f, _np.float64)
    ndim = _ndim(f)
    axes = tuple(range(ndim)) if axis is None else tuple(
        normalize_axis(a, ndim) for a in (axis if isinstance(axis, tuple) else (axis,)))
    spacings = varargs if len(varargs) == len(axes) else \
        varargs * len(axes) if len(varargs) == 1 else (1.0,) * len(axes) if not varargs \
        else None
    if spacings is None or any(isinstance(d, Tracer) or _np.ndim(d) for d in spacings):
        raise NotImplementedError(at_user_line(
            "jitflow.numpy.gradient: spacing as coordinate arrays, or traced, is not "
            "supported; give one number per axis (or one for all)"))
    if edge_order not in (1, 2):
        raise ValueError(at_user_line("'edge_order' greater than 2 not supported"))
    results = [_gradient_along(f, a, float(d) if not isinstance(d, (int, float)) else d,
                               edge_order) for a, d in zip(axes, spacings)]
    return results[0] if len(results) == 1 else tuple(results)


def _gradient_along(f, axis, dx, edge_order):
    n = _shape(f)[axis]
    if n < edge_order + 1:
        raise ValueError(at_user_line(
            "Shape of array too small to calculate a numerical gradient, at least "
            "(edge_order + 1) elements are required."))

    def part(start, stop=None):
        index = [slice(None)] * _ndim(f)
        index[axis] = slice(start, stop) if stop is not None or start is None else \
            slice(start, start + 1 if start != -1 else None)
        return f[tuple(index)]
    inner = divide(subtract(part(2, n), part(0, n - 2)), 2. * dx)
    if edge_order == 1:
        first = divide(subtract(part(1), part(0)), dx)
        last = divide(subtract(part(-1), part(-2)), dx)
    else:
        first = add(add(multiply(-1.5 / dx, part(0)), multiply(2. / dx, part(1))),
                    multiply(-0.5 / dx, part(2)))
        last = add(add(multiply(0.5 / dx, part(-3)), multiply(-2. / dx, part(-2))),
                   multiply(1.5 / dx, part(-1)))
    return concatenate([first, inner, last], axis=axis)


def take_along_axis(arr, indices, axis=-1):
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
    ndim = _ndim(arr)
    if _ndim(indices) != ndim:
        raise ValueError(at_user_line("`indices` and `arr` must have the same number of "
                                      "dimensions"))
    axis = normalize_axis(axis, ndim)
    index = tuple(indices if i == axis else
                  reshape(arange(_shape(arr)[i]), [-1 if j == i else 1 for j in range(ndim)])
                  for i in range(ndim))
    if not isinstance(arr, Tracer) and any(isinstance(i, Tracer) for i in index):
        return ops.gather(arr, *index, axis=0)  # (NumPy's [] cannot take traced indices)
    return arr[index]


__all__ = ["angle", "array_equal", "array_equiv", "conj", "conjugate", "convolve", "correlate",
           "cross", "diagflat", "divmod",
           "ediff1d", "gradient", "imag", "nanstd", "nanvar", "polyval", "real", "select", "take_along_axis"]
