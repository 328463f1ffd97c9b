"""A differential fuzzer of programs over complex values (jitflow/complex_values).

Each program is a few steps (test_compositions.py's Step and Program) over complex64
and complex128 inputs and their real partners (float32, float64, int32): arithmetic
with arrays and Python scalars, conj, abs, angle, real, imag, exp, integer powers,
comparisons and NumPy's order of complex numbers (less, maximum, fmin, max, argmin,
...), where, sums, products, shape functions, indexing, partition, lexsort,
selections (nonzero, extract, compress) and triangles, casts, numpy.fft's
transforms, C99's elementary functions and numpy.linalg's functions of Hermitian
positive definite matrices made from a value (complex_fuzzer_ops.py holds them all).
It runs in NumPy, the reference, on inputs as drawn (any layout, 0-d, length-0 and
length-1 axes, parts holding 0, -0.0, inf, -inf, NaN and ordinary
magnitudes), traced on the interpreter, and compiled to native code (first call,
repeated calls, C-contiguous copies); then again on a grid of corner values. Each run
must give NumPy's dtypes and shapes and its values as `compare` says, or raise an error
of the kind NumPy raises.

Exact steps (additions, negation, conj, real and imag, comparisons, where, casts,
shapes and indexing) compute each part as NumPy does, bit for bit, and may feed later
steps. The others are rounded differently: NumPy's complex multiply is not the plain
formula (its loops fuse or reorder the products), sums and products add in another
order, and native code rounds exp, sin, cos, hypot and arctan2 its own way
(tests/fidelity.py). Those are INEXACT: leaves whose results go nowhere but out, each
with its one-operation bound (`tolerance`). Where NumPy's own loops disagree on
non-finite results, `compare` says what is compared instead.

Small inputs meet a few corner values at a time: test_elementwise_step_on_every_corner
and test_binary_step_on_every_pair_of_corners put every corner (and every pair of
them) through each elementwise step.

test_gradients_match_central_differences draws complex128 programs of differentiable
steps and a real loss of their result, and checks jitflow.grad, eager and compiled,
against central differences of NumPy's loss in the real and imaginary part of each
input element, combined by JAX's convention: dL/dx - i dL/dy.

Programs per run: 100 (and 33 gradient programs) under the 'ci' profile, 3,000 (and
1,000) under `pytest tests/complex_values --hypothesis-profile=thorough`. What it found
has regression tests in test_complex_fuzzer_regressions.py.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fidelity
import jitflow
import jitflow.numpy as jnp
from complex_fuzzer_ops import (ELEMENTARY, ELEMENTWISE_OPS, EXACT_OPS, EXTREMES,
                                FFT_OPS, HALF_SPECTRUM_FFTS, INEXACT, INVERSE,
                                LINALG_OPS, LOOSE_ON_NON_FINITE, OPS, ORDERED_BINARY,
                                PRODUCT_OPS, REAL_INPUT_FFTS, ROUNDED_SUMS, SUM_OPS)
from fidelity import NATIVE_ULPS
from test_compositions import (Program, Step, broadcasts, draw_axis, draw_new_shape,
                               draw_slice_index, evaluate, fits_beside)
from test_program_fuzzer import (LAYOUTS, c_contiguous, call, compiled, laid_out,
                                 numpy_values, same_kind)

THOROUGH = settings.default.max_examples >= 1000
FUZZ = settings(max_examples=3000 if THOROUGH else 100, deadline=None,
                suppress_health_check=list(HealthCheck))
GRADIENT_FUZZ = settings(FUZZ, max_examples=FUZZ.max_examples // 3)

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


def _is_complex(value):
    return np.asarray(value).dtype.kind == "c"


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
                               "where", "logical_xor", "rint", *sorted(ELEMENTARY),
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


DRAW_STEP = {"elementwise": _elementwise, "sum": _sum, "product": _product,
             "shape": _shape, "fft": _fft, "linalg": _linalg, "choosing": _choosing,
             "selecting": _selecting}
STEP_KINDS = ["elementwise"] * 4 + ["shape"] * 3 + ["fft"] * 2 + ["sum"] * 2 + [
    "product", "linalg", "choosing", "selecting"]


# --- programs ----------------------------------------------------------------------------

def _fits(value):
    value = np.asarray(value)
    return value.dtype in VALUE_DTYPES and value.size <= MAX_SIZE and \
        value.ndim <= MAX_DIMS


def run_numpy(program, inputs):
    def outputs():
        values = evaluate(program, np, inputs, OPS)
        return tuple(values[i] for i in program.outputs)
    return fidelity.numpy_outcome(outputs)


@st.composite
def programs(draw):
    """A program of 1 to MAX_STEPS steps; inexact steps are leaves. It may end in a
    step NumPy refuses (`program.raises`)."""
    arguments, layouts = draw(inputs())
    program = Program(arguments, [], ())
    program.raises, program.layouts = False, layouts
    values = list(arguments)
    usable = [i for i, layout in enumerate(layouts) if layout != "python"]
    count = draw(st.integers(1, MAX_STEPS) | st.integers(4, MAX_STEPS))  # (longer often)
    for _ in range(2 * count):
        complex_values = [i for i in usable if _is_complex(values[i])]
        pool = complex_values if complex_values and draw(st.integers(0, 3)) else usable
        x_index = pool[-1] if draw(st.booleans()) else draw(st.sampled_from(pool))
        # (a middle value: hypothesis draws the ends of a range more often than others)
        refusing = draw(st.integers(0, 40)) == 20
        kind = "refusal" if refusing else draw(st.sampled_from(STEP_KINDS))
        step = (_refusal if refusing else DRAW_STEP[kind])(draw, values, usable, x_index)
        if step is None:
            continue
        program.steps.append(step)
        program.outputs = (len(values),)
        result, error = run_numpy(program, program.inputs)
        if error is not None and (refusing or draw(st.integers(0, 8)) == 4):
            program.raises = True  # the last step: jitflow must raise as NumPy does
            return program
        if error is not None or not _fits(result[0]):
            program.steps.pop()
            continue
        arguments = [values[a] if isinstance(a, int) else a[1] for a in step.args]
        if step.op not in INEXACT and not _zero_sign_open(step, arguments):
            usable.append(len(values))
        values.append(np.asarray(result[0]))
        if len(program.steps) >= count:
            break
    used = {a for step in program.steps for a in step.args if isinstance(a, int)}
    program.outputs = tuple(i for i in range(len(program.inputs), len(values))
                            if i not in used)
    return program


def traced(program):
    def fn(*inputs):
        values = evaluate(program, jnp, inputs, OPS)
        return tuple(values[i] for i in program.outputs)
    return compiled(fn, len(program.inputs))


# --- comparing ---------------------------------------------------------------------------

def compare(label, result, expected, step, args):
    """jitflow's `result` of `step` (None: an input) against NumPy's: same dtype and
    shape, each part (of a complex result) compared on its own.

    An exact step matches bit for bit, signed zeros and NaN positions included. An
    inexact one on finite operands gets its one-operation bound (`tolerance`) and must
    still put NaN and infinities where NumPy does.

    Where an operand of a multiply, divide or power holds inf or NaN, the parts of a
    non-finite result are not comparable: NumPy's own loops disagree. Its contiguous
    (SIMD) multiply loop gives nan+nanj for np.array([1+inf*1j]) * 2.0 but its loop
    for a complex scalar operand nan+infj for the same product by 2+0j. Which ELEMENTS
    are finite is the same for any order of these operations (inf or NaN in a term
    makes the element non-finite, whichever way it is multiplied), so there each
    element must be finite exactly where NumPy's is, and its finite ones within the
    bound.

    The same holds where finite operands overflow: NumPy's loops multiply with fused
    multiply-adds, fma(ar, br, -ai bi), which give -inf where the plain formula gives
    inf - inf = NaN: (1e20+1e20j)**2 in complex64 is -inf+infj in NumPy, nan+infj in
    jitflow (and would be in NumPy on a CPU without FMA).

    A transform of non-finite values is looser still: pocketfft never multiplies by a
    root of unity that is exactly 0 or 1 (irfft's sin(pi k) terms), the transform's
    matrix products do (by 1.2e-16 for sin(pi), and inf * 0 is NaN anyway), so an
    element NumPy finds finite may be inf or NaN in jitflow. So with products, whose
    BLAS kernels skip an element that is 0 (np.dot([0j], [[0, inf*1j]]) is finite).
    There an element NumPy finds non-finite must be so too, and those both find finite
    must be close."""
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.dtype == expected.dtype, \
        f"{label}: dtype {result.dtype}, NumPy gives {expected.dtype}"
    assert result.shape == expected.shape, \
        f"{label}: shape {result.shape}, NumPy gives {expected.shape}"
    if step is not None and step.op in ELEMENTARY and _is_complex(args[0]):
        result, expected = _signs_of_nan_arguments_open(result, expected, args[0])
    bound, unknown = (None, None) if step is None or step.op not in INEXACT else \
        tolerance(step, args, expected)
    if unknown is not None and unknown.any():
        result, expected = result[~unknown], expected[~unknown]
        bound = {k: (v[~unknown] if np.ndim(v) else v) for k, v in bound.items()}
    overflow = not (_all_finite(expected) and _all_finite(result))
    if step is not None and step.op in LOOSE_ON_NON_FINITE and \
            (overflow or not all(_all_finite(a) for a in args)):
        finite, finite_here = _finite_elements(expected), _finite_elements(result)
        if step.op in FFT_OPS or step.op in PRODUCT_OPS:
            assert not np.any(finite_here & ~finite), \
                f"{label}: finite where NumPy's is not: {result}, {expected}"
            finite &= finite_here
        np.testing.assert_array_equal(finite_here, finite,
                                      err_msg=f"{label}: which elements are finite")
        result, expected = result[finite], expected[finite]
        bound = {k: (v[finite] if np.ndim(v) else v) for k, v in bound.items()}
    if step is not None and step.op in EXTREMES and _in_memory_order(args[0]):
        result, expected = _same_nans(label, result, expected)
        bound = {"zero_sign": False}
    if step is not None and _zero_sign_open(step, args):
        bound = {"zero_sign": False}
    for part, got, want in _parts(result, expected):
        fidelity.assert_same(got, want, what=f"{label} ({part})",
                             **({} if bound is None else bound))


def _zero_sign_open(step, args):
    """Whether NumPy keeps either of 0 and -0: its unstable sort in intersect1d,
    unique's sorted path, and the set functions' unique of a real operand (in its own
    dtype, sorted) before the complex comparison; and its vector loops in max, nanmax
    and the like of a real operand (NumPy's nanmax of [0.0, -0.0] is 0.0, jitflow's
    -0.0, as the program fuzzer allows). Such a step is a leaf (`programs`)."""
    if step.op in ("intersect1d", "partition_kth") or \
            step.op == "unique" and step.params["sorted_path"]:
        return True  # (partition: NumPy's introselect puts either of a tie at kth)
    if step.op in EXTREMES and not _is_complex(args[0]):
        return True
    return step.op in ("setxor1d", "setdiff1d") and not all(map(_is_complex, args))


def _signs_of_nan_arguments_open(result, expected, z):
    """An elementary function of z whose part is NaN takes the signs of its result's
    infinite and zero parts from that NaN's sign bit in glibc (arcsin(inf - nan*1j) is
    nan - inf*1j, of inf + nan*1j nan + inf*1j). NumPy leaves NaN's sign unspecified and
    its operations set it as their loops happen to (x86's inf - inf is -nan), so where
    z has a NaN part only the parts' magnitudes are compared."""
    nan_argument = np.broadcast_to(np.isnan(z.real) | np.isnan(z.imag), expected.shape)
    if not nan_argument.any():
        return result, expected
    return _magnitudes_where(result, nan_argument), _magnitudes_where(expected, nan_argument)


def _magnitudes_where(value, mask):
    magnitudes = np.empty_like(value)  # (1j * inf would be nan + inf*1j)
    magnitudes.real, magnitudes.imag = np.abs(value.real), np.abs(value.imag)
    return np.where(mask, magnitudes, value)


def _in_memory_order(operand):
    """Whether NumPy reduces `operand` in an order other than C order: its memory
    order. Then which of several NaNs a max or min returns (nan+0j or -inf+nanj), or
    which of two equal values differing in a zero's sign, is NumPy's first in memory;
    jitflow's is the first in C order (a known difference, in README)."""
    operand = np.asarray(operand)
    return operand.dtype.kind == "c" and operand.ndim > 1 and not operand.flags.c_contiguous


def _same_nans(label, result, expected):
    """The elements NaN in either part must be so in both; the others are returned."""
    nan_here, nan_there = np.isnan(result), np.isnan(expected)
    np.testing.assert_array_equal(nan_here, nan_there, err_msg=f"{label}: NaN elements")
    return result[~nan_there], expected[~nan_there]


def _all_finite(value):
    value = np.asarray(value)
    return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))


