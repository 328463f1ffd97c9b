"""What the complex fuzzer (test_complex_fuzzer.py) draws: its inputs (values of every
dtype it mixes, laid out in memory several ways, and their corner values) and its
steps, by kind. Each step drawer takes (draw, values, usable, x_index) and returns a
Step on the values (`usable`: those a step may read), or None where it has none to
offer."""
import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from complex_fuzzer_compare import _is_complex
from complex_fuzzer_ops import (ELEMENTARY, EXTREMES, FFT_OPS, HALF_SPECTRUM_FFTS,
                                LINALG_OPS, ORDERED_BINARY, POLYNOMIAL_OPS,
                                PRODUCT_OPS, REAL_INPUT_FFTS, SUM_OPS)
from test_compositions import (Step, broadcasts, draw_axis, draw_new_shape,
                               draw_slice_index, fits_beside)
from fuzzer_inputs import LAYOUTS, laid_out

COMPLEX_DTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
REAL_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32)]
VALUE_DTYPES = set(COMPLEX_DTYPES + REAL_DTYPES + [np.dtype(np.int64), np.dtype(bool)])
MAX_SIZE, MAX_DIMS, MAX_STEPS = 256, 4, 6


# --- inputs ------------------------------------------------------------------------------

INF, NAN = float("inf"), float("nan")
PART_CORNERS = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 2.5, -3.0, 0.5]


def parts(dtype, finite):
    """A real or imaginary part: a corner, an ordinary magnitude, or any float of the
    part's width (huge, tiny and subnormal ones too); `finite`: no inf or NaN."""
    width = 32 if dtype in (np.complex64, np.float32) else 64
    corners = [c for c in PART_CORNERS if math.isfinite(c) or not finite]
    return (st.sampled_from(corners) | st.floats(-1e4, 1e4, width=width) |
            st.floats(width=width, allow_nan=not finite, allow_infinity=not finite))


