"""Small helpers over llvmlite's IRBuilder: types, constants, casts, loops, intrinsics.

Scalar operations follow NumPy's exact semantics (signed zeros, NaN, integer division by
zero, float->int casts of NaN), since compiled results must equal NumPy's.

The same operations build vector code: inside `Emitter.vectorized(lanes)` every value is
a vector of `lanes` elements, constants are splats, and loads and stores take a
`LaneOffset` (the lanes' element offsets) instead of an offset.
"""
from collections import namedtuple
from contextlib import contextmanager

import numpy as np
from llvmlite import ir

from ..ir.sizes import Size
from ..ir.types import bfloat16 as BFLOAT16, is_bfloat16
from .sizes import Blocks, runtime_size


class _SizedInt(ir.IntType):
    """i64 or i32, whose constants may be run-time sizes: I64(size) is the size's value
    in the code being lowered (sizes.py), I32(size) the same in 32 bits (BLAS's ints;
    a size is at most MAX_N, ir/sizes.py)."""
    _instance_cache = {}  # (not IntType's: ir.IntType(64) stays the plain type)

    def __call__(self, value):
        if isinstance(value, (Size, Blocks)):
            return runtime_size(value, self.width)
        return super().__call__(value)


I1, I8, I16 = ir.IntType(1), ir.IntType(8), ir.IntType(16)
I32, I64 = _SizedInt(32), _SizedInt(64)
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
PTR = ir.PointerType()

# LLVM's integers have no sign: signed and unsigned dtypes share a type, and the
# instructions (sext or zext, sdiv or udiv, icmp slt or ult) carry the difference.
# bfloat16 is held as its 16 bits, an i16: native code computes it in float32
# (Emitter._cast_bfloat16), so no operation sees it as a float of its own.
LLVM_TYPES = {np.dtype(np.bool_): I8, np.dtype(np.float16): F16,
              np.dtype(np.float32): F32, np.dtype(np.float64): F64,
              **{np.dtype(f"{kind}{size}"): ir.IntType(size * 8)
                 for kind in "iu" for size in (1, 2, 4, 8)},
              **({BFLOAT16: I16} if BFLOAT16 is not None else {})}


def ltype(dtype):
    """The LLVM type holding one element of `dtype` in memory (bool is one byte)."""
    return LLVM_TYPES[np.dtype(dtype)]


def shaped_like(kind, element):
    """`element`, or a vector of it as long as `kind` when `kind` is a vector type."""
    return ir.VectorType(element, kind.count) if isinstance(kind, ir.VectorType) else element


def element_of(kind):
    return kind.element if isinstance(kind, ir.VectorType) else kind


class Splat(ir.Constant):
    """A vector constant with one value in every lane, printed as LLVM's `splat (T v)`:
    a 16-lane constant in a tenth of the text to print and parse."""

    def __init__(self, vector, value):
        super().__init__(vector, value)
        self.element = ir.Constant(vector.element, value)

    def _get_reference(self):
        return f"splat ({self.element})"


class Undefined(ir.Constant):
    """A vector of undefined lanes, printed as LLVM's one word `undef`."""

    def __init__(self, vector):
        super().__init__(vector, None)

    def _get_reference(self):
        return "undef"


def constant(kind, value):
    """A constant of type `kind`; a splat when `kind` is a vector type."""
    return Splat(kind, value) if isinstance(kind, ir.VectorType) else ir.Constant(kind, value)


def scalar_constant(value):
    """The Python number a scalar or splat constant holds, else None."""
    if isinstance(value, Splat):
        value = value.element
    if isinstance(value, ir.Constant) and isinstance(value.constant, (int, float)):
        return value.constant
    return None


class LaneOffset(namedtuple("LaneOffset", "first step")):
    """The element offsets of a vector iteration's lanes: first + lane * step, where step
    is 1 (consecutive elements) or 0 (one element broadcast to every lane)."""