def _finite_elements(value):
    return np.isfinite(value.real) & np.isfinite(value.imag)


def _parts(result, expected):
    if expected.dtype.kind != "c":
        return [("value", result, expected)]
    return [("real part", result.real, expected.real),
            ("imaginary part", result.imag, expected.imag)]


def _magnitude(value):
    """|real| + |imag| in float64 (an upper bound of |z| up to a factor sqrt(2)); 0
    where a part is not finite (its results are compared by class)."""
    value = np.asarray(value)
    with np.errstate(all="ignore"):  # (float64 first: abs of int32's minimum overflows)
        magnitude = np.abs(np.real(value).astype(np.float64)) + \
            np.abs(np.imag(value).astype(np.float64))
    return np.where(np.isfinite(magnitude), magnitude, 0.0)


def tolerance(step, args, expected):
    """How far an inexact step's result may be from NumPy's: assert_same's keywords,
    with atol broadcast to the result's shape (None: exactly, as integer sums), and
    where nothing is known of it (`unknown`).

    Where the bound of a sum, product or transform overflows, so may its partial sums,
    in one order and not the other (sum([3e38, 3e38, -3e38]) in float32 is inf or
    3e38), and their cancellation is unbounded: such elements are not compared. exp's
    bound overflows where e^x does, and there NumPy's value is compared exactly."""
    if expected.dtype.kind not in "fc":
        return None, None
    eps = float(np.finfo(expected.real.dtype).eps)
    if step.op in LINALG_OPS and np.asarray(args[0]).dtype.kind == "c":
        # the gram v v^H is formed in v's precision (+ 3 I then widens complex64 to
        # complex128): its rounding, times the condition number, is the result's error
        eps = max(eps, float(np.finfo(np.asarray(args[0]).real.dtype).eps))
    terms, bound = _bound(step, args, expected)
    with np.errstate(all="ignore"):
        bound = np.broadcast_to(bound, expected.shape)
        sums = step.op in ROUNDED_SUMS or \
            step.op in ("power", "power_operator") and step.params["n"] > 0
        unknown = ~np.isfinite(bound) if sums else np.zeros(expected.shape, bool)
        if step.op == "sign":  # NumPy's |z| overflows there (jitflow's is scaled)
            z = np.asarray(args[0])
            unknown |= np.isfinite(z) & ~np.isfinite(np.abs(z))
        atol = 4 * terms * eps * np.where(np.isfinite(bound), bound, 0.0) + \
            float(np.finfo(expected.real.dtype).tiny)
    # A sum or product whose rounding differs may reach zero from either side (an
    # underflowing product, a fused multiply-add): the sign of its zero is rounding too.
    # exp, abs and angle keep the signs C99 gives them (exp(-inf - 0j) is 0 - 0j).
    zero_sign = step.op in ("exp", "abs", "angle") or step.op in ELEMENTARY
    return {"atol": atol, "ulps": NATIVE_ULPS, "rtol": eps, "zero_sign": zero_sign}, \
        unknown


