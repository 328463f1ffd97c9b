"""Dtypes and tensor types, with NumPy 2 promotion and broadcasting rules.

jitflow's dtypes are NumPy's bool, signed and unsigned integers of 8 to 64 bits,
float16, float32 and float64, and ml_dtypes' bfloat16 where that package is installed.
A value is *weakly typed* when it came from a Python scalar (NEP 50): it takes
the dtype of the array it meets, as a Python int or float does in NumPy 2.

bfloat16 follows NumPy's rules with ml_dtypes' loops, which NumPy's own dtype resolution
gives (bfloat16 + 1.0 is float32, bfloat16 + np.int32 is float64, bfloat16 and float16
have no common dtype). Its dtype's kind is "V", so code asks `is_floating`, not the kind.
"""
import math
from dataclasses import dataclass

import numpy as np

from .sizes import Size

try:
    import ml_dtypes
except ImportError:  # bfloat16 is an optional extra
    ml_dtypes = None

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
bfloat16 = np.dtype(ml_dtypes.bfloat16) if ml_dtypes is not None else None

INTEGER_DTYPES = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
SUPPORTED_DTYPES = (bool_,) + INTEGER_DTYPES + (float16, float32, float64) + \
    ((bfloat16,) if bfloat16 is not None else ())
SHORT_NAMES = {bool_: "bool", float16: "f16", float32: "f32", float64: "f64",
               bfloat16: "bf16",
               **{d: f"{d.kind}{d.itemsize * 8}" for d in INTEGER_DTYPES},
               # (no graph holds complex values: these name a complex Variable's type)
               np.dtype(np.complex64): "c64", np.dtype(np.complex128): "c128"}


def is_floating(dtype):
    """A real floating-point dtype: NumPy's kind "f", or bfloat16 (kind "V")."""
    return dtype.kind == "f" or is_bfloat16(dtype)


def is_bfloat16(dtype):
    """dtype is bfloat16. (Never `dtype == bfloat16` without ml_dtypes: np.dtype(None)
    is float64, so float64 == None holds.)"""
    return bfloat16 is not None and np.dtype(dtype) == bfloat16


class ShapeError(ValueError):
    """Shapes that do not fit an operation (NumPy raises ValueError for these)."""


def as_dtype(spec, *, what="dtype"):
    """A supported np.dtype from anything NumPy accepts as a dtype, or a clear TypeError."""
    if spec is float:
        return float64
    if spec is int:
        return int64
    if spec is bool:
        return bool_
    try:
        dtype = np.dtype(spec)
    except TypeError as error:
        raise TypeError(f"{what}: {spec!r} is not a dtype") from error
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{what}: dtype {dtype} is not supported; jitflow supports "
                        f"{', '.join(str(d) for d in SUPPORTED_DTYPES)} (cast first)")
    return dtype


@dataclass(frozen=True, slots=True)
class TensorType:
    shape: tuple
    dtype: np.dtype
    weak: bool = False  # came from a Python scalar: defers to the other operand's dtype

    def __post_init__(self):
        # A weak value is a Python scalar at run time (np.where(c, 1.0, 2.0) of an array
        # c is a float64 array, as is np.broadcast_to(1.0, (3,))): weak implies 0-d.
        if self.weak and self.shape != ():
            raise ValueError(f"a weakly typed value must be 0-d, got shape {self.shape}")

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        count = math.prod(self.shape)  # a Size where the shape holds one (sizes.py)
        return count if isinstance(count, Size) else int(count)

    def with_shape(self, shape):
        shape = tuple(shape)
        return TensorType(shape, self.dtype, self.weak and shape == ())

    def strong(self):
        return TensorType(self.shape, self.dtype)

    def __str__(self):
        dims = ",".join(str(d) for d in self.shape)
        return f"{'~' if self.weak else ''}{SHORT_NAMES[self.dtype]}[{dims}]"


def type_of_value(value):
    """The TensorType of a concrete value: a Python scalar is weak (bool never is)."""
    if isinstance(value, np.generic):  # before int/float: np.float64 subclasses float
        return TensorType((), as_dtype(value.dtype, what="value"))
    if isinstance(value, bool):
        return TensorType((), bool_)
    if isinstance(value, int):
        return TensorType((), int64, weak=True)
    if isinstance(value, float):
        return TensorType((), float64, weak=True)
    array = np.asarray(value)
    return TensorType(array.shape, as_dtype(array.dtype, what="value"))


def promotion_operand(t):
    """What NumPy's dtype resolution needs to see for t: a Python type when weak."""
    if t.weak:
        return float if t.dtype.kind == "f" else int
    return t.dtype


def resolve_ufunc_dtypes(ufunc, types):
    """Output dtypes NumPy 2 gives `ufunc` on operands of `types`, and whether they are weak.

    Raises TypeError when NumPy has no loop, or when the result dtype is one jitflow does
    not support (NumPy gives float16 for exp of bool, for instance).
    """
    operands = tuple(promotion_operand(t) for t in types)
    resolved = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)
    outs = resolved[ufunc.nin:]
    for out in outs:
        if out not in SUPPORTED_DTYPES:
            raise TypeError(f"NumPy computes {ufunc.__name__} of "
                            f"{', '.join(str(t.dtype) for t in types)} in {out}, "
                            f"which jitflow does not support; cast the input first")
    weak = all(t.weak for t in types)
    return tuple(out for out in outs), weak


def ufunc_loop_dtypes(ufunc, types):
    """The dtypes NumPy's loop for `ufunc` computes in: one per input, then the outputs."""
    operands = tuple(promotion_operand(t) for t in types)
    resolved = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)
    if any(d.kind == "O" for d in resolved):
        # NumPy compares two Python ints in an object loop (exact for any size); weak
        # ints are int64 here, so their int64 loop is the one that applies.
        resolved = ufunc.resolve_dtypes(tuple(t.dtype for t in types) + (None,) * ufunc.nout)
    return resolved


def result_dtype(*types):
    """np.result_type under NEP 50: the common dtype of several operand types."""
    # result_type takes weak scalars as values (0, 0.0), not as the types int and float.
    dtype = np.result_type(*(promotion_operand(t)(0) if t.weak else t.dtype for t in types))
    return as_dtype(dtype), all(t.weak for t in types)


def stored_like_np_pad(value, dtype):
    """A Python scalar as np.pad stores it into an array of `dtype`: NumPy makes it a
    NumPy scalar first, which it casts into an unsigned array unchecked (inf pads uint8
    with 0) and into a signed integer array only if it fits (else OverflowError, and
    ValueError for NaN)."""
    stored = np.empty(1, dtype)
    with np.errstate(invalid="ignore"):
        stored[...] = np.asarray(value)[()]
    return stored[0]


def broadcast_shapes(*shapes):
    """NumPy's broadcasting of shapes; ShapeError naming all of them when they clash."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            raise ShapeError("shapes " + " ".join(str(tuple(s)) for s in shapes)
                             + " cannot be broadcast together")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def normalize_axis(axis, ndim, *, what="axis"):
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{what} must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{what} {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return int(axis) % ndim


def normalize_axes(axis, ndim):
    """A sorted tuple of distinct non-negative axes from None, an int, or a sequence."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    normalized = tuple(sorted(normalize_axis(a, ndim) for a in axes))
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"duplicate value in 'axis': {axis!r}")
    return normalized
