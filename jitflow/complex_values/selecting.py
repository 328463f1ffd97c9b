"""Choosing, editing and arranging complex arrays as NumPy does: clip, select, choose,
isin, insert, delete, broadcast_arrays and meshgrid; and sinc, gradient, ediff1d,
matvec and vecmat. Most work on each part; clip and isin compare complex numbers."""
import warnings

import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .functions import IMPLEMENTATIONS, _complex, _named, _no_out, as_complex
from .parts import is_complex, parts_of, result_dtype


def _call(name, *args, **kwargs):
    return IMPLEMENTATIONS[name](*args, **kwargs)


def _complex_of(values):
    """Whether any of `values` is complex (traced or not)."""
    return any(is_complex(v) for v in values)


# --- choosing -----------------------------------------------------------------------------

@_named("clip")
def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """NumPy's complex clip. With one bound, NumPy calls maximum (or minimum); with
    both, its clip loop: min(max(a, a_min), a_max), where max(a, b) is a if a holds a
    NaN or a > b (real parts, or imaginary parts where the real parts are equal),
    else b; so a tie takes the bound, and a bound holding a NaN wins over a number."""
    _no_out("clip", out, kwargs.pop("where", True), kwargs)
    bounds = [v for v in (a_min, a_max) if v is not None]
    dtype, _ = result_dtype(a, *bounds)
    if len(bounds) < 2:
        result = as_complex(a, dtype)
        if a_min is not None:
            return _call("maximum", result, a_min)
        return result if a_max is None else _call("minimum", result, a_max)
    value = parts_of(a, dtype)
    value = _clip_choice(value, parts_of(a_min, dtype), jnp.greater)
    value = _clip_choice(value, parts_of(a_max, dtype), jnp.less)
    return _complex(*value, dtype)


def _clip_choice(a, b, beyond):
    """a where a holds a NaN or lies beyond b (NumPy's clip's comparison), else b."""
    (ar, ai), (br, bi) = a, b
    kept = jnp.logical_or(jnp.logical_or(jnp.isnan(ar), jnp.isnan(ai)),
                          jnp.where(jnp.equal(ar, br), beyond(ai, bi), beyond(ar, br)))
    return jnp.where(kept, ar, br), jnp.where(kept, ai, bi)


@_named("select")
def select(condlist, choicelist, default=0):
    dtype, _ = result_dtype(*choicelist, default)
    choices = [parts_of(choice, dtype) for choice in choicelist]
    fallback = parts_of(default, dtype)
    return _complex(*(jnp.select(condlist, [c[k] for c in choices], fallback[k])
                      for k in (0, 1)), dtype)


@_named("choose")
def choose(a, choices, out=None, mode="raise"):
    _no_out("choose", out, True, {})
    dtype, _ = result_dtype(*choices)
    parts = [parts_of(choice, dtype) for choice in choices]
    return _complex(*(jnp.choose(a, [p[k] for p in parts], mode=mode) for k in (0, 1)),
                    dtype)


@_named("isin")
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element equals one of the test elements (complex equality)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(at_user_line(f"Invalid kind: '{kind}'. Please use None, 'sort' "
                                      f"or 'table'."))
    if kind == "table":
        raise ValueError(at_user_line("The 'table' method is only supported for boolean "
                                      "or integer arrays. Please select 'sort' or None for "
                                      "kind."))
    dtype, _ = result_dtype(element, test_elements)
    element, tests = as_complex(element, dtype), _call("ravel", as_complex(test_elements,
                                                                           dtype))
    pairs = _call("equal", _call("reshape", element, element.shape + (1,)), tests)
    found = jnp.any(pairs, axis=element.ndim)
    return jnp.logical_not(found) if invert else found


# --- editing and arranging ----------------------------------------------------------------

@_named("delete")
def delete(arr, obj, axis=None):
    z = as_complex(arr)
    return _complex(jnp.delete(z.real, obj, axis), jnp.delete(z.imag, obj, axis), z.dtype)


