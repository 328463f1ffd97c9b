"""float32 to bfloat16 as jitflow's bfloat16 products round (ops/contraction.py's
bfloat16_values in NumPy): to nearest even; values below float32's normal range, which
bfloat16 matrix units read as zero, to zeros of their sign; NaN to a quiet NaN."""
from llvmlite import ir

from ..emitter import constant, shaped_like

I16, I32 = ir.IntType(16), ir.IntType(32)


def rounded_bits(b, value):
    """The bfloat16 of float32 `value` (or vector), in the high 16 bits of an i32 whose
    low 16 bits are zero."""
    word = shaped_like(value.type, I32)
    c = lambda number: constant(word, number)  # noqa: E731
    bits = b.bitcast(value, word)
    odd = b.and_(b.lshr(bits, c(16)), c(1))
    rounded = b.and_(b.add(bits, b.add(odd, c(0x7FFF))), c(0xFFFF0000))
    sign = b.and_(bits, c(0x80000000))
    tiny = b.icmp_unsigned("==", b.and_(bits, c(0x7F800000)), c(0))
    quiet_nan = b.or_(sign, c(0x7FC00000))
    nan = b.fcmp_unordered("uno", value, value)
    return b.select(nan, quiet_nan, b.select(tiny, sign, rounded))


def bfloat16_rounded(b, value):
    """float32 `value` rounded to bfloat16, as a float32."""
    return b.bitcast(rounded_bits(b, value), value.type)


def bfloat16_halves(b, value):
    """float32 `value` rounded to bfloat16: its 16 bits (i16, or a vector of them)."""
    bits = b.lshr(rounded_bits(b, value), constant(shaped_like(value.type, I32), 16))
    return b.trunc(bits, shaped_like(value.type, I16))
