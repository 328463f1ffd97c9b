"""Complex powers as NumPy's npy_cpow computes them, on (real, imaginary) parts, for
exponents known when tracing or traced: every case is computed and the one NumPy
takes for each element is chosen."""
import numpy as np

from .. import numpy as jnp
from .. import ops
from .elementary import log
from .formulas import c_multiply, divide, exp, multiply

SMALL = 100  # integer exponents below this in size are repeated products


def power(ar, ai, br, bi):
    """Every element's value is NumPy's; its derivative is that of the formula chosen,
    each formula given harmless operands where it is not chosen (the derivative of an
    unused log(0) or 1/0 would be 0 * inf = NaN)."""
    integer = jnp.logical_and(jnp.equal(bi, 0), jnp.equal(jnp.floor(br), br))
    small = jnp.logical_and(integer, jnp.less(jnp.abs(br), SMALL))
    n = jnp.astype(jnp.where(small, br, 0), np.int64)
    zero_base = jnp.logical_and(jnp.equal(ar, 0), jnp.equal(ai, 0))
    zero_exponent = jnp.logical_and(jnp.equal(br, 0), jnp.equal(bi, 0))
    unused = jnp.logical_or(jnp.logical_or(small, zero_base), zero_exponent)
    real, imag = _general(jnp.where(unused, 1.0, ar), jnp.where(unused, 0.0, ai), br, bi)
    products = _integer_power(ar, ai, n, zero_base)
    real, imag = jnp.where(small, products[0], real), jnp.where(small, products[1], imag)
    positive = jnp.greater(br, 0)
    # 0 ** b: +0 for a positive b, where a small integer's products keep their
    # derivative (z ** 1 at 0 has derivative 1); NaN otherwise
    products_at_zero = jnp.logical_and(small, positive)
    zero_or_nan = jnp.where(positive, 0.0, jnp.full_like(real, np.nan))
    real = jnp.where(zero_base, jnp.where(products_at_zero, _as_zero(real), zero_or_nan),
                     real)
    imag = jnp.where(zero_base, jnp.where(products_at_zero, _as_zero(imag), zero_or_nan),
                     imag)
    return jnp.where(zero_exponent, 1.0, real), jnp.where(zero_exponent, 0.0, imag)


def _as_zero(value):
    """+0 where value is a (signed) zero, with value's derivative."""
    return jnp.add(value, ops.stop_gradient(jnp.subtract(0.0, value)))


def _general(ar, ai, br, bi):
    """e^(b log a), the product as C computes it (glibc's cpow)."""
    lr, li = log(ar, ai)
    return exp(*c_multiply(br, bi, lr, li))


def _integer_power(ar, ai, n, zero_base):
    """a^n for |n| < 100: a, a a and a (a a) for n = 1, 2, 3 (NumPy unrolls them);
    otherwise binary powering from 1, and 1 / that for negative n."""
    one, zero = jnp.ones_like(ar), jnp.zeros_like(ar)
    count = jnp.abs(n)
    result, power_of_a = (one, zero), (ar, ai)
    for bit in range(7):  # 2^7 > SMALL
        taken = jnp.not_equal(jnp.bitwise_and(count, 1 << bit), 0)
        product = multiply(*result, *power_of_a)
        result = (jnp.where(taken, product[0], result[0]),
                  jnp.where(taken, product[1], result[1]))
        power_of_a = multiply(*power_of_a, *power_of_a)
    negative = jnp.less(n, 0)
    inverted = jnp.logical_and(negative, jnp.logical_not(zero_base))
    inverse = divide(one, zero, jnp.where(inverted, result[0], 1.0),
                     jnp.where(inverted, result[1], 0.0))
    real = jnp.where(negative, inverse[0], result[0])
    imag = jnp.where(negative, inverse[1], result[1])
    square = multiply(ar, ai, ar, ai)
    cube = multiply(ar, ai, *square)
    for k, (kr, ki) in ((1, (ar, ai)), (2, square), (3, cube)):
        real, imag = jnp.where(jnp.equal(n, k), kr, real), jnp.where(jnp.equal(n, k), ki, imag)
    return real, imag
