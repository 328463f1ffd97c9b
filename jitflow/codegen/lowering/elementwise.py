"""Elementwise nodes and fused bodies -> LLVM: each element computed by the scalar
rules of codegen/math, in the dtypes NumPy's ufunc loop converts its operands to (a
Python int checked to fit first, float16 worked in float32, uint64 against int64
compared exactly), with debug_nans' checks where they are on.

ElementwiseLowering is a part of Lowering (lower.py): its methods use the Lowering's
builder, emitter, views and loop nests.
"""
import numpy as np
from llvmlite import ir

from ...ir.sizes import product
from ...ir.graph import Lit
from ...ir.passes.fuse import REDUCTIONS
from ...ir.types import bfloat16, is_floating, ufunc_loop_dtypes
from ..emitter import I64, shaped_like
from ..errors import PYTHON_INT_OVERFLOWS
from ..loops.reductions import lower_region
from ..math import mathlib
from ..math.scalar import (BFLOAT16_RULES, HALF_RULES, MATH_FUNCTION_RULES,
                           RULES as SCALAR_RULES, mathlib_calls)


class ElementwiseLowering:
    """The elementwise part of Lowering."""

    def _elementwise(self, node, inputs, out):
        for i in _checked_python_ints(node):  # loop-invariant: checked once, up front
            self._check_python_int(self.read(inputs[i], I64(inputs[i].offset)), node, i)

        def body(offsets):
            values = [self.read(v, off) for v, off in zip(inputs, offsets)]
            self.em.store(self._scalar(node, values), out.base, out.dtype, offsets[-1])
        self.loop_nest(out.shape, inputs + [out], body, owner=len(inputs),
                       work=_work(out.shape, [node]), vector=True)

    def _scalar(self, node, values):
        """One element of an elementwise node, from its operands' elements."""
        in_types = [v.type.dtype for v in node.inputs]
        if node.op == "cast":
            result = self.em.cast(values[0], in_types[0], node.outputs[0].type.dtype)
        elif _compares_across_signs(node):
            result = self._compare_across_signs(node, values)
        else:
            loop_dtypes = _loop_dtypes(node)
            operands = [self._to_loop_dtype(input, value, dtype, loop) for input, value,
                        dtype, loop in zip(node.inputs, values, in_types, loop_dtypes)]
            if loop_dtypes[-1] in NARROW_FLOAT_RULES:
                return self._in_float32(node, operands, loop_dtypes)
            result = SCALAR_RULES[_scalar_rule_name(node)](self.em, *operands,
                                                           dtype=loop_dtypes[-1])
        if self.nan_checks is not None and node.outputs[0].type.dtype.kind == "f":
            self.nan_checks.check(result, node.outputs[0].type.dtype)
        return result

    def _in_float32(self, node, operands, loop_dtypes):
        """A float16 or bfloat16 loop as NumPy's (and ml_dtypes'): each operand widened
        to float32 (exactly), the rule computed there, and a float result rounded to the
        narrow dtype once."""
        float32 = np.dtype(np.float32)
        widened = [self.em.cast(value, dtype, float32) if dtype in NARROW_FLOAT_RULES
                   else value for value, dtype in zip(operands, loop_dtypes)]
        name = _scalar_rule_name(node)
        rule = NARROW_FLOAT_RULES[loop_dtypes[-1]].get(name) or SCALAR_RULES[name]
        result = rule(self.em, *widened, dtype=float32)
        out = node.outputs[0].type.dtype
        return self.em.cast(result, float32, out) if out in NARROW_FLOAT_RULES else result

    def _compare_across_signs(self, node, values):
        """uint64 against int64 (an array or a Python int), which NumPy compares exactly:
        both extended to 65-bit integers, which hold every value of either."""
        b, wide = self.builder, ir.IntType(65)
        extended = []
        for input, value in zip(node.inputs, values):
            unsigned = input.type.dtype.kind in "bu"
            value = self.em.cast(value, input.type.dtype, np.dtype("u8" if unsigned else "i8"))
            extend = b.zext if unsigned else b.sext
            extended.append(extend(value, shaped_like(value.type, wide)))
        return self.em.bool(b.icmp_signed(COMPARISONS[node.op], *extended))

    def _to_loop_dtype(self, input, value, dtype, loop):
        """An operand converted for the loop. A Python int becomes a float the way Python
        converts it, through float64: 2**60 + 2**36 + 1 rounds twice, to float32 2**60,
        not once (to 2**60 + 2**37) as an int64 array's element does."""
        if _is_python_int(input) and is_floating(loop):
            float64 = np.dtype(np.float64)
            value, dtype = self.em.cast(value, dtype, float64), float64
        return self.em.cast(value, dtype, loop)

    def _check_python_int(self, number, node, position):
        """Flag NumPy's OverflowError if the Python int `number`, operand `position` of
        `node`, does not fit the loop's integer dtype."""
        loop, b = _loop_dtypes(node)[position], self.builder
        info, int64 = np.iinfo(loop), np.dtype(np.int64)
        highest = min(info.max, np.iinfo(int64).max)  # the number is an int64
        outside = b.or_(b.icmp_signed("<", number, self.em.const(info.min, int64)),
                        b.icmp_signed(">", number, self.em.const(highest, int64)))
        self.em.error.flag_if(outside, PYTHON_INT_OVERFLOWS[loop])

    def _fused(self, node, inputs, outputs):
        """A fused node: one loop nest evaluating the whole body per element, so its
        intermediates live in registers, never in memory. A body with reductions is a
        region (loops/reductions.py). mathlib is told which math functions the loop
        calls: which route is the fastest for one depends on the others."""
        (body,) = node.subgraphs
        with mathlib.loop_calling(mathlib_calls(map(_scalar_rule_name, body.nodes))):
            self._fused_body(body, inputs, outputs)

    def _fused_body(self, body, inputs, outputs):
        if any(member.op in REDUCTIONS for member in body.nodes):
            lower_region(self, body, inputs, outputs)
            return
        constants = {lit: self._constant(lit) for n in body.nodes for lit in n.inputs
                     if isinstance(lit, Lit)}
        arrays = [v for v in constants.values() if v.constant is None]
        views = inputs + arrays + outputs
        inline_checks = self._check_fused_python_ints(
            body, {**dict(zip(body.inputs, inputs)), **constants})

        def element(offsets):
            env = dict(zip(body.inputs, (self.read(v, off) for v, off in
                                         zip(inputs, offsets))))
            at = dict(zip(map(id, arrays), offsets[len(inputs):]))
            for member in body.nodes:
                values = [env[v] if not isinstance(v, Lit) else
                          self.read(constants[v], at.get(id(constants[v]), I64(0)))
                          for v in member.inputs]
                for i in inline_checks.get(id(member), ()):
                    self._check_python_int(values[i], member, i)
                env[member.outputs[0]] = self._scalar(member, values)
            for var, out, offset in zip(body.outputs, outputs, offsets[-len(outputs):]):
                self.em.store(env[var], out.base, out.dtype, offset)
        self.loop_nest(outputs[0].shape, views, element, owner=len(inputs) + len(arrays),
                       work=_work(outputs[0].shape, body.nodes), vector=True)

    def _body_views(self, node, inputs):
        """A fused node's body inputs and literals -> their views."""
        (body,) = node.subgraphs
        constants = {lit: self._constant(lit) for n in body.nodes for lit in n.inputs
                     if isinstance(lit, Lit)}
        return {**dict(zip(body.inputs, inputs)), **constants}

    def _check_fused_python_ints(self, body, outer):
        """Check before the loop the Python int operands of a fused body's members that
        come from outside (`outer`: body input or literal -> view). One computed inside
        the body can only be in a 0-d body (Python ints are 0-d), whose one element
        checks it: returns {id(member): [its operand positions]} for those."""
        inline = {}
        for member in body.nodes:
            for i in _checked_python_ints(member):
                view = outer.get(member.inputs[i])
                if view is None:
                    inline.setdefault(id(member), []).append(i)
                else:
                    self._check_python_int(self.read(view, I64(view.offset)), member, i)
        return inline


