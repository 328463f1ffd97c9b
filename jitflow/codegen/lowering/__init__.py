"""Graph -> LLVM modules: one entry function that runs the whole graph.

Owns Lowering (lower.py: segments, loop nests, the elementwise bodies), the lowerings of
the non-elementwise primitives (structural.py: STRUCTURAL, which reaches into loops/,
gemm/ and control/), kernels shared by repeated nodes (kernels.py), array constants
(constants.py), alias scopes (aliasing.py) and the split of loop nests between threads
(parallel.py).
"""
