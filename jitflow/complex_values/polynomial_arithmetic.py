"""NumPy's polynomial arithmetic on complex coefficients: polyadd and polysub (a sum is
the same on each part), polyder and polyint (complex products and quotients by the
powers, as NumPy's), polymul (a convolution), polydiv (NumPy's long division) and
vander (running products)."""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from ..numpy.polynomials import _order, known_remainder, leading_near_zeros
from ..trace import Tracer
from .functions import IMPLEMENTATIONS, _complex, _named, as_complex
from .parts import is_complex, parts_of, result_dtype


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


@_named("polydiv")
def polydiv(u, v, *, trim_leading_zeros=True):
    """(quotient, remainder) by NumPy's long division: each step's coefficient is
    scale * r[k] with scale = 1 / v[0], complex products and quotients as NumPy's, and
    the remainder's leading coefficients within 1e-8 of 0 dropped as the real
    polydiv drops them (known values only: trim_leading_zeros=False keeps them)."""
    if isinstance(u, np.poly1d) or isinstance(v, np.poly1d):
        return np.polydiv(u, v)  # constants: NumPy's own, as poly1d objects
    u, v = (_call("add", _call("atleast_1d", p), 0.0) if is_complex(p) else
            jnp.add(jnp.atleast_1d(p), 0.0) for p in (u, v))  # (NumPy's: -0.0 to 0.0)
    if 0 in (jnp.shape(u)[0], jnp.shape(v)[0]):  # NumPy reads both leading coefficients
        raise IndexError(at_user_line("index 0 is out of bounds for axis 0 with size 0"))
    dtype, _ = result_dtype(u, v)
    r = as_complex(u, dtype)  # (v in its own dtype: a real one's 1 / v[0] is real)
    m, n = r.shape[0] - 1, jnp.shape(v)[0] - 1
    scale = _call("divide", 1.0, v[0]) if is_complex(v) else jnp.divide(1.0, v[0])
    quotient = []
    for k in range(m - n + 1):
        d = _call("multiply", scale, r[k])
        quotient.append(d)
        step = _call("subtract", r[k:k + n + 1], _call("multiply", d, v))
        r = _call("concatenate", [r[:k], step, r[k + n + 1:]])
    q = _call("stack", quotient) if quotient else _call("zeros", (1,), dtype)
    if not trim_leading_zeros:
        return q, r
    known = np.empty(r.shape, dtype)
    known.real, known.imag = (known_remainder(part) for part in (r.real, r.imag))
    return q, r[leading_near_zeros(known):]
