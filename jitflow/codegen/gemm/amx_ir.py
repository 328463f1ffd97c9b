"""The IR of jitflow's AMX product (amx.py loads it): C = A @ B with A and B rounded to
bfloat16 and their products summed in float32 by the CPU's tile unit (Intel AMX-BF16).

    void jitflow_amx_pack_a(ptr a, i64 row_stride, i64 depth_stride, i64 m, i64 k,
                            ptr packed, i64 rows, i64 depth)
    void jitflow_amx_pack_b(ptr b, i64 depth_stride, i64 col_stride, i64 k, i64 n,
                            ptr packed, i64 depth, i64 cols)
    void jitflow_amx_bf16gemm(ptr packed_a, ptr packed_b, i64 depth, i64 begin,
                              i64 end, i64 m, i64 n, ptr c, i64 ldc)

The packing functions (amx_packing.py) read a float32 operand (element strides) and
write it rounded to bfloat16 (bfloat16_rounding.py) in tiles of 1 KiB, zeros past its
edges: A (m x k) padded
to `rows` (a multiple of 32) by `depth` (a multiple of 32) as 16 rows x 32 values per
tile; B (k x n) padded to `depth` by `cols` (a multiple of 32) as 16 pairs of rows x 16
columns per tile, the two values of a pair side by side (the layout the tile unit
multiplies). Tile (t, s), the t-th 16 rows (columns) and s-th 32 values of k, lies at
(t * depth / 32 + s) KiB, so a block's tiles are read one after another.

The product writes C's rows begin..end-1 (begin a multiple of 32, end at most m) and
columns 0..n-1 (row stride ldc floats), nothing else: blocks of 32 x 32, four 16 x 16
tiles of float32 sums, each step of 32 values of k loading two tiles of A and two of B
(eight tile registers in all). K goes in blocks of DEPTH_BLOCK, after the first adding
to the sums in C; within one, blocks go column panel by column panel within ROW_BLOCK
rows, so that a panel of B is read from cache by every block of those rows. A block
over C's edge goes through a buffer on the stack, of which only the part in C is read
and written.

The tile instructions are LLVM's AMX intrinsics, whose x86_amx type llvmlite's IR
builder has no class for: the product is written as text. LLVM emits the tile
configuration (ldtilecfg) on entry to the product and the release at its return.
"""

from llvmlite import ir

from .amx_packing import define_packing

ROW_BLOCK = 64  # rows of C whose blocks share each panel of B while it is in cache
DEPTH_BLOCK = 1024  # values of k a block sums before its sums go back to C (a multiple of 32)

PACK_A, PACK_B, PRODUCT = "jitflow_amx_pack_a", "jitflow_amx_pack_b", "jitflow_amx_bf16gemm"

_DECLARATIONS = """
declare x86_amx @llvm.x86.tileloadd64.internal(i16, i16, ptr, i64)
declare x86_amx @llvm.x86.tdpbf16ps.internal(i16, i16, i16, x86_amx, x86_amx, x86_amx)
declare void @llvm.x86.tilestored64.internal(i16, i16, ptr, i64, x86_amx)
declare x86_amx @llvm.x86.tilezero.internal(i16, i16)
"""

