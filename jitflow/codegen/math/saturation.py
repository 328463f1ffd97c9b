"""Inputs for which libmvec's result is a constant, answered without calling it.

glibc's vector functions handle only ordinary inputs in vector code: a lane holding a
NaN, an infinity or a number whose result overflows or underflows goes to the scalar
function, one lane at a time. exp of a softmax's masked scores (-1e9 or -inf) took 18
and 10 times as long as exp of ordinary numbers (2^20 float32 values, AMD Zen 3), and
half of every causal attention mask is such lanes. Beyond a bound the correctly rounded
result is a constant, so those lanes take it from a select and the call sees 0 there
instead. One compare finds them: |x| > bound, true for a NaN too.
"""
import llvmlite.ir as ir

from ..emitter import intrinsic_suffix
from .arithmetic import F32, F64

# |x| beyond which exp(x) and expm1(x) are exactly 0 or -1 (x < 0) and inf (x > 0):
# float32's e^x rounds to 0 below ln(2^-150) = -103.97 and overflows above
# ln(FLT_MAX) = 88.72; float64's below ln(2^-1075) = -745.13 and above 709.78. (e^x - 1
# is -1 well before: below -17.33 in float32, -37.43 in float64.)
BOUND = {F32: 104.0, F64: 746.0}
BELOW = {"exp": 0.0, "expm1": -1.0}  # the result for x < -bound; inf above +bound


def guarded(builder, name, ftype, element, args, call):
    """call(args) with the lanes of `name`'s one argument beyond BOUND answered by
    selects; call itself where `name` has no such bound. On a vector the selects run
    only when some lane needs them (a branch, nearly always not taken: ordinary
    inputs pay a compare and a test, about a fifth of exp's time with selects)."""
    if name not in BELOW:
        return call(args)
    (x,) = args
    fabs = builder.module.declare_intrinsic(f"llvm.fabs.{intrinsic_suffix(ftype)}",
                                            fnty=ir.FunctionType(ftype, [ftype]))
    beyond = builder.fcmp_unordered(">", builder.call(fabs, [x]),
                                    _splat(ftype, element, BOUND[element]))
    if not isinstance(ftype, ir.VectorType):
        return _saturated(builder, name, ftype, element, x, beyond, call)
    any_lane = builder.module.declare_intrinsic(
        f"llvm.vector.reduce.or.{intrinsic_suffix(beyond.type)}",
        fnty=ir.FunctionType(ir.IntType(1), [beyond.type]))
    with builder.if_else(builder.call(any_lane, [beyond]), likely=False) as (some, none):
        with some:
            slow = _saturated(builder, name, ftype, element, x, beyond, call)
            slow_block = builder.block
        with none:
            fast = call([x])
            fast_block = builder.block
    result = builder.phi(ftype)
    result.add_incoming(slow, slow_block)
    result.add_incoming(fast, fast_block)
    return result


def _saturated(builder, name, ftype, element, x, beyond, call):
    """call on x, with the lanes `beyond` the bound given their constant: 0 or -1 below,
    inf above (x + inf), and a NaN itself (x + inf too: as libm returns it)."""
    result = call([builder.select(beyond, _splat(ftype, element, 0.0), x)])
    negative = builder.fcmp_ordered("<", x, _splat(ftype, element, 0.0))
    saturated = builder.select(negative, _splat(ftype, element, BELOW[name]),
                               builder.fadd(x, _splat(ftype, element, float("inf"))))
    return builder.select(beyond, saturated, result)


def _splat(ftype, element, value):
    scalar = ir.Constant(element, value)
    return ir.Constant(ftype, [scalar] * ftype.count) \
        if isinstance(ftype, ir.VectorType) else scalar
