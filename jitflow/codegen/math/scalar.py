"""Scalar bodies of the elementwise primitives, with NumPy's exact semantics.

Each rule gets the Emitter, its operands already converted to the loop dtype NumPy would
use, and that dtype; it returns the result in the primitive's output dtype.
"""
import numpy as np
from llvmlite import ir

from ..emitter import I1, I32, constant, element_of, intrinsic_suffix, scalar_constant, shaped_like
from ..errors import NEGATIVE_POWER
from . import mathlib
from .constant_powers import power_by_multiplication


def _is_float(dtype):
    return np.dtype(dtype).kind == "f"


def _fcmp(op):
    def compare(em, x, y, dtype):
        if _is_float(dtype):
            bit = compare_floats(em, op, x, y)
        else:
            bit = em.icmp(op, x, y, dtype)
        return em.bool(bit)
    return compare


def compare_floats(em, op, x, y):
    """x op y (an i1) as NumPy compares floats: false where either is NaN, except for !=.

    Computed on integer ordinals, not by fcmp: LLVM's instcombine misfolds a select whose
    condition compares its own arms against a select of the same kind (where(m > 0, m, 0)
    of m = where(0 > x, 0, x) came out as m, wrong for x = -0.0 and NaN), and it sees
    through any bitcast or freeze put between them. Integer compares it leaves alone."""
    b = em.b
    either_nan = b.fcmp_unordered("uno", x, y)
    ordered = b.icmp_signed(op, _ordinal(em, x), _ordinal(em, y))
    if op == "!=":
        return b.or_(ordered, either_nan)
    return b.and_(ordered, b.not_(either_nan))


def _ordinal(em, x):
    """x's bit pattern as an integer ordered like x's value, -0.0 and 0.0 both 0 (NaN
    aside): a negative float is sign and magnitude, so its ordinal is -magnitude."""
    b = em.b
    width = {ir.DoubleType: 64, ir.FloatType: 32, ir.HalfType: 16}[type(element_of(x.type))]
    itype = shaped_like(x.type, ir.IntType(width))
    number = scalar_constant(x)
    if number is not None:  # a literal's ordinal, known now
        bits = int(np.array(number, f"f{width // 8}").view(f"i{width // 8}"))
        return constant(itype, -(1 << (width - 1)) - bits if bits < 0 else bits)
    bits = b.bitcast(x, itype)
    flipped = b.sub(constant(itype, -(1 << (width - 1))), bits)
    return b.select(b.icmp_signed("<", bits, constant(itype, 0)), flipped, bits)


def _arith(float_op, int_op):
    def arithmetic(em, x, y, dtype):
        if _is_float(dtype):
            return getattr(em.b, float_op)(x, y)
        if np.dtype(dtype).kind == "b":  # bool + bool is or, bool * bool is and
            return em.b.or_(x, y) if int_op == "add" else em.b.and_(x, y)
        return getattr(em.b, int_op)(x, y)
    return arithmetic


def neg(em, x, dtype):
    return em.b.fneg(x) if _is_float(dtype) else em.b.neg(x)


def _is_unsigned(dtype):
    return np.dtype(dtype).kind in "bu"


def absolute(em, x, dtype):
    if _is_float(dtype):
        return em.intrinsic("llvm.fabs", x)
    if _is_unsigned(dtype):
        return x
    return em.b.select(em.b.icmp_signed("<", x, em.const(0, dtype)), em.b.neg(x), x)


def sign(em, x, dtype):
    zero, one = em.const(0, dtype), em.const(1, dtype)
    if _is_float(dtype):  # NaN -> NaN; both zeros -> +0.0
        positive = em.b.select(em.b.fcmp_ordered(">", x, zero), one, zero)
        signed = em.b.select(em.b.fcmp_ordered("<", x, zero), em.const(-1, dtype), positive)
        return em.b.select(em.b.fcmp_unordered("uno", x, x), x, signed)
    positive = em.b.select(em.icmp(">", x, zero, dtype), one, zero)
    if _is_unsigned(dtype):
        return positive
    return em.b.select(em.b.icmp_signed("<", x, zero), em.const(-1, dtype), positive)


def sign_keeping_zero(em, x, dtype):
    """ml_dtypes' sign of bfloat16 (computed here on its float32 values): a zero is
    returned as it is, -0.0 included."""
    is_zero = em.b.fcmp_ordered("==", x, em.const(0, dtype))
    return em.b.select(is_zero, x, sign(em, x, dtype))


def _math(name):
    def function(em, *args, dtype):
        return mathlib.call(em.b, name, *args)
    return function


