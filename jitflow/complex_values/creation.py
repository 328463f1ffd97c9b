"""NumPy's array creation with a complex dtype or complex values, in traced code: zeros,
ones, empty, full and their *_like forms, eye, identity, arange and linspace, and
arrays made from (nested) lists holding complex numbers or traced values. Each part is
made as jitflow makes real arrays. Routed here by routing.py where a complex dtype is
asked for while tracing, or a complex value is given."""
import warnings

import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..numpy.conversions import NOT_FINITE
from ..ops.debug import raise_at_run_time
from .functions import IMPLEMENTATIONS, _complex, _named
from .parts import is_complex, part_dtype, parts_of, result_dtype

# Functions that route here on a complex dtype alone (no complex operand).
BY_DTYPE = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
            "full_like", "eye", "identity", "arange", "linspace")


def _target(dtype, *values):
    """The dtype asked for, or the complex one NumPy gives `values`."""
    return np.dtype(dtype) if dtype is not None else result_dtype(*values)[0]


def _filled(shape, value, dtype):
    """An array of `shape` and `dtype` holding `value`; a real dtype keeps the real part,
    as NumPy's assignment does (with its ComplexWarning)."""
    if dtype.kind != "c":
        if is_complex(value) or getattr(value, "_complex_parts", None) is not None:
            warnings.warn("Casting complex values to real discards the imaginary part",
                          np.exceptions.ComplexWarning, stacklevel=4)
        return jnp.full(shape, parts_of(value, np.result_type(dtype, np.complex64))[0],
                        dtype)
    real, imag = parts_of(value, dtype)
    return _complex(jnp.full(shape, real, part_dtype(dtype)),
                    jnp.full(shape, imag, part_dtype(dtype)), dtype)


@_named("zeros", "empty")
def zeros(shape, dtype=float, order="C", **kwargs):
    return _filled(shape, 0, _target(dtype))


@_named("ones")
def ones(shape, dtype=None, order="C", **kwargs):
    return _filled(shape, 1, _target(dtype, 1j))


@_named("full")
def full(shape, fill_value, dtype=None, order="C", **kwargs):
    return _filled(shape, fill_value, _target(dtype, fill_value))


def _like(fill, name):
    def make(a, *args, dtype=None, order="K", subok=True, shape=None, **kwargs):
        if name == "full_like":
            fill_value, args = args[0], args[1:]
        else:
            fill_value = fill
        dtype = args[0] if args else dtype
        own = getattr(a, "dtype", None)
        dtype = np.dtype(dtype if dtype is not None else
                         own if own is not None else np.asarray(a).dtype)
        return _filled(jnp.shape(a) if shape is None else shape, fill_value, dtype)
    _named(name)(make)


for _name, _fill in (("zeros_like", 0), ("empty_like", 0), ("ones_like", 1),
                     ("full_like", None)):
    _like(_fill, _name)


@_named("eye")
def eye(N, M=None, k=0, dtype=float, order="C", **kwargs):
    dtype = _target(dtype)
    real = jnp.eye(N, M, k, dtype=part_dtype(dtype))
    return _complex(real, jnp.zeros_like(real), dtype)


@_named("identity")
def identity(n, dtype=None, **kwargs):
    return eye(n, dtype=dtype)


@_named("arange")
def arange(start=None, stop=None, step=None, dtype=None, **kwargs):
    """Real start, stop and step, complex dtype: the real range, 0 imaginary parts
    (NumPy's range of complex numbers counts in both parts; not supported)."""
    given = [v for v in (start, stop, step) if v is not None]
    if any(is_complex(v) or getattr(v, "_complex_parts", None) is not None for v in given):
        raise TypeError(at_user_line("jitflow.numpy.arange with complex start, stop or "
                                     "step is not supported; build it from a real range"))
    dtype = _target(dtype)
    real = jnp.arange(*[v for v in (start, stop, step) if v is not None],
                      dtype=part_dtype(dtype))
    return _complex(real, jnp.zeros_like(real), dtype)


@_named("linspace")
def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0, **kwargs):
    """Each part's own linspace: NumPy's start + k * step, with a complex step and real
    k, is that part by part, and its endpoint is `stop`'s parts."""
    if kwargs:
        raise TypeError(at_user_line(f"jitflow.numpy.linspace: {', '.join(kwargs)} not "
                                     f"supported"))
    computed = result_dtype(start, stop, 1.0)[0]
    dtype = _target(dtype) if dtype is not None else computed
    (sr, si), (er, ei) = parts_of(start, computed), parts_of(stop, computed)
    real, imag = (jnp.linspace(a, b, num, endpoint, part_dtype(dtype), axis)
                  for a, b in ((sr, er), (si, ei)))
    return _complex(real, imag, dtype)


def nested(value, dtype=None):
    """An array from a (nested) list or tuple whose leaves include complex or traced
    values: each part made from the leaves' parts."""
    leaves = []
    _collect(value, leaves)
    dtype = _target(dtype, *leaves)
    split = [parts_of(leaf, dtype) for leaf in leaves]
    real = _rebuilt(value, iter([p[0] for p in split]))
    imag = _rebuilt(value, iter([p[1] for p in split]))
    part = part_dtype(dtype)
    return _complex(jnp.asarray(jnp.array(real), part), jnp.asarray(jnp.array(imag), part),
                    dtype)


def _collect(value, leaves):
    if isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, leaves)
    else:
        leaves.append(value)


def _rebuilt(value, parts):
    if isinstance(value, (list, tuple)):
        return [_rebuilt(item, parts) for item in value]
    return next(parts)


def _from_lists(conversion):
    """NumPy's array/asarray, taking (nested) lists too."""
    def convert(value, dtype=None, *args, **kwargs):
        if isinstance(value, (list, tuple)):
            return nested(value, dtype)
        return conversion(value, dtype, *args, **kwargs)
    return convert


for _name in ("asarray", "array", "asanyarray"):
    IMPLEMENTATIONS[_name] = _from_lists(IMPLEMENTATIONS[_name])


@_named("asarray_chkfinite")
def asarray_chkfinite(a, dtype=None, order=None):
    """asarray, raising NumPy's ValueError at every run where a part is inf or NaN."""
    z = IMPLEMENTATIONS["asarray"](a, dtype)
    if is_complex(z):
        real, imaginary = z.real, z.imag
        raise_at_run_time(lambda *parts: not all(np.isfinite(p).all() for p in parts),
                          NOT_FINITE, "asarray_chkfinite: infs or NaNs", real, imaginary)
        return z
    return jnp.asarray_chkfinite(z)

__all__ = ["BY_DTYPE", "nested"]
