"""The packing functions of jitflow's AMX product (amx_ir.py has their contract and the
tile layouts): float32 operands rounded to bfloat16 (bfloat16_rounding.py) into 1 KiB
tiles, zeros past their edges.

Each packs along the operand's contiguous axis with vectors: A's rows, 32 values of k
at a time, when k is contiguous, else 16 rows of one k (stored one by one to their
tile rows); B's rows, 16 columns of two rows of k at a time into 16 pairs, when columns
are contiguous, else 32 values of k down one column (16 pairs, stored one by one).
What is left over at the edges, and operands strided both ways, go element by element.
The whole buffer is zeroed first, so padding needs no code of its own.
"""
from llvmlite import ir

from ..emitter import F32, I64, PTR, Emitter
from .bfloat16_rounding import I16, I32, bfloat16_halves
from .common import VOID, new_function

TILE_ROWS, TILE_DEPTH = 16, 32  # rows (or pairs of k) per tile; values of k per step


def define_packing(module, pack_a_name, pack_b_name):
    """Define both packing functions in `module` (an llvmlite ir.Module)."""
    memset = ir.Function(module, ir.FunctionType(VOID, [PTR, ir.IntType(8), I64,
                                                        ir.IntType(1)]), "llvm.memset.p0.i64")
    _define_pack_a(module, pack_a_name, memset)
    _define_pack_b(module, pack_b_name, memset)


def _packing_function(module, name, memset):
    """A packing function's arguments (operand, two strides, two sizes, packed buffer,
    its two padded sizes) and a builder after the buffer is zeroed."""
    function, b = new_function(module, name, VOID, [PTR, I64, I64, I64, I64, PTR, I64, I64],
                               internal=False)
    packed, padded = function.args[5], function.args[6:]
    b.call(memset, [packed, ir.Constant(ir.IntType(8), 0),
                    b.mul(b.mul(*padded), I64(2)), ir.Constant(ir.IntType(1), 0)])
    return function.args, b


def _define_pack_a(module, name, memset):
    """void pack_a(ptr a, i64 row_stride, i64 depth_stride, i64 m, i64 k, ptr packed,
    i64 rows, i64 depth)."""
    (a, row_stride, depth_stride, m, k, packed, _, depth), b = \
        _packing_function(module, name, memset)
    steps = b.udiv(depth, I64(TILE_DEPTH))

    def at(i, kk):  # the i16 index of A[i, kk] in the packed tiles
        tile = b.add(b.mul(b.udiv(i, I64(TILE_ROWS)), steps), b.udiv(kk, I64(TILE_DEPTH)))
        line = b.add(b.mul(tile, I64(TILE_ROWS)), b.urem(i, I64(TILE_ROWS)))
        return b.add(b.mul(line, I64(TILE_DEPTH)), b.urem(kk, I64(TILE_DEPTH)))

    def source(i, kk):
        return b.gep(a, [b.add(b.mul(i, row_stride), b.mul(kk, depth_stride))],
                     source_etype=F32)

    def store_half(value, index):
        b.store(value, b.gep(packed, [index], inbounds=True, source_etype=I16))

    def one(i, kk):
        store_half(bfloat16_halves(b, b.load(source(i, kk), typ=F32)), at(i, kk))

    along_k = b.icmp_unsigned("==", depth_stride, I64(1))
    down_rows = b.icmp_unsigned("==", row_stride, I64(1))
    with b.if_else(along_k) as (rows_path, other):
        with rows_path:
            whole = b.udiv(k, I64(TILE_DEPTH))
            with Emitter(b).for_range(m, name="i") as i:
                with Emitter(b).for_range(whole, name="s") as s:
                    kk = b.mul(s, I64(TILE_DEPTH))
                    values = b.load(source(i, kk), typ=ir.VectorType(F32, TILE_DEPTH), align=4)
                    halves = bfloat16_halves(b, values)
                    b.store(halves, b.gep(packed, [at(i, kk)], inbounds=True,
                                          source_etype=I16), align=2)
                _elementwise(b, one, i, b.mul(whole, I64(TILE_DEPTH)), k)
        with other:
            with b.if_else(down_rows) as (columns_path, strided):
                with columns_path:
                    _pack_a_columns(b, a, depth_stride, m, k, one, at, store_half)
                with strided:
                    with Emitter(b).for_range(m, name="i") as i:
                        _elementwise(b, one, i, I64(0), k)
    b.ret_void()


def _pack_a_columns(b, a, depth_stride, m, k, one, at, store_half):
    """A with contiguous columns (a transposed matrix): 16 rows of each k at a time,
    group by group, so that a group's tiles are written while they are in cache."""
    groups = b.udiv(m, I64(TILE_ROWS))
    with Emitter(b).for_range(groups, name="g") as g:
        first = b.mul(g, I64(TILE_ROWS))
        with Emitter(b).for_range(k, name="kk") as kk:
            pointer = b.gep(a, [b.add(first, b.mul(kk, depth_stride))], source_etype=F32)
            halves = bfloat16_halves(b, b.load(pointer, typ=ir.VectorType(F32, TILE_ROWS),
                                               align=4))
            base = at(first, kk)
            for r in range(TILE_ROWS):  # the group's rows lie TILE_DEPTH halves apart
                store_half(b.extract_element(halves, ir.Constant(I32, r)),
                           b.add(base, I64(r * TILE_DEPTH)))
    with Emitter(b).for_range(k, name="kk") as kk:
        with Emitter(b).for_range(b.sub(m, b.mul(groups, I64(TILE_ROWS))), name="r") as r:
            one(b.add(b.mul(groups, I64(TILE_ROWS)), r), kk)