def _rounding(intrinsic):
    def rounding(em, x, dtype):
        return em.intrinsic(intrinsic, x) if _is_float(dtype) else x  # ints stay as they are
    return rounding


def sqrt(em, x, dtype):
    return em.intrinsic("llvm.sqrt", x)


def isnan(em, x, dtype):
    if not _is_float(dtype):
        return em.const(0, np.bool_)
    return em.bool(em.b.fcmp_unordered("uno", x, x))


def isinf(em, x, dtype):
    if not _is_float(dtype):
        return em.const(0, np.bool_)
    return em.bool(em.b.fcmp_ordered("==", em.intrinsic("llvm.fabs", x),
                                      em.const(np.inf, dtype)))


def logical_not(em, x, dtype):
    return em.bool(em.b.not_(em.truth(x, dtype)))


def invert(em, x, dtype):
    return em.b.xor(x, em.const(1, np.bool_)) if np.dtype(dtype).kind == "b" \
        else em.b.not_(x)


def _logical(op):
    def logical(em, x, y, dtype):
        return em.bool(getattr(em.b, op)(em.truth(x, dtype), em.truth(y, dtype)))
    return logical


def _bitwise(op):
    def bitwise(em, x, y, dtype):
        return getattr(em.b, op)(x, y)
    return bitwise


def divide(em, x, y, dtype):
    return em.b.fdiv(x, y)  # true_divide's loop dtype is always a float


def maximum(em, x, y, dtype):
    # NumPy: (x > y or isnan(x)) ? x : y, which returns y on ties such as -0.0 vs 0.0.
    return _pick(em, x, y, dtype, ">")


def minimum(em, x, y, dtype):
    return _pick(em, x, y, dtype, "<")


def maximum_of_halves(em, x, y, dtype):
    """NumPy's maximum of float16 (computed here on their float32 values) keeps x on
    ties: (x >= y or isnan(x)) ? x : y, where float32's keeps y."""
    return _pick(em, x, y, dtype, ">=")


def minimum_of_halves(em, x, y, dtype):
    return _pick(em, x, y, dtype, "<=")


def _pick(em, x, y, dtype, op):
    if _is_float(dtype):  # a float compare that LLVM cannot misfold (compare_floats)
        keep_x = em.b.or_(compare_floats(em, op, x, y), em.b.fcmp_unordered("uno", x, x))
    else:
        keep_x = em.icmp(op, x, y, dtype)
    return em.b.select(keep_x, x, y)


def floor_divide(em, x, y, dtype):
    if _is_float(dtype):
        return _float_divmod(em, x, y, dtype)[0]
    return _int_divmod(em, x, y, dtype)[0]


def remainder(em, x, y, dtype):
    if _is_float(dtype):
        return _float_divmod(em, x, y, dtype)[1]
    return _int_divmod(em, x, y, dtype)[1]


def _int_divmod(em, x, y, dtype):
    """Python's floor division and modulo; x // 0 = x % 0 = 0 and MIN // -1 wraps, as in
    NumPy. The divisor is made safe first: sdiv by 0 or MIN / -1 is undefined in LLVM."""
    b, zero, one = em.b, em.const(0, dtype), em.const(1, dtype)
    by_zero = b.icmp_signed("==", y, zero)
    if _is_unsigned(dtype):  # truncation is floor division for unsigned operands
        safe = b.select(by_zero, one, y)
        return (b.select(by_zero, zero, b.udiv(x, safe)),
                b.select(by_zero, zero, b.urem(x, safe)))
    by_minus_one = b.icmp_signed("==", y, em.const(-1, dtype))
    safe = b.select(b.or_(by_zero, by_minus_one), one, y)
    quotient, rest = b.sdiv(x, safe), b.srem(x, safe)
    adjust = b.and_(b.icmp_signed("!=", rest, zero),
                    b.icmp_signed("!=", b.icmp_signed("<", rest, zero),
                                  b.icmp_signed("<", safe, zero)))
    quotient = b.select(adjust, b.sub(quotient, one), quotient)
    rest = b.select(adjust, b.add(rest, safe), rest)
    quotient = b.select(by_minus_one, b.neg(x), quotient)
    rest = b.select(by_minus_one, zero, rest)
    return b.select(by_zero, zero, quotient), b.select(by_zero, zero, rest)