# block(a, b, steps, gap, c, c_stride, first): the 32 x 32 block of C at c (row stride
# in bytes) = (first ? 0 : C) + the tiles of A from `a` times those of B from `b` over
# `steps` steps of 32 values of k; a's second tile (rows 16-31) and b's (columns
# 16-31) lie `gap` bytes after the first.
_BLOCK = """
define internal void @block(ptr noalias %a, ptr noalias %b, i64 %steps, i64 %gap,
                            ptr noalias %c, i64 %c_stride, i1 %first)
                            nounwind alwaysinline {
entry:
  %a1 = getelementptr i8, ptr %a, i64 %gap
  %b1 = getelementptr i8, ptr %b, i64 %gap
  %c_low = mul i64 %c_stride, 16
  %pc01 = getelementptr i8, ptr %c, i64 64
  %pc10 = getelementptr i8, ptr %c, i64 %c_low
  %pc11 = getelementptr i8, ptr %pc10, i64 64
  br i1 %first, label %zeros, label %sums
zeros:
  %z00 = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)
  %z01 = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)
  %z10 = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)
  %z11 = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)
  br label %first_tiles
sums:
  %l00 = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %c, i64 %c_stride)
  %l01 = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %pc01, i64 %c_stride)
  %l10 = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %pc10, i64 %c_stride)
  %l11 = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %pc11, i64 %c_stride)
  br label %first_tiles
first_tiles:
  %c00_first = phi x86_amx [%z00, %zeros], [%l00, %sums]
  %c01_first = phi x86_amx [%z01, %zeros], [%l01, %sums]
  %c10_first = phi x86_amx [%z10, %zeros], [%l10, %sums]
  %c11_first = phi x86_amx [%z11, %zeros], [%l11, %sums]
  %ta0_first = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %a, i64 64)
  %ta1_first = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %a1, i64 64)
  %tb0_first = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %b, i64 64)
  %tb1_first = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %b1, i64 64)
  %last = sub i64 %steps, 1
  br label %k
k:
  %s = phi i64 [0, %first_tiles], [%s_next, %k]
  %c00 = phi x86_amx [%c00_first, %first_tiles], [%n00, %k]
  %c01 = phi x86_amx [%c01_first, %first_tiles], [%n01, %k]
  %c10 = phi x86_amx [%c10_first, %first_tiles], [%n10, %k]
  %c11 = phi x86_amx [%c11_first, %first_tiles], [%n11, %k]
  %ta0 = phi x86_amx [%ta0_first, %first_tiles], [%ta0_next, %k]
  %ta1 = phi x86_amx [%ta1_first, %first_tiles], [%ta1_next, %k]
  %tb0 = phi x86_amx [%tb0_first, %first_tiles], [%tb0_next, %k]
  %tb1 = phi x86_amx [%tb1_first, %first_tiles], [%tb1_next, %k]
  %s_next = add nuw nsw i64 %s, 1
  %more = icmp ult i64 %s_next, %steps
  %s_load = select i1 %more, i64 %s_next, i64 %last
  %at = mul i64 %s_load, 1024
  %pa0 = getelementptr i8, ptr %a, i64 %at
  %pa1 = getelementptr i8, ptr %a1, i64 %at
  %pb0 = getelementptr i8, ptr %b, i64 %at
  %pb1 = getelementptr i8, ptr %b1, i64 %at
  %n00 = call x86_amx @llvm.x86.tdpbf16ps.internal(i16 16, i16 64, i16 64, x86_amx %c00, x86_amx %ta0, x86_amx %tb0)
  %n01 = call x86_amx @llvm.x86.tdpbf16ps.internal(i16 16, i16 64, i16 64, x86_amx %c01, x86_amx %ta0, x86_amx %tb1)
  %ta0_next = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %pa0, i64 64)
  %n10 = call x86_amx @llvm.x86.tdpbf16ps.internal(i16 16, i16 64, i16 64, x86_amx %c10, x86_amx %ta1, x86_amx %tb0)
  %tb0_next = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %pb0, i64 64)
  %n11 = call x86_amx @llvm.x86.tdpbf16ps.internal(i16 16, i16 64, i16 64, x86_amx %c11, x86_amx %ta1, x86_amx %tb1)
  %ta1_next = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %pa1, i64 64)
  %tb1_next = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr %pb1, i64 64)
  br i1 %more, label %k, label %store
store:
  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %c, i64 %c_stride, x86_amx %n00)
  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %pc01, i64 %c_stride, x86_amx %n01)
  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %pc10, i64 %c_stride, x86_amx %n10)
  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %pc11, i64 %c_stride, x86_amx %n11)
  ret void
}
"""

# edge_block(..., c, ldc, rows, cols, first): block's product through a 32 x 32 buffer
# whose rows x cols corner is C's part at c (row stride ldc, in floats): copied in
# first unless `first`, and out after.
_EDGE_BLOCK = """
define internal void @corner(ptr noalias %buffer, ptr noalias %c, i64 %ldc, i64 %rows,
                             i64 %cols, i1 %into_c) nounwind alwaysinline {
entry:
  br label %row
row:
  %i = phi i64 [0, %entry], [%i_next, %row.end]
  br label %col
col:
  %j = phi i64 [0, %row], [%j_next, %col]
  %in_buffer_row = mul i64 %i, 32
  %in_buffer_index = add i64 %in_buffer_row, %j
  %in_buffer = getelementptr inbounds float, ptr %buffer, i64 %in_buffer_index
  %in_c_row = mul i64 %i, %ldc
  %in_c_index = add i64 %in_c_row, %j
  %in_c = getelementptr inbounds float, ptr %c, i64 %in_c_index
  %from = select i1 %into_c, ptr %in_buffer, ptr %in_c
  %to = select i1 %into_c, ptr %in_c, ptr %in_buffer
  %value = load float, ptr %from, align 4
  store float %value, ptr %to, align 4
  %j_next = add nuw nsw i64 %j, 1
  %more_cols = icmp ult i64 %j_next, %cols
  br i1 %more_cols, label %col, label %row.end
row.end:
  %i_next = add nuw nsw i64 %i, 1
  %more_rows = icmp ult i64 %i_next, %rows
  br i1 %more_rows, label %row, label %done
done:
  ret void
}

define internal void @edge_block(ptr %a, ptr %b, i64 %steps, i64 %gap, ptr noalias %c,
                                 i64 %ldc, i64 %rows, i64 %cols, i1 %first)
                                 nounwind alwaysinline {
entry:
  %buffer = alloca [1024 x float], align 64
  br i1 %first, label %compute, label %load
load:
  call void @corner(ptr %buffer, ptr %c, i64 %ldc, i64 %rows, i64 %cols, i1 false)
  br label %compute
compute:
  call void @block(ptr %a, ptr %b, i64 %steps, i64 %gap, ptr %buffer, i64 128, i1 %first)
  call void @corner(ptr %buffer, ptr %c, i64 %ldc, i64 %rows, i64 %cols, i1 true)
  ret void
}
"""