def _bound(step, args, expected):
    """(number of roundings, magnitude they are relative to) for `step`."""
    magnitudes = [_magnitude(a) for a in args]
    op = step.op
    with np.errstate(all="ignore"):
        if op in ("multiply", "square"):
            return 2, np.multiply(magnitudes[0], magnitudes[-1])
        if op == "divide":
            return 4, np.divide(magnitudes[0], magnitudes[1])
        if op in ("power", "power_operator"):
            n = step.params["n"]
            return 4 * abs(n) + 4, np.power(magnitudes[0], n)
        if op == "exp":  # e^x (cos y + i sin y): each factor a few ulps of e^x
            return NATIVE_ULPS, np.exp(np.real(np.asarray(args[0])).astype(np.float64))
        if op in ("abs", "angle"):  # (relative: the ulps of assert_same)
            return 0, 0.0
        if op in ELEMENTARY:
            return NATIVE_ULPS, _elementary_scale(op, expected)
        if op in SUM_OPS:
            return _sum_bound(step, magnitudes[0], expected)
        if op in PRODUCT_OPS:
            return _product_bound(step, magnitudes)
        if op in LINALG_OPS:
            return _linalg_bound(args[0], expected)
        return _transform_bound(step, magnitudes[0])


def _elementary_scale(op, expected):
    """What an elementary function's rounding is relative to: the result's magnitude
    (a part may be far smaller than the other, as log's real part near |z| = 1); for
    NumPy's log1p, log(1 + z), and expm1, exp(z) - 1, also the 1 their formulas add,
    whose rounding cancels."""
    magnitude = _magnitude(expected)
    return magnitude + 1.0 if op in ("log1p", "expm1") else magnitude


