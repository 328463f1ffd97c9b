"""A differential fuzzer of whole programs over the API jitflow supports.

Each program (test_compositions.py's Step and Program, over the wider table of operations
in fuzzer_ops.py) runs

  - in NumPy, the reference, on the inputs as drawn: C-contiguous or not (reversed,
    strided, transposed, Fortran-ordered, unaligned views), length-0 and length-1 axes,
    bool, signed and unsigned integers of 8 to 64 bits, float16, float32 and float64 with NaN,
    infinities, -0.0 and the integer extremes, and Python literals beyond each integer
    dtype (and int64);
  - traced on the interpreter backend;
  - traced to native code: its first call (the checked path), its second and third
    (the entry Python calls directly, python_entry.py, which takes C-contiguous arrays
    and declines the others), then the same inputs as C-contiguous copies (which that
    entry takes);
  - then the same signature on the corner values of each dtype.

Each run must give NumPy's values, dtypes and shapes, or raise where NumPy raises (an
error of the same kind); a program's last step may be one NumPy refuses.

Native code rounds transcendental functions, float powers and float sums (products,
contractions, cumulative sums) differently (fidelity.py), so those steps are INEXACT and
only leaves: their results go nowhere but out, with their one-operation bound; every
other step must match bit for bit, signed zeros and NaN positions included. Float max and
min reductions, and a clip or float power of one element, may give either zero where
NumPy's order or layout decides (fidelity.py, test_numpy.py): leaves too.

test_derivatives_fuzzer.py draws float64 programs of differentiable ops and checks
their derivatives.

Each test runs PROGRAMS_PER_EXAMPLE times the profile's max_examples: 200 programs under
'ci', 10,000 under `pytest tests/test_program_fuzzer.py --hypothesis-profile=thorough`.
"""
import contextlib
import inspect
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fidelity
import jitflow
import jitflow.numpy as jnp
from fidelity import NATIVE_ULPS
from fuzzer_ops import (BINARY, EXACT_EXPONENTS, FUZZ_LITERALS, INDEXING, OPEN_ZERO_SIGN,
                        OPS, REARRANGING, REDUCTIONS, SHAPE_OPS, SINGLE_AXIS, SUMS,
                        TERNARY, TRANSCENDENTAL, UNARY)
from strategies import ALL_DTYPES as DTYPES, arrays, elements
from test_compositions import (LITERALS, SPECIAL, Program, Step, assert_same, broadcasts,
                               draw_axis, draw_broadcast_target, draw_new_shape,
                               draw_slice_index, evaluate, fits_beside)

# The thorough profile's 1000 examples make 10,000 programs; 'ci's 40 make 200.
PROGRAMS_PER_EXAMPLE = 10 if settings.default.max_examples >= 1000 else 5
FUZZ = settings(max_examples=settings.default.max_examples * PROGRAMS_PER_EXAMPLE,
                deadline=None, suppress_health_check=list(HealthCheck))

MAX_SIZE, MAX_DIMS, MAX_STEPS = 1024, 4, 10

def is_inexact(step, values):
    """Whether native code may round `step` (on `values`) differently from NumPy."""
    if step.op in TRANSCENDENTAL:
        return True
    args = [values[a] if isinstance(a, int) else a[1] for a in step.args]
    floats = any(np.asarray(a).dtype.kind == "f" or isinstance(a, float) for a in args)
    # (int32 and uint64 arrays promote to float64: NumPy's C pow of floats then, and
    # sums of products rounded in NumPy's order, found by the fuzzer)
    arrays = [np.asarray(a).dtype for a in args if isinstance(a, np.ndarray)]
    floats |= bool(arrays) and np.result_type(*arrays).kind == "f"
    if step.op == "power":
        exponent = step.args[1]
        return floats and not (isinstance(exponent, tuple) and exponent[0] == "lit" and
                               exponent[1] in EXACT_EXPONENTS)
    if step.op in ("mean", "nanmean", "average", "norm", "trapezoid"):
        return True  # an integer mean (norm, trapezoid) sums in float64 too
    if step.op == "clip":  # see inexact_tolerance
        return floats and _open_zero_sign(args)
    if step.op in ("fmax", "fmin"):
        return floats
    return floats and step.op in SUMS | OPEN_ZERO_SIGN


def _open_zero_sign(clip_args):
    """Whether NumPy's clip with both bounds may give either zero where x ties with a
    bound: its loop keeps x's zero when it reads both bounds as single values, which
    depends on layout and casting for one element (test_numpy.py), and happens for any
    number of elements when each bound holds one value (a broadcast view, stride 0)."""
    x, low, high = clip_args
    if low is None or high is None:
        return False
    if np.broadcast(np.asarray(x), np.asarray(low), np.asarray(high)).size == 1:
        return True
    return _one_value(low) and _one_value(high)


def _one_value(bound):
    bound = np.asarray(bound)
    return bound.size > 0 and bool(np.all(bound == bound.flat[0]))


# --- inputs ------------------------------------------------------------------------------

LAYOUTS = ("contiguous", "reversed", "strided", "transposed", "fortran", "unaligned")