def values_of(dtype, shape, finite=False):
    """Arrays of `dtype`. Half of them finite: one inf or NaN makes a whole transform,
    sum or product non-finite, where only which elements are finite is compared."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return hnp.arrays(dtype, shape, elements=st.builds(
            complex, parts(dtype, finite), parts(dtype, finite)))
    if dtype.kind == "f":
        return hnp.arrays(dtype, shape, elements=parts(dtype, finite))
    return hnp.arrays(dtype, shape, elements=st.integers(-5, 5) | st.integers(-2**31,
                                                                              2**31 - 1))


# Python scalars: weak operands, converted to the array's complex dtype as NumPy does.
LITERALS = [1 + 2j, complex(0.0, -0.0), complex(-0.0, 0.0), 1j, -2.5 + 0.5j,
            complex(INF, 0.0), complex(0.0, INF), complex(NAN, 1.0), 1e30 + 1e30j,
            2.0, -0.0, 0.5, INF, NAN, 2, -3, 0]


@st.composite
def inputs(draw):
    """1 to 3 arrays of shapes that broadcast together, the first complex, each in a
    layout; and sometimes a Python scalar: (inputs, their layouts)."""
    count = draw(st.integers(1, 3))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, max_dims=3,
                                                    min_side=0, max_side=4)).input_shapes
    arrays, layouts = [], []
    for number, shape in enumerate(shapes):
        kinds = COMPLEX_DTYPES if number == 0 or draw(st.booleans()) else REAL_DTYPES
        dtype, finite = draw(st.sampled_from(kinds)), draw(st.booleans())
        values = draw(values_of(dtype, shape, finite))
        layouts.append(draw(st.sampled_from(LAYOUTS)))
        arrays.append(laid_out(values, layouts[-1]))
    if draw(st.integers(0, 3)) == 0:
        # (not a Python complex: jitflow.function cannot take one yet, it fails to join
        # its traced parts: test_python_complex_argument below)
        arrays.append(draw(st.sampled_from([2.0, -0.5, 3, -0.0])))
        layouts.append("python")
    return arrays, layouts


CORNERS = [complex(r, i) for r in PART_CORNERS[:5] + [1.5, -2.0]
           for i in PART_CORNERS[:5] + [-0.5, 3.0]]


def corner_values_like(x, layout):
    """An input like x (in `layout`) holding every pair of corner parts in turn; a
    Python scalar stays itself."""
    if layout == "python":
        return x
    if x.dtype.kind == "c":
        corners = np.array(CORNERS, x.dtype)
    elif x.dtype.kind == "f":
        corners = np.array(PART_CORNERS, x.dtype)
    else:
        corners = np.array([0, 1, -1, 2, -3, 2**31 - 1, -2**31], x.dtype)
    offset = hash(x.shape) % corners.size  # (so that not every input starts alike)
    return laid_out(np.resize(np.roll(corners, offset), x.shape), layout)


# --- drawing steps -----------------------------------------------------------------------


def _numeric(value):
    return np.asarray(value).dtype.kind in "cfi"


def _operand(draw, values, usable, x):
    """A second operand for x: an earlier value it broadcasts with, a Python scalar, or
    a constant array (complex or real)."""
    kind = draw(st.sampled_from(["value", "literal", "constant", "argument"]))
    partners = [i for i in usable if broadcasts(values[i], x)]
    if kind == "value" and partners:
        return draw(st.sampled_from(partners))
    arguments = [i for i, v in enumerate(values) if isinstance(v, (int, float, complex))]
    if kind == "argument" and arguments:  # a Python scalar passed in
        return draw(st.sampled_from(arguments))
    if kind == "literal":
        return ("lit", draw(st.sampled_from(LITERALS)))
    shape = np.shape(x)[draw(st.integers(0, np.ndim(x))):]
    dtype = draw(st.sampled_from(COMPLEX_DTYPES * 2 + REAL_DTYPES))
    return ("const", draw(values_of(dtype, shape, draw(st.booleans()))))


def _elementwise(draw, values, usable, x_index):
    x = values[x_index]
    op = draw(st.sampled_from(["add", "subtract", "equal", "not_equal", "multiply",
                               "divide", "negative", "conj", "conj_method", "real",
                               "imag_attribute", "isnan", "isinf", "isfinite", "square",
                               "power", "power_operator", "exp", "abs", "angle",
                               "where", "logical_xor", "rint", "asarray_chkfinite",
                               *sorted(ELEMENTARY),
                               *ORDERED_BINARY]))
    if op in ("add", "subtract", "equal", "not_equal", "multiply", "divide",
              "logical_xor", *ORDERED_BINARY):
        y = _operand(draw, values, usable, x)
        return Step(op, (x_index, y) if draw(st.booleans()) else (y, x_index), {})
    if op == "power":
        return Step(op, (x_index,), {"n": draw(st.integers(-3, 4))})
    if op == "power_operator":
        return Step(op, (x_index,), {"n": draw(st.sampled_from([-3, -2, 0, 1, 2, 3, 4]))})
    if op == "angle":
        return Step(op, (x_index,), {"deg": draw(st.booleans())})
    if op == "where":
        y = _operand(draw, values, usable, x)
        shape = np.broadcast_shapes(np.shape(x), np.shape(values[y]) if
                                    isinstance(y, int) else np.shape(y[1]))
        masks = [i for i in usable if values[i].dtype == bool and
                 broadcasts(values[i], np.empty(shape))]
        mask = draw(st.sampled_from(masks)) if masks and draw(st.booleans()) else \
            ("const", draw(hnp.arrays(bool, shape)))
        return Step(op, (mask, x_index, y) if draw(st.booleans()) else (mask, y, x_index),
                    {})
    return Step(op, (x_index,), {})


def _sum(draw, values, usable, x_index):
    ndim = np.ndim(values[x_index])
    op = draw(st.sampled_from(list(SUM_OPS) + EXTREMES + ["argmin"]))
    if op == "argmin":
        return Step(op, (x_index,), {"axis": None if ndim == 0 or draw(st.booleans())
                                     else draw(st.integers(-ndim, ndim - 1))})
    if op in ("cumsum", "nancumsum", "cumprod"):
        axis = None if ndim == 0 or draw(st.booleans()) else \
            draw(st.integers(-ndim, ndim - 1))
        return Step(op, (x_index,), {"axis": axis})
    return Step(op, (x_index,), {"axis": draw_axis(draw, ndim),
                                 "keepdims": draw(st.booleans())})


SET_OPS = ["union1d", "intersect1d", "setdiff1d", "setxor1d"]


def _choosing(draw, values, usable, x_index):
    """clip between two Python numbers, isin, searchsorted, unique and the set
    functions: comparisons in NumPy's order of complex numbers (and equality)."""
    op = draw(st.sampled_from(["clip", "isin", "searchsorted", "unique", *SET_OPS]))
    if op == "unique":
        return Step(op, (x_index,), {"sorted_path": draw(st.booleans())})
    if op in SET_OPS:
        return Step(op, (x_index, _operand(draw, values, usable, values[x_index])), {})
    if op == "clip":
        low, high = (draw(st.sampled_from(LITERALS + [None])) for _ in range(2))
        return Step(op, (x_index,), {"low": low, "high": high})
    y = _operand(draw, values, usable, values[x_index])
    if op == "isin":
        return Step(op, (x_index, y), {})
    return Step(op, (x_index, y), {"side": draw(st.sampled_from(["left", "right"]))})


