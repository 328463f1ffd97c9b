"""x ** n for an exponent known at compile time to be a small integer: multiplications.

A call of pow costs tens of cycles per element even when vectorized; x * x * x costs two
multiplications. The chain must stay as close to NumPy's result as pow itself is (pow is
within an ulp of the exact value):

- float32 and float16 are raised in float64 and rounded once at the end. Every product
  of up to 16 factors is then within a few float64 ulps of exact, far below half a float32
  ulp, so the result is the correctly rounded one except at the rarest ties. Overflow and
  underflow land where they would in the narrow type, since float64 holds every
  intermediate (a float32 to the 16th power stays below float64's limits, or is inf/0 in
  both).
- float64 has no wider type: exponents -1..3 only, each within an ulp (x*x*x rounds
  twice; x**4 = (x*x)**2 would double the first rounding error, 2 ulp, measured). A
  negative exponent below -1 is left to pow: 1 / (x*x) overflows to inf and returns 0
  where the exact value is a nonzero subnormal.
- Integers multiply exactly and wrap as NumPy's own exponentiation by squaring does, for
  every exponent >= 0.

NaN, inf and signed zero follow pow: NaN**n is NaN (NaN**0 is 1), (-0.0)**3 is -0.0,
(-inf)**3 is -inf, and x**-1 of 0.0 is inf.
"""
import numpy as np
from llvmlite import ir

from ..emitter import element_of, shaped_like

WIDENED_LIMIT = 16       # |n| raised in float64 for float32 and float16
FLOAT64_EXPONENTS = range(-1, 4)


def power_by_multiplication(em, x, exponent, dtype):
    """x ** exponent as multiplications, or None where that would not match pow."""
    if exponent is None or not np.isfinite(exponent) or exponent != int(exponent):
        return None  # (inf and NaN are no integers)
    n, dtype = int(exponent), np.dtype(dtype)
    if dtype.kind not in "iuf" or (n < 0 and dtype.kind != "f"):
        return None
    if n == 0:
        return em.const(1, dtype)
    if dtype.kind in "iu":
        return _chain(em, x, n)
    if dtype.itemsize < 8 and abs(n) <= WIDENED_LIMIT:
        return _widened(em, x, n, dtype)
    if dtype.itemsize == 8 and n in FLOAT64_EXPONENTS:
        return _signed(em, x, n, dtype)
    return None


def _widened(em, x, n, dtype):
    b = em.b
    wide_type = shaped_like(x.type, ir.DoubleType())
    wide = _signed(em, b.fpext(x, wide_type), n, np.float64)
    return b.fptrunc(wide, x.type)


def _signed(em, x, n, dtype):
    power = _chain(em, x, abs(n))
    return power if n > 0 else em.b.fdiv(em.const(1, dtype), power)


def _chain(em, x, n):
    """x ** n (n >= 1) by squaring: the bits of n from the highest down."""
    b = em.b
    multiply = b.mul if isinstance(element_of(x.type), ir.IntType) else b.fmul
    result = x
    for bit in bin(n)[3:]:
        result = multiply(result, result)
        if bit == "1":
            result = multiply(result, x)
    return result

