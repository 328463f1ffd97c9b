"""What every part of jitflow's sgemm IR (sgemm_ir.py) is built with: how its functions
are declared and defined, the alignment of its buffers, float addresses, and the
arithmetic on sizes."""
from llvmlite import ir

from ..emitter import F32, I64, PTR, define_function

ALIGNMENT = 64  # bytes, of the packed panels: one cache line, one AVX-512 vector

VOID = ir.VoidType()
NULL = ir.Constant(PTR, None)


def declare_function(module, name, result, params):
    return ir.Function(module, ir.FunctionType(result, params), name)


def new_function(module, name, result, params, internal=True):
    """A function to define (that never unwinds), and a builder at its start."""
    return define_function(module, name, result, params, internal, attributes=("nounwind",))


def element(b, base, index):
    return b.gep(base, [index], inbounds=True, source_etype=F32)


def minimum(b, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def ceil_div(b, x, divisor):
    return b.udiv(b.add(x, I64(divisor - 1)), I64(divisor))


def round_up(b, x, multiple):
    return b.mul(ceil_div(b, x, multiple), I64(multiple))