SELECTING = ["partition_kth", "lexsort", "nonzero_sized", "flatnonzero_sized",
             "extract_sized", "compress", "unstack_last", "tril", "triu", "diagflat"]


def _selecting(draw, values, usable, x_index):
    """Elements of x moved in NumPy's order of complex numbers (partition, lexsort),
    picked where nonzero or by a condition, or kept in a triangle."""
    x = values[x_index]
    shape, ndim = np.shape(x), np.ndim(x)
    op = draw(st.sampled_from(SELECTING))
    if op in ("tril", "triu", "diagflat"):
        return Step(op, (x_index,), {"k": draw(st.integers(-2, 2))})
    if op == "lexsort":
        partners = [i for i in usable if np.shape(values[i]) == shape]
        return Step(op, (x_index, draw(st.sampled_from(partners))), {})
    if op.endswith("_sized") or not ndim:
        return Step(op, (x_index,), {}) if op.endswith("_sized") else None
    axis = draw(st.integers(-ndim, ndim - 1))
    length = shape[axis]  # (kth and the condition's length sometimes one too many)
    if op == "partition_kth":
        return Step(op, (x_index,), {"kth": draw(st.integers(-length - 1, length)),
                                     "axis": axis})
    if op == "compress":
        condition = draw(hnp.arrays(bool, draw(st.integers(0, length + 1))))
        return Step(op, (x_index, ("const", condition)), {"axis": axis})
    return Step(op, (x_index,), {"axis": axis})


def _product(draw, values, usable, x_index):
    x = values[x_index]
    op = draw(st.sampled_from(list(PRODUCT_OPS)))
    if op in ("outer", "vdot"):
        candidates = [i for i in usable if _numeric(values[i]) and
                      (op == "outer" or np.size(values[i]) == np.size(x))]
        if candidates and draw(st.booleans()):
            return Step(op, (x_index, draw(st.sampled_from(candidates))), {})
        shape = (draw(st.integers(0, 3)),) if op == "outer" else np.shape(x)
        y = draw(values_of(draw(st.sampled_from(COMPLEX_DTYPES + REAL_DTYPES)), shape,
                           draw(st.booleans())))
        return Step(op, (x_index, ("const", y)), {})
    if np.ndim(x) == 0:
        return None if op == "matmul" else Step(op, (x_index, ("lit", 2 - 1j)), {})
    inner = np.shape(x)[-1]
    fits = [i for i in usable if np.ndim(values[i]) >= 1 and _numeric(values[i]) and
            np.shape(values[i])[-1 if np.ndim(values[i]) == 1 else -2] == inner]
    if fits and draw(st.booleans()):
        return Step(op, (x_index, draw(st.sampled_from(fits))), {})
    shape = (inner,) if draw(st.booleans()) else (inner, draw(st.integers(0, 3)))
    y = draw(values_of(draw(st.sampled_from(COMPLEX_DTYPES + REAL_DTYPES)), shape,
                       draw(st.booleans())))
    return Step(op, (x_index, ("const", y)), {})