def laid_out(values, layout):
    """An array holding `values` in the memory layout named."""
    if values.ndim == 0:
        return values.copy()
    if layout == "fortran":
        return np.asfortranarray(values)
    if layout == "unaligned" and values.dtype.itemsize > 1:
        buffer = np.zeros(values.nbytes + 1, np.uint8)[1:]
        array = buffer.view(values.dtype).reshape(values.shape)
    elif layout == "reversed":
        array = np.empty_like(values)[(slice(None, None, -1),) * values.ndim]
    elif layout == "strided":
        base = np.empty(tuple(2 * d for d in values.shape), values.dtype)
        array = base[(slice(None, None, 2),) * values.ndim]
    elif layout == "transposed":
        array = np.empty(values.shape[::-1], values.dtype).T
    else:
        array = np.empty_like(values)
    array[...] = values
    return array


FLOAT_CORNERS = SPECIAL + [2.5, -3.0, 0.5, 1e30, -1e-30]


def corner_values_like(x, layout):
    """An input like x (in `layout`) holding the corner cases of its dtype in turn; a
    Python scalar stays itself."""
    if layout == "python":
        return x
    if x.dtype.kind == "f":
        corners = FLOAT_CORNERS + [float(np.finfo(x.dtype).max)]
    elif x.dtype.kind == "b":
        corners = [True, False, False]
    else:
        info = np.iinfo(x.dtype)
        corners = [0, 1, -1, 2, -3, info.min, info.max, info.min + 1]
        corners = [c % (int(info.max) + 1) for c in corners] if info.min == 0 else corners
    with np.errstate(over="ignore"):  # 1e30 as a float16 is inf
        corners = np.array(corners, x.dtype)
    return laid_out(np.resize(corners, x.shape), layout)


def c_contiguous(x):
    return np.array(x, order="C") if isinstance(x, np.ndarray) else x


@st.composite
def input_values(draw, dtype, shape):
    if dtype.kind == "f":
        return draw(hnp.arrays(dtype, shape, elements=st.sampled_from(FLOAT_CORNERS) |
                               elements(dtype)))
    if dtype.kind in "iu":
        small = st.integers(-4 if dtype.kind == "i" else 0, 4)
        return draw(hnp.arrays(dtype, shape, elements=small | elements(dtype)))
    return draw(arrays(dtype, shape))


@st.composite
def inputs(draw):
    """Arrays of shapes that broadcast together, each in a layout, and (sometimes) a
    Python scalar: (inputs, their layouts, "python" for the scalar)."""
    count = draw(st.integers(1, 3))
    # Small arrays mostly; some long enough for vector loops, their remainders and
    # the kernels of larger arrays.
    shapes = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=count, max_dims=3, min_side=0,
        max_side=draw(st.sampled_from([4, 4, 19])))).input_shapes
    arrays, layouts = [], []
    for shape in shapes:
        values = draw(input_values(draw(st.sampled_from(DTYPES)), shape))
        layouts.append(draw(st.sampled_from(LAYOUTS)))
        arrays.append(laid_out(values, layouts[-1]))
    if draw(st.integers(0, 3)) == 0:
        arrays.append(draw(st.sampled_from(FUZZ_LITERALS)))
        layouts.append("python")
    return arrays, layouts


# --- programs ----------------------------------------------------------------------------

# Ops jitflow refuses (TypeError) for float16, whose next float native code, computing
# halves in float32, cannot give; and for uint64, whose magnitudes may pass int64's end.
REFUSED_FOR_HALF = {"spacing", "nextafter"}
REFUSED_FOR_UINT64 = {"gcd", "lcm"}


def _refused(step, value, values):
    dtype = np.asarray(value).dtype
    return (step.op in REFUSED_FOR_HALF and dtype == np.float16) or \
        (step.op in REFUSED_FOR_UINT64 and dtype == np.uint64) or \
        _bool_to_a_python_int_argument(step, values)


def _bool_to_a_python_int_argument(step, values):
    """bool ** n for a Python int n passed in: traced, n's value is unknown, and NumPy's
    result is int8 for 2 (its ** squares), int64 otherwise, so jitflow refuses it (found
    by the fuzzer)."""
    if step.op != "power" or not all(isinstance(a, int) for a in step.args):
        return False
    base, exponent = (values[a] for a in step.args)
    return type(exponent) is int and np.asarray(base).dtype == np.bool_


def _fits(value):
    value = np.asarray(value)
    return value.dtype in DTYPES and value.size <= MAX_SIZE and value.ndim <= MAX_DIMS


def _operand(draw, values, usable, x):
    """A second operand for x: an earlier value it broadcasts with, a literal, or a
    constant array."""
    kind = draw(st.sampled_from(["value", "literal", "constant", "argument"]))
    if kind == "value":
        return draw(st.sampled_from([i for i in usable if broadcasts(values[i], x)]))
    arguments = [i for i, v in enumerate(values) if isinstance(v, (bool, int, float))]
    if kind == "argument" and arguments:  # a Python scalar passed in
        return draw(st.sampled_from(arguments))
    if kind == "literal":
        return ("lit", draw(st.sampled_from(FUZZ_LITERALS)))
    shape = np.shape(x)[draw(st.integers(0, np.ndim(x))):]
    dtype = draw(st.sampled_from(DTYPES))
    return ("const", draw(input_values(dtype, shape)))