def _sum_bound(step, magnitude, expected):
    axis = step.params["axis"]
    if step.op in ("cumsum", "nancumsum"):
        terms = magnitude.size if axis is None else magnitude.shape[axis]
        return terms, np.cumsum(magnitude, axis=axis)
    if step.op == "cumprod":  # each product two roundings of each part
        terms = magnitude.size if axis is None else magnitude.shape[axis]
        return 4 * terms, np.cumprod(magnitude, axis=axis)
    keepdims = step.params["keepdims"]
    if step.op in ("median", "nanmedian"):  # the mean of two elements at most
        return 2, np.max(magnitude, axis=axis, keepdims=keepdims, initial=0.0)
    terms = magnitude.size // max(expected.size, 1)
    bound = np.sum(magnitude, axis=axis, keepdims=keepdims)
    return terms, bound / max(terms, 1) if step.op == "mean" else bound


def _product_bound(step, magnitudes):
    """The same product of the magnitudes: the sum of the terms' magnitudes."""
    a, b = magnitudes
    terms = {"outer": 1, "vdot": a.size}.get(step.op, a.shape[-1] if a.ndim else 1)
    return 2 * max(terms, 1), OPS[step.op](np, a, b)


def _linalg_bound(x, expected):
    """A backward-stable factorization of a matrix of condition number c gives results
    within about n c eps of the largest: per matrix, the condition number of the gram
    (1 + |v|^2 / 3) times its result's largest magnitude."""
    x = np.asarray(x)
    n = x.shape[-1]
    squares = np.sum(np.abs(x.astype(np.complex128)) ** 2, axis=-1)
    condition = 1 + squares / 3
    largest = _magnitude(expected)
    if largest.ndim > condition.ndim:  # (a vector or matrix per gram)
        axes = tuple(range(condition.ndim, largest.ndim))
        largest = np.max(largest, axis=axes, keepdims=True, initial=0.0)
        condition = condition.reshape(condition.shape + (1,) * len(axes))
    return 16 * n, condition * (largest + 1)


