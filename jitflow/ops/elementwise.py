"""Elementwise primitives: NumPy's ufuncs, with their derivatives.

Each primitive's dtypes follow the NumPy ufunc it names (NEP 50 promotion included). Its
derivative rules sit on the same line or just below, written with these same ops so they
trace, fuse and differentiate again. Cotangents come back with the output's shape and
dtype; the autodiff transform sums them over broadcast axes and casts them to each
input's dtype.
"""
import numpy as np

from ..ir.primitive import Primitive, register
from ..ir.types import TensorType, broadcast_shapes, resolve_ufunc_dtypes
from ..trace import bind
from .select import where

BOOLEAN_RESULT = "its results are booleans"
INTEGER_RESULT = "its results are integers or booleans"


def ufunc_type_rule(ufunc):
    """NumPy's own dtype resolution for `ufunc`, with broadcasting of the shapes."""
    def type_rule(*types):
        shape = broadcast_shapes(*(t.shape for t in types))
        (dtype,), weak = resolve_ufunc_dtypes(ufunc, types)
        return TensorType(shape, dtype, weak and dtype.kind in "if")
    return type_rule


def elementwise(name, ufunc, impl=None, **rules):
    """Register an elementwise primitive whose types follow NumPy's `ufunc`."""
    return register(Primitive(name, ufunc_type_rule(ufunc), impl or ufunc,
                              elementwise=True, ufunc=ufunc, **rules))


# --- rule builders ------------------------------------------------------------------------

def unary(derivative):
    """The rules of out = f(x), given f'(x) as derivative(x, out)."""
    return {"vjp": lambda ct, x, *, out: [multiply(ct, derivative(x, out))],
            "jvp": lambda tangents, x, *, out: multiply(tangents[0], derivative(x, out))}


# Piecewise-constant functions (floor, sign, floor_divide): zero derivative where it exists.
ZERO_DERIVATIVE = {"vjp": lambda ct, *xs, out: [None] * len(xs),
                   "jvp": lambda tangents, *xs, out: None}


def add_tangents(*terms):
    """The sum of the terms that are not None (None if all are)."""
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for term in present[1:]:
        total = add(total, term)
    return total


def scaled(tangent, factor):
    return None if tangent is None else multiply(tangent, factor)


# --- unary ---------------------------------------------------------------------------------

neg_p = elementwise("neg", np.negative,
                    vjp=lambda ct, x, *, out: [negative(ct)],
                    jvp=lambda tangents, x, *, out: negative(tangents[0]))
# |x|' = sign(x): 0 at x = 0, the midpoint of the subgradient [-1, 1].
abs_p = elementwise("abs", np.absolute, **unary(lambda x, out: sign(x)))
sign_p = elementwise("sign", np.sign, **ZERO_DERIVATIVE)
exp_p = elementwise("exp", np.exp, **unary(lambda x, out: out))
log_p = elementwise("log", np.log, **unary(lambda x, out: divide(1, x)))
log1p_p = elementwise("log1p", np.log1p, **unary(lambda x, out: divide(1, add(x, 1))))
expm1_p = elementwise("expm1", np.expm1, **unary(lambda x, out: add(out, 1)))
# sqrt'(0) = inf, as the limit from the right.
sqrt_p = elementwise("sqrt", np.sqrt, **unary(lambda x, out: divide(0.5, out)))
sin_p = elementwise("sin", np.sin, **unary(lambda x, out: cos(x)))
cos_p = elementwise("cos", np.cos, **unary(lambda x, out: negative(sin(x))))
tan_p = elementwise("tan", np.tan, **unary(lambda x, out: add(1, multiply(out, out))))
tanh_p = elementwise("tanh", np.tanh,
                     **unary(lambda x, out: subtract(1, multiply(out, out))))
arctan_p = elementwise("arctan", np.arctan,
                       **unary(lambda x, out: divide(1, add(1, multiply(x, x)))))
arcsin_p = elementwise("arcsin", np.arcsin, **unary(lambda x, out: _inverse_cosine(x)))
arccos_p = elementwise("arccos", np.arccos,
                       **unary(lambda x, out: negative(_inverse_cosine(x))))

# d cbrt(x) = 1 / (3 cbrt(x)^2): infinite at 0, as the function's slope
cbrt_p = elementwise("cbrt", np.cbrt,
                     **unary(lambda x, out: divide(1, multiply(3, multiply(out, out)))))


def _inverse_cosine(x):
    """1 / sqrt(1 - x^2): 1 / cos(arcsin x)."""
    return divide(1, sqrt(subtract(1, multiply(x, x))))