def _indices(draw, length, shape_of_indices=None):
    """Integer indices into an axis of `length`: negative ones too, and (rarely) one out
    of bounds, which NumPy refuses."""
    low, high = -length, length - 1
    if draw(st.integers(0, 9)) == 0:
        low, high = -length - 1, length
    shape = shape_of_indices or draw(hnp.array_shapes(min_dims=0, max_dims=2,
                                                      min_side=0, max_side=3))
    if high < low:
        return np.zeros(shape, np.int64)
    dtype = draw(st.sampled_from([np.int64, np.int32, np.int8, np.uint8, np.uint16]))
    if np.dtype(dtype).kind == "u":
        low = max(low, 0)
    low, high = max(low, np.iinfo(dtype).min), min(high, np.iinfo(dtype).max)
    if high < low:
        return np.zeros(shape, np.int64)
    return draw(hnp.arrays(dtype, shape, elements=st.integers(low, high)))


def _unary(draw, values, usable, x_index):
    return Step(draw(st.sampled_from(list(UNARY))), (x_index,), {})


def _binary(draw, values, usable, x_index):
    y = _operand(draw, values, usable, values[x_index])
    args = (x_index, y) if draw(st.booleans()) else (y, x_index)
    return Step(draw(st.sampled_from(list(BINARY))), args, {})


def _ternary(draw, values, usable, x_index):
    x = values[x_index]
    op = draw(st.sampled_from(list(TERNARY)))
    others = (_operand(draw, values, usable, x), _operand(draw, values, usable, x))
    if op == "clip" and draw(st.booleans()):  # one bound None
        others = (others[0], ("lit", None)) if draw(st.booleans()) else \
            (("lit", None), others[1])
    return Step(op, (x_index, *others), {})


def _reduction(draw, values, usable, x_index):
    ndim = np.ndim(values[x_index])
    if draw(st.integers(0, 2)) == 0:
        axis = None if ndim == 0 or draw(st.booleans()) else \
            draw(st.integers(-ndim, ndim - 1))
        return Step(draw(st.sampled_from(list(SINGLE_AXIS))), (x_index,), {"axis": axis})
    params = {"axis": draw_axis(draw, ndim), "keepdims": draw(st.booleans())}
    return Step(draw(st.sampled_from(list(REDUCTIONS))), (x_index,), params)


def _indexing(draw, values, usable, x_index, op=None):
    shape = np.shape(values[x_index])
    op = op or draw(st.sampled_from(list(INDEXING)))
    if not shape:
        return None
    if op == "take":
        if draw(st.booleans()):
            axis = draw(st.integers(-len(shape), len(shape) - 1))
            indices = _indices(draw, shape[axis])
        else:
            axis, indices = None, _indices(draw, int(np.prod(shape)))
        return Step(op, (x_index, ("const", indices)), {"axis": axis})
    if op == "mask":
        mask_shape = shape[:draw(st.integers(1, len(shape)))]
        mask = draw(hnp.arrays(np.bool_, mask_shape))
        return Step(op, (x_index, ("const", mask)), {})
    axis = 1 if op == "index_array_axis1" else 0
    if len(shape) <= axis:
        return None
    return Step(op, (x_index, ("const", _indices(draw, shape[axis]))), {})


def _shape_op(draw, values, usable, x_index, op=None):
    x = values[x_index]
    shape, ndim = np.shape(x), np.ndim(x)
    op = op or draw(st.sampled_from(list(SHAPE_OPS)))
    if op == "reshape":
        return Step(op, (x_index,), {"shape": draw_new_shape(draw, shape)})
    if op == "ravel":
        return Step(op, (x_index,), {})
    if op == "transpose":
        perms = st.just(tuple(reversed(range(ndim)))) | st.permutations(
            range(ndim)).map(tuple)
        return Step(op, (x_index,), {"perm": draw(perms)})
    if op == "broadcast_to":
        return Step(op, (x_index,), {"shape": draw_broadcast_target(draw, shape)})
    if op == "slice":
        index = draw_slice_index(draw, shape)
        if draw(st.booleans()):  # a new axis somewhere
            at = draw(st.integers(0, len(index)))
            index = index[:at] + (None,) + index[at:]
        return Step(op, (x_index,), {"index": index})
    if op == "expand_dims":
        return Step(op, (x_index,), {"axis": draw(st.integers(-ndim - 1, ndim))})
    if op == "squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        axis = None if not ones or draw(st.booleans()) else draw(st.sampled_from(ones))
        return Step(op, (x_index,), {"axis": axis})
    if op in ("swapaxes", "moveaxis"):
        if not ndim:
            return None
        a, b = (draw(st.integers(-ndim, ndim - 1)) for _ in range(2))
        return Step(op, (x_index,), {"a": a, "b": b})
    if op == "pad":
        width = draw(st.integers(0, 2) | st.tuples(st.integers(0, 2), st.integers(0, 2)))
        return Step(op, (x_index,), {"width": width,
                                     "value": draw(st.sampled_from(LITERALS))})
    if op == "astype":  # float to int is undefined for NaN and inf: not drawn
        kind = np.asarray(x).dtype.kind
        dtypes = [d for d in DTYPES if kind != "f" or d.kind in "fb"]
        return Step(op, (x_index,), {"dtype": draw(st.sampled_from(dtypes))})
    if op == "matmul":
        return _matmul(draw, values, usable, x_index)
    if not ndim:
        return None
    if op == "stack":
        axis = draw(st.integers(-ndim - 1, ndim))
        partners = [i for i in usable if np.shape(values[i]) == shape]
        return Step(op, (x_index, draw(st.sampled_from(partners))), {"axis": axis})
    axis = draw(st.integers(-ndim, ndim - 1))
    partners = [i for i in usable if fits_beside(np.shape(values[i]), shape, axis)]
    return Step(op, (x_index, draw(st.sampled_from(partners))), {"axis": axis})


