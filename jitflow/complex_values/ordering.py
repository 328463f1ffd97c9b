"""NumPy's order of complex numbers: by real part, then imaginary part (lexicographic),
for comparisons, maximum / minimum / fmax / fmin, max / min (and nanmax / nanmin) and
argmax / argmin.

NumPy's loops compare a < b as (ar < br and neither imaginary part NaN) or (ar == br
and ai < bi), so any comparison with a NaN part is false; maximum(a, b) is a where a
holds a NaN or a >= b, else b (a NaN wins), fmax the same with b's NaN losing; argmax
is the first NaN, else the first of the largest; max is the element argmax names;
nanmax (fmax.reduce) the first of the largest without a NaN, or the first if all are."""
import numpy as np

from .. import numpy as jnp
from ..errors import at_user_line
from .functions import _complex, _named, _no_out, as_complex
from .parts import parts_of, result_dtype


def _nan(r, i):
    return jnp.logical_or(jnp.isnan(r), jnp.isnan(i))


def _ordered(strict, reverse):
    """The comparison a < b (a > b with `reverse`; <= and >= without `strict`)."""
    def compare(ar, ai, br, bi):
        before = jnp.greater if reverse else jnp.less
        tie = (jnp.greater if reverse else jnp.less) if strict else \
            (jnp.greater_equal if reverse else jnp.less_equal)
        parts_known = jnp.logical_not(jnp.logical_or(jnp.isnan(ai), jnp.isnan(bi)))
        return jnp.logical_or(jnp.logical_and(before(ar, br), parts_known),
                              jnp.logical_and(jnp.equal(ar, br), tie(ai, bi)))
    return compare


LESS, LESS_EQUAL = _ordered(True, False), _ordered(False, False)
GREATER, GREATER_EQUAL = _ordered(True, True), _ordered(False, True)


def _binary(name, formula):
    def apply(a, b, out=None, where=True, **kwargs):
        _no_out(name, out, where, kwargs)
        dtype, weak = result_dtype(a, b)
        (ar, ai), (br, bi) = parts_of(a, dtype), parts_of(b, dtype)
        return formula(ar, ai, br, bi, dtype, weak)
    _named(name)(apply)


for _name, _compare in (("less", LESS), ("less_equal", LESS_EQUAL), ("greater", GREATER),
                        ("greater_equal", GREATER_EQUAL)):
    _binary(_name, lambda ar, ai, br, bi, dtype, weak, _compare=_compare:
            _compare(ar, ai, br, bi))


def _choice(keeps_first, nan_of_first_wins):
    """maximum / minimum (a NaN of a wins) and fmax / fmin (a NaN of b loses)."""
    def choose(ar, ai, br, bi, dtype, weak):
        nan = _nan(ar, ai) if nan_of_first_wins else _nan(br, bi)
        first = jnp.logical_or(nan, keeps_first(ar, ai, br, bi))
        return _complex(jnp.where(first, ar, br), jnp.where(first, ai, bi), dtype, weak)
    return choose


_binary("maximum", _choice(GREATER_EQUAL, True))
_binary("minimum", _choice(LESS_EQUAL, True))
_binary("fmax", _choice(GREATER_EQUAL, False))
_binary("fmin", _choice(LESS_EQUAL, False))


# --- reductions ---------------------------------------------------------------------------

def _last_axis_first_largest(r, i, nan_wins=True):
    """Along the last axis: the index of the first NaN element, else of the first
    largest (by real part, then imaginary part). Without `nan_wins` (fmax.reduce):
    the first largest of the elements without a NaN, else (all NaN) the first."""
    nan = _nan(r, i)
    real_max = jnp.max(jnp.where(nan, -np.inf, r), axis=-1, keepdims=True)
    candidates = jnp.logical_and(jnp.equal(r, real_max), jnp.logical_not(nan))
    imag_max = jnp.max(jnp.where(candidates, i, -np.inf), axis=-1, keepdims=True)
    largest = jnp.logical_and(candidates, jnp.equal(i, imag_max))
    if not nan_wins:
        return jnp.argmax(largest, axis=-1)  # 0 where every element is NaN
    return jnp.where(jnp.any(nan, axis=-1), jnp.argmax(nan, axis=-1),
                     jnp.argmax(largest, axis=-1))


def _along_last(z, axis, name):
    """z's parts with the reduced axes moved last and merged, and the kept shape."""
    if any(z.shape[a] == 0 for a in _axes(z, axis)):
        raise ValueError(at_user_line(f"jitflow.numpy.{name}: zero-size array to reduction "
                                      f"operation {name} which has no identity"))
    axes = _axes(z, axis)
    kept = [a for a in range(z.ndim) if a not in axes]
    shape = tuple(z.shape[a] for a in kept)
    length = int(np.prod([z.shape[a] for a in axes], dtype=np.int64))
    moved = [jnp.reshape(jnp.transpose(p, kept + axes), shape + (length,))
             for p in (z.real, z.imag)]
    return moved, axes


def _axes(z, axis):
    if axis is None:
        return list(range(z.ndim))
    return sorted({a % z.ndim for a in ((axis,) if isinstance(axis, int) else axis)})


def _extreme(names, largest, nan_wins=True):
    name = names[0]

    def reduce(a, axis=None, out=None, keepdims=False, **kwargs):
        _no_out(name, out, kwargs.pop("where", True), kwargs)
        z = as_complex(a)
        (r, i), axes = _along_last(z, axis, name)
        sign = 1 if largest else -1
        index = jnp.expand_dims(_last_axis_first_largest(sign * r, sign * i, nan_wins), -1)
        r, i = (jnp.take_along_axis(p, index, axis=-1)[..., 0] for p in (r, i))
        if keepdims:
            full = tuple(1 if d in axes else z.shape[d] for d in range(z.ndim))
            r, i = jnp.reshape(r, full), jnp.reshape(i, full)
        return _complex(r, i, z.dtype)
    _named(*names)(reduce)


def _arg_extreme(name, largest):
    def reduce(a, axis=None, out=None, *, keepdims=False):
        _no_out(name, out, True, {})
        if axis is not None and not isinstance(axis, int):
            raise TypeError(at_user_line(f"jitflow.numpy.{name}: axis must be an int"))
        z = as_complex(a)
        (r, i), _ = _along_last(z, axis, name)
        sign = 1 if largest else -1
        index = _last_axis_first_largest(sign * r, sign * i)
        if keepdims:
            full = (1,) * z.ndim if axis is None else \
                tuple(1 if d == axis % z.ndim else z.shape[d] for d in range(z.ndim))
            index = jnp.reshape(index, full)
        return index
    _named(name)(reduce)


_extreme(("max", "amax"), True)
_extreme(("min", "amin"), False)
_extreme(("nanmax",), True, nan_wins=False)  # NumPy's fmax.reduce
_extreme(("nanmin",), False, nan_wins=False)
_arg_extreme("argmax", True)
_arg_extreme("argmin", False)
