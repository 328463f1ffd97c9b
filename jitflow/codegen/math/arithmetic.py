"""The arithmetic the inline math functions (math_inline.py) are written in: V, an SSA
value whose Python operators emit LLVM instructions, so that an algorithm reads like its
formula, with selects, Horner polynomials and the error-free transformations that carry a
sum's or product's rounding error as a second float.
"""
from collections import namedtuple

import llvmlite.ir as ir

from ..emitter import constant, element_of, intrinsic_suffix, module_global, shaped_like

F32, F64 = ir.FloatType(), ir.DoubleType()


def declare(module, name, vtype, arity):
    """The module's function `name` of type vtype(vtype, ...), declared on first use."""
    ftype = ir.FunctionType(vtype, [vtype] * arity)
    existing = module.globals.get(name)
    if existing is None:
        return ir.Function(module, ftype, name)
    if getattr(existing, "function_type", None) != ftype:
        raise TypeError(f"mathlib needs '{name}' to be a function {ftype}, but the module "
                        f"already has a global of that name of type {existing.type}")
    return existing


# Per floating type: its name, same-width integer, mantissa bits, exponent bias.
Format = namedtuple("Format", "name itype mant bias")
FORMATS = {F32: Format("f32", ir.IntType(32), 23, 127),
            F64: Format("f64", ir.IntType(64), 52, 1023)}
I32 = ir.IntType(32)


class V:
    """An SSA value whose Python operators emit instructions, so that the algorithms
    below read like their formulas (`r = x - n * LN2_HI`). A Python number on the other
    side becomes a constant of this value's type. Float comparisons are ordered (false
    when either side is NaN); `>>` is a logical shift. A vector value computes the same
    lane by lane: the types it converts to are vectors of as many lanes."""
    __slots__ = ("b", "ir")

    def __init__(self, builder, value):
        self.b, self.ir = builder, value

    @property
    def type(self):
        return self.ir.type

    @property
    def fmt(self):
        return FORMATS[element_of(self.ir.type)]

    @property
    def is_float(self):
        return element_of(self.ir.type) in FORMATS

    @property
    def is_double(self):
        return element_of(self.ir.type) == F64

    def _shaped(self, element):
        """`element`, as a vector when this value is one."""
        return shaped_like(self.ir.type, element)

    def _wrap(self, value):
        return V(self.b, value)

    def const(self, value):
        return self._wrap(constant(self.ir.type, value))

    def _operand(self, other):
        return other.ir if isinstance(other, V) else constant(self.ir.type, other)

    def _binary(self, other, float_op, int_op, swap=False):
        a, b = self.ir, self._operand(other)
        if swap:
            a, b = b, a
        emit = getattr(self.b, float_op if self.is_float else int_op)
        return self._wrap(emit(a, b))

    def __add__(self, o): return self._binary(o, "fadd", "add")
    def __radd__(self, o): return self._binary(o, "fadd", "add", swap=True)
    def __sub__(self, o): return self._binary(o, "fsub", "sub")
    def __rsub__(self, o): return self._binary(o, "fsub", "sub", swap=True)
    def __mul__(self, o): return self._binary(o, "fmul", "mul")
    def __rmul__(self, o): return self._binary(o, "fmul", "mul", swap=True)
    def __truediv__(self, o): return self._binary(o, "fdiv", "sdiv")
    def __rtruediv__(self, o): return self._binary(o, "fdiv", "sdiv", swap=True)
    def __neg__(self): return self._wrap(self.b.fneg(self.ir))
    def __and__(self, o): return self._wrap(self.b.and_(self.ir, self._operand(o)))
    def __or__(self, o): return self._wrap(self.b.or_(self.ir, self._operand(o)))
    def __invert__(self): return self._wrap(self.b.not_(self.ir))
    def __lshift__(self, o): return self._wrap(self.b.shl(self.ir, self._operand(o)))
    def __rshift__(self, o): return self._wrap(self.b.lshr(self.ir, self._operand(o)))

    def _compare(self, op, other):
        if self.is_float:
            return self._wrap(self.b.fcmp_ordered(op, self.ir, self._operand(other)))
        return self._wrap(self.b.icmp_signed(op, self.ir, self._operand(other)))

    def __lt__(self, o): return self._compare("<", o)
    def __gt__(self, o): return self._compare(">", o)
    def __ge__(self, o): return self._compare(">=", o)
    def eq(self, o): return self._compare("==", o)

    def isnan(self):
        return self._wrap(self.b.fcmp_unordered("uno", self.ir, self.ir))

    def _intrinsic(self, name, *others):
        args = [self.ir] + [self._operand(o) for o in others]
        function = declare(self.b.module, f"llvm.{name}.{intrinsic_suffix(self.ir.type)}",
                            self.ir.type, len(args))
        return self._wrap(self.b.call(function, args))

    def abs(self): return self._intrinsic("fabs")
    def floor(self): return self._intrinsic("floor")
    def rint(self): return self._intrinsic("rint")          # round half to even
    def copysign(self, sign): return self._intrinsic("copysign", sign)
    def fma(self, b, c): return self._intrinsic("fma", b, c)  # self * b + c, one rounding
    # self * b + c, rounded once or twice: LLVM fuses it where the host has FMA.
    def muladd(self, b, c): return self._intrinsic("fmuladd", b, c)

    def ldexp(self, n):
        """self * 2^n for integral float n, rounded once (see math_inline.py's _scale)."""
        exponent = n.to_int().ir
        name = f"llvm.ldexp.{intrinsic_suffix(self.ir.type)}.{intrinsic_suffix(exponent.type)}"
        module = self.b.module
        function = module_global(module, name, lambda: ir.Function(
            module, ir.FunctionType(self.ir.type, [self.ir.type, exponent.type]), name))
        return self._wrap(self.b.call(function, [self.ir, exponent]))

    def scalef(self, n):
        """self * 2^floor(n), rounded once, for float n of any value: AVX-512's vscalef
        on a whole vector register (see scalef_fits). Unlike ldexp, n stays a float and
        may be NaN (the result is NaN) or infinite."""
        count = self.ir.type.count
        bits = count * (64 if self.is_double else 32)
        name = f"llvm.x86.avx512.mask.scalef.{'pd' if self.is_double else 'ps'}.{bits}"
        mask = ir.IntType(max(8, count))
        rounding = [I32] if bits == 512 else []  # the 512-bit form takes a rounding mode
        module = self.b.module
        function = module_global(module, name, lambda: ir.Function(
            module, ir.FunctionType(self.ir.type, [self.ir.type] * 3 + [mask] + rounding),
            name))
        current_rounding = [I32(4)] if rounding else []
        return self._wrap(self.b.call(function, [self.ir, n.ir, ir.Constant(self.ir.type, None),
                                                 mask(-1)] + current_rounding))

    def bits(self):
        return self._wrap(self.b.bitcast(self.ir, self._shaped(self.fmt.itype)))

    def as_float(self, ftype):
        return self._wrap(self.b.bitcast(self.ir, self._shaped(element_of(ftype))))

    def to_int(self):
        """Integral float -> i32: unlike i64, vector conversions exist on AVX2 too."""
        return self._wrap(self.b.fptosi(self.ir, self._shaped(I32)))

    def to_float(self, ftype):
        """Signed integer -> float, through i32 for the same reason."""
        narrow = self._shaped(I32)
        value = self.ir if self.ir.type == narrow else self.b.trunc(self.ir, narrow)
        return self._wrap(self.b.sitofp(value, self._shaped(element_of(ftype))))

    def widen(self, itype):
        itype = self._shaped(itype)
        return self._wrap(self.b.sext(self.ir, itype) if itype != self.ir.type else self.ir)

    def ext(self):
        return self._wrap(self.b.fpext(self.ir, self._shaped(F64)))

    def trunc(self):
        return self._wrap(self.b.fptrunc(self.ir, self._shaped(F32)))