# The dtypes computed in float32, each with the rules it takes instead of RULES' there
# (ml_dtypes' bfloat16 maximum and minimum keep y on ties, as float32's do; its sign
# keeps -0.0).
NARROW_FLOAT_RULES = {np.dtype(np.float16): HALF_RULES,
                      **({bfloat16: BFLOAT16_RULES} if bfloat16 is not None else {})}
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


# What a math function costs per element, in elements of plain arithmetic, for the
# choice to split a nest between threads (lowering/parallel.py). Measured on 2 cores of
# an Intel Xeon (AVX-512), float32 x + 1.0 takes 0.13 ns an element, exp and tanh
# 0.7-0.9 (libmvec). Counted at 2, split against serial in one process, calls back to
# back (medians): tanh(sin(exp(x))) of 2**15 elements 56-62 us against 66-90, of 2**16
# 87-90 against 112-134; a lone tanh of 2**16 the same either way (49-54 against 50-56).
MATH_FUNCTION_WORK = 2


def _work(shape, nodes):
    """The elements a nest computing `nodes` per element handles, in parallel.py's
    unit: one per element, and MATH_FUNCTION_WORK more for each math function."""
    elements = product(shape)
    calls = sum(_scalar_rule_name(n) in MATH_FUNCTION_RULES and
                n.outputs[0].type.dtype.kind in "fc" for n in nodes)
    return elements * (1 + MATH_FUNCTION_WORK * calls)