def _define_pack_b(module, name, memset):
    """void pack_b(ptr b, i64 depth_stride, i64 col_stride, i64 k, i64 n, ptr packed,
    i64 depth, i64 cols)."""
    (source_b, depth_stride, col_stride, k, n, packed, depth, _), b = \
        _packing_function(module, name, memset)
    steps = b.udiv(depth, I64(TILE_DEPTH))

    def word_at(kk, j):  # the i32 index of the pair holding B[kk, j]
        tile = b.add(b.mul(b.udiv(j, I64(TILE_ROWS)), steps), b.udiv(kk, I64(TILE_DEPTH)))
        line = b.add(b.mul(tile, I64(TILE_ROWS)), b.udiv(b.urem(kk, I64(TILE_DEPTH)), I64(2)))
        return b.add(b.mul(line, I64(TILE_ROWS)), b.urem(j, I64(TILE_ROWS)))

    def source(kk, j):
        return b.gep(source_b, [b.add(b.mul(kk, depth_stride), b.mul(j, col_stride))],
                     source_etype=F32)

    def one(kk, j):
        half = b.add(b.mul(word_at(kk, j), I64(2)), b.and_(kk, I64(1)))
        value = bfloat16_halves(b, b.load(source(kk, j), typ=F32))
        b.store(value, b.gep(packed, [half], inbounds=True, source_etype=I16))

    along_cols = b.icmp_unsigned("==", col_stride, I64(1))
    down_k = b.icmp_unsigned("==", depth_stride, I64(1))
    with b.if_else(along_cols) as (rows_path, other):
        with rows_path:
            _pack_b_rows(b, source, packed, k, n, word_at, one)
        with other:
            with b.if_else(down_k) as (columns_path, strided):
                with columns_path:
                    _pack_b_columns(b, source, packed, k, n, word_at, one)
                with strided:
                    with Emitter(b).for_range(k, name="kk") as kk:
                        _elementwise(b, lambda j, kk=kk: one(kk, j), None, I64(0), n)
    b.ret_void()


def _pack_b_rows(b, source, packed, k, n, word_at, one):
    """B with contiguous rows: 16 columns of rows 2p and 2p + 1 into 16 pairs."""
    vector = ir.VectorType(F32, TILE_ROWS)
    groups = b.udiv(n, I64(TILE_ROWS))
    with Emitter(b).for_range(b.udiv(k, I64(2)), name="p") as p:
        low_k = b.mul(p, I64(2))
        high_k = b.add(low_k, I64(1))
        with Emitter(b).for_range(groups, name="g") as g:
            j = b.mul(g, I64(TILE_ROWS))
            low, high = (bfloat16_halves(b, b.load(source(kk, j), typ=vector, align=4))
                         for kk in (low_k, high_k))
            wide = ir.VectorType(I32, TILE_ROWS)
            words = b.or_(b.zext(low, wide), b.shl(b.zext(high, wide),
                                                   ir.Constant(wide, [16] * TILE_ROWS)))
            b.store(words, b.gep(packed, [word_at(low_k, j)], inbounds=True,
                                 source_etype=I32), align=4)
        first = b.mul(groups, I64(TILE_ROWS))
        for kk in (low_k, high_k):
            _elementwise(b, lambda j, kk=kk: one(kk, j), None, first, n)
    with b.if_then(b.icmp_unsigned("==", b.and_(k, I64(1)), I64(1))):  # k odd: its last row
        _elementwise(b, lambda j: one(b.sub(k, I64(1)), j), None, I64(0), n)


def _pack_b_columns(b, source, packed, k, n, word_at, one):
    """B with contiguous columns (a transposed matrix): 32 values of k down a column
    make its 16 pairs of a step."""
    whole = b.udiv(k, I64(TILE_DEPTH))
    with Emitter(b).for_range(n, name="j") as j:
        with Emitter(b).for_range(whole, name="s") as s:
            kk = b.mul(s, I64(TILE_DEPTH))
            halves = bfloat16_halves(b, b.load(source(kk, j), typ=ir.VectorType(
                F32, TILE_DEPTH), align=4))
            words = b.bitcast(halves, ir.VectorType(I32, TILE_DEPTH // 2))
            base = word_at(kk, j)
            for q in range(TILE_DEPTH // 2):  # a step's pairs lie TILE_ROWS words apart
                b.store(b.extract_element(words, ir.Constant(I32, q)),
                        b.gep(packed, [b.add(base, I64(q * TILE_ROWS))], inbounds=True,
                              source_etype=I32))
        _elementwise(b, lambda kk: one(kk, j), None, b.mul(whole, I64(TILE_DEPTH)), k)


def _elementwise(b, one, fixed, start, end):
    """one(index) (or one(fixed, index)) for index in [start, end)."""
    with Emitter(b).for_range(b.sub(end, start), name="e") as e:
        index = b.add(start, e)
        if fixed is None:
            one(index)
        else:
            one(fixed, index)
