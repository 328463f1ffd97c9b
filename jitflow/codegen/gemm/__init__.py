"""Matrix products.

Owns the lowering of matmul (matmul.py), which calls OpenBLAS (blas.py: found through
the scipy-openblas32 wheel) or, for float32, jitflow's own sgemm: a cblas_sgemm built as
LLVM IR once per process (sgemm.py loads it; sgemm_ir.py assembles it from the packing,
the micro-kernel, the cache blocking and the split between threads).

Products of precision "bfloat16" (config.matmul_precision) round their operands to
bfloat16 (bfloat16_rounding.py) and run on Intel's tile unit (AMX-BF16) where the CPU
has one: bfloat16_products.py lowers them to the library amx.py loads, whose product
amx_ir.py writes as IR text and whose packing amx_packing.py builds; elsewhere matmul.py
multiplies rounded copies as float32.
"""
