"""See inside compiled code: prints of runtime values, Python callbacks, in-graph checks
for NaN and inf (each works eagerly, in the interpreter and in native code), and
bisect, which finds the operation where native code drifts from the reference."""
from .bisect import Drift, bisect
from .callbacks import callback, print
from .numerics import check_numerics

__all__ = ["Drift", "bisect", "callback", "check_numerics", "print"]