def scalef_fits(vtype, features):
    """Whether V.scalef takes values of `vtype` on a target with `features` (a set of
    LLVM feature names): vectors of 512 bits with AVX-512F, of 128 or 256 with AVX-512VL."""
    if not isinstance(vtype, ir.VectorType) or vtype.element not in FORMATS:
        return False
    bits = vtype.count * (64 if vtype.element == F64 else 32)
    return "avx512f" in features and (bits == 512 or (bits in (128, 256) and
                                                       "avx512vl" in features))


def where(condition, a, b):
    """select(condition, a, b); either of a, b may be a Python number."""
    like = a if isinstance(a, V) else b
    return like._wrap(like.b.select(condition.ir, like._operand(a), like._operand(b)))


def clamp(x, lo, hi):
    """x limited to [lo, hi]; NaN becomes lo, so that later integer conversions stay
    defined (callers restore NaN at the end)."""
    return where(x > lo, where(x < hi, x, hi), lo)


def poly(x, coefficients):
    """c0 + c1 x + c2 x^2 + ... by Horner's rule, each step a multiply-add."""
    result = x.const(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        result = result.muladd(x, c)
    return result


# Error-free transformations: the rounding error of a sum or product as a second float,
# where one rounding would cost too much accuracy.

def two_prod(a, b):
    """(p, e) with p + e = a b exactly."""
    p = a * b
    return p, a.fma(b, -p)


def two_sum(a, b):
    """(s, e) with s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fast_two_sum(a, b):
    """(s, e) with s + e = a + b exactly, for |a| >= |b| (Dekker)."""
    s = a + b
    return s, b - (s - a)
