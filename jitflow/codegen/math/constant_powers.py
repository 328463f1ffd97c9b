"""x ** n for an exponent known at compile time to be a small integer: multiplications;
and x ** (n + 1/2), a half-integer: multiplications and a square root.

A call of pow costs tens of cycles per element even when vectorized; x * x * x costs two
multiplications. The chain must stay as close to NumPy's result as pow itself is (pow is
within an ulp of the exact value):

- float32 and float16 are raised in float64 and rounded once at the end. Every product
  of up to 16 factors is then within a few float64 ulps of exact, far below half a float32
  ulp, so the result is the correctly rounded one except at the rarest ties. Overflow and
  underflow land where they would in the narrow type, since float64 holds every
  intermediate (a float32 to the 16th power stays below float64's limits, or is inf/0 in
  both).
- A float32 cube needs no float64 where the CPU has fused multiply-adds: x*x = hi + lo
  exactly (lo by an fma), then hi*x + lo*x in one fma. lo*x is within 2**-48 of the cube
  relative to it, so the result is the float64 chain's wherever the cube is at least
  2**-100; below, lo*x (2**-24 of the cube) falls under float32's normal range and is
  rounded to the subnormals' grid, and the result may be an ulp off, as NumPy's powf
  may be. The float64 conversions cost: a GELU's region (x**3 inside tanh) took 0.88 of
  the widened cube's time this way on an Intel Xeon (AVX-512, one thread, paired), 0.95
  at AVX2.
- float64 has no wider type: exponents -1..3 only, each within an ulp (x*x*x rounds
  twice; x**4 = (x*x)**2 would double the first rounding error, 2 ulp, measured). A
  negative exponent below -1 is left to pow: 1 / (x*x) overflows to inf and returns 0
  where the exact value is a nonzero subnormal.
- Integers multiply exactly and wrap as NumPy's own exponentiation by squaring does, for
  every exponent >= 0.

NaN, inf and signed zero follow pow: NaN**n is NaN (NaN**0 is 1), (-0.0)**3 is -0.0,
(-inf)**3 is -inf, and x**-1 of 0.0 is inf.

A half-integer power is x**n * sqrt(x) (over 1 for a negative one), under the same
rules: float32 and float16 raised in float64 (sqrt is correctly rounded there) for
|exponent| up to 16, rounded once; float64 only for 1.5 and -0.5, two roundings each
(within an ulp, like the integer chains it allows). pow of a non-integer exponent
treats -0.0 as 0.0 and -inf as inf (a negative finite base gives NaN, as sqrt does),
so those two take |x|. An exponent of 0.5 is not one of these: NumPy computes it as
sqrt(x) itself (scalar.power_by_scalar).
"""
import numpy as np
from llvmlite import ir

from ..emitter import constant, element_of, intrinsic_suffix, shaped_like
from .arithmetic import declare
from .math_inline import host_features

WIDENED_LIMIT = 16       # |n| raised in float64 for float32 and float16
FLOAT64_EXPONENTS = range(-1, 4)
FLOAT64_HALF_EXPONENTS = (-0.5, 1.5)


def power_by_multiplication(em, x, exponent, dtype):
    """x ** exponent as multiplications (and a square root for a half-integer
    exponent), or None where that would not match pow."""
    if exponent is None or not np.isfinite(exponent):
        return None
    if exponent != int(exponent):
        return _half_integer_power(em, x, float(exponent), np.dtype(dtype))
    n, dtype = int(exponent), np.dtype(dtype)
    if dtype.kind not in "iuf" or (n < 0 and dtype.kind != "f"):
        return None
    if n == 0:
        return em.const(1, dtype)
    if dtype.kind in "iu":
        return _chain(em, x, n)
    if n == 3 and dtype == np.float32 and "fma" in host_features():
        return _cube(em, x)
    if dtype.itemsize < 8 and abs(n) <= WIDENED_LIMIT:
        return _widened(em, x, n, dtype)
    if dtype.itemsize == 8 and n in FLOAT64_EXPONENTS:
        return _signed(em, x, n, dtype)
    return None


def _cube(em, x):
    """x**3 as the fma of x*x's two parts with x. From |x| = 2**43 on the cube
    overflows, and lo*x may too, with the other sign: inf * x then (x*x's product with
    x, of the cube's sign)."""
    b = em.b
    fma = declare(b.module, f"llvm.fma.{intrinsic_suffix(x.type)}", x.type, 3)
    fabs = declare(b.module, f"llvm.fabs.{intrinsic_suffix(x.type)}", x.type, 1)
    high = b.fmul(x, x)
    low = b.call(fma, [x, x, b.fneg(high)])
    cube = b.call(fma, [high, x, b.fmul(low, x)])
    overflows = b.fcmp_unordered(">=", b.call(fabs, [x]), constant(x.type, 2.0 ** 43))
    return b.select(overflows, b.fmul(high, x), cube)


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



def _half_integer_power(em, x, exponent, dtype):
    """x ** exponent for exponent = n + 1/2 (n may be negative), or None."""
    if dtype.kind != "f" or (exponent * 2) % 2 != 1 or exponent == 0.5:
        return None
    narrow = dtype.itemsize < 8
    if not (narrow and abs(exponent) <= WIDENED_LIMIT) and \
            not (not narrow and exponent in FLOAT64_HALF_EXPONENTS):
        return None
    b = em.b
    # pow(-0.0, y) and pow(-inf, y) are pow(0.0, y) and pow(inf, y) for such y
    zero_or_minus_inf = b.or_(b.fcmp_ordered("==", x, em.const(0, dtype)),
                              b.fcmp_ordered("==", x, em.const(-np.inf, dtype)))
    base = b.select(zero_or_minus_inf, em.intrinsic("llvm.fabs", x), x)
    if narrow:
        base = b.fpext(base, shaped_like(x.type, ir.DoubleType()))
    whole = int(abs(exponent) - 0.5)
    magnitude = em.intrinsic("llvm.sqrt", base)
    if whole:
        magnitude = b.fmul(_chain(em, base, whole), magnitude)
    if exponent < 0:
        magnitude = b.fdiv(constant(magnitude.type, 1.0), magnitude)
    return b.fptrunc(magnitude, x.type) if narrow else magnitude