def _rearranging(draw, values, usable, x_index, op=None):
    x = values[x_index]
    shape, ndim = np.shape(x), np.ndim(x)
    op = op or draw(st.sampled_from(list(REARRANGING)))
    axis = draw(st.integers(-ndim, ndim - 1)) if ndim else None
    if op == "flip":
        return Step(op, (x_index,), {"axis": axis if draw(st.booleans()) else None})
    if op == "rot90":
        if ndim < 2:
            return None
        axes = draw(st.permutations(range(ndim)))[:2]
        return Step(op, (x_index,), {"k": draw(st.integers(-5, 5)), "axes": tuple(axes)})
    if op == "roll":
        return Step(op, (x_index,), {"shift": draw(st.integers(-5, 5)),
                                     "axis": axis if draw(st.booleans()) else None})
    if op == "tile":
        reps = draw(st.integers(0, 3) | st.lists(st.integers(0, 2), max_size=3).map(tuple))
        return Step(op, (x_index,), {"reps": reps})
    if op == "repeat":
        return Step(op, (x_index,), {"repeats": draw(st.integers(0, 3)),
                                     "axis": axis if draw(st.booleans()) else None})
    if op == "diff":
        return Step(op, (x_index,), {"n": draw(st.integers(0, 2)), "axis": axis or -1})
    if op in ("diagonal", "trace"):
        if ndim < 2:
            return None
        return Step(op, (x_index,), {"offset": draw(st.integers(-3, 3))})
    if op == "diag":
        return Step(op, (x_index,), {"k": draw(st.integers(-2, 2))}) if ndim in (1, 2) \
            else None
    if op == "kron":
        return Step(op, (x_index, draw(st.sampled_from(usable))), {})
    if op == "vecdot":
        if not ndim:
            return None
        partners = [i for i in usable if np.ndim(values[i]) >= 1 and
                    np.shape(values[i])[-1] == shape[-1] and
                    broadcasts(np.empty(np.shape(values[i])[:-1]), np.empty(shape[:-1]))]
        return Step(op, (x_index, draw(st.sampled_from(partners))), {})
    if op == "norm":
        ord = draw(st.sampled_from([None, 1, 2, 0, 3, np.inf, -np.inf]))
        if ndim == 0 or (ord is not None and ndim > 2):
            return Step(op, (x_index,), {"ord": None, "axis": None})
        return Step(op, (x_index,), {"ord": ord, "axis": axis if ord != 2 or ndim == 1
                                     else None if ndim > 2 else axis})
    if op in ("tril", "triu"):
        return Step(op, (x_index,), {"k": draw(st.integers(-2, 2))}) if ndim else None
    if op == "matrix_transpose":
        return Step(op, (x_index,), {}) if ndim >= 2 else None
    if op == "append":
        return Step(op, (x_index, draw(st.sampled_from(usable))), {})
    if op in ("delete", "insert"):  # at constant positions
        axis = None if axis is None or draw(st.booleans()) else axis
        size = np.size(x) if axis is None else shape[axis]
        positions = st.integers(-size - 1, size + 1)
        obj = draw(positions | st.lists(positions, max_size=3))
        params = {"obj": obj, "axis": axis}
        if op == "insert":
            params["value"] = draw(st.sampled_from([0, 2, 1.5, True]))  # (any dtype holds)
        return Step(op, (x_index,), params)
    if op == "searchsorted":  # into a sorted constant
        dtype = draw(st.sampled_from(DTYPES))
        a = np.sort(draw(input_values(dtype, (draw(st.integers(0, 6)),))))
        return Step(op, (("const", a), x_index),
                    {"side": draw(st.sampled_from(["left", "right"]))})
    if op == "partition_kth":  # (kth sometimes out of bounds: NumPy raises ValueError)
        length = shape[axis] if ndim else 0
        return Step(op, (x_index,), {"kth": draw(st.integers(-length - 1, length)),
                                     "axis": axis}) if ndim else None
    if op == "split_piece":
        if not ndim:
            return None
        sections = draw(st.integers(1, 4))
        return Step(op, (x_index,), {"sections": sections, "axis": axis,
                                     "piece": draw(st.integers(0, sections - 1))})
    partners = [i for i in usable if np.shape(values[i]) == shape]
    return Step(op, (x_index, draw(st.sampled_from(partners))), {})