def _scalar_rule_name(node):
    """pow has a second rule for an exponent NumPy's loop sees as one value: 0-d, or a
    single element broadcast over the whole result (measured: shape (1,) against (3, 4)
    is such a scalar, (3, 1) and (1, 4) are not, nor (1,) against (1,))."""
    if node.op == "pow":
        exponent, result = node.inputs[1].type, node.outputs[0].type
        if exponent.shape == () or (exponent.size == 1 and result.size > 1):
            return "pow_by_scalar"
    return node.op


def _is_python_int(value):
    """A weakly typed int: a Python int, which NumPy takes by its value (NEP 50)."""
    return value.type.weak and value.type.dtype.kind == "i"


def _checked_python_ints(node):
    """Positions of the Python int operands NumPy converts to a narrower integer loop
    dtype, raising OverflowError if they do not fit (NEP 50). np.where is no ufunc: it
    converts them unchecked (they wrap)."""
    if node.op in ("cast", "where") or not node.prim.elementwise:
        return []
    return [i for i, (value, loop) in enumerate(zip(node.inputs, _loop_dtypes(node)))
            if _is_python_int(value) and (loop.kind == "u" or loop.kind == "i" and
                                          loop.itemsize < value.type.dtype.itemsize)]


def _loop_dtypes(node):
    """Dtypes the operands are converted to before the scalar rule runs; the last entry is
    the dtype the rule is told it computes in."""
    if node.op == "where":
        dtype = node.outputs[0].type.dtype
        return [np.dtype(np.bool_), dtype, dtype, dtype]
    resolved = ufunc_loop_dtypes(node.prim.ufunc, [v.type for v in node.inputs])
    dtypes = list(resolved[:len(node.inputs)]) + [resolved[0]]
    if node.op in COMPARISONS and dtypes[0].kind in "iu" and \
            any(_is_python_int(v) for v in node.inputs):
        # NumPy compares integers with a Python int exactly, whatever its size (int32
        # x < 2**40 is True, uint8 x < -1 is False): in int64, which holds both, so do
        # we (uint64 takes _compare_across_signs).
        dtypes = [np.dtype(np.int64)] * len(dtypes)
    return dtypes


def _compares_across_signs(node):
    """A comparison of uint64 with int64 or a Python int, which no 64-bit loop holds."""
    if node.op not in COMPARISONS:
        return False
    kinds = {v.type.dtype.kind for v in node.inputs}
    dtypes = {v.type.dtype for v in node.inputs if not v.type.weak}
    return np.dtype(np.uint64) in dtypes and kinds <= set("biu") and (
        "i" in kinds or len(dtypes) > 1)
