"""Matrix products.

Owns the lowering of matmul (matmul.py), which calls OpenBLAS (blas.py: found through
the scipy-openblas32 wheel) or, for float32, jitflow's own sgemm: a cblas_sgemm built as
LLVM IR once per process (sgemm.py loads it; sgemm_ir.py assembles it from the packing,
the micro-kernel, the cache blocking and the split between threads). amx.py runs
bfloat16 products on Intel's tile unit (AMX-BF16), from the IR text of amx_ir.py: its
packing rounds float32 operands to bfloat16.
"""