def _matmul(draw, values, usable, x_index):
    """x @ y for a y that fits: an earlier value or a constant."""
    shape = np.shape(values[x_index])
    if not shape:
        return None
    fits = [i for i in usable if np.ndim(values[i]) >= 1 and
            np.shape(values[i])[-1 if np.ndim(values[i]) == 1 else -2] == shape[-1]]
    if fits and draw(st.booleans()):
        return Step("matmul", (x_index, draw(st.sampled_from(fits))), {})
    right = (shape[-1],) if draw(st.booleans()) else (shape[-1], draw(st.integers(0, 3)))
    y = draw(input_values(draw(st.sampled_from(DTYPES)), right))
    return Step("matmul", (x_index, ("const", y)), {})


DRAW_STEP = {"unary": _unary, "binary": _binary, "ternary": _ternary,
             "reduction": _reduction, "indexing": _indexing, "shape": _shape_op,
             "rearranging": _rearranging}
# How often each kind is drawn: the big tables more often, so that each op of theirs
# comes up about as often as a ternary one.
STEP_KINDS = ["binary"] * 4 + ["unary"] * 3 + ["shape"] * 3 + ["reduction"] * 2 + \
    ["indexing"] * 2 + ["rearranging"] * 2 + ["ternary"]


def _draw_steps(draw, values, usable, count, draw_step):
    """Up to `count` steps, each from draw_step(draw, x_index) on a usable x (mostly
    the newest, so that steps build on each other), tried twice as often: yields each
    step drawn (None when draw_step had nothing for x); the caller keeps it or not."""
    for _ in range(2 * count):
        newest = draw(st.booleans())
        yield draw_step(draw, usable[-1] if newest else draw(st.sampled_from(usable)))


def run_numpy(program, inputs):
    """NumPy's results for `inputs`, or the error it raises."""
    def outputs():
        values = evaluate(program, np, inputs, OPS)
        return tuple(values[i] for i in program.outputs)
    return fidelity.numpy_outcome(outputs)


@st.composite
def programs(draw):
    """A program; no step reads an inexact one (see the module docstring). Its last
    step may be one NumPy refuses (`program.raises`)."""
    arguments, layouts = draw(inputs())
    program = Program(arguments, [], ())
    program.raises, program.layouts = False, layouts
    values = list(program.inputs)
    if draw(st.integers(0, 3)) == 0:
        constant = draw(input_values(draw(st.sampled_from(DTYPES)),
                                     np.shape(program.inputs[0])))
        program.steps.append(Step("constant", (("const", constant),), {}))
        values.append(constant)
    usable = [i for i, layout in enumerate(layouts) if layout != "python"]
    usable += range(len(layouts), len(values))  # the constant
    count = draw(st.integers(1, MAX_STEPS))

    def draw_step(draw, x_index):
        kind = draw(st.sampled_from(STEP_KINDS))
        return DRAW_STEP[kind](draw, values, usable, x_index)
    for step in _draw_steps(draw, values, usable, count, draw_step):
        if step is None:
            continue
        program.steps.append(step)
        program.outputs = (len(values),)
        result, error = run_numpy(program, program.inputs)
        if error is not None and draw(st.integers(0, 3)) == 0:
            program.raises = True  # the last step: jitflow must raise as NumPy does
            break
        if error is not None or not _fits(result[0]) or _refused(step, result[0], values):
            program.steps.pop()
            continue
        if not is_inexact(step, values):
            usable.append(len(values))
        values.append(np.asarray(result[0]))
        if len(program.steps) >= count:
            break
    if program.raises:
        return program
    used = {a for step in program.steps for a in step.args if isinstance(a, int)}
    program.outputs = tuple(i for i in range(len(program.inputs), len(values))
                            if i not in used)
    return program


# --- the property ------------------------------------------------------------------------

def _regression(inputs, steps, outputs):
    program = Program(inputs, steps, outputs)
    program.raises, program.layouts = False, ["contiguous"] * len(inputs)
    return program


# uint64 and int32 arrays promote to float64, whose products past 2**53 NumPy's
# correlate rounds in an order of its own: an inexact leaf (found by the fuzzer)
CORRELATE_PAST_2_53 = _regression(
    [np.array([[[27, -1, -1]]], np.int32)],
    [Step("flip", (0,), {"axis": None}),
     Step("correlate_same", (("const", np.array([[[2, 333599972397815, 0]]], np.uint64)),
                             1), {})], (2,))


# a term 2 * 1.8e308 beside -inf: NumPy's dot fuses it (-inf), jitflow's rounds it to
# inf first (NaN); the corner values give it (found by the fuzzer)
CORRELATE_OVERFLOWING_TERM = _regression(
    [np.zeros((1, 13))],
    [Step("correlate_same", (("const", np.full((1, 13), 2, np.int32)), 0), {})], (1,))


# uint8 128 ** 128 wraps to 0; native code read only an exponent's low 7 bits, as for a
# signed one, and gave 1 (found by the fuzzer)
UNSIGNED_EXPONENT_HIGH_BIT = _regression(
    [np.array(128, np.uint8)], [Step("power", (0, 0), {})], (1,))