floor_p = elementwise("floor", np.floor, **ZERO_DERIVATIVE)
ceil_p = elementwise("ceil", np.ceil, **ZERO_DERIVATIVE)
isnan_p = elementwise("isnan", np.isnan, no_gradient=BOOLEAN_RESULT)
isinf_p = elementwise("isinf", np.isinf, no_gradient=BOOLEAN_RESULT)
logical_not_p = elementwise("logical_not", np.logical_not, no_gradient=BOOLEAN_RESULT)
invert_p = elementwise("invert", np.invert, no_gradient=INTEGER_RESULT)


def _logistic_impl(x):
    x = np.asarray(x)
    if x.dtype.kind != "f":  # in the dtype exp gives (bool and int8: float16)
        x = x.astype(np.exp(np.zeros((), x.dtype)).dtype)
    e = np.exp(-np.abs(x))  # exp of a non-positive argument only: never overflows
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


# logistic(x) = 1 / (1 + exp(-x)); its dtypes are those of exp.
logistic_p = elementwise("logistic", np.exp, impl=_logistic_impl,
                         **unary(lambda x, out: multiply(out, subtract(1, out))))


# --- binary --------------------------------------------------------------------------------

add_p = elementwise("add", np.add,
                    vjp=lambda ct, x, y, *, out: [ct, ct],
                    jvp=lambda tangents, x, y, *, out: add_tangents(*tangents))
sub_p = elementwise("sub", np.subtract,
                    vjp=lambda ct, x, y, *, out: [ct, negative(ct)],
                    jvp=lambda tangents, x, y, *, out: add_tangents(
                        tangents[0], None if tangents[1] is None else negative(tangents[1])))
mul_p = elementwise("mul", np.multiply,
                    vjp=lambda ct, x, y, *, out: [multiply(ct, y), multiply(x, ct)],
                    jvp=lambda tangents, x, y, *, out: add_tangents(
                        scaled(tangents[0], y), scaled(tangents[1], x)))


def _div_jvp(tangents, x, y, *, out):
    tx, ty = tangents  # d(x/y) = (dx - out dy) / y
    return divide(add_tangents(tx, None if ty is None else negative(multiply(ty, out))), y)


div_p = elementwise("div", np.true_divide,
                    vjp=lambda ct, x, y, *, out: [
                        divide(ct, y), negative(divide(multiply(ct, out), y))],
                    jvp=_div_jvp)
floor_divide_p = elementwise("floor_divide", np.floor_divide, **ZERO_DERIVATIVE)
# x mod y = x - floor(x / y) * y, with floor(x / y) piecewise constant.
mod_p = elementwise("mod", np.remainder,
                    vjp=lambda ct, x, y, *, out: [
                        ct, negative(multiply(ct, floor_divide(x, y)))],
                    jvp=lambda tangents, x, y, *, out: add_tangents(
                        tangents[0], scaled(tangents[1], negative(floor_divide(x, y)))))

# fmod(x, y) = x - trunc(x / y) * y (C's fmod: the sign of x), trunc piecewise constant.
fmod_p = elementwise("fmod", np.fmod,
                     vjp=lambda ct, x, y, *, out: [
                         ct, negative(multiply(ct, _truncated_quotient(x, y)))],
                     jvp=lambda tangents, x, y, *, out: add_tangents(
                         tangents[0], scaled(tangents[1],
                                             negative(_truncated_quotient(x, y)))))


def _truncated_quotient(x, y):
    quotient = divide(x, y)
    return where(less(quotient, 0), ceil(quotient), floor(quotient))


# copysign(x, y) = |x| with y's sign: d/dx is sign(x) sign(y) (y's sign bit counted),
# and nothing of y but its sign bit is read
copysign_p = elementwise("copysign", np.copysign,
                         vjp=lambda ct, x, y, *, out: [multiply(ct, _sign_product(x, y)),
                                                       None],
                         jvp=lambda tangents, x, y, *, out: scaled(tangents[0],
                                                                   _sign_product(x, y)))


def _sign_product(x, y):
    return multiply(copysign(1.0, x), copysign(1.0, y))


def _signbit_type(x):
    """NumPy computes signbit of bool in float16, which jitflow lacks: refused here, and
    jitflow.numpy.signbit passes bools as float32 (their sign bits are never set)."""
    if x.dtype == np.bool_:
        raise TypeError("NumPy computes signbit of bool in float16, which jitflow does "
                        "not support; cast the input first")
    return ufunc_type_rule(np.signbit)(x)


