"""Scalar and vector math for the loops codegen emits.

Owns the scalar bodies of the elementwise primitives with NumPy's semantics
(scalar.py: RULES) and the transcendental functions they call (mathlib.py: call, and the
route between glibc's libmvec and the inline versions: math_inline.py's exp, log, tanh,
sin, pow, ... written in LLVM IR with arithmetic.py's V, whose operators emit
instructions).
"""
