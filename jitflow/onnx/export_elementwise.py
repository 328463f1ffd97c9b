"""Elementwise primitives as ONNX nodes.

NumPy computes a ufunc in one loop dtype for all its operands (int32 + float32 in
float64); ONNX wants its operands in one dtype already. So each operand is cast to
the loop dtype NumPy would use, the ONNX operator runs, and the result is cast to the
node's output dtype. Where ONNX's operator differs from NumPy's function (log1p near 0,
floor division and remainder's signs, integer division by zero), the NumPy function is
written out of several operators.

ONNX Runtime's Where gives +0.0 where it takes a -0.0 from its first operand (from the
second it keeps the sign): the compositions here put the values whose zeros carry a
sign second, under conditions that are not a Not (which its optimizer swaps away), and
the where primitive puts the sign back.
"""
import numpy as np

from ..ir.graph import Lit
from ..ir.types import ufunc_loop_dtypes
from .dtypes import onnx_type

BOOL = np.dtype(bool)
INT32 = np.dtype(np.int32)
INT64 = np.dtype(np.int64)
UINT64 = np.dtype(np.uint64)


def loop_operands(w, node):
    """The node's operands in NumPy's loop dtypes, and the loop's output dtype."""
    dtypes = ufunc_loop_dtypes(node.prim.ufunc, [v.type for v in node.inputs])
    n = len(node.inputs)
    return [w.operand(v, d) for v, d in zip(node.inputs, dtypes[:n])], dtypes[n]


def finish(w, node, name, dtype):
    """`name` (of `dtype`) as the node's output dtype."""
    return [w.cast(name, dtype, node.outputs[0].type.dtype)]


def simple(op_type, bool_op=None):
    """A ufunc that is one ONNX operator (another one on bools: add is or)."""
    def rule(w, node):
        names, dtype = loop_operands(w, node)
        chosen = bool_op if dtype == BOOL and bool_op else op_type
        return finish(w, node, w.add(chosen, names), dtype)
    return rule


def add(w, node):
    """x + y; x + 0.0 as what it is, x with -0.0 made +0.0: ONNX Runtime's optimizer
    removes an Add of a zero constant in some graphs (0.0 + -0.0 came out -0.0)."""
    zero_at = [i for i, v in enumerate(node.inputs) if _is_plus_zero(v)]
    if not zero_at:
        return _plain_add(w, node)
    names, dtype = loop_operands(w, node)  # (a float loop: one operand is a float)
    zero, other = names[zero_at[0]], names[1 - zero_at[0]]
    result = w.add("Where", [w.add("Equal", [other, zero]), zero, other])
    shape = node.outputs[0].type.shape
    if shape != node.inputs[1 - zero_at[0]].type.shape:  # (the zeros broadcast it)
        result = w.add("Expand", [result, w.ints(shape)])
    return finish(w, node, result, dtype)


_plain_add = simple("Add", bool_op="Or")


def _is_plus_zero(value):
    """A constant operand of +0.0s only (x + -0.0 is x, and dropping it is right)."""
    if not isinstance(value, Lit):
        return False
    array = np.asarray(value.value)
    return array.dtype.kind == "f" and array.size > 0 and bool(np.all(array == 0)) and \
        not np.any(np.signbit(array))


def on_integers_too(op_type):
    """An operator ONNX defines on floats only, the identity on integers (floor, ceil)."""
    def rule(w, node):
        (name,), dtype = loop_operands(w, node)
        return finish(w, node, name if dtype.kind in "biu" else w.add(op_type, [name]), dtype)
    return rule


def float_test(op_type):
    """isnan, isinf: false for integers and bools, whose values are all finite."""
    def rule(w, node):
        x = node.inputs[0]
        if x.type.dtype.kind == "f":
            return [w.add(op_type, [w.read(x)])]
        name = w.read(x)
        return [w.add("Not", [w.add("Equal", [name, name])])]
    return rule


def comparison(op_type, negate=False):
    """Comparisons in the loop dtype; ONNX orders no bools, so those as int32. Integers
    compare as int64: NumPy compares an int32 array with a Python int beyond int32
    exactly (the loop dtype would wrap it), and int64 holds both."""
    def rule(w, node):
        dtypes = ufunc_loop_dtypes(node.prim.ufunc, [v.type for v in node.inputs])
        dtype = INT32 if dtypes[0] == BOOL and op_type != "Equal" else dtypes[0]
        dtype = INT64 if dtype.kind == "i" or dtype.kind == "u" and dtype.itemsize < 8 \
            else dtype
        if dtype == UINT64 and any(v.type.dtype.kind == "i" for v in node.inputs):
            raise TypeError(f"ONNX export: {node.op} of uint64 with a signed integer "
                            f"({', '.join(str(v.type) for v in node.inputs)}) has no ONNX "
                            f"dtype that holds both; cast one operand first")
        result = w.add(op_type, [w.operand(v, dtype) for v in node.inputs])
        return [w.add("Not", [result]) if negate else result]
    return rule


