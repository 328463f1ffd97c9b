"""See inside compiled code: prints of runtime values, Python callbacks, and in-graph
checks for NaN and inf. Each works eagerly, in the interpreter and in native code."""
from .callbacks import callback, print
from .numerics import check_numerics

__all__ = ["callback", "check_numerics", "print"]
