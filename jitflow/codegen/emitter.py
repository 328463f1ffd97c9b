"""Small helpers over llvmlite's IRBuilder: types, constants, casts, loops, intrinsics.

Scalar operations follow NumPy's exact semantics (signed zeros, NaN, integer division by
zero, float->int casts of NaN), since compiled results must equal NumPy's.
"""
from contextlib import contextmanager

import numpy as np
from llvmlite import ir

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()

LLVM_TYPES = {np.dtype(np.bool_): I8, np.dtype(np.int32): I32, np.dtype(np.int64): I64,
              np.dtype(np.float32): F32, np.dtype(np.float64): F64}


def ltype(dtype):
    """The LLVM type holding one element of `dtype` in memory (bool is one byte)."""
    return LLVM_TYPES[np.dtype(dtype)]


class Emitter:
    """Emits code at one insertion point. Values are kept in their memory types: bool as
    an i8 that is 0 or 1; comparisons produce i1 and `bool` turns them back into i8."""

    def __init__(self, builder):
        self.b = builder
        self.module = builder.module

    # --- constants and casts ----------------------------------------------------------
    def const(self, value, dtype):
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            return ir.Constant(ltype(dtype), float(value))
        return ir.Constant(ltype(dtype), int(value))

    def bool(self, bit):
        return self.b.zext(bit, I8)

    def truth(self, value, dtype):
        """An i1: value != 0 (NaN is true, as in NumPy)."""
        if np.dtype(dtype).kind == "f":
            return self.b.fcmp_unordered("!=", value, self.const(0, dtype))
        return self.b.icmp_signed("!=", value, self.const(0, dtype))

    def cast(self, value, src, dst):
        src, dst = np.dtype(src), np.dtype(dst)
        if src == dst:
            return value
        exact = _exact_constant(value, dst)
        if exact is not None:
            return exact
        if dst.kind == "b":
            return self.bool(self.truth(value, src))
        if src.kind == "f" and dst.kind == "f":
            return self.b.fpext(value, ltype(dst)) if dst.itemsize > src.itemsize \
                else self.b.fptrunc(value, ltype(dst))
        if src.kind in "bi" and dst.kind == "f":
            return self.b.uitofp(value, ltype(dst)) if src.kind == "b" \
                else self.b.sitofp(value, ltype(dst))
        if src.kind in "bi":  # integer widths
            if src.itemsize > dst.itemsize:
                return self.b.trunc(value, ltype(dst))
            return self.b.zext(value, ltype(dst)) if src.kind == "b" \
                else self.b.sext(value, ltype(dst))
        return self._float_to_int(value, src, dst)

    def _float_to_int(self, value, src, dst):
        # fptosi of NaN or of an out-of-range value is poison in LLVM; x86 (and so NumPy)
        # gives the minimum integer there, so that is what we select.
        bits = dst.itemsize * 8
        low = self.const(-2.0 ** (bits - 1), src)
        in_range = self.b.and_(self.b.fcmp_ordered(">=", value, low),
                               self.b.fcmp_ordered("<", value, self.const(2.0 ** (bits - 1),
                                                                          src)))
        safe = self.b.select(in_range, value, self.const(0, src))
        converted = self.b.fptosi(safe, ltype(dst))
        return self.b.select(in_range, converted, self.const(-2 ** (bits - 1), dst))

    # --- index arithmetic, folded where an operand is a constant ------------------------
    # Loop nests compute offsets as offset + index * stride; with a stride of 1, a first
    # offset of 0 or a constant index that would be ~20% of the instructions LLVM gets,
    # all printed, parsed and folded again there.
    def add(self, x, y):
        if _constant(x) == 0:
            return y
        if _constant(y) == 0:
            return x
        if _constant(x) is not None and _constant(y) is not None:
            return ir.Constant(x.type, x.constant + y.constant)
        return self.b.add(x, y)

    def mul(self, x, y):
        for a, other in ((x, y), (y, x)):
            if _constant(a) == 1:
                return other
            if _constant(a) == 0:
                return a
        if _constant(x) is not None and _constant(y) is not None:
            return ir.Constant(x.type, x.constant * y.constant)
        return self.b.mul(x, y)

    def moved(self, offset, index, stride):
        """offset + index * stride (a Python int stride)."""
        return offset if stride == 0 else self.add(offset, self.mul(index, I64(stride)))

    # --- memory -------------------------------------------------------------------------
    def element_pointer(self, base, dtype, index):
        if _constant(index) == 0:
            return base
        return self.b.gep(base, [index], inbounds=True, source_etype=ltype(dtype))

    def load(self, base, dtype, index):
        return self.b.load(self.element_pointer(base, dtype, index), typ=ltype(dtype))

    def store(self, value, base, dtype, index):
        self.b.store(value, self.element_pointer(base, dtype, index))

    # --- control flow -------------------------------------------------------------------
    @contextmanager
    def for_range(self, count, name="i"):
        """for i in range(count): the body is emitted inside the `with` block."""
        b = self.b
        count = count if isinstance(count, ir.Value) else I64(count)
        before = b.block
        loop = b.append_basic_block(f"{name}.loop")
        after = b.append_basic_block(f"{name}.end")
        if (_constant(count) or 0) > 0:
            b.branch(loop)
        else:
            b.cbranch(b.icmp_signed(">", count, I64(0)), loop, after)
        b.position_at_end(loop)
        index = b.phi(I64, name=name)
        index.add_incoming(I64(0), before)
        yield index
        following = b.add(index, I64(1), flags=["nuw", "nsw"])
        index.add_incoming(following, b.block)
        b.cbranch(b.icmp_signed("<", following, count), loop, after)
        b.position_at_end(after)

    def keep_rolled(self, index):
        """Mark the loop counted by `index` (a for_range index) not to be unrolled."""
        _, latch = index.incomings[-1]
        option = self.module.add_metadata([ir.MetaDataString(self.module,
                                                              "llvm.loop.unroll.disable")])
        loop_id = self.module.add_metadata([ir.MetaDataString(
            self.module, f"jitflow.loop.{len(self.module.metadata)}")])
        loop_id.operands = (loop_id, option)  # a loop ID refers to itself
        latch.terminator.set_metadata("llvm.loop", loop_id)

    @contextmanager
    def if_then(self, condition):
        with self.b.if_then(condition):
            yield

    def intrinsic(self, name, value, *more):
        function = self.module.declare_intrinsic(name, [value.type])
        return self.b.call(function, [value, *more])