def logical(op_type):
    """logical_and and friends: each operand's truth value (nonzero), then the bool op."""
    def rule(w, node):
        return [w.add(op_type, [w.operand(v, BOOL) for v in node.inputs])]
    return rule


def log1p(w, node):
    """log(1 + x) corrected for the rounding of 1 + x: log(u) * x / (u - 1), and x
    itself where u rounds to 1 (accurate to a few ulp, as NumPy's)."""
    (x,), dtype = loop_operands(w, node)
    one = w.constant(1, dtype)
    u = w.add("Add", [x, one])
    u_minus_1 = w.add("Sub", [u, one])
    corrected = w.add("Div", [w.add("Mul", [w.add("Log", [u]), x]), u_minus_1])
    # where u is inf, log(u) * x / inf is NaN: log(u) is the answer there
    result = w.add("Where", [_nonzero(w, u_minus_1, dtype),
                             w.add("Where", [w.add("IsInf", [u]), w.add("Log", [u]), corrected]),
                             x])
    return finish(w, node, result, dtype)


def expm1(w, node):
    """exp(x) - 1 corrected for the rounding of exp(x): (u - 1) * x / log(u), x itself
    where u rounds to 1, and u - 1 where u is 0 or inf (Kahan's formula)."""
    (x,), dtype = loop_operands(w, node)
    one, zero = w.constant(1, dtype), w.constant(0, dtype)
    u = w.add("Exp", [x])
    u_minus_1 = w.add("Sub", [u, one])
    corrected = w.add("Div", [w.add("Mul", [u_minus_1, x]), w.add("Log", [u])])
    plain = w.add("Or", [w.add("IsInf", [u]), w.add("Equal", [u, zero])])
    result = w.add("Where", [_nonzero(w, u_minus_1, dtype),
                             w.add("Where", [plain, u_minus_1, corrected]), x])
    return finish(w, node, result, dtype)


def _nonzero(w, name, dtype):
    """|x| > 0: x != 0 without a Not (false for NaN)."""
    return w.add("Greater", [w.add("Abs", [name]), w.constant(0, dtype)])


def _integer_divisor(w, x, y, dtype):
    """y where x // y and x % y are defined in ONNX, 1 where they are not (y == 0, and
    the smallest integer over -1, which overflows); and where y == 0 (NumPy gives 0)."""
    zero = w.add("Equal", [y, w.constant(0, dtype)])
    overflow = w.add("And", [w.add("Equal", [x, w.constant(np.iinfo(dtype).min, dtype)]),
                             w.add("Equal", [y, w.constant(-1, dtype)])])
    safe = w.add("Where", [w.add("Or", [zero, overflow]), w.constant(1, dtype), y])
    return safe, zero


def _float_divmod(w, x, y, dtype):
    """NumPy's divmod of floats: the remainder takes the divisor's sign, and the
    quotient is (x - remainder) / y rounded to the nearest integer (not floor(x / y),
    which rounds 1 // 0.1 up to 10)."""
    zero, one = w.constant(0, dtype), w.constant(1, dtype)
    mod = w.add("Mod", [x, y], fmod=1)
    div = w.add("Div", [w.add("Sub", [x, mod]), y])
    nonzero = w.add("Or", [_nonzero(w, mod, dtype), w.add("IsNaN", [mod])])
    signs_differ = w.add("Xor", [w.add("Less", [y, zero]), w.add("Less", [mod, zero])])
    fix = w.add("And", [nonzero, signs_differ])
    mod = w.add("Where", [fix, w.add("Add", [mod, y]), mod])
    signed_zero = w.add("Where", [w.add("GreaterOrEqual", [y, zero]), zero,
                                  w.constant(-0.0, dtype)])
    mod = w.add("Where", [nonzero, mod, signed_zero])
    div = w.add("Where", [fix, w.add("Sub", [div, one]), div])
    floor = w.add("Floor", [div])
    half = w.constant(0.5, dtype)
    rounded = w.add("Where", [w.add("Greater", [w.add("Sub", [div, floor]), half]),
                              w.add("Add", [floor, one]), floor])
    quotient = w.add("Div", [x, y])
    zero_div = w.add("Mul", [quotient, zero])  # the sign of x / y
    floordiv = w.add("Where", [_nonzero(w, div, dtype), rounded, zero_div])
    by_zero = w.add("Equal", [y, zero])
    return w.add("Where", [by_zero, quotient, floordiv]), mod