def _transform_bound(step, magnitude):
    """Every output of a transform is a sum of all (resized) inputs along its axes
    times roots of unity: their magnitudes' sum (twice that for a spectrum completed by
    mirroring) bounds it, with about as many roundings as points transformed."""
    params = step.params
    if "axes" in params:
        s, axes = params["s"], params["axes"]
        if axes is None:
            axes = tuple(range(magnitude.ndim))[-len(s):] if s else range(magnitude.ndim)
        lengths = s or [magnitude.shape[a] for a in axes]
    else:
        axes, lengths = (params["axis"],), [params["n"] or magnitude.shape[params["axis"]]]
    terms = 2 * int(np.prod([max(n, 1) for n in lengths])) + 8
    bound = np.sum(magnitude, axis=tuple(axes), keepdims=True)
    return terms, 2 * bound if step.op in HALF_SPECTRUM_FFTS else bound


# --- the property ------------------------------------------------------------------------

def check(label, got, expected, program, inputs, values):
    results, error = got
    _, expected_error = expected
    if _linalg_outcome_open(error, expected_error, program, inputs):
        return
    if expected_error is not None:
        assert error is not None, \
            f"{label}: NumPy raises {expected_error!r}, jitflow returns {results}"
        assert same_kind(error, expected_error), \
            f"{label}: NumPy raises {expected_error!r}, jitflow {error!r}"
        return
    if error is not None:
        raise AssertionError(f"{label}: raised {error!r}, NumPy computes it") from error
    assert type(results) is tuple and len(results) == len(program.outputs), label
    first = len(program.inputs)
    for result, index in zip(results, program.outputs):
        step = program.steps[index - first] if index >= first else None
        args = [] if step is None else \
            [values[a] if isinstance(a, int) else a[1] for a in step.args]
        compare(f"{label}: v{index}", result, values[index], step, args)


def _linalg_outcome_open(error, expected_error, program, inputs):
    """Whether one side raised LinAlgError and the other computed, on a matrix that is
    not finite. There LAPACK's outcome is its build's and CPU kernels': NumPy's own
    OpenBLAS computed a cholesky of a gram with inf entries that scipy-openblas32
    found not positive definite. (Found by the thorough run.)"""
    errors = [e for e in (error, expected_error) if e is not None]
    if len(errors) != 1 or not isinstance(errors[0], np.linalg.LinAlgError):
        return False
    for number, step in enumerate(program.steps):
        if step.op in LINALG_OPS:
            before = Program(inputs, program.steps[:number], ())
            values, prefix_error = fidelity.numpy_outcome(
                lambda: evaluate(before, np, inputs, OPS))
            if prefix_error is None and not _all_finite(values[step.args[0]]):
                return True
    return False


def _example(inputs, steps, outputs):
    program = Program(inputs, steps, outputs)
    program.raises, program.layouts = False, ["contiguous"] * len(inputs)
    return program


# nanmax of a real [0.0, -0.0]: NumPy's 0.0, jitflow's -0.0 (found by the fuzzer)
NANMAX_OF_ZEROS = _example([np.array([0.0, -0.0], np.float32)],
                           [Step("nanmax", (0,), {"axis": None, "keepdims": False})], (1,))


@FUZZ
@example(program=NANMAX_OF_ZEROS)
@given(program=programs())
def test_complex_program_matches_numpy_on_every_path(program):
    note(f"program:\n{program}")
    interpreted, native = traced(program), traced(program)
    corners = [corner_values_like(x, layout)
               for x, layout in zip(program.inputs, program.layouts)]
    for inputs in (program.inputs, corners):
        note(f"inputs: {inputs}")
        expected = run_numpy(program, inputs)
        values = None if expected[1] is not None else numpy_values(program, inputs, OPS)
        copies = [c_contiguous(x) for x in inputs]
        runs = [("interpreter", interpreted, inputs, "interpreter")]
        runs += [("native", native, inputs, f"native, call {n}") for n in (1, 2)]
        runs += [("native", native, copies, "native on C-contiguous copies")]
        for backend, fn, arguments, label in runs:
            got = call(fn, backend, arguments, background_compile=False)
            check(label, got, expected, program, inputs, values)


# --- every corner at once ----------------------------------------------------------------
#
# A program's inputs are small, so the corner pass meets a few corners at a time. Each
# elementwise step here meets all of them (and values whose products overflow or
# underflow), and each binary one every pair, with the comparison of `compare`.

CORNER_VALUES = CORNERS + [1e30 + 1e-30j, -3e38 + 3e38j, 1e-40 - 1e300j, 5e-324j,
                           1e200 + 1e200j, -6.6e-16 - 2.5e200j]