def _constant(value):
    """The Python int an integer constant holds, else None."""
    if isinstance(value, ir.Constant) and isinstance(value.type, ir.IntType) and \
            isinstance(value.constant, int):
        return value.constant
    return None


def _exact_constant(value, dst):
    """A constant converted to float dtype `dst` when it converts exactly (a literal
    like the 256 of x / 256), else None."""
    if not isinstance(value, ir.Constant) or np.dtype(dst).kind != "f" or \
            not isinstance(value.constant, (int, float)):
        return None
    converted = np.dtype(dst).type(value.constant)
    if not np.isfinite(converted) or float(converted) != value.constant:
        return None
    return ir.Constant(ltype(dst), float(converted))


# --- functions across modules -------------------------------------------------------

def declared_in(module, function):
    """`function` as `module` calls it: itself, or a declaration of it there when another
    module defines it (the modules are linked by name)."""
    if function.module is module:
        return function
    existing = module.globals.get(function.name)
    return existing if existing is not None else \
        ir.Function(module, function.function_type, function.name)


# --- functions of runtime modules (pool.py, the gemm_*.py library) ---------------------

def define_function(module, name, result, params, internal=True, attributes=()):
    """A function to define, and a builder at its start."""
    function = ir.Function(module, ir.FunctionType(result, params), name)
    if internal:
        function.linkage = "internal"
    for attribute in attributes:
        function.attributes.add(attribute)
    return function, ir.IRBuilder(function.append_basic_block("entry"))


def entry_alloca(b, type, align=None):
    """Stack memory in the function's first block: allocated once per call, even when
    asked for inside a loop. (Not through a second builder in b's own block: a builder's
    position is an index.)"""
    first = b.function.entry_basic_block
    entry = b if b.block is first else ir.IRBuilder(first)
    if entry is not b:
        entry.position_at_start(first)
    slot = entry.alloca(type)
    if align is not None:
        slot.align = align
    slot.type = PTR  # an opaque pointer, as Lowering.entry_alloca explains
    return slot