@FUZZ
@example(program=CORRELATE_PAST_2_53, background=False)
@example(program=UNSIGNED_EXPONENT_HIGH_BIT, background=False)
@example(program=CORRELATE_OVERFLOWING_TERM, background=False)
@given(program=programs(), background=st.booleans())
def test_program_matches_numpy_on_every_path(program, background):
    """background: native code is built on a thread while the first call runs on the
    interpreter (the default for users; executable.py)."""
    note(f"program:\n{program}")
    interpreted = traced(program, "interpreter")
    native = traced(program, "native")
    native_calls = 0
    corners = [corner_values_like(x, layout)
               for x, layout in zip(program.inputs, program.layouts)]
    for inputs in (program.inputs, corners):
        note(f"inputs: {inputs}")
        expected = run_numpy(program, inputs)
        values = None if expected[1] is not None else numpy_values(program, inputs)
        copies = [c_contiguous(x) for x in inputs]
        runs = [("interpreter", interpreted, inputs)]
        runs += [("native", native, inputs)] * 3 + [("native", native, copies)] * 2
        for backend, fn, arguments in runs:
            native_calls += backend == "native"
            label = f"{backend}, call {native_calls}" if backend == "native" else backend
            if arguments is copies:
                label += " on C-contiguous copies"
            got = call(fn, backend, arguments, background_compile=background)
            check(label, got, expected, program, values)


def traced(program, backend):
    """The program as a jitflow.function (compiled for `backend` when first called)."""
    def fn(*inputs):
        values = evaluate(program, jnp, inputs, OPS)
        return tuple(values[i] for i in program.outputs)
    return compiled(fn, len(program.inputs))


def compiled(fn, count):
    """jitflow.function(fn) for `fn(*inputs)` taking `count` inputs, named as
    parameters: calls of a function with *args never take the fast entry."""
    fn.__signature__ = inspect.Signature([
        inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for i in range(count)])
    return jitflow.function(fn)


@contextlib.contextmanager
def configured(**options):
    saved = {name: getattr(jitflow.config, name) for name in options}
    for name, value in options.items():
        setattr(jitflow.config, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(jitflow.config, name, value)


def call(fn, backend, arguments, **options):
    """(results, None), or (None, the error raised), with jitflow.config's `options`."""
    with configured(backend=backend, check_ir=True, **options), \
            np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*arguments), None
        except Exception as error:  # compared with NumPy's in check()
            return None, error


def numpy_values(program, inputs, ops=OPS):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(program, np, inputs, ops)


def check(label, got, expected, program, values):
    """got (call()'s) is what NumPy's run gave: the same kind of error, or the
    same results (`values`: each value of NumPy's run, for the tolerances)."""
    results, error = got
    _, expected_error = expected
    if expected_error is not None:
        assert error is not None, \
            f"{label}: NumPy raises {expected_error!r}, jitflow returns {results}"
        assert same_kind(error, expected_error), \
            f"{label}: NumPy raises {expected_error!r}, jitflow {error!r}"
        return
    if error is not None:
        raise AssertionError(f"{label}: raised {error!r}, NumPy computes it") from error
    assert type(results) is tuple and len(results) == len(program.outputs), label
    for result, index in zip(results, program.outputs):
        if order_dependent_product(program, values, index):
            result = np.asarray(result)
            assert (result.dtype, result.shape) == (values[index].dtype,
                                                    values[index].shape), label
            continue
        tolerance = inexact_tolerance(program, values, index)
        fidelity.assert_same(result, values[index], what=f"{label}: v{index}",
                             **(tolerance or {}))
        if tolerance is None:
            assert_same(result, values[index])  # NaN positions and signed zeros too


def order_dependent_product(program, values, index):
    """Whether v<index> is a float product some of whose partial products may overflow
    or underflow. NumPy multiplies in the memory order of its operand; native code
    multiplies C-ordered arguments (the call copies others to C order) in C order, so
    there the infinities, NaN (inf * 0) and zeros of the result depend on the order
    (a documented difference): only its dtype and shape are compared. Likewise a float
    matrix product one of whose terms overflows: a fused multiply-add keeps that term
    exact (3.6e308 - inf is -inf, 3.6e308 - 3.5e308 finite) where a product rounded first
    is inf (NaN, inf), and NumPy's BLAS and jitflow's kernels fuse and order them
    differently (found by the thorough run: NaN against -inf; and again in correlate,
    whose NumPy sums by dot)."""
    if index < len(program.inputs):
        return False
    step = program.steps[index - len(program.inputs)]
    if step.op in SUMS_OF_PRODUCTS and values[index].dtype.kind == "f":
        return _a_term_overflows(step, values, values[index].dtype)
    if step.op not in ("prod", "nanprod") or values[index].dtype.kind != "f":
        return False
    operand = step.args[0]
    x = np.asarray(values[operand] if isinstance(operand, int) else operand[1], np.float64)
    with np.errstate(all="ignore"):
        magnitudes = np.abs(x[np.isfinite(x) & (x != 0)])
        info = np.finfo(values[index].dtype)
        growth = np.sum(np.log(magnitudes[magnitudes > 1]))
        shrinking = np.sum(np.log(magnitudes[magnitudes < 1]))
    return bool(growth > np.log(info.max) or shrinking < np.log(info.tiny))


SUMS_OF_PRODUCTS = {"matmul", "correlate_same", "convolve", "vdot", "vecdot"}


def _a_term_overflows(step, values, dtype):
    largest = []
    for operand in step.args:
        x = np.abs(np.asarray(values[operand] if isinstance(operand, int) else operand[1],
                              np.float64))
        finite = x[np.isfinite(x)]
        largest.append(float(finite.max()) if finite.size else 0.0)
    with np.errstate(over="ignore"):
        return bool(largest[0] * largest[1] > float(np.finfo(dtype).max))