def _float_divmod(em, x, y, dtype):
    """NumPy's npy_divmod: fmod, then adjusted to Python's sign convention, with the
    quotient snapped to the nearest integer."""
    b = em.b
    zero, one, half = em.const(0, dtype), em.const(1, dtype), em.const(0.5, dtype)
    mod = b.frem(x, y)
    div = b.fdiv(b.fsub(x, mod), y)
    nonzero_mod = b.fcmp_unordered("!=", mod, zero)
    flip = b.and_(nonzero_mod, b.icmp_unsigned("!=", b.fcmp_ordered("<", y, zero),
                                               b.fcmp_ordered("<", mod, zero)))
    mod = b.select(flip, b.fadd(mod, y), mod)
    div = b.select(flip, b.fsub(div, one), div)
    mod = b.select(nonzero_mod, mod, _copysign(em, zero, y))
    floor = em.intrinsic("llvm.floor", div)
    floor = b.select(b.fcmp_ordered(">", b.fsub(div, floor), half), b.fadd(floor, one), floor)
    nonzero_div = b.fcmp_unordered("!=", div, zero)
    quotient = b.select(nonzero_div, floor, _copysign(em, zero, b.fdiv(x, y)))
    by_zero = b.fcmp_ordered("==", y, zero)
    return b.select(by_zero, b.fdiv(x, y), quotient), b.select(by_zero, b.frem(x, y), mod)


def fmod(em, x, y, dtype):
    """C's fmod (the sign of x); for integers NumPy's: x fmod 0 = 0, and MIN fmod -1 = 0
    (srem by 0, or of MIN by -1, is undefined in LLVM: the divisor is made safe)."""
    if _is_float(dtype):
        return em.b.frem(x, y)
    b, zero = em.b, em.const(0, dtype)
    if _is_unsigned(dtype):
        by_zero = b.icmp_signed("==", y, zero)
        return b.select(by_zero, zero, b.urem(x, b.select(by_zero, em.const(1, dtype), y)))
    exceptional = b.or_(b.icmp_signed("==", y, zero),
                        b.icmp_signed("==", y, em.const(-1, dtype)))
    return b.select(exceptional, zero, b.srem(x, b.select(exceptional, em.const(1, dtype), y)))


def copysign(em, x, y, dtype):
    return _copysign(em, x, em.opaque(y))  # y's sign as the CPU made it (Emitter.opaque)


def signbit(em, x, dtype):
    """Set for -0.0 and for a NaN with its sign bit set, as NumPy's: the sign the CPU
    gave a NaN that arithmetic made (Emitter.opaque), not one LLVM chose."""
    negative_one = _copysign(em, em.const(1, dtype), em.opaque(x))
    return em.bool(em.b.fcmp_ordered("<", negative_one, em.const(0, dtype)))


def _shift(instruction):
    """NumPy's shift: by a count outside [0, width), 0 (or, right, -1 for x < 0). An
    unsigned right shift is logical."""
    def shift(em, x, y, dtype):
        b, zero = em.b, em.const(0, dtype)
        in_range = b.icmp_unsigned("<", y, em.const(np.dtype(dtype).itemsize * 8, dtype))
        right = instruction != "shl"
        signed = right and not _is_unsigned(dtype)
        op = "ashr" if signed else instruction if not right else "lshr"
        shifted = getattr(b, op)(x, b.select(in_range, y, zero))
        beyond = b.select(b.icmp_signed("<", x, zero), em.const(-1, dtype), zero) \
            if signed else zero
        return b.select(in_range, shifted, beyond)
    return shift


def ldexp(em, x, n, dtype):
    """x 2^n by llvm.ldexp (i32 exponents: a wider one is clamped, which changes no
    result: a factor of 2^31 under- or overflows any float)."""
    b = em.b
    exponent_type = shaped_like(n.type, I32)
    if n.type != exponent_type:
        lowest, highest = constant(n.type, -2**31), constant(n.type, 2**31 - 1)
        n = b.select(b.icmp_signed("<", n, lowest), lowest, n)
        n = b.select(b.icmp_signed(">", n, highest), highest, n)
        n = b.trunc(n, exponent_type)
    name = f"llvm.ldexp.{intrinsic_suffix(x.type)}.{intrinsic_suffix(exponent_type)}"
    function = em.module.globals.get(name) or ir.Function(
        em.module, ir.FunctionType(x.type, [x.type, exponent_type]), name)
    return b.call(function, [x, n])


def _copysign(em, magnitude, sign_source):
    return em.intrinsic("llvm.copysign", magnitude, sign_source)


def power(em, x, y, dtype):
    chain = power_by_multiplication(em, x, scalar_constant(y), dtype)
    if chain is not None:
        return chain
    if _is_float(dtype):
        return mathlib.call(em.b, "pow", x, y)
    return _int_power(em, x, y, dtype)