@_named("insert")
def insert(arr, obj, values, axis=None):
    """values take arr's dtype, as in NumPy: complex arrays into a real array keep
    their real parts (NumPy warns so); Python complex numbers there raise."""
    if not is_complex(arr):
        if isinstance(values, (complex, list, tuple)):  # NumPy's float() of each
            raise TypeError(at_user_line("insert: float() argument must be a string or a "
                                         "real number, not 'complex'"))
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=3)
        return jnp.insert(arr, obj, _call("real", values), axis)
    z = as_complex(arr)
    real, imag = parts_of(values, z.dtype)
    return _complex(jnp.insert(z.real, obj, real, axis), jnp.insert(z.imag, obj, imag, axis),
                    z.dtype)


@_named("broadcast_arrays")
def broadcast_arrays(*args):
    shape = np.broadcast_shapes(*(jnp.shape(a) for a in args))
    return tuple(_call("broadcast_to", a, shape) if is_complex(a) else
                 jnp.broadcast_to(a, shape) for a in args)


@_named("meshgrid")
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Each input's grid in its own dtype: a complex input's parts gridded alike."""
    options = dict(copy=copy, sparse=sparse, indexing=indexing)
    reals = jnp.meshgrid(*(_call("real", x) if is_complex(x) else x for x in xi), **options)
    imags = jnp.meshgrid(*(_call("imag", x) if is_complex(x) else x for x in xi), **options)
    return tuple(_complex(real, imag, result_dtype(x)[0]) if is_complex(x) else real
                 for x, real, imag in zip(xi, reals, imags))


# --- differences and products -------------------------------------------------------------

@_named("sinc")
def sinc(x):
    """NumPy's sin(y) / y with y = pi * where(x == 0, 1e-20, x)."""
    x = as_complex(x)
    zero = _call("equal", x, 0)
    y = _call("multiply", np.pi, _complex(jnp.where(zero, 1e-20, x.real),
                                          jnp.where(zero, 0.0, x.imag), x.dtype))
    return _call("divide", _call("sin", y), y)


@_named("gradient")
def gradient(f, *varargs, axis=None, edge_order=1):
    """The gradient of each part (the spacings must be real)."""
    if _complex_of(varargs):
        raise TypeError(at_user_line("jitflow.numpy.gradient: complex spacings are not "
                                     "supported (complex values are)"))
    z = as_complex(f)
    real = jnp.gradient(z.real, *varargs, axis=axis, edge_order=edge_order)
    imag = jnp.gradient(z.imag, *varargs, axis=axis, edge_order=edge_order)
    if isinstance(real, (list, tuple)):
        return tuple(_complex(r, i, z.dtype) for r, i in zip(real, imag))
    return _complex(real, imag, z.dtype)


@_named("ediff1d")
def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of the flattened array, to_begin and to_end in its dtype."""
    if not is_complex(ary):
        raise TypeError(at_user_line("ediff1d: dtype of `to_begin` / `to_end` must be "
                                     "compatible with input `ary` under the `same_kind` "
                                     "rule (complex into a real array)"))
    z = as_complex(ary)
    ends = [None if v is None else parts_of(v, z.dtype) for v in (to_end, to_begin)]
    return _complex(*(jnp.ediff1d(part, *(None if e is None else e[k] for e in ends))
                      for k, part in enumerate((z.real, z.imag))), z.dtype)


@_named("matvec")
def matvec(x1, x2, /, *, out=None, axes=None, axis=None, dtype=None):
    """Matrices times vectors, batched (no conjugate)."""
    _vector_product_options("matvec", out, axes, axis, dtype)
    product = _call("matmul", x1, _call("expand_dims", as_complex(x2), -1))
    return _call("squeeze", product, -1)


@_named("vecmat")
def vecmat(x1, x2, /, *, out=None, axes=None, axis=None, dtype=None):
    """conj(vectors) times matrices, batched: NumPy's vecmat conjugates its first."""
    _vector_product_options("vecmat", out, axes, axis, dtype)
    vectors = _call("conjugate", as_complex(x1))
    product = _call("matmul", _call("expand_dims", vectors, -2), x2)
    return _call("squeeze", product, -2)


def _vector_product_options(name, out, axes, axis, dtype):
    if out is not None or axes is not None or axis is not None or dtype is not None:
        raise TypeError(at_user_line(f"jitflow.numpy.{name} of complex values: out=, "
                                     f"axes=, axis= and dtype= are not supported"))
