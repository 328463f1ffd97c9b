"""The integer ufuncs gcd and lcm, and bitwise_count.

NumPy computes gcd and lcm of the magnitudes as unsigned integers, then gives the bits
back in the signed dtype: gcd(x, 0) of the smallest int64 is that smallest int64, lcm
wraps around. Here int32 operands are worked in int64, where every int32 magnitude
fits, and cast back (the same bits); int64 ones stand for the magnitude 2**63 of the
smallest int64 by 2**62, which has the same common divisors with every other magnitude.

Euclid's algorithm is unrolled: the number of steps it takes is largest for
consecutive Fibonacci numbers, so as many steps as Fibonacci numbers fit in the dtype
are enough for every operand (each step a remainder, a maximum, a compare and a select, fused into one
loop with the rest).
"""
import numpy as _np

from .. import ops
from ..errors import at_user_line
from ..trace import Tracer, constant_type
from ._common import _no_out, _strong
from ._loops import composite_ufunc
from .creation import asarray

_SMALLEST = _np.int64(_np.iinfo(_np.int64).min)


def _euclid_steps(largest):
    """How many steps Euclid's algorithm may take on numbers up to `largest`."""
    a, b, steps = 1, 1, 0
    while b <= largest:
        a, b, steps = b, a + b, steps + 1
    return steps + 1


def _divisor(d, dtype=_np.int64):
    return ops.where(ops.equal(d, 0), dtype(1), d)


def _euclid(a, b, largest, dtype=_np.int64):
    """gcd of the non-negative a and b (int64, or uint64) up to `largest`."""
    for _ in range(_euclid_steps(largest)):
        # once b is 0, a stays and b stays 0 (a % 1)
        a, b = (ops.where(ops.equal(b, 0), a, b),
                ops.remainder(a, ops.maximum(b, dtype(1))))
    return a


def _magnitudes(x, dtype):
    """(|x| as int64, with 2**62 for the smallest int64; whether x was that)."""
    x = ops.cast(x, _np.int64)
    if dtype == _np.int32:
        return ops.absolute(x), None
    smallest = ops.equal(x, _SMALLEST)
    return ops.where(smallest, _np.int64(2 ** 62), ops.absolute(x)), smallest


def _checked_to_fit(x, dtype):
    """A Python int (weak) as a value of the loop's dtype, raising NumPy's OverflowError
    where it does not fit (the addition checks it; a cast would wrap it)."""
    if constant_type(x).weak:
        return ops.add(x, _np.zeros((), dtype))
    return x


def _unsigned_gcd(x1, x2, dtype):
    """(NumPy's gcd of the magnitudes, as int64 bits (uint64 for uint64 operands); the
    magnitudes; whether each operand is the smallest int64)."""
    x1, x2 = _checked_to_fit(x1, dtype), _checked_to_fit(x2, dtype)
    if dtype == _np.uint64:  # already magnitudes, worked as they are
        a, b = ops.cast(x1, dtype), ops.cast(x2, dtype)
        return _euclid(a, b, 2 ** 64 - 1, _np.uint64), a, b, None, None
    (a, a_min), (b, b_min) = _magnitudes(x1, dtype), _magnitudes(x2, dtype)
    gcd = _euclid(a, b, _np.iinfo(dtype).max + 1)
    if a_min is None:
        return gcd, a, b, None, None
    # 2**63 divides itself and 0: the common divisor is 2**63, the smallest int64's bits
    whole = ops.logical_or(ops.logical_and(a_min, ops.logical_or(b_min, ops.equal(b, 0))),
                           ops.logical_and(b_min, ops.equal(a, 0)))
    return ops.where(whole, _SMALLEST, gcd), a, b, a_min, b_min


@composite_ufunc(_np.gcd)
def gcd(x1, x2, *, dtype):
    """The greatest common divisor of |x1| and |x2|, 0 for two zeros."""
    return ops.cast(_unsigned_gcd(x1, x2, dtype)[0], dtype)


@composite_ufunc(_np.lcm)
def lcm(x1, x2, *, dtype):
    """|x1| / gcd times |x2| (wrapping around as NumPy's unsigned product does), 0 where
    either is 0."""
    gcd, a, b, a_min, _ = _unsigned_gcd(x1, x2, dtype)
    work = _np.uint64 if dtype == _np.uint64 else _np.int64
    quotient = ops.floor_divide(a, _divisor(gcd, work))
    if a_min is not None:
        # 2**63 / gcd: itself (the smallest int64's bits) over 1, else 2**62 / (gcd / 2)
        half = ops.floor_divide(gcd, _np.int64(2))
        quotient = ops.where(a_min, ops.where(ops.equal(gcd, 1), _SMALLEST,
                                              ops.floor_divide(_np.int64(2 ** 62),
                                                               _divisor(half))),
                             quotient)
        b = ops.where(ops.equal(ops.cast(x2, _np.int64), _SMALLEST), _SMALLEST, b)
    product = ops.multiply(quotient, b)
    return ops.cast(ops.where(ops.equal(gcd, 0), work(0), product), dtype)


_UNSIGNED = {1: _np.uint8, 2: _np.uint16, 4: _np.uint32, 8: _np.uint64}


def bitwise_count(x, out=None, *, where=True, dtype=None):
    """The number of 1 bits in |x|, as uint8 (NumPy's dtype for it)."""
    _no_out("bitwise_count", out, where)
    x = asarray(x)
    if not isinstance(x, Tracer):
        return _strong(_np.bitwise_count(x, dtype=dtype))
    if x.dtype.kind not in "biu" or dtype is not None and _np.dtype(dtype) != _np.uint8:
        raise TypeError(at_user_line(
            f"jitflow.numpy.bitwise_count of {x.type}"
            f"{'' if dtype is None else f' with dtype={dtype}'}: NumPy's ufunc "
            f"'bitwise_count' has a loop only for booleans and integers, giving uint8"))
    if x.dtype.kind == "b":
        return ops.cast(x, _np.uint8)
    magnitude = ops.absolute(x) if x.dtype.kind == "i" else x  # int64's smallest: 2**63
    bits = ops.cast(ops.cast(magnitude, _UNSIGNED[x.dtype.itemsize]), _np.uint64)
    return ops.cast(_ones_in(bits), _np.uint8)


def _ones_in(v):
    """The count of 1 bits of each uint64: summed in pairs, then nibbles, then bytes,
    whose sum the multiplication gathers in the top byte."""
    def word(byte):
        return _np.uint64(int.from_bytes(bytes([byte]) * 8, "little"))
    shift = _np.uint64
    v = ops.subtract(v, ops.bitwise_and(ops.right_shift(v, shift(1)), word(0x55)))
    v = ops.add(ops.bitwise_and(v, word(0x33)),
                ops.bitwise_and(ops.right_shift(v, shift(2)), word(0x33)))
    v = ops.bitwise_and(ops.add(v, ops.right_shift(v, shift(4))), word(0x0F))
    return ops.right_shift(ops.multiply(v, word(0x01)), shift(56))


__all__ = ["bitwise_count", "gcd", "lcm"]