class Emitter:
    """Emits code at one insertion point. Values are kept in their memory types: bool as
    an i8 that is 0 or 1; comparisons produce i1 and `bool` turns them back into i8."""

    def __init__(self, builder):
        self.b = builder
        self.module = builder.module
        self.lanes = None  # inside `vectorized`: the vector length of every value
        self.mask = None   # and, in a partial vector, the <lanes x i1> of the lanes that exist
        self.streamed = None  # inside `streaming`: (base, alignment) of non-temporal stores

    @contextmanager
    def vectorized(self, lanes, mask=None):
        """Emit vector code of `lanes` lanes in the block; `mask` leaves the lanes where
        it is false out of every load, store and error check."""
        saved = self.lanes, self.mask
        self.lanes, self.mask = lanes, mask
        try:
            yield
        finally:
            self.lanes, self.mask = saved

    @contextmanager
    def streaming(self, base, alignment):
        """Whole-vector stores to `base` (the pointer value itself) become non-temporal
        stores of that `alignment`, which the caller guarantees (loops/vector_loops.py):
        x86 writes such a store as a whole line, without reading the line first.
        Masked stores stay plain."""
        saved = self.streamed
        self.streamed = (base, alignment)
        try:
            yield
        finally:
            self.streamed = saved

    def typed(self, element):
        """The type of a value with `element`s: a vector inside `vectorized`."""
        return element if self.lanes is None else ir.VectorType(element, self.lanes)

    def splat(self, value):
        """A scalar value repeated in every lane (the value itself outside `vectorized`)."""
        if self.lanes is None or isinstance(value.type, ir.VectorType):
            return value
        vector = self.typed(value.type)
        if scalar_constant(value) is not None:
            return Splat(vector, scalar_constant(value))
        first = self.b.insert_element(Undefined(vector), value, I32(0))
        return self.b.shuffle_vector(first, Undefined(vector),
                                     ir.Constant(ir.VectorType(I32, self.lanes), None))

    # --- constants and casts ----------------------------------------------------------
    def const(self, value, dtype):
        dtype = np.dtype(dtype)
        if isinstance(value, Size):  # a constant that is a run-time size (ir/sizes.py)
            lanes, self.lanes = self.lanes, None  # converted once, as a scalar
            try:
                scalar = self.cast(I64(value), np.dtype(np.int64), dtype)
            finally:
                self.lanes = lanes
            return self.splat(scalar)
        if is_bfloat16(dtype):
            value = bfloat16_bits(value)
        value = float(value) if dtype.kind == "f" else int(value)
        return constant(self.typed(ltype(dtype)), value)

    def bool(self, bit):
        return self.b.zext(bit, shaped_like(bit.type, I8))

    def truth(self, value, dtype):
        """An i1: value != 0 (NaN is true, as in NumPy)."""
        if np.dtype(dtype).kind == "f":
            return self.b.fcmp_unordered("!=", value, self.const(0, dtype))
        return self.b.icmp_signed("!=", value, self.const(0, dtype))

    def icmp(self, op, x, y, dtype):
        """x op y (an i1) for integers of `dtype`: unsigned compares for bool and uint."""
        if np.dtype(dtype).kind in "bu":
            return self.b.icmp_unsigned(op, x, y)
        return self.b.icmp_signed(op, x, y)

    def cast(self, value, src, dst):
        src, dst = np.dtype(src), np.dtype(dst)
        if src == dst:
            return value
        if is_bfloat16(src) or is_bfloat16(dst):
            return self._cast_bfloat16(value, src, dst)
        exact = _exact_constant(value, dst)
        if exact is not None:
            return exact
        if FLOAT16 in (src, dst):
            return self._cast_half(value, src, dst)
        if dst.kind == "b":
            return self.bool(self.truth(value, src))
        target = shaped_like(value.type, ltype(dst))
        if src.kind == "f" and dst.kind == "f":
            return self.b.fpext(value, target) if dst.itemsize > src.itemsize \
                else self.b.fptrunc(value, target)
        if src.kind in "biu" and dst.kind == "f":
            return self.b.uitofp(value, target) if src.kind in "bu" \
                else self.b.sitofp(value, target)
        if src.kind in "biu":  # integer widths: extended by the source's signedness
            if src.itemsize == dst.itemsize:
                return value  # int32 <-> uint32: the same bits
            if src.itemsize > dst.itemsize:
                return self.b.trunc(value, target)
            return self.b.zext(value, target) if src.kind in "bu" \
                else self.b.sext(value, target)
        return self._float_to_int(value, src, dst)

    def _cast_half(self, value, src, dst):
        """Casts from and to float16 go through float32, which holds every half and
        every integer that does not overflow a half exactly. float64 to half would round
        twice that way: it is first rounded to float32 to odd (see _to_odd_float32),
        after which rounding to half gives the correctly rounded result, as NumPy's.
        Without F16C's instructions LLVM would call __extendhfsf2 and __truncsfhf2,
        which a JIT process need not have: the conversions are then integer code."""
        float32, hardware = np.dtype(np.float32), half_in_hardware()
        if src == FLOAT16:
            wide = self.b.fpext(value, shaped_like(value.type, F32)) if hardware else \
                self._half_to_float(value)
            return self.cast(wide, float32, dst)
        if src == np.dtype(np.float64):
            narrow = self._to_odd_float32(value)
        else:
            narrow = self.cast(value, src, float32)
        if hardware:
            return self.b.fptrunc(narrow, shaped_like(value.type, F16))
        return self._float_to_half(narrow)

    def _half_to_float(self, value):
        """A half's bits moved into a float32's place, scaled by 2**112 (exact: it
        re-biases the exponent and makes a subnormal half a normal float); infinities
        and NaN keep every exponent bit set."""
        b, word = self.b, shaped_like(value.type, I32)
        h = b.zext(b.bitcast(value, shaped_like(value.type, I16)), word)
        magnitude = b.shl(b.and_(h, constant(word, 0x7FFF)), constant(word, 13))
        scaled = b.fmul(b.bitcast(magnitude, shaped_like(value.type, F32)),
                        constant(shaped_like(value.type, F32), 2.0 ** 112))
        special = b.icmp_unsigned(">=", b.and_(h, constant(word, 0x7C00)),
                                  constant(word, 0x7C00))
        bits = b.select(special, b.or_(magnitude, constant(word, 0x7F800000)),
                        b.bitcast(scaled, word))
        sign = b.shl(b.and_(h, constant(word, 0x8000)), constant(word, 16))
        return b.bitcast(b.or_(bits, sign), shaped_like(value.type, F32))

    def _float_to_half(self, value):
        """float32 to half, rounded to nearest even: a subnormal half by a float addition
        of 0.5 (whose rounding is the half's), a normal one by adding half an ulp less
        one, plus the kept bit's parity, to the re-biased bits; past the largest half,
        inf, and a NaN stays a quiet NaN with its payload's high bits (as F16C's)."""
        b, word = self.b, shaped_like(value.type, I32)

        def c(number):
            return constant(word, number)
        bits = b.bitcast(value, word)
        sign = b.and_(bits, c(0x80000000))
        f = b.xor(bits, sign)
        overflowing = b.select(b.icmp_unsigned(">", f, c(0x7F800000)),
                               b.or_(c(0x7E00), b.and_(b.lshr(f, c(13)), c(0x3FF))),
                               c(0x7C00))
        magic = constant(shaped_like(value.type, F32), 0.5)
        subnormal = b.sub(b.bitcast(b.fadd(b.bitcast(f, value.type), magic), word),
                          c(0x3F000000))
        odd = b.and_(b.lshr(f, c(13)), c(1))
        rebias = ((15 - 127) << 23) + 0xFFF
        normal = b.lshr(b.add(b.add(f, c(rebias & 0xFFFFFFFF)), odd), c(13))
        magnitude = b.select(b.icmp_unsigned(">=", f, c(0x47800000)), overflowing,
                             b.select(b.icmp_unsigned("<", f, c(113 << 23)), subnormal,
                                      normal))
        half = b.or_(magnitude, b.lshr(sign, c(16)))
        return b.bitcast(b.trunc(half, shaped_like(value.type, I16)),
                         shaped_like(value.type, F16))

    def _cast_bfloat16(self, value, src, dst):
        """bfloat16 is the upper half of a float32: widened by a shift, exactly. Every
        cast to it goes through float32, as ml_dtypes' casts do (float64 and int64
        values are rounded twice), and rounds to nearest even from there; a NaN becomes
        the quiet NaN of its sign."""
        b, float32 = self.b, np.dtype(np.float32)
        if is_bfloat16(src):
            bits = b.shl(b.zext(value, shaped_like(value.type, I32)), constant(
                shaped_like(value.type, I32), 16))
            return self.cast(b.bitcast(bits, shaped_like(value.type, F32)), float32, dst)
        single = self.cast(value, src, float32)
        word = shaped_like(single.type, I32)
        bits = b.bitcast(single, word)
        high = b.lshr(bits, constant(word, 16))
        bias = b.add(constant(word, 0x7FFF), b.and_(high, constant(word, 1)))
        rounded = b.lshr(b.add(bits, bias), constant(word, 16))
        quiet_nan = b.or_(b.and_(high, constant(word, 0x8000)), constant(word, 0x7FC0))
        is_nan = b.fcmp_unordered("uno", single, single)
        return b.trunc(b.select(is_nan, quiet_nan, rounded), shaped_like(single.type, I16))

    def _to_odd_float32(self, value):
        """float64 -> float32 rounded to odd: truncated toward zero, with the last bit
        set when inexact. (No libcall: LLVM's own double -> half conversion calls
        __truncdfhf2, which a JIT process need not have.)"""
        b = self.b
        single = b.fptrunc(value, shaped_like(value.type, F32))
        back = b.fpext(single, value.type)
        bits = b.bitcast(single, shaped_like(value.type, I32))
        magnitude_up = b.fcmp_ordered(">", self.intrinsic("llvm.fabs", back),
                                      self.intrinsic("llvm.fabs", value))
        bits = b.select(magnitude_up, b.sub(bits, constant(bits.type, 1)), bits)
        inexact = b.fcmp_ordered("!=", b.fpext(b.bitcast(bits, single.type), value.type),
                                 value)
        bits = b.select(inexact, b.or_(bits, constant(bits.type, 1)), bits)
        return b.select(b.fcmp_unordered("uno", value, value), single,
                        b.bitcast(bits, single.type))

    def _float_to_int(self, value, src, dst):
        """NumPy's float -> integer cast as x86 computes it. fptosi of NaN or of an
        out-of-range value is poison in LLVM; x86's cvttsd2si gives the minimum int64 (or
        int32) there, which NumPy then truncates to a narrower dtype. NumPy converts to
        int8/int16 (and to uint8/uint16/uint32, through a signed conversion wide enough)
        by way of int32 or int64 and truncates; to uint64 it converts values below 2**63
        as signed and subtracts 2**63 from larger ones first."""
        if dst == np.dtype(np.uint64):
            return self._float_to_uint64(value, src)
        via = np.dtype(np.int64) if dst.kind == "u" and dst.itemsize == 4 or \
            dst.itemsize == 8 else np.dtype(np.int32)
        return self.cast(self._float_to_signed(value, src, via), via, dst)

    def _float_to_signed(self, value, src, dst):
        bits = dst.itemsize * 8
        low = self.const(-2.0 ** (bits - 1), src)
        in_range = self.b.and_(self.b.fcmp_ordered(">=", value, low),
                               self.b.fcmp_ordered("<", value, self.const(2.0 ** (bits - 1),
                                                                          src)))
        safe = self.b.select(in_range, value, self.const(0, src))
        converted = self.b.fptosi(safe, shaped_like(value.type, ltype(dst)))
        return self.b.select(in_range, converted, self.const(-2 ** (bits - 1), dst))

    def _float_to_uint64(self, value, src):
        int64 = np.dtype(np.int64)
        high = self.b.fcmp_ordered(">=", value, self.const(2.0 ** 63, src))
        shifted = self.b.fsub(value, self.const(2.0 ** 63, src))
        low_part = self._float_to_signed(value, src, int64)
        high_part = self.b.xor(self._float_to_signed(shifted, src, int64),
                               self.const(-2 ** 63, int64))
        return self.b.select(high, high_part, low_part)

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
        """offset + index * stride, for an offset or a LaneOffset; stride is a Python
        int, index an i64 value or a Python int."""
        if isinstance(offset, LaneOffset):
            return LaneOffset(self.moved(offset.first, index, stride), offset.step)
        if stride == 0:
            return offset
        if isinstance(index, int):
            return self.add(offset, I64(index * stride))
        return self.add(offset, self.mul(index, I64(stride)))

    def all_moved(self, offsets, index, strides):
        """[moved(offset, index, stride) for each pair], each product and sum emitted
        once: a loop's views often share their offset and stride."""
        products, sums = {}, {}

        def move(offset, stride):
            if stride == 0:
                return offset
            if stride not in products:
                products[stride] = self.mul(index, I64(stride))
            key = (id(offset), stride)
            if key not in sums:
                sums[key] = self.add(offset, products[stride])
            return sums[key]
        return [move(offset, stride) for offset, stride in zip(offsets, strides)]

    def advanced(self, offset, elements):
        """offset + elements (a Python int), for an offset or a LaneOffset."""
        if isinstance(offset, LaneOffset):
            return LaneOffset(self.add(offset.first, I64(elements)), offset.step)
        return self.add(offset, I64(elements))

    # --- memory -------------------------------------------------------------------------
    def element_pointer(self, base, dtype, index):
        if _constant(index) == 0:
            return base
        return self.b.gep(base, [index], inbounds=True, source_etype=ltype(dtype))

    def prefetch(self, pointer):
        """Ask for the cache line at `pointer` to be brought into L1 for reading (a
        hint: it never faults, wherever it points)."""
        function = self.module.globals.get("llvm.prefetch.p0") or ir.Function(
            self.module, ir.FunctionType(ir.VoidType(), [PTR, I32, I32, I32]),
            "llvm.prefetch.p0")
        self.b.call(function, [pointer, I32(0), I32(3), I32(1)])

    def load(self, base, dtype, index):
        if isinstance(index, LaneOffset):
            return self._load_lanes(base, np.dtype(dtype), index)
        return self.b.load(self.element_pointer(base, dtype, index), typ=ltype(dtype))

    def store(self, value, base, dtype, index):
        if isinstance(index, LaneOffset):
            self._store_lanes(value, base, np.dtype(dtype), index)
            return
        self.b.store(value, self.element_pointer(base, dtype, index))

    def _load_lanes(self, base, dtype, index):
        pointer = self.element_pointer(base, dtype, index.first)
        if index.step == 0:
            return self.splat(self.b.load(pointer, typ=ltype(dtype)))
        vector = self.typed(ltype(dtype))
        if self.mask is None:
            return self.b.load(pointer, typ=vector, align=dtype.itemsize)
        return self.b.call(masked_memory(self.module, "load", vector),
                           [pointer, I32(dtype.itemsize), self.mask, Splat(vector, 0)])

    def _store_lanes(self, value, base, dtype, index):
        if index.step != 1:  # lanes would race for one element
            raise ValueError("a vector store needs consecutive elements")
        pointer = self.element_pointer(base, dtype, index.first)
        if self.mask is None and self.streamed is not None and base is self.streamed[0]:
            store = self.b.store(value, pointer, align=self.streamed[1])
            store.set_metadata("nontemporal", self.module.add_metadata([I32(1)]))
        elif self.mask is None:
            self.b.store(value, pointer, align=dtype.itemsize)
        else:
            self.b.call(masked_memory(self.module, "store", value.type),
                        [value, pointer, I32(dtype.itemsize), self.mask])

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
        """name.<type>(value, *more), an intrinsic overloaded on value's type, which it
        returns (llvm.fabs, llvm.copysign, ...)."""
        args = [value, *more]
        function = self.module.declare_intrinsic(
            f"{name}.{intrinsic_suffix(value.type)}",
            fnty=ir.FunctionType(value.type, [a.type for a in args]))
        return self.b.call(function, args)

    def opaque(self, value):
        """value itself, through an empty inline asm that LLVM cannot see into: what it
        cannot know, it cannot fold. Used where NumPy reads the sign of a NaN that
        arithmetic made (x86 makes it negative), which LLVM takes as unspecified and
        folds from the operands' signs. A vector wider than the target's registers is
        passed in register-sized pieces, as no asm operand takes more."""
        if not isinstance(value.type, ir.VectorType):
            return self._asm_identity(value)
        element_bits = value.type.element.width if isinstance(value.type.element, ir.IntType) \
            else {F16: 16, F32: 32, F64: 64}[value.type.element]
        per_piece = max(1, vector_register_bits() // element_bits)
        count = value.type.count
        if count <= per_piece:
            return self._asm_identity(value)
        return joined(self.b, [
            self._asm_identity(lanes(self.b, value, range(start, start + per_piece)))
            for start in range(0, count, per_piece)])

    def _asm_identity(self, value):
        function_type = ir.FunctionType(value.type, [value.type])
        return self.b.asm(function_type, "", "=x,0", [value], False)

    def any_lane(self, condition):
        """An i1: `condition` (an i1, or a vector of them) holds, in a lane that exists."""
        if not isinstance(condition.type, ir.VectorType):
            return condition
        if self.mask is not None:
            condition = self.b.and_(condition, self.mask)
        function = self.module.declare_intrinsic(
            f"llvm.vector.reduce.or.{intrinsic_suffix(condition.type)}",
            fnty=ir.FunctionType(I1, [condition.type]))
        return self.b.call(function, [condition])


FLOAT16 = np.dtype(np.float16)


def half_in_hardware():
    """Whether the target converts halves itself (F16C); jit/target.py installs the
    answer from above. Until then, integer code, which every x86-64 runs."""
    return False


def lanes(builder, vector, indices, second=None):
    """shufflevector: the lanes `indices` of vector (and of `second` after it)."""
    indices = list(indices)
    if second is None and indices == list(range(vector.type.count)):
        return vector  # all of it, in order
    return builder.shuffle_vector(vector, vector if second is None else second,
                                  ir.Constant(ir.VectorType(I32, len(indices)), indices))


def joined(builder, pieces):
    """One vector of `pieces` (as many as a power of two, each of one length), in order:
    concatenated pairwise."""
    while len(pieces) > 1:
        pieces = [lanes(builder, left, range(2 * left.type.count), right)
                  for left, right in zip(pieces[::2], pieces[1::2])]
    return pieces[0]


def vector_register_bits():
    """The width of the target's vector registers: jit/target.py installs the answer
    from above. Until then, SSE's, which every x86-64 has."""
    return 128


def bfloat16_bits(value):
    """The 16 bits of `value` rounded to bfloat16 (NumPy's rounding, through float32)."""
    return int(np.asarray(value).astype(np.float32).astype(BFLOAT16).view(np.uint16))


def _constant(value):
    """The Python int an integer constant holds, else None."""
    if isinstance(value, ir.Constant) and isinstance(value.type, ir.IntType) and \
            isinstance(value.constant, int):
        return value.constant
    return None


def _exact_constant(value, dst):
    """A constant (or splat) converted to float dtype `dst` when it converts exactly (a
    literal like the 256 of x / 256), else None."""
    number = scalar_constant(value)
    if number is None or np.dtype(dst).kind != "f":
        return None
    with np.errstate(over="ignore"):  # 1e30 as a half: inf, which is not exact
        converted = np.dtype(dst).type(number)
    if not np.isfinite(converted) or float(converted) != number:
        return None
    return constant(shaped_like(value.type, ltype(dst)), float(converted))


def intrinsic_suffix(kind):
    """How LLVM names an intrinsic's overload on `kind`: f32, i8, v16f32, ..."""
    if isinstance(kind, ir.VectorType):
        return f"v{kind.count}{intrinsic_suffix(kind.element)}"
    return {F16: "f16", F32: "f32", F64: "f64"}.get(kind) or f"i{kind.width}"


def masked_memory(module, access, vector):
    """llvm.masked.load / llvm.masked.store for `vector` (the classic forms with an
    alignment operand, which LLVM 22 upgrades to its own)."""
    name = f"llvm.masked.{access}.{intrinsic_suffix(vector)}.p0"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    mask = ir.VectorType(I1, vector.count)
    if access == "load":
        kind = ir.FunctionType(vector, [PTR, I32, mask, vector])
    else:
        kind = ir.FunctionType(ir.VoidType(), [vector, PTR, I32, mask])
    return ir.Function(module, kind, name)


# --- functions across modules -------------------------------------------------------

def module_global(module, name, make):
    """The module's global `name` (a function or variable), made by make() on first
    use."""
    existing = module.globals.get(name)
    return existing if existing is not None else make()


def external_byte(module, name):
    """The module's declaration of `name`, a symbol the linker resolves (an address
    registered with llvm.add_symbol), as an external i8 global."""
    return module_global(module, name, lambda: ir.GlobalVariable(module, ir.IntType(8), name))


def declared_in(module, function):
    """`function` as `module` calls it: itself, or a declaration of it there when another
    module defines it (the modules are linked by name)."""
    if function.module is module:
        return function
    existing = module.globals.get(function.name)
    return existing if existing is not None else \
        ir.Function(module, function.function_type, function.name)


# --- functions of runtime modules (jit/pool.py, gemm/'s sgemm) -----------------------

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