UNARY_CASES = [(op, {}) for op in ("negative", "conj", "conj_method", "real",
                                   "imag_attribute", "isnan", "isinf", "isfinite",
                                   "square", "exp", "abs", *sorted(ELEMENTARY))] + \
    [("angle", {"deg": False}), ("angle", {"deg": True})] + \
    [("power", {"n": n}) for n in range(-3, 5)] + \
    [("power_operator", {"n": n}) for n in (-3, -2, 0, 1, 2, 3, 4)]
BINARY_CASES = ["add", "subtract", "multiply", "divide", "equal", "not_equal",
                *ORDERED_BINARY]


def _check_step_everywhere(step, arguments):
    values = numpy_values(Program(arguments, [step], ()), arguments, OPS)
    for backend in ("interpreter", "native"):
        fn = compiled(lambda *a: OPS[step.op](jnp, *a, **step.params), len(arguments))
        result, error = call(fn, backend, arguments)
        if error is not None:
            raise AssertionError(f"{backend}: {error!r}") from error
        compare(f"{backend}: {step}", result, values[-1], step, arguments)


@pytest.mark.parametrize("dtype", COMPLEX_DTYPES)
@pytest.mark.parametrize("op, params", UNARY_CASES)
def test_elementwise_step_on_every_corner(op, params, dtype):
    with np.errstate(over="ignore"):  # (1e300 is inf in complex64)
        z = np.array(CORNER_VALUES, dtype)
    _check_step_everywhere(Step(op, (0,), params), [z])


@pytest.mark.parametrize("dtypes", [(np.complex64, np.complex64),
                                    (np.complex128, np.complex64),
                                    (np.complex64, np.float32), (np.float64, np.complex64)])
@pytest.mark.parametrize("op", BINARY_CASES)
def test_binary_step_on_every_pair_of_corners(op, dtypes):
    def corners(dtype):
        with np.errstate(over="ignore"):  # (1e300 is inf in complex64)
            return np.array(CORNER_VALUES if np.dtype(dtype).kind == "c" else
                            PART_CORNERS + [1e30, -3e38, 5e-324], dtype)
    x, y = corners(dtypes[0])[:, None], corners(dtypes[1])[None, :]
    _check_step_everywhere(Step(op, (0, 1), {}), [x, y])


# --- derivatives -------------------------------------------------------------------------

GRADIENT_OPS = {
    "add": EXACT_OPS["add"], "subtract": EXACT_OPS["subtract"],
    "multiply": ELEMENTWISE_OPS["multiply"], "divide": ELEMENTWISE_OPS["divide"],
    "negative": EXACT_OPS["negative"], "conj": EXACT_OPS["conj"],
    "real": EXACT_OPS["real"], "imag": EXACT_OPS["imag_attribute"],
    "exp": ELEMENTWISE_OPS["exp"], "square": ELEMENTWISE_OPS["square"],
    "power": ELEMENTWISE_OPS["power"], "abs": ELEMENTWISE_OPS["abs"],
    "angle": ELEMENTWISE_OPS["angle"], "where": EXACT_OPS["where"],
    "sum": SUM_OPS["sum"], "mean": SUM_OPS["mean"], "cumsum": SUM_OPS["cumsum"],
    "matmul": PRODUCT_OPS["matmul"], "vdot": PRODUCT_OPS["vdot"],
    "reshape": EXACT_OPS["reshape"], "transpose": EXACT_OPS["transpose"],
    "flip": EXACT_OPS["flip"], "roll": EXACT_OPS["roll"],
    "getitem": EXACT_OPS["getitem"], "concatenate": EXACT_OPS["concatenate"],
    "fft": FFT_OPS["fft"], "ifft": FFT_OPS["ifft"], "fft2": FFT_OPS["fft2"],
    **{name: ELEMENTWISE_OPS[name] for name in sorted(INVERSE)},
}
# Steps with a kink or a cut, where central differences are taken only on values away
# from it: abs and division at 0, angle across the negative real axis, the inverse
# functions across their cuts (arccosh's the real axis below 1; arctan's and arcsinh's
# the imaginary axis beyond +-i; the others' the real axis beyond +-1).
NEAR_ZERO_LIMIT, MAX_MAGNITUDE = 0.05, 1e3


@st.composite
def gradient_inputs(draw):
    """complex128 arrays (and sometimes a float64 one) of parts in +-[0.25, 2]."""
    count = draw(st.integers(1, 2))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, max_dims=2,
                                                    min_side=1, max_side=3)).input_shapes
    part = st.floats(0.25, 2.0) | st.floats(-2.0, -0.25)
    arrays = []
    for number, shape in enumerate(shapes):
        if number and draw(st.integers(0, 2)) == 0:
            values = draw(hnp.arrays(np.float64, shape, elements=part))
        else:  # (some with imaginary parts 0: exp takes those apart, for one)
            imaginary = part if draw(st.integers(0, 4)) != 2 else st.just(0.0)
            values = draw(hnp.arrays(np.complex128, shape,
                                     elements=st.builds(complex, part, imaginary)))
        arrays.append(laid_out(values, draw(st.sampled_from(LAYOUTS))))
    return arrays


