"""Elementwise functions ONNX has no operator for, composed of several: copysign,
arctan2 and signbit, with NumPy's signed zeros and special values.

Signs are put on by multiplying a magnitude by +1 or -1, never by choosing a negative
value in a Where: ONNX Runtime's Where gives +0.0 for a -0.0 it takes from its first
operand (export_elementwise.py). A NaN's sign bit cannot be read in ONNX: it counts as
positive, the sign of NumPy's own np.nan.
"""
import numpy as np

from ..ir.types import ufunc_loop_dtypes
from .export_elementwise import finish, loop_operands


def _positive(w, v, dtype):
    """Whether v's sign bit is clear: v > 0, +0.0 (1/v = +inf), or NaN."""
    zero = w.constant(0, dtype)
    reciprocal = w.add("Div", [w.constant(1, dtype), v])
    return w.add("Or", [w.add("Or", [w.add("Greater", [v, zero]),
                                      w.add("Greater", [reciprocal, zero])]),
                        w.add("IsNaN", [v])])


def _sign_of(w, v, dtype):
    """+1 or -1 by v's sign bit."""
    return w.add("Where", [_positive(w, v, dtype), w.constant(1, dtype),
                           w.constant(-1, dtype)])


def copysign(w, node):
    (x, y), dtype = loop_operands(w, node)
    return finish(w, node, w.add("Mul", [w.add("Abs", [x]), _sign_of(w, y, dtype)]), dtype)


def arctan2(w, node):
    """The angle of (|x|, |y|) in the first quadrant, atan(|y| / |x|) (0 where both are
    zero, pi/4 where both are infinite), reflected to pi minus it where x's sign is
    negative, and given y's sign."""
    (y, x), dtype = loop_operands(w, node)
    zero = w.constant(0, dtype)
    ay, ax = w.add("Abs", [y]), w.add("Abs", [x])
    angle = w.add("Atan", [w.add("Div", [ay, ax])])
    both_zero = w.add("And", [w.add("Equal", [ay, zero]), w.add("Equal", [ax, zero])])
    both_infinite = w.add("And", [w.add("IsInf", [ay]), w.add("IsInf", [ax])])
    angle = w.add("Where", [both_zero, zero,
                            w.add("Where", [both_infinite, w.constant(np.pi / 4, dtype),
                                            angle])])
    pi = w.constant(np.pi, dtype)
    angle = w.add("Where", [_positive(w, x, dtype), angle, w.add("Sub", [pi, angle])])
    return finish(w, node, w.add("Mul", [angle, _sign_of(w, y, dtype)]), dtype)


def signbit(w, node):
    """Set for negative values and -0.0 (not for a NaN: its sign cannot be read). Its
    loops are float ones: an integer is first cast, as NumPy casts it."""
    (x,), _ = loop_operands(w, node)
    dtype = ufunc_loop_dtypes(np.signbit, [node.inputs[0].type])[0]
    return [w.add("Not", [_positive(w, x, dtype)])]


COMPOSED_RULES = {"copysign": copysign, "arctan2": arctan2, "signbit": signbit}