signbit_p = register(Primitive("signbit", _signbit_type, np.signbit, elementwise=True,
                               ufunc=np.signbit, no_gradient=BOOLEAN_RESULT))

# arctan2(y, x), the angle of (x, y): d/dy = x / r^2, d/dx = -y / r^2
arctan2_p = elementwise("arctan2", np.arctan2,
                        vjp=lambda ct, y, x, *, out: [multiply(ct, _over_radius(x, x, y)),
                                                      multiply(ct, _over_radius(
                                                          negative(y), x, y))],
                        jvp=lambda tangents, y, x, *, out: add_tangents(
                            scaled(tangents[0], _over_radius(x, x, y)),
                            scaled(tangents[1], _over_radius(negative(y), x, y))))


def _over_radius(value, x, y):
    return divide(value, add(multiply(x, x), multiply(y, y)))

# NumPy's shifts: by at least the width (or a negative count), 0, or -1 for a negative
# number shifted right
left_shift_p = elementwise("left_shift", np.left_shift, no_gradient=INTEGER_RESULT)
right_shift_p = elementwise("right_shift", np.right_shift, no_gradient=INTEGER_RESULT)

# ldexp(x, n) = x 2^n, exactly (rounded once where it leaves the normal range): linear
# in x; n is an integer
ldexp_p = elementwise("ldexp", np.ldexp,
                      vjp=lambda ct, x, n, *, out: [ldexp(ct, n), None],
                      jvp=lambda tangents, x, n, *, out: None if tangents[0] is None
                      else ldexp(tangents[0], n))

# nextafter(x, y): the float after x toward y, a step of one ulp: slope 1 in x
def _next_float_type(x, y):
    """nextafter's types, but not float16: native code computes a half's operations in
    float32, whose next float is not a half's."""
    out = ufunc_type_rule(np.nextafter)(x, y)
    if out.dtype == np.float16:
        raise TypeError("nextafter (and spacing) of float16 is not supported; cast to "
                        "float32 first")
    return out


nextafter_p = register(Primitive("nextafter", _next_float_type, np.nextafter,
                                 elementwise=True, ufunc=np.nextafter,
                                 vjp=lambda ct, x, y, *, out: [ct, None],
                                 jvp=lambda tangents, x, y, *, out: tangents[0]))


def _is_python_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pow_partials(x, y, out, wanted):
    """d(x**y)/dx = y x**(y-1), taken as 0 where y == 0 (x**0 is constant 1, even at
    x = 0); d(x**y)/dy = log(x) x**y, taken as 0 at x == 0 (the limit from the right for
    y > 0, where 0**y stays 0). Only the `wanted` ones (None for the others): the log
    of a negative base would warn eagerly about a derivative nobody asked for."""
    d_x = d_y = None
    if wanted[0] and _is_python_number(y):  # a constant exponent, or a weak argument
        d_x = multiply(y, power(x, y - 1)) if y != 0 else 0
    elif wanted[0]:
        d_x = where(equal(y, 0), 0, multiply(y, power(x, subtract(y, 1))))
    if wanted[1]:
        d_y = multiply(log(where(equal(x, 0), 1, x)), out)
    return d_x, d_y


def _pow_vjp(ct, x, y, *, out, needs):
    return [None if d is None else multiply(ct, d) for d in _pow_partials(x, y, out, needs)]


def _pow_jvp(tangents, x, y, *, out):
    wanted = [t is not None for t in tangents]
    return add_tangents(*map(scaled, tangents, _pow_partials(x, y, out, wanted)))


pow_p = elementwise("pow", np.power, vjp=_pow_vjp, vjp_takes_needs=True, jvp=_pow_jvp)


def extremum_rules(x_wins):
    """max and min: the cotangent goes to the operand that was chosen, and is split
    equally between equal operands (so max(x, x) has derivative 1). x_wins(x, y) says
    where x alone is chosen."""
    def vjp(ct, x, y, *, out):
        share = where(equal(x, y), multiply(ct, 0.5), ct)
        return [where(logical_or(x_wins(x, y), equal(x, y)), share, 0),
                where(logical_or(x_wins(y, x), equal(x, y)), share, 0)]

    def jvp(tangents, x, y, *, out):
        tx, ty = (0 if t is None else t for t in tangents)
        tie = multiply(add(tx, ty), 0.5)
        return where(x_wins(x, y), tx, where(x_wins(y, x), ty, tie))
    return {"vjp": vjp, "jvp": jvp}


