"""A complex operand as its two real parts, in the dtype of the result.

The result dtype of an operation on complex and real operands is NumPy 2's (NEP 50: a
Python complex is weak, so float32 * 1j is complex64). A real operand becomes a complex
one with a +0.0 imaginary part, as NumPy converts it, so the formulas see exactly the
numbers NumPy's complex loops see.
"""
import numpy as np

from .. import ops
from ..ir.types import type_of_value
from ..trace import Tracer, innermost_builder

COMPLEX_DTYPES = (np.dtype(np.complex64), np.dtype(np.complex128))


def part_dtype(complex_dtype):
    """float32 for complex64, float64 for complex128."""
    return np.dtype(np.float32) if complex_dtype == COMPLEX_DTYPES[0] else np.dtype(np.float64)


def is_complex(value):
    """Whether `value` is a complex value: traced, NumPy's, or a Python complex."""
    if getattr(value, "_complex_parts", None) is not None:
        return True
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind == "c"
    return isinstance(value, complex)


def promotion_operand(value):
    """What np.result_type needs to see for `value` (a weak scalar as a value)."""
    if getattr(value, "_complex_parts", None) is not None:
        return 0j if value.weak else value.dtype
    if isinstance(value, Tracer):
        return (0.0 if value.dtype.kind == "f" else 0) if value.type.weak else value.dtype
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, (bool, int, float, complex)):
        return value
    return type_of_value(value).dtype


def result_dtype(*values):
    """The complex dtype NumPy gives an operation on `values`, and whether it is weak
    (every operand a Python scalar)."""
    dtype = np.result_type(*(promotion_operand(v) for v in values))
    if dtype.kind != "c":
        dtype = np.result_type(dtype, np.complex64)
    if dtype not in COMPLEX_DTYPES:
        raise TypeError(f"complex dtype {dtype} is not supported; jitflow computes "
                        f"complex64 and complex128")
    weak = all(isinstance(v, (int, float, complex)) and not isinstance(v, bool)
               or getattr(v, "weak", False) for v in values)
    return dtype, weak


def cast(value, dtype):
    """`value` (a real Tracer, array or number) as `dtype`; a Tracer inside a trace."""
    if isinstance(value, Tracer):
        return value if value.dtype == dtype and not value.type.weak else ops.cast(value, dtype)
    if innermost_builder() is not None:
        return ops.cast(np.asarray(value), dtype)
    return np.asarray(value, dtype)


def _zeros(part):
    """+0.0 of `part`'s shape and dtype."""
    if isinstance(part, Tracer):
        return ops.broadcast_to(cast(0.0, part.dtype), part.shape)
    return np.zeros_like(part)


def parts_of(value, dtype):
    """(real, imaginary) of `value` in the part dtype of complex `dtype`."""
    real_dtype = part_dtype(dtype)
    parts = getattr(value, "_complex_parts", None)
    if parts is None and isinstance(value, (np.ndarray, np.generic, complex)) and \
            is_complex(value):
        parts = (np.real(value), np.imag(value))
    if parts is not None:
        return cast(parts[0], real_dtype), cast(parts[1], real_dtype)
    real = cast(value, real_dtype)
    return real, _zeros(real)