def same_kind(error, expected):
    """Whether jitflow's error is of the kind NumPy's is (an OverflowError for one).
    A TypeError also answers an error NumPy raises for the values (a negative integer
    power, an index out of bounds): jitflow raises type errors while tracing, before any
    value is seen, so a later step's type error comes first. So does the OverflowError
    of a Python integer out of its array's range (NumPy raises it at that step whatever
    the values). A spurious one still shows, in the programs where NumPy computes every
    step."""
    if isinstance(expected, OverflowError):
        return isinstance(error, OverflowError)
    value_dependent = isinstance(expected, (ValueError, ArithmeticError, IndexError))
    raised_while_tracing = type(error) is TypeError or (
        type(error) is OverflowError and "Python integer" in str(error))
    if value_dependent and raised_while_tracing:
        return True
    return isinstance(error, fidelity.error_kinds(expected))


def inexact_tolerance(program, values, index):
    """How far v<index> may be from NumPy's (None: not at all): see fidelity.py."""
    if index < len(program.inputs):
        return None
    step = program.steps[index - len(program.inputs)]
    if not is_inexact(step, values):
        return None
    if step.op in ("logaddexp", "logaddexp2"):
        return _log_add_tolerance(step, values, values[index])
    if step.op in TRANSCENDENTAL:
        return {"ulps": NATIVE_ULPS}
    if step.op == "power":
        # NumPy's loop takes x ** 0.5 as sqrt (sqrt(-0.0) is -0.0, pow(-0.0, 0.5) is
        # 0.0) when it reads the exponent as one value; for a one-element result that
        # depends on the operands' casts and dimensions, not only on their shapes.
        one_element = np.size(values[index]) == 1
        return {"ulps": NATIVE_ULPS, "zero_sign": not one_element}
    if step.op in OPEN_ZERO_SIGN:
        return {"zero_sign": False}
    args = [values[a] if isinstance(a, int) else a[1] for a in step.args]
    with np.errstate(all="ignore"):  # magnitudes may overflow (then compared exactly)
        return _sum_tolerance(step, args, np.asarray(values[index]))


def _log_add_tolerance(step, values, result):
    """max(x, y) + log1p(exp(-|x - y|)) may cancel (-0.5 + 0.47): each term's rounding
    (NATIVE_ULPS of the larger operand's magnitude, at least 1), not the sum's."""
    args = [np.asarray(values[a] if isinstance(a, int) else a[1]) for a in step.args]
    eps = float(np.finfo(np.asarray(result).dtype).eps)
    with np.errstate(all="ignore"):
        larger = np.nan_to_num(np.maximum(*args).astype(np.float64), posinf=0, neginf=0)
    return {"ulps": NATIVE_ULPS, "atol": NATIVE_ULPS * eps * (np.abs(larger) + 1)}


def _sum_tolerance(step, args, result):
    """n roundings of the sum of the magnitudes of the n terms of each result (relative
    for a product, which does not cancel)."""
    eps = float(np.finfo(result.dtype).eps)
    # (NaN that nansum and friends leave out count for nothing)
    magnitudes = [np.nan_to_num(np.abs(np.asarray(a, np.float64)), nan=0.0, posinf=np.inf)
                  for a in args]
    if step.op == "norm":  # a root of a sum of terms of one sign: relative
        return {"rtol": 16 * (magnitudes[0].size + 1) * eps, "ulps": NATIVE_ULPS,
                "zero_sign": False}
    if step.op in ("prod", "nanprod"):  # relative: no cancellation
        terms = magnitudes[0].size // max(result.size, 1)
        return {"rtol": 2 * terms * eps, "atol": float(np.finfo(np.float64).tiny)}
    bound_of = _SUM_BOUNDS.get(step.op, _reduction_bound)
    terms, bound, extra = bound_of(step, magnitudes, args, result)
    return {"atol": terms * eps * np.nan_to_num(bound, posinf=0.0), "rtol": eps, **extra}


# Each: (step, magnitudes, args, result) -> (terms, the sum of their magnitudes, more of
# assert_same's keywords).

def _trace_bound(step, magnitudes, args, result):  # at most n products: a loose bound
    terms = max(magnitudes[0].size, 1)
    bound = np.sum(magnitudes[0]) * (np.max(magnitudes[-1]) if magnitudes[-1].size
                                     and step.op == "vecdot" else 1.0)
    return terms, bound, {"zero_sign": False}


def _vdot_bound(step, magnitudes, args, result):  # the flattened operands' products
    terms = max(magnitudes[0].size, 1)
    return terms, np.sum(magnitudes[0].ravel() * magnitudes[1].ravel()), {"zero_sign": False}


def _convolution_bound(step, magnitudes, args, result):  # sums of products
    a, v = (m.ravel() for m in magnitudes)
    bound = OPS[step.op](np, a, v) if a.size and v.size else 0.0
    return max(min(a.size, v.size), 1), bound, {"zero_sign": False}


def _add_at_bound(step, magnitudes, args, result):  # at most three values per element
    return 4, 3 * np.max(magnitudes[0], initial=0.0), {"zero_sign": False}