max_p = elementwise("max", np.maximum, **extremum_rules(lambda x, y: greater(x, y)))
min_p = elementwise("min", np.minimum, **extremum_rules(lambda x, y: less(x, y)))
eq_p = elementwise("eq", np.equal, no_gradient=BOOLEAN_RESULT)
ne_p = elementwise("ne", np.not_equal, no_gradient=BOOLEAN_RESULT)
lt_p = elementwise("lt", np.less, no_gradient=BOOLEAN_RESULT)
le_p = elementwise("le", np.less_equal, no_gradient=BOOLEAN_RESULT)
gt_p = elementwise("gt", np.greater, no_gradient=BOOLEAN_RESULT)
ge_p = elementwise("ge", np.greater_equal, no_gradient=BOOLEAN_RESULT)
logical_and_p = elementwise("logical_and", np.logical_and, no_gradient=BOOLEAN_RESULT)
logical_or_p = elementwise("logical_or", np.logical_or, no_gradient=BOOLEAN_RESULT)
logical_xor_p = elementwise("logical_xor", np.logical_xor, no_gradient=BOOLEAN_RESULT)
bitwise_and_p = elementwise("bitwise_and", np.bitwise_and, no_gradient=INTEGER_RESULT)
bitwise_or_p = elementwise("bitwise_or", np.bitwise_or, no_gradient=INTEGER_RESULT)
bitwise_xor_p = elementwise("bitwise_xor", np.bitwise_xor, no_gradient=INTEGER_RESULT)


# --- wrappers ------------------------------------------------------------------------------

def negative(x): return bind(neg_p, x)
def absolute(x): return bind(abs_p, x)
def sign(x): return bind(sign_p, x)
def exp(x): return bind(exp_p, x)
def log(x): return bind(log_p, x)
def log1p(x): return bind(log1p_p, x)
def expm1(x): return bind(expm1_p, x)
def sqrt(x): return bind(sqrt_p, x)
def sin(x): return bind(sin_p, x)
def cos(x): return bind(cos_p, x)
def tan(x): return bind(tan_p, x)
def tanh(x): return bind(tanh_p, x)
def floor(x): return bind(floor_p, x)
def ceil(x): return bind(ceil_p, x)
def isnan(x): return bind(isnan_p, x)
def isinf(x): return bind(isinf_p, x)
def logical_not(x): return bind(logical_not_p, x)
def invert(x): return bind(invert_p, x)
def logistic(x): return bind(logistic_p, x)
def add(x, y): return bind(add_p, x, y)
def subtract(x, y): return bind(sub_p, x, y)
def multiply(x, y): return bind(mul_p, x, y)
def divide(x, y): return bind(div_p, x, y)
def floor_divide(x, y): return bind(floor_divide_p, x, y)
def remainder(x, y): return bind(mod_p, x, y)
def power(x, y): return bind(pow_p, x, y)
def fmod(x, y): return bind(fmod_p, x, y)
def arctan(x): return bind(arctan_p, x)
def arcsin(x): return bind(arcsin_p, x)
def arccos(x): return bind(arccos_p, x)
def arctan2(y, x): return bind(arctan2_p, y, x)
def left_shift(x, y): return bind(left_shift_p, x, y)
def right_shift(x, y): return bind(right_shift_p, x, y)
def ldexp(x, n): return bind(ldexp_p, x, n)
def cbrt(x): return bind(cbrt_p, x)
def nextafter(x, y): return bind(nextafter_p, x, y)
def copysign(x, y): return bind(copysign_p, x, y)
def signbit(x): return bind(signbit_p, x)
def maximum(x, y): return bind(max_p, x, y)
def minimum(x, y): return bind(min_p, x, y)
def equal(x, y): return bind(eq_p, x, y)
def not_equal(x, y): return bind(ne_p, x, y)
def less(x, y): return bind(lt_p, x, y)
def less_equal(x, y): return bind(le_p, x, y)
def greater(x, y): return bind(gt_p, x, y)
def greater_equal(x, y): return bind(ge_p, x, y)
def logical_and(x, y): return bind(logical_and_p, x, y)
def logical_or(x, y): return bind(logical_or_p, x, y)
def logical_xor(x, y): return bind(logical_xor_p, x, y)
def bitwise_and(x, y): return bind(bitwise_and_p, x, y)
def bitwise_or(x, y): return bind(bitwise_or_p, x, y)
def bitwise_xor(x, y): return bind(bitwise_xor_p, x, y)
