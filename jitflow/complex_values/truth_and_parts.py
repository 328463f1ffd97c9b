"""More of NumPy's functions on complex values: those that read a complex value as a
truth (nonzero, argwhere, flatnonzero, the logical functions, extract's and
compress's conditions: true where either part is nonzero), extract and compress of
complex values, and rint, diagflat, unstack and array_equiv part by part or by complex
equality."""
import numpy as np

from .. import numpy as jnp
from .functions import IMPLEMENTATIONS, _complex, _named, _no_out, as_complex
from .parts import is_complex, parts_of, result_dtype


def _truth(value):
    """Whether each element is nonzero: a complex value where either part is; any other
    value as it is (its functions read its truth themselves)."""
    if not is_complex(value):
        return value
    z = as_complex(value)
    return jnp.logical_or(jnp.not_equal(z.real, 0), jnp.not_equal(z.imag, 0))


for _name in ("nonzero", "argwhere", "flatnonzero", "logical_not"):
    _named(_name)(lambda a, *args, _name=_name, **kwargs:
                  getattr(jnp, _name)(_truth(a), *args, **kwargs))

for _name in ("logical_and", "logical_or", "logical_xor"):
    _named(_name)(lambda a, b, *args, _name=_name, **kwargs:
                  getattr(jnp, _name)(_truth(a), _truth(b), *args, **kwargs))


def _of_parts(real, imag):
    """The complex value of two real parts, of the complex dtype of their float one."""
    return _complex(real, imag, np.result_type(jnp.asarray(real).dtype, np.complex64))


@_named("extract")
def extract(condition, arr, *, size=None, fill_value=None):
    condition = _truth(condition)
    if not is_complex(arr):
        return jnp.extract(condition, arr, size=size, fill_value=fill_value)
    z = as_complex(arr)
    fills = (None, None) if fill_value is None else parts_of(fill_value, z.dtype)
    return _complex(*(jnp.extract(condition, part, size=size, fill_value=fill)
                      for part, fill in zip((z.real, z.imag), fills)), z.dtype)


@_named("compress")
def compress(condition, a, axis=None, out=None, *, size=None, fill_value=None):
    _no_out("compress", out, True, {})
    condition = _truth(condition)
    if not is_complex(a):
        return jnp.compress(condition, a, axis, size=size, fill_value=fill_value)
    z = as_complex(a)
    fills = (None, None) if fill_value is None else parts_of(fill_value, z.dtype)
    return _complex(*(jnp.compress(condition, part, axis, size=size, fill_value=fill)
                      for part, fill in zip((z.real, z.imag), fills)), z.dtype)


def _each_part(function, name):
    def apply(z, *args, **kwargs):
        z = as_complex(z)
        return _of_parts(function(z.real, *args, **kwargs), function(z.imag, *args, **kwargs))
    _named(name)(apply)


_each_part(jnp.rint, "rint")  # NumPy rounds each part
_each_part(jnp.diagflat, "diagflat")


@_named("unstack")
def unstack(x, /, *, axis=0):
    z = as_complex(x)
    return tuple(_complex(real, imag, z.dtype) for real, imag in
                 zip(jnp.unstack(z.real, axis=axis), jnp.unstack(z.imag, axis=axis)))


@_named("array_equiv")
def array_equiv(a1, a2):
    dtype, _ = result_dtype(a1, a2)
    a, b = as_complex(a1, dtype), as_complex(a2, dtype)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return False
    return jnp.all(IMPLEMENTATIONS["equal"](a, b))
