"""The NumPy functions jitflow computes on complex values, by name.

call(name, *args) runs one of them; a name not listed here raises TypeError naming
the function, so that no function made for real numbers is ever applied to complex
ones by accident (var, sort or max would give other answers than NumPy's).
"""
import warnings

import numpy as np

from .. import numpy as jnp
from .. import writes
from ..errors import at_user_line
from ..trace import read_stateful
from . import elementary, formulas, powers
from . import tracer
from .parts import is_complex, parts_of, result_dtype
from .tracer import ComplexTracer

IMPLEMENTATIONS = {}
# NumPy 2's other names of the same functions
ALIASES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh",
           "asinh": "arcsinh", "atanh": "arctanh", "pow": "power", "concat": "concatenate",
           "permute_dims": "transpose", "row_stack": "vstack"}


def call(name, *args, **kwargs):
    implementation = IMPLEMENTATIONS.get(ALIASES.get(name, name))
    if implementation is None:
        raise TypeError(at_user_line(
            f"jitflow.numpy.{name} of complex values is not supported; on complex values "
            f"jitflow computes {', '.join(sorted(IMPLEMENTATIONS))}"))
    # a Variable (a complex one, or a real one beside complex values) gives its value
    return implementation(*read_stateful(args),
                          **{key: read_stateful(value) for key, value in kwargs.items()})


def _named(*names):
    def register(fn):
        for name in names:
            IMPLEMENTATIONS[name] = fn
        return fn
    return register


def _complex(real, imag, dtype, weak=False):
    return ComplexTracer(real, imag, dtype, weak and np.ndim(real) == 0)


def as_complex(value, dtype=None):
    """`value` as a ComplexTracer (of `dtype`, or its own complex dtype)."""
    if dtype is None:
        dtype, weak = result_dtype(value)
    else:
        weak = False
    if getattr(value, "_complex_parts", None) is not None and value.dtype == dtype:
        return value
    return _complex(*parts_of(value, dtype), dtype, weak)


# --- elementwise --------------------------------------------------------------------------

def _unary(formula, names, real_result=False):
    def apply(z, out=None, where=True, **kwargs):
        _no_out(names[0], out, where, kwargs)
        z = as_complex(z)
        result = formula(z.real, z.imag)
        return result if real_result else _complex(*result, z.dtype, z.weak)
    _named(*names)(apply)


def install_unary(formula, name):
    """formula (parts -> parts) as the complex function `name`, for one whose derivative
    rule comes from a layer above (autodiff/holomorphic.py)."""
    _unary(formula, (name,))


def _binary(formula, names, real_result=False):
    def apply(a, b, out=None, where=True, **kwargs):
        _no_out(names[0], out, where, kwargs)
        dtype, weak = result_dtype(a, b)
        result = formula(*parts_of(a, dtype), *parts_of(b, dtype))
        return result if real_result else _complex(*result, dtype, weak)
    _named(*names)(apply)


def _no_out(name, out, where, kwargs):
    if out is not None or where is not True or kwargs.get("dtype") is not None:
        raise TypeError(at_user_line(f"jitflow.numpy.{name} of complex values: out=, "
                                     f"where= and dtype= are not supported"))


_unary(formulas.negative, ("negative",))
_unary(formulas.reciprocal, ("reciprocal",))
_unary(formulas.sign, ("sign",))
_unary(lambda r, i: (writes.copy(r), writes.copy(i)), ("positive",))
_unary(lambda r, i: formulas.conjugate(writes.copy(r), i), ("conjugate", "conj"))
_unary(formulas.exp, ("exp",))
_unary(lambda r, i: formulas.multiply(r, i, r, i), ("square",))
for _name in ("sqrt", "log", "log10", "log2", "log1p", "expm1", "exp2", "sinh", "cosh",
              "tanh", "sin", "cos", "tan"):
    _unary(getattr(elementary, _name), (_name,))
