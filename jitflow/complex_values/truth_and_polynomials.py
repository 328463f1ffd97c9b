"""More of NumPy's functions on complex values: those that read a complex value as a
truth (nonzero, argwhere, flatnonzero, the logical functions, extract's and
compress's conditions: true where either part is nonzero), extract and compress of
complex values, rint, diagflat, unstack and array_equiv part by part or by complex
equality, and polynomial arithmetic: polyadd and polysub (a sum is the same on each
part), polyder and polyint (complex products and quotients by the powers, as NumPy's),
polymul (a convolution) and vander (running products)."""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..numpy.polynomials import _order
from ..trace import Tracer
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


def _linear_pair(function, name):
    """A function linear in both coefficient arrays: the same on each part."""
    def apply(a1, a2):
        dtype, _ = result_dtype(a1, a2)
        (real1, imag1), (real2, imag2) = parts_of(a1, dtype), parts_of(a2, dtype)
        return _complex(function(real1, real2), function(imag1, imag2), dtype)
    _named(name)(apply)


_linear_pair(jnp.polyadd, "polyadd")
_linear_pair(jnp.polysub, "polysub")


def _call(name, *args, **kwargs):
    return IMPLEMENTATIONS[name](*args, **kwargs)


@_named("polyder")
def polyder(p, m=1):
    """As NumPy's: each derivative multiplies by the powers as a complex product (so
    that an infinite coefficient gives NaN in the other part, as NumPy's does)."""
    z = as_complex(p)
    for _ in range(_order(m, "derivative", "polyint")):
        z = _call("multiply", z[:-1], np.arange(z.shape[0] - 1, 0, -1))
    return z


@_named("polyint")
def polyint(p, m=1, k=None):
    """As NumPy's: each integration divides by the powers (a complex division) and
    appends the next of the constants k (either p or k may be the complex one)."""
    m = _order(m, "integral", "polyder")
    if isinstance(k, (list, tuple)):  # (NumPy takes its atleast_1d)
        k = _call("asarray", k)
    constants = jnp.zeros(m) if k is None else k
    constants = _call("atleast_1d", constants) if is_complex(constants) else \
        jnp.atleast_1d(constants)
    if jnp.shape(constants)[0] == 1 and m > 1:
        constants = _call("broadcast_to", constants, (m,)) if is_complex(constants) else \
            jnp.broadcast_to(constants, (m,))
    if jnp.shape(constants)[0] < m:
        raise ValueError(at_user_line("k must be a scalar or a rank-1 array of length 1 "
                                      "or >m."))
    z = p if is_complex(p) else jnp.asarray(p)
    for i in range(m):  # a real p is divided as real numbers until a constant joins
        powers = np.arange(jnp.shape(z)[0], 0, -1)
        quotient = _call("divide", z, powers) if is_complex(z) else jnp.divide(z, powers)
        z = _call("concatenate", [quotient, constants[i:i + 1]])
    return z



def _trimmed(p):
    """poly1d's coefficients, as NumPy's polymul takes them: leading zeros dropped
    from known ones (one kept if all are); traced ones as they are (see
    numpy/polynomials.py)."""
    if getattr(p, "_complex_parts", None) is not None or isinstance(p, Tracer):
        return _call("atleast_1d", p) if is_complex(p) else jnp.atleast_1d(p)
    p = np.atleast_1d(np.asarray(p))
    nonzero = np.flatnonzero(p)
    return p[nonzero[0]:] if len(nonzero) else np.zeros(1, p.dtype)


@_named("polymul")
def polymul(a1, a2):
    return _call("convolve", _trimmed(a1), _trimmed(a2))


@_named("vander")
def vander(x, N=None, increasing=False):
    """Columns 1, x, x*x, ...: a running complex product, NumPy's multiplications."""
    z = as_complex(x)
    z = as_complex(z, np.promote_types(z.dtype, np.int64))  # NumPy's dtype: complex128
    if len(z.shape) != 1:
        raise ValueError(at_user_line("x must be a one-dimensional array or sequence."))
    count = z.shape[0]
    columns = count if N is None else int(N)
    parts = [_call("ones", (count, min(columns, 1)), z.dtype)]
    if columns > 1:
        repeated = _call("broadcast_to", _call("expand_dims", z, 1), (count, columns - 1))
        parts.append(_call("cumprod", repeated, axis=1))
    result = _call("concatenate", parts, axis=1)
    return result if increasing else result[:, ::-1]