def _shape(draw, values, usable, x_index):
    x = values[x_index]
    shape, ndim = np.shape(x), np.ndim(x)
    op = draw(st.sampled_from(["reshape", "transpose", "flip", "roll", "getitem",
                               "take_along_first", "concatenate", "stack", "astype"]))
    axis = draw(st.integers(-ndim, ndim - 1)) if ndim else None
    if op == "reshape":
        return Step(op, (x_index,), {"shape": draw_new_shape(draw, shape)})
    if op == "transpose":
        return Step(op, (x_index,), {"perm": tuple(draw(st.permutations(range(ndim))))})
    if op == "flip":
        return Step(op, (x_index,), {"axis": axis if draw(st.booleans()) else None})
    if op == "roll":
        return Step(op, (x_index,), {"shift": draw(st.integers(-5, 5)),
                                     "axis": axis if draw(st.booleans()) else None})
    if op == "getitem":
        return Step(op, (x_index,), {"index": draw_slice_index(draw, shape)})
    if op == "take_along_first":
        if not ndim:
            return None
        length = shape[0]  # (sometimes one out of bounds: NumPy raises IndexError)
        low, high = (-length - 1, length) if draw(st.integers(0, 9)) == 0 else \
            (-length, length - 1)
        indices = draw(hnp.arrays(np.int64, draw(hnp.array_shapes(min_dims=0, max_dims=2,
                                                                  min_side=0, max_side=3)),
                                  elements=st.integers(low, high))) if high >= low else \
            np.zeros(0, np.int64)
        return Step(op, (x_index, ("const", indices)), {})
    if op == "astype":
        return Step(op, (x_index,), {"dtype": draw(st.sampled_from(COMPLEX_DTYPES))})
    if op == "stack":
        partners = [i for i in usable if np.shape(values[i]) == shape]
        return Step(op, (x_index, draw(st.sampled_from(partners))),
                    {"axis": draw(st.integers(-ndim - 1, ndim))})
    if not ndim:
        return None
    partners = [i for i in usable if fits_beside(np.shape(values[i]), shape, axis)]
    return Step(op, (x_index, draw(st.sampled_from(partners))), {"axis": axis})


NORMS = [None, "backward", "ortho", "forward"]


def _fft(draw, values, usable, x_index):
    x = values[x_index]
    ndim = np.ndim(x)
    op = draw(st.sampled_from(list(FFT_OPS)))
    if op in REAL_INPUT_FFTS and _is_complex(x):
        reals = [i for i in usable if values[i].dtype.kind in "fi"]
        if reals:  # (else NumPy refuses the complex input, and so must jitflow)
            x_index = draw(st.sampled_from(reals))
            ndim = np.ndim(values[x_index])
    if op in HALF_SPECTRUM_FFTS and values[x_index].size == 0:
        # NumPy's irfft of a length-0 axis padded to n returns uninitialized memory:
        # np.fft.irfft(np.zeros((3, 0), np.complex64), n=3, axis=1) is 1.7e17 or so
        return None
    norm = draw(st.sampled_from(NORMS))
    if op in ("fft2", "fftn", "irfftn", "rfftn"):
        axes = None if ndim == 0 or draw(st.integers(0, 2)) == 0 else \
            tuple(draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=2,
                                unique_by=lambda a: a % ndim)))
        if op == "fft2" and axes is None:
            axes = (-2, -1)
        count = ndim if axes is None else len(axes)
        s = None if draw(st.booleans()) or count == 0 else \
            tuple(draw(st.integers(1, 6)) for _ in range(count))
        return Step(op, (x_index,), {"s": s, "axes": axes, "norm": norm})
    axis = draw(st.integers(-ndim, ndim - 1)) if ndim and draw(st.booleans()) else -1
    n = None if draw(st.booleans()) else draw(st.integers(1, 9))
    return Step(op, (x_index,), {"n": n, "axis": axis, "norm": norm})