def floor_divide(w, node):
    (x, y), dtype = loop_operands(w, node)
    if dtype.kind == "f":
        return finish(w, node, _float_divmod(w, x, y, dtype)[0], dtype)
    if dtype == BOOL:
        raise TypeError("jitflow.onnx.export: floor_divide of bools has no ONNX form")
    safe, by_zero = _integer_divisor(w, x, y, dtype)
    truncated = w.add("Div", [x, safe])
    rest = w.add("Sub", [x, w.add("Mul", [truncated, safe])])
    zero = w.constant(0, dtype)
    down = w.add("And", [w.add("Not", [w.add("Equal", [rest, zero])]),
                         w.add("Xor", [w.add("Less", [rest, zero]),
                                       w.add("Less", [safe, zero])])])
    floored = w.add("Sub", [truncated, w.add("Cast", [down], to=onnx_type(dtype))])
    return finish(w, node, w.add("Where", [by_zero, zero, floored]), dtype)


def remainder(w, node):
    (x, y), dtype = loop_operands(w, node)
    if dtype.kind == "f":
        return finish(w, node, _float_divmod(w, x, y, dtype)[1], dtype)
    safe, by_zero = _integer_divisor(w, x, y, dtype)
    mod = w.add("Mod", [x, safe], fmod=0)  # the divisor's sign, as NumPy's
    return finish(w, node, w.add("Where", [by_zero, w.constant(0, dtype), mod]), dtype)


def invert(w, node):
    (x,), dtype = loop_operands(w, node)
    return finish(w, node, w.add("Not" if dtype == BOOL else "BitwiseNot", [x]), dtype)


def where(w, node):
    """Where; for floats, a -0.0 taken from x (which ONNX Runtime's Where makes +0.0)
    is -0.0 in any runtime: there the result's magnitude is multiplied by -1."""
    cond, x, y = node.inputs
    dtype = node.outputs[0].type.dtype
    if dtype == BOOL:  # ONNX Runtime has no Where of bools
        chosen = w.add("Where", [w.operand(cond, BOOL), w.operand(x, INT32),
                                 w.operand(y, INT32)])
        return [w.cast(chosen, INT32, BOOL)]
    c, x_name = w.operand(cond, BOOL), w.operand(x, dtype)
    result = w.add("Where", [c, x_name, w.operand(y, dtype)])
    if dtype.kind != "f" or (isinstance(x, Lit) and not np.signbit(x.value[x.value == 0]).any()):
        return [result]
    zero = w.constant(0, dtype)
    negative_zero = w.add("And", [w.add("Equal", [x_name, zero]),
                                  w.add("Less", [w.add("Div", [w.constant(1, dtype), x_name]),
                                                 zero])])
    fix = w.add("And", [c, negative_zero])
    # there: |result| * -1, -0.0 whatever the sign the runtime's Where gave
    magnitude = w.add("Where", [fix, w.add("Abs", [result]), result])
    sign = w.add("Where", [fix, w.constant(-1, dtype), w.constant(1, dtype)])
    return [w.add("Mul", [magnitude, sign])]


def cast(w, node):
    x = node.inputs[0]
    name = w.operand(x, node.params["dtype"])
    return [name if name != w.read(x) else w.add("Identity", [name])]


def identity(w, node):
    return [w.add("Identity", [w.read(node.inputs[0])])]


ELEMENTWISE_RULES = {
    "neg": simple("Neg"), "abs": simple("Abs", bool_op="Identity"), "sign": simple("Sign"),
    "exp": simple("Exp"), "log": simple("Log"), "sqrt": simple("Sqrt"),
    "sin": simple("Sin"), "cos": simple("Cos"), "tan": simple("Tan"),
    "tanh": simple("Tanh"), "logistic": simple("Sigmoid"), "arctan": simple("Atan"),
    "arcsin": simple("Asin"), "arccos": simple("Acos"),
    "log1p": log1p, "expm1": expm1,
    "floor": on_integers_too("Floor"), "ceil": on_integers_too("Ceil"),
    "isnan": float_test("IsNaN"), "isinf": float_test("IsInf"),
    "logical_not": logical("Not"), "invert": invert,
    "add": add, "sub": simple("Sub"),
    "mul": simple("Mul", bool_op="And"), "div": simple("Div"), "pow": simple("Pow"),
    "max": simple("Max", bool_op="Or"), "min": simple("Min", bool_op="And"),
    "floor_divide": floor_divide, "mod": remainder,
    "eq": comparison("Equal"), "ne": comparison("Equal", negate=True),
    "lt": comparison("Less"), "le": comparison("LessOrEqual"),
    "gt": comparison("Greater"), "ge": comparison("GreaterOrEqual"),
    "logical_and": logical("And"), "logical_or": logical("Or"),
    "logical_xor": logical("Xor"),
    "bitwise_and": simple("BitwiseAnd", bool_op="And"),
    "bitwise_or": simple("BitwiseOr", bool_op="Or"),
    "bitwise_xor": simple("BitwiseXor", bool_op="Xor"),
    "where": where, "cast": cast, "stop_gradient": identity,
}