_unary(formulas.absolute, ("absolute", "abs"), real_result=True)
_unary(formulas.isnan, ("isnan",), real_result=True)
_unary(formulas.isinf, ("isinf",), real_result=True)
_unary(formulas.isfinite, ("isfinite",), real_result=True)
_binary(formulas.add, ("add",))
_binary(formulas.subtract, ("subtract",))
_binary(formulas.multiply, ("multiply",))
_binary(formulas.divide, ("divide", "true_divide"))
_binary(formulas.equal, ("equal",), real_result=True)
_binary(formulas.not_equal, ("not_equal",), real_result=True)


for _name in ("real", "imag", "ndim", "shape"):  # (real and imag: views, as NumPy's)
    _named(_name)(lambda z, _name=_name: getattr(as_complex(z), _name))


@_named("angle")
def angle(z, deg=False):
    z = as_complex(z)
    radians = formulas.angle(z.real, z.imag)
    return jnp.multiply(radians, 180 / np.pi) if deg else radians


@_named("size")
def size(z, axis=None):
    z = as_complex(z)
    return z.size if axis is None else z.shape[axis]


@_named("iscomplexobj")
def iscomplexobj(z):
    return True


@_named("isrealobj")
def isrealobj(z):
    return False


_FAST_POWERS = {2: "square", -1: "reciprocal", 0.5: "sqrt"}


def operator_power(a, b):
    """a ** b: for the exponents 2, -1 and 0.5, NumPy's operator calls square,
    reciprocal and sqrt instead of power."""
    if isinstance(b, (int, float, np.integer, np.floating)) and not isinstance(b, bool) \
            and b in _FAST_POWERS and is_complex(a):
        return call(_FAST_POWERS[b], a)
    return call("power", a, b)


@_named("power")
def power(a, b, out=None, where=True):
    """NumPy's complex power: 1 for a zero exponent; for a zero base, 0 (a positive real
    exponent) or NaN; for a real integer exponent n, |n| < 100, NumPy's products
    (binary powering, 1/that for negative n); otherwise e^(b log a), as glibc's cpow."""
    _no_out("power", out, where, {})
    dtype, weak = result_dtype(a, b)
    (ar, ai), (br, bi) = parts_of(a, dtype), parts_of(b, dtype)
    return _complex(*powers.power(ar, ai, br, bi), dtype, weak)


# --- writes --------------------------------------------------------------------------------

def setitem(z, index, value):
    """z[index] = value, each part written as jitflow writes real arrays (views of z see
    it); the value cast to z's dtype as NumPy's assignment casts it."""
    real, imag = parts_of(value, z.dtype)
    writes.setitem(z.real, index, real)
    writes.setitem(z.imag, index, imag)


def inplace(name, z, other):
    """z <op>= other: the result written into z (NumPy's same-kind cast to z's dtype)."""
    result = call(name, z, other)
    if getattr(result, "_complex_parts", None) is None:
        raise TypeError(at_user_line(f"in-place {name} of a traced complex value: the result "
                                     f"is real, which cannot be written into it"))
    setitem(z, Ellipsis, result)
    return z


# --- conversions --------------------------------------------------------------------------

@_named("astype")
def astype(z, dtype, copy=True):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":  # (a new array, as NumPy's astype makes: writes leave z alone)
        z = as_complex(z, dtype)
        return _complex(writes.copy(z.real), writes.copy(z.imag), dtype)
    z = as_complex(z)
    if dtype == np.bool_:
        return formulas.not_equal(z.real, z.imag, 0, 0)
    warnings.warn("Casting complex values to real discards the imaginary part",
                  np.exceptions.ComplexWarning, stacklevel=3)
    return jnp.astype(z.real, dtype)


@_named("asarray", "array", "asanyarray")
def asarray(z, dtype=None, copy=None, **kwargs):
    return as_complex(z) if dtype is None else astype(z, dtype)


tracer.functions.call = call
tracer.functions.setitem = setitem
tracer.functions.inplace = inplace
tracer.functions.operator_power = operator_power