def _refusal(draw, values, usable, x_index):
    """A step NumPy refuses: jitflow must raise an error of the same kind."""
    x = values[x_index]
    kind = draw(st.sampled_from(["n", "norm", "axis", "complex_rfft", "reshape"]))
    if kind == "n":
        return Step("fft", (x_index,), {"n": draw(st.sampled_from([0, -2])), "axis": -1,
                                        "norm": None})
    if kind == "norm" and np.ndim(x):  # (of a 0-d x NumPy refuses the axis first)
        return Step(draw(st.sampled_from(["ifft", "hfft"])), (x_index,),
                    {"n": None, "axis": -1, "norm": "unitary"})
    if kind == "axis":
        return Step("fft", (x_index,), {"n": None, "axis": np.ndim(x), "norm": None})
    if kind == "complex_rfft":
        return Step("rfft", (x_index,), {"n": None, "axis": -1, "norm": None})
    return Step("reshape", (x_index,), {"shape": (np.size(x) + 1,)})


def _linalg(draw, values, usable, x_index):
    x = values[x_index]
    if not _is_complex(x) or np.ndim(x) == 0 or _singular_to_rounding(x):
        return None
    return Step(draw(st.sampled_from(sorted(LINALG_OPS))), (x_index,), {})


def _singular_to_rounding(x):
    """Whether a gram v v^H + 3 I of x is singular to its dtype's rounding (3 lost
    beside |v|^2): then whether LAPACK meets a zero pivot ("Singular matrix", -inf) or a
    tiny one (finite results) is rounding's, on either side. Found by the thorough run:
    complex64 v = (35 + 4.9e16j, same) gave NumPy a finite slogdet."""
    squares = np.sum(np.abs(np.asarray(x, np.complex128)) ** 2, axis=-1)
    eps = float(np.finfo(np.asarray(x).real.dtype).eps)
    return bool(np.any(np.isfinite(squares) & (squares / 3 > 1 / (64 * eps))))


def _polynomial(draw, values, usable, x_index):
    op = draw(st.sampled_from(sorted(POLYNOMIAL_OPS)))
    if op == "polyfit":
        return Step(op, (x_index,), {})
    divisors = [i for i in usable if _numeric(values[i]) and 1 <= np.size(values[i]) <= 4]
    if divisors and draw(st.booleans()):
        return Step(op, (x_index, draw(st.sampled_from(divisors))), {})
    divisor = draw(values_of(draw(st.sampled_from(COMPLEX_DTYPES + REAL_DTYPES)),
                             (draw(st.integers(1, 3)),), draw(st.booleans())))
    return Step(op, (x_index, ("const", divisor)), {})


DRAW_STEP = {"elementwise": _elementwise, "sum": _sum, "product": _product,
             "shape": _shape, "fft": _fft, "linalg": _linalg, "choosing": _choosing,
             "selecting": _selecting, "polynomial": _polynomial}
STEP_KINDS = ["elementwise"] * 4 + ["shape"] * 3 + ["fft"] * 2 + ["sum"] * 2 + [
    "product", "linalg", "choosing", "selecting", "polynomial"]