_PRODUCT = f"""
define void @{PRODUCT}(ptr %a, ptr %b, i64 %depth, i64 %begin, i64 %end, i64 %m,
                       i64 %n, ptr %c, i64 %ldc) nounwind {{
entry:
  %all_steps = udiv i64 %depth, 32
  %gap = mul i64 %all_steps, 1024
  %c_stride = mul i64 %ldc, 4
  %any = icmp ult i64 %begin, %end
  br i1 %any, label %depths, label %done
depths:
  %s0 = phi i64 [0, %entry], [%s0_next, %depths.end]
  %first = icmp eq i64 %s0, 0
  %s0_far = add i64 %s0, {DEPTH_BLOCK // 32}
  %s0_short = icmp ult i64 %s0_far, %all_steps
  %s0_end = select i1 %s0_short, i64 %s0_far, i64 %all_steps
  %steps = sub i64 %s0_end, %s0
  %step_at = mul i64 %s0, 1024
  br label %rows
rows:
  %ic = phi i64 [%begin, %depths], [%ic_next, %rows.end]
  %ic_far = add i64 %ic, {ROW_BLOCK}
  %ic_short = icmp ult i64 %ic_far, %end
  %ic_end = select i1 %ic_short, i64 %ic_far, i64 %end
  br label %panel
panel:
  %j = phi i64 [0, %rows], [%j_next, %panel.end]
  %u = udiv i64 %j, 16
  %b_at = mul i64 %u, %gap
  %b_tile = getelementptr i8, ptr %b, i64 %b_at
  %pb = getelementptr i8, ptr %b_tile, i64 %step_at
  %j_left = sub i64 %n, %j
  %j_whole = icmp uge i64 %j_left, 32
  br label %block
block:
  %i = phi i64 [%ic, %panel], [%i_next, %block.end]
  %t = udiv i64 %i, 16
  %a_at = mul i64 %t, %gap
  %a_tile = getelementptr i8, ptr %a, i64 %a_at
  %pa = getelementptr i8, ptr %a_tile, i64 %step_at
  %c_row = mul i64 %i, %ldc
  %c_index = add i64 %c_row, %j
  %pc = getelementptr inbounds float, ptr %c, i64 %c_index
  %i_left = sub i64 %end, %i
  %i_whole = icmp uge i64 %i_left, 32
  %whole = and i1 %i_whole, %j_whole
  br i1 %whole, label %inside, label %edge
inside:
  call void @block(ptr %pa, ptr %pb, i64 %steps, i64 %gap, ptr %pc, i64 %c_stride,
                   i1 %first)
  br label %block.end
edge:
  %rows_in = select i1 %i_whole, i64 32, i64 %i_left
  %cols_in = select i1 %j_whole, i64 32, i64 %j_left
  call void @edge_block(ptr %pa, ptr %pb, i64 %steps, i64 %gap, ptr %pc, i64 %ldc,
                        i64 %rows_in, i64 %cols_in, i1 %first)
  br label %block.end
block.end:
  %i_next = add i64 %i, 32
  %more_blocks = icmp ult i64 %i_next, %ic_end
  br i1 %more_blocks, label %block, label %panel.end
panel.end:
  %j_next = add i64 %j, 32
  %more_panels = icmp ult i64 %j_next, %n
  br i1 %more_panels, label %panel, label %rows.end
rows.end:
  %ic_next = add i64 %ic, {ROW_BLOCK}
  %more_rows = icmp ult i64 %ic_next, %end
  br i1 %more_rows, label %rows, label %depths.end
depths.end:
  %s0_next = add i64 %s0, {DEPTH_BLOCK // 32}
  %more_depths = icmp ult i64 %s0_next, %all_steps
  br i1 %more_depths, label %depths, label %done
done:
  ret void
}}
"""


def module_text():
    """The library's LLVM IR, as text: the packing (amx_packing.py, built with llvmlite),
    then the product."""
    module = ir.Module("jitflow_amx")
    define_packing(module, PACK_A, PACK_B)
    return "\n".join([str(module), _DECLARATIONS, _BLOCK, _EDGE_BLOCK, _PRODUCT])