def _reduceat_bound(step, magnitudes, args, result):  # each slice of the last axis
    whole = magnitudes[0] if magnitudes[0].ndim else magnitudes[0].reshape(1)
    return whole.shape[-1], np.sum(whole, axis=-1, keepdims=True), {}


def _matmul_bound(step, magnitudes, args, result):
    return magnitudes[0].shape[-1], magnitudes[0] @ magnitudes[1], \
        {"zero_sign": not fidelity.products_underflow(*args, result.dtype)}


def _running_sum_bound(step, magnitudes, args, result):
    axis = step.params["axis"]
    terms = magnitudes[0].size if axis is None else magnitudes[0].shape[axis]
    if step.op == "cumsum":
        return terms, np.cumsum(magnitudes[0], axis=axis), {}
    return terms, np.cumulative_sum(magnitudes[0], axis=axis, include_initial=True), {}


def _trapezoid_bound(step, magnitudes, args, result):  # halves of neighbours' sums
    axis = -1 if step.params["axis"] is None else step.params["axis"]
    return magnitudes[0].shape[axis], np.sum(magnitudes[0], axis=axis), {}


def _reduction_bound(step, magnitudes, args, result):
    axis, keepdims = step.params["axis"], step.params["keepdims"]
    terms = magnitudes[0].size // max(result.size, 1)
    bound = np.sum(magnitudes[0], axis=axis, keepdims=keepdims)
    if step.op in ("mean", "average"):
        bound = bound / max(terms, 1)
    return terms, bound, {}


_SUM_BOUNDS = {"trace": _trace_bound, "vecdot": _trace_bound, "vdot": _vdot_bound,
               "convolve": _convolution_bound, "correlate_same": _convolution_bound,
               "add_at": _add_at_bound, "add_reduceat": _reduceat_bound,
               "matmul": _matmul_bound, "cumsum": _running_sum_bound,
               "cumulative_sum": _running_sum_bound, "trapezoid": _trapezoid_bound}


def test_a_later_steps_type_error_may_come_before_an_earlier_steps_value_error():
    # bool ** negative int raises for the values; -bool raises for the type, at trace
    # time, before the power is ever computed (found by the fuzzer)
    def program(x, n):
        y = x ** n
        return -x, y
    x, n = np.array(True), np.array(-1, np.int32)
    expected = fidelity.numpy_outcome(program, x, n)[1]
    assert isinstance(expected, ValueError)
    with pytest.raises(TypeError, match="boolean negative"):
        jitflow.function(program)(x, n)
    assert same_kind(TypeError("-bool"), expected)
    assert not same_kind(ValueError("shape"), TypeError("bool"))


def test_a_later_steps_out_of_range_integer_may_come_before_an_earlier_steps_value_error():
    # int32 ** -1 raises for the values; 2**31 + an int32 array raises OverflowError for
    # the Python integer whatever the values, while tracing (found by the fuzzer)
    def program(x):
        return 2_147_483_648 + x ** x
    x = np.array([0, 1, -1], np.int32)
    expected = fidelity.numpy_outcome(program, x)[1]
    assert isinstance(expected, ValueError)
    with pytest.raises(OverflowError, match="Python integer"):
        jitflow.function(program)(x)
    with pytest.raises(OverflowError, match="Python integer"):
        program(np.zeros(3, np.int32))
    assert same_kind(OverflowError("Python integer 2147483648 out of bounds"), expected)
    assert not same_kind(OverflowError("int32 overflow"), expected)


@pytest.mark.parametrize("x", [np.array(False), np.array([True, False, True])])
def test_a_bool_array_squared_by_the_operator_is_int8(x):
    # ndarray's ** takes np.square for a Python int 2 (int8 of bool), where np.power of
    # the same gives int64 (found by the fuzzer)
    for program in (lambda x: x ** 2, lambda x: np.power(x, 2), lambda x: x ** 3):
        expected = program(x)
        for backend in ("interpreter", "native"):
            got, error = call(compiled(program, 1), backend, (x,))
            assert error is None
            fidelity.assert_same(got, expected, what=backend)
    # the exponent passed in: traced, its value unknown, so is the dtype (found by the
    # fuzzer: int64 for NumPy's int8); refused, and the fuzzer draws it no more
    with pytest.raises(TypeError, match="depends on the value"):
        jitflow.function(lambda x, n: x ** n)(x, 2)
    steps = [Step("power", (0, 1), {})]
    assert _refused(steps[0], x ** 2, [x, 2]) and not _refused(steps[0], x, [x, x])


@pytest.mark.parametrize("take", [lambda xp, c, i: xp.lexsort((i, c)),
                                  lambda xp, c, i: xp.take_along_axis(c, i, axis=1)])
def test_a_constant_taken_along_traced_positions(take):
    # lexsort of a traced key before a constant one takes the constant along the traced
    # order; NumPy's [] of the constant cannot take traced indices (found by the fuzzer)
    c = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]])
    i = np.array([[2, 0, -1], [1, 1, -3]])
    expected = take(np, c, i)
    for backend in ("interpreter", "native"):
        for xp in (np, jnp):
            got, error = call(compiled(lambda a: take(xp, c, a), 1), backend, (i,))
            assert error is None, error
            fidelity.assert_same(got, expected, what=backend)