def _gradient_step(draw, values, x_index):
    x = values[x_index]
    shape, ndim = np.shape(x), np.ndim(x)
    op = draw(st.sampled_from(list(GRADIENT_OPS)))
    others = [i for i in range(len(values)) if broadcasts(values[i], x)]
    if op in ("add", "subtract", "multiply", "divide"):
        y = draw(st.sampled_from(others)) if draw(st.booleans()) else \
            ("lit", draw(st.sampled_from([1.5 - 0.5j, -2j, 0.5, 3])))
        return Step(op, (x_index, y) if draw(st.booleans()) else (y, x_index), {})
    if op == "where":
        y = draw(st.sampled_from(others))
        mask = draw(hnp.arrays(bool, np.broadcast_shapes(shape, np.shape(values[y]))))
        return Step(op, (("const", mask), x_index, y), {})
    if op == "power":
        return Step(op, (x_index,), {"n": draw(st.sampled_from([-2, -1, 2, 3]))})
    if op == "angle":
        return Step(op, (x_index,), {"deg": False})
    if op in ("sum", "mean"):
        return Step(op, (x_index,), {"axis": draw_axis(draw, ndim),
                                     "keepdims": draw(st.booleans())})
    if op in ("cumsum", "flip", "fft", "ifft", "fft2", "roll", "matmul", "vdot",
              "concatenate", "transpose") and not ndim:
        return None
    axis = draw(st.integers(-ndim, ndim - 1)) if ndim else None
    if op in ("cumsum", "flip"):
        return Step(op, (x_index,), {"axis": axis})
    if op == "roll":
        return Step(op, (x_index,), {"shift": draw(st.integers(-3, 3)), "axis": axis})
    if op == "matmul":
        part = st.floats(-2, 2)
        y = draw(hnp.arrays(np.complex128, (shape[-1], draw(st.integers(1, 3))),
                            elements=st.builds(complex, part, part)))
        return Step(op, (x_index, ("const", y)), {})
    if op == "vdot":
        partners = [i for i in range(len(values)) if np.size(values[i]) == np.size(x)]
        return Step(op, (draw(st.sampled_from(partners)), x_index), {})
    if op == "concatenate":
        partners = [i for i in range(len(values))
                    if fits_beside(np.shape(values[i]), shape, axis)]
        return Step(op, (x_index, draw(st.sampled_from(partners))), {"axis": axis})
    if op in ("fft", "ifft"):
        return Step(op, (x_index,), {"n": draw(st.none() | st.integers(1, 5)),
                                     "axis": axis, "norm": draw(st.sampled_from(NORMS))})
    if op == "fft2":
        return Step(op, (x_index,), {"s": None, "axes": (0, -1) if ndim > 1 else (0,),
                                     "norm": draw(st.sampled_from(NORMS))})
    if op == "reshape":
        return Step(op, (x_index,), {"shape": draw_new_shape(draw, shape)})
    if op == "transpose":
        return Step(op, (x_index,), {"perm": tuple(draw(st.permutations(range(ndim))))})
    if op == "getitem":
        index = draw_slice_index(draw, shape)
        return Step(op, (x_index,), {"index": index})
    return Step(op, (x_index,), {})


def _smooth_there(step, args):
    """Whether `step` is differentiable, with room for central differences, at `args`:
    no division by, or abs of, a value near 0; no angle near its cut."""
    if step.op == "divide" or (step.op == "power" and step.params["n"] < 0):
        divisor = args[1] if step.op == "divide" else args[0]
        return bool(np.all(np.abs(divisor) > NEAR_ZERO_LIMIT))
    if step.op == "abs":
        return bool(np.all(np.abs(args[0]) > NEAR_ZERO_LIMIT))
    if step.op == "angle":
        z = np.asarray(args[0], np.complex128)
        return bool(np.all((z.real > NEAR_ZERO_LIMIT) | (np.abs(z.imag) > NEAR_ZERO_LIMIT)))
    if step.op in INVERSE:
        return _away_from_cut(step.op, np.asarray(args[0], np.complex128))
    return True


def _away_from_cut(op, z):
    along, across = (z.imag, z.real) if op in ("arctan", "arcsinh") else (z.real, z.imag)
    if op == "arccosh":
        off_cut = along > 1 + NEAR_ZERO_LIMIT
    else:
        off_cut = np.abs(along) < 1 - NEAR_ZERO_LIMIT
    return bool(np.all(off_cut | (np.abs(across) > NEAR_ZERO_LIMIT)))


def _moderate(value):
    value = np.asarray(value)
    return value.size > 0 and value.dtype.kind in "fc" and \
        bool(np.all(np.abs(value) < MAX_MAGNITUDE))


LOSSES = {  # real losses of a program's result r
    "sum_abs_squared": lambda xp, r, weights: xp.sum(xp.abs(r) ** 2),
    "sum_real_weighted": lambda xp, r, weights: xp.sum(xp.real(r * weights)),
}


