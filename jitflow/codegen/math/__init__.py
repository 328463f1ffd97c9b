"""Scalar and vector math for the loops codegen emits.

Owns the scalar bodies of the elementwise primitives with NumPy's semantics
(scalar.py: RULES) and the transcendental functions they call (mathlib.py: call, the
route between glibc's libmvec and the inline versions; math_inline.py and
math_kernels.py: exp, log, tanh, sin, pow, ... written in LLVM IR).
"""