def power_by_scalar(em, x, y, dtype):
    """x ** y for an exponent that is one value for the whole loop. NumPy's float power
    loop computes such an exponent of 0.5 as sqrt(x), which differs from pow at -inf
    (NaN, not inf) and -0.0 (-0.0, not 0.0); every other exponent goes through pow."""
    constant = scalar_constant(y)
    if constant == 0.5 and _is_float(dtype):
        return sqrt(em, x, dtype)
    if not _is_float(dtype) or constant is not None:
        return power(em, x, y, dtype)
    is_half = em.b.fcmp_ordered("==", y, em.const(0.5, dtype))
    return em.b.select(is_half, sqrt(em, x, dtype), power(em, x, y, dtype))


def _int_power(em, x, y, dtype):
    """Exponentiation by squaring; a negative exponent is an error, as in NumPy."""
    b = em.b
    if np.dtype(dtype).kind == "b":
        # True**y = True, False**0 = True, False**1 = False
        return b.or_(x, b.xor(y, em.const(1, np.bool_)))
    if not _is_unsigned(dtype):
        em.error.flag_if(b.icmp_signed("<", y, em.const(0, dtype)), NEGATIVE_POWER)
    result = em.const(1, dtype)
    base, exponent = x, y
    # every bit of an unsigned exponent (uint8's 128 is its eighth); a signed one's
    # sign bit is 0 here
    bits = np.dtype(dtype).itemsize * 8 - (0 if _is_unsigned(dtype) else 1)
    for _ in range(bits):  # unrolled: branch-free, so the loop around it vectorizes
        odd = b.trunc(exponent, shaped_like(exponent.type, I1))
        result = b.select(odd, b.mul(result, base), result)
        base = b.mul(base, base)
        exponent = b.lshr(exponent, em.const(1, dtype))
    return result


def where(em, condition, x, y, dtype):
    return em.b.select(em.b.trunc(condition, shaped_like(condition.type, I1)), x, y)


# Rules a float16 loop takes instead of RULES' (computed on float32 values)
HALF_RULES = {"max": maximum_of_halves, "min": minimum_of_halves}
# Rules a bfloat16 loop takes instead of RULES' (computed on float32 values)
BFLOAT16_RULES = {"sign": sign_keeping_zero}

RULES = {
    "neg": neg, "abs": absolute, "sign": sign, "sqrt": sqrt,
    "pow_by_scalar": power_by_scalar,
    "exp": _math("exp"), "log": _math("log"), "log1p": _math("log1p"),
    "expm1": _math("expm1"), "sin": _math("sin"), "cos": _math("cos"),
    "tan": _math("tan"), "tanh": _math("tanh"), "logistic": _math("logistic"),
    "floor": _rounding("llvm.floor"), "ceil": _rounding("llvm.ceil"),
    "isnan": isnan, "isinf": isinf, "logical_not": logical_not, "invert": invert,
    "add": _arith("fadd", "add"), "sub": _arith("fsub", "sub"),
    "mul": _arith("fmul", "mul"), "div": divide, "floor_divide": floor_divide,
    "mod": remainder, "pow": power, "max": maximum, "min": minimum,
    "eq": _fcmp("=="), "ne": _fcmp("!="), "lt": _fcmp("<"), "le": _fcmp("<="),
    "gt": _fcmp(">"), "ge": _fcmp(">="),
    "logical_and": _logical("and_"), "logical_or": _logical("or_"),
    "logical_xor": _logical("xor"),
    "bitwise_and": _bitwise("and_"), "bitwise_or": _bitwise("or_"),
    "bitwise_xor": _bitwise("xor"), "where": where, "fmod": fmod, "copysign": copysign,
    "signbit": signbit,
    "arctan": _math("atan"), "arcsin": _math("asin"), "arccos": _math("acos"),
    "arctan2": _math("atan2"), "left_shift": _shift("shl"), "right_shift": _shift("ashr"),
    "ldexp": ldexp, "cbrt": _math("cbrt"), "nextafter": _math("nextafter"),
}
# Rules that call a function of codegen/math (pow: where its exponent is not a small
# integer constant): several times the work of an arithmetic operation per element.
MATH_FUNCTION_RULES = {"exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh",
                       "logistic", "arctan", "arcsin", "arccos", "arctan2", "cbrt",
                       "nextafter", "pow"}
# mathlib's names of the rules that call it under another name.
_MATHLIB_NAMES = {"arctan": "atan", "arcsin": "asin", "arccos": "acos", "arctan2": "atan2",
                  "pow_by_scalar": "pow"}


def mathlib_calls(rule_names):
    """The mathlib functions that the rules named may call."""
    return {_MATHLIB_NAMES.get(name, name) for name in rule_names
            if name in MATH_FUNCTION_RULES or name in _MATHLIB_NAMES}