@st.composite
def gradient_programs(draw):
    """A complex128 program of differentiable steps, whose every value is moderate and
    every step smooth where it is taken, and a loss of its last value."""
    arguments = draw(gradient_inputs())
    program = Program(list(arguments), [], ())
    values = list(arguments)
    count = draw(st.integers(1, MAX_STEPS) | st.integers(4, MAX_STEPS))
    for _ in range(2 * count):
        x_index = len(values) - 1 if draw(st.booleans()) else \
            draw(st.integers(0, len(values) - 1))
        step = _gradient_step(draw, values, x_index)
        if step is None:
            continue
        program.steps.append(step)
        program.outputs = (len(values),)
        args = [values[a] if isinstance(a, int) else a[1] for a in step.args]
        result, error = fidelity.numpy_outcome(
            lambda: evaluate(program, np, program.inputs, GRADIENT_OPS)[-1])
        if error is not None or not _moderate(result) or not _smooth_there(step, args):
            program.steps.pop()
            continue
        values.append(np.asarray(result))
        if len(program.steps) >= count:
            break
    program.outputs = (len(values) - 1,)
    loss = draw(st.sampled_from(list(LOSSES)))
    if loss == "sum_abs_squared" and not np.all(np.abs(values[-1]) > NEAR_ZERO_LIMIT):
        loss = "sum_real_weighted"  # (|r| has a kink at 0)
    program.loss = loss
    return program


def program_loss(program, xp):
    """The program's real loss as a function of its inputs, in namespace xp."""
    index = program.outputs[0]

    def loss(*inputs):
        result = evaluate(program, xp, inputs, GRADIENT_OPS)[index]
        size = int(np.prod(np.shape(result)))
        phases = np.arange(size).reshape(np.shape(result))
        weights = np.cos(phases) + 1j * np.sin(2 * phases + 1)
        return LOSSES[program.loss](xp, result, weights)
    return loss


FD_STEP = 1e-6


def central_differences(loss, inputs):
    """dL/dx - i dL/dy for each element of each complex input (dL/dx of a real one),
    from central differences of NumPy's loss."""
    gradients = []
    for number, x in enumerate(inputs):
        x = np.array(x)
        gradient = np.zeros_like(x)
        directions = [1.0, 1j] if x.dtype.kind == "c" else [1.0]
        for position in np.ndindex(x.shape):
            for direction in directions:
                values = []
                for sign in (1, -1):
                    moved = x.copy()
                    moved[position] += sign * FD_STEP * direction
                    arguments = list(inputs)
                    arguments[number] = moved
                    values.append(float(loss(*arguments)))
                derivative = (values[0] - values[1]) / (2 * FD_STEP)
                # JAX's convention: the real part's derivative minus i the imaginary's
                gradient[position] += derivative if direction == 1.0 else -1j * derivative
        gradients.append(gradient)
    return gradients


def _assert_gradients(label, got, expected, rtol, atol, zero_sign=True):
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    assert len(got) == len(expected), label
    for number, (g, e) in enumerate(zip(got, expected)):
        assert np.asarray(g).dtype == e.dtype, \
            f"{label}, argument {number}: dtype {np.asarray(g).dtype}, expected {e.dtype}"
        for part, a, b in _parts(np.asarray(g), np.asarray(e)):
            fidelity.assert_same(a, b, rtol=rtol, atol=atol, zero_sign=zero_sign,
                                 what=f"{label}, argument {number} ({part})")


@GRADIENT_FUZZ
@given(program=gradient_programs())
def test_gradients_match_central_differences(program):
    note(f"program:\n{program}\nloss: {program.loss}")
    argnums = tuple(range(len(program.inputs)))
    gradient = jitflow.grad(program_loss(program, jnp), argnums=argnums)
    with np.errstate(all="ignore"):
        expected = central_differences(program_loss(program, np), program.inputs)
    scale = max(1.0, max(float(np.max(np.abs(e), initial=0)) for e in expected))
    eager = gradient(*program.inputs)
    # (central differences have no signed zeros: an input the loss does not read gets
    # the gradient 0 - 0j, the conjugate of 0 + 0j)
    _assert_gradients("eager", eager, expected, rtol=1e-5, atol=1e-5 * scale,
                      zero_sign=False)
    copies = [c_contiguous(x) for x in program.inputs]
    for backend in ("interpreter", "native"):
        compiled_gradient = compiled(gradient, len(program.inputs))
        for number, arguments in enumerate([program.inputs] * 2 + [copies]):
            got, error = call(compiled_gradient, backend, arguments)
            label = f"{backend}, call {number + 1}"
            if error is not None:
                raise AssertionError(f"{label}: {error!r}") from error
            _assert_gradients(label, got, [np.asarray(e) for e in eager],
                              rtol=1e-9, atol=1e-12 * scale)
