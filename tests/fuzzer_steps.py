"""The program fuzzer's steps (test_program_fuzzer.py): for a value x of the program so
far, a step of each kind that applies to it (elementwise, reductions, indexing, shape
operations, rearrangements, products) with its operands and parameters drawn; and
which results a program may keep."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fuzzer_inputs import input_values
from jitflow.numpy.membership import sorts_as_float64
from fuzzer_ops import (BINARY, FUZZ_LITERALS, INDEXING, REARRANGING, REDUCTIONS,
                        SHAPE_OPS, SINGLE_AXIS, TERNARY, UNARY)
from strategies import ALL_DTYPES as DTYPES
from test_compositions import (LITERALS, Step, broadcasts, draw_axis,
                               draw_broadcast_target, draw_new_shape, draw_slice_index,
                               fits_beside)

MAX_SIZE, MAX_DIMS = 1024, 4

# Ops jitflow refuses (TypeError) for float16, whose next float native code, computing
# halves in float32, cannot give; and for uint64, whose magnitudes may pass int64's end.
REFUSED_FOR_HALF = {"spacing", "nextafter"}
REFUSED_FOR_UINT64 = {"gcd", "lcm"}


def refused(step, value, values):
    dtype = np.asarray(value).dtype
    return (step.op in REFUSED_FOR_HALF and dtype == np.float16) or \
        (step.op in REFUSED_FOR_UINT64 and dtype == np.uint64) or \
        _bool_to_a_python_int_argument(step, values) or _isin_sorting_as_float64(step, values)


def _isin_sorting_as_float64(step, values):
    """isin of int64 and uint64 where NumPy sorts them together as float64 and can find
    integers beyond 2**53 that are not there: jitflow refuses it (found by the fuzzer:
    NumPy found -2**63 among [0, 532, ...]). setdiff1d asks isin of its arguments, and
    is refused alike (found by the fuzzer: 18 uint64 elements against 18 int64)."""
    if step.op not in ("isin", "setdiff1d_sized"):
        return False
    element, tests = (np.asarray(values[a] if isinstance(a, int) else a[1])
                      for a in step.args)
    return sorts_as_float64(element.dtype, element.size, tests.dtype, tests.size, None)


def _bool_to_a_python_int_argument(step, values):
    """bool ** n for a Python int n passed in: traced, n's value is unknown, and NumPy's
    result is int8 for 2 (its ** squares), int64 otherwise, so jitflow refuses it (found
    by the fuzzer)."""
    if step.op != "power" or not all(isinstance(a, int) for a in step.args):
        return False
    base, exponent = (values[a] for a in step.args)
    return type(exponent) is int and np.asarray(base).dtype == np.bool_


def fits(value):
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


def indexing_step(draw, values, usable, x_index, op=None):
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


def shape_step(draw, values, usable, x_index, op=None):
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
    if op == "matmul_bfloat16":
        return _bfloat16_matmul(draw, values, usable, x_index)
    if not ndim:
        return None
    if op == "stack":
        axis = draw(st.integers(-ndim - 1, ndim))
        partners = [i for i in usable if np.shape(values[i]) == shape]
        return Step(op, (x_index, draw(st.sampled_from(partners))), {"axis": axis})
    axis = draw(st.integers(-ndim, ndim - 1))
    partners = [i for i in usable if fits_beside(np.shape(values[i]), shape, axis)]
    return Step(op, (x_index, draw(st.sampled_from(partners))), {"axis": axis})


class _Subject:
    """What a rearranging step is drawn for: the program's values so far, those a step
    may read, and x (values[index]) with its shape, rank and a drawn axis of it."""

    def __init__(self, values, usable, index, axis):
        self.values, self.usable, self.index, self.axis = values, usable, index, axis
        self.x = values[index]
        self.shape, self.ndim = np.shape(self.x), np.ndim(self.x)

    def maybe_axis(self, draw):
        """The drawn axis, or None (the flattened array) half the time."""
        return self.axis if draw(st.booleans()) else None


def rearranging_step(draw, values, usable, x_index, op=None):
    ndim = np.ndim(values[x_index])
    op = op or draw(st.sampled_from(list(REARRANGING)))
    axis = draw(st.integers(-ndim, ndim - 1)) if ndim else None
    s = _Subject(values, usable, x_index, axis)
    return _REARRANGING_DRAWS.get(op, _with_a_partner_of_its_shape)(draw, op, s)


def _flip(draw, op, s):
    return Step(op, (s.index,), {"axis": s.maybe_axis(draw)})


def _rot90(draw, op, s):
    if s.ndim < 2:
        return None
    axes = draw(st.permutations(range(s.ndim)))[:2]
    return Step(op, (s.index,), {"k": draw(st.integers(-5, 5)), "axes": tuple(axes)})


def _roll(draw, op, s):
    return Step(op, (s.index,), {"shift": draw(st.integers(-5, 5)),
                                 "axis": s.maybe_axis(draw)})


def _tile(draw, op, s):
    reps = draw(st.integers(0, 3) | st.lists(st.integers(0, 2), max_size=3).map(tuple))
    return Step(op, (s.index,), {"reps": reps})


def _repeat(draw, op, s):
    return Step(op, (s.index,), {"repeats": draw(st.integers(0, 3)),
                                 "axis": s.maybe_axis(draw)})


def _diff(draw, op, s):
    return Step(op, (s.index,), {"n": draw(st.integers(0, 2)), "axis": s.axis or -1})


def _diagonal(draw, op, s):  # and trace
    if s.ndim < 2:
        return None
    return Step(op, (s.index,), {"offset": draw(st.integers(-3, 3))})


def _diag(draw, op, s):
    return Step(op, (s.index,), {"k": draw(st.integers(-2, 2))}) if s.ndim in (1, 2) \
        else None


def _with_any_partner(draw, op, s):  # kron, append
    return Step(op, (s.index, draw(st.sampled_from(s.usable))), {})


def _vecdot(draw, op, s):
    if not s.ndim:
        return None
    partners = [i for i in s.usable if np.ndim(s.values[i]) >= 1 and
                np.shape(s.values[i])[-1] == s.shape[-1] and
                broadcasts(np.empty(np.shape(s.values[i])[:-1]), np.empty(s.shape[:-1]))]
    return Step(op, (s.index, draw(st.sampled_from(partners))), {})


def _norm(draw, op, s):
    ord = draw(st.sampled_from([None, 1, 2, 0, 3, np.inf, -np.inf]))
    if s.ndim == 0 or (ord is not None and s.ndim > 2):
        return Step(op, (s.index,), {"ord": None, "axis": None})
    axis = s.axis if ord != 2 or s.ndim == 1 else None if s.ndim > 2 else s.axis
    return Step(op, (s.index,), {"ord": ord, "axis": axis})


def _triangle(draw, op, s):  # tril, triu
    return Step(op, (s.index,), {"k": draw(st.integers(-2, 2))}) if s.ndim else None


def _matrix_transpose(draw, op, s):
    return Step(op, (s.index,), {}) if s.ndim >= 2 else None


def _delete_or_insert(draw, op, s):  # at constant positions
    axis = None if s.axis is None or draw(st.booleans()) else s.axis
    size = np.size(s.x) if axis is None else s.shape[axis]
    positions = st.integers(-size - 1, size + 1)
    params = {"obj": draw(positions | st.lists(positions, max_size=3)), "axis": axis}
    if op == "insert":
        params["value"] = draw(st.sampled_from([0, 2, 1.5, True]))  # (any dtype holds)
    return Step(op, (s.index,), params)


def _searchsorted(draw, op, s):  # into a sorted constant
    dtype = draw(st.sampled_from(DTYPES))
    a = np.sort(draw(input_values(dtype, (draw(st.integers(0, 6)),))))
    return Step(op, (("const", a), s.index),
                {"side": draw(st.sampled_from(["left", "right"]))})


def _partition_kth(draw, op, s):  # (kth sometimes out of bounds: NumPy raises ValueError)
    if not s.ndim:
        return None
    length = s.shape[s.axis]
    return Step(op, (s.index,), {"kth": draw(st.integers(-length - 1, length)),
                                 "axis": s.axis})


def _split_piece(draw, op, s):
    if not s.ndim:
        return None
    sections = draw(st.integers(1, 4))
    return Step(op, (s.index,), {"sections": sections, "axis": s.axis,
                                 "piece": draw(st.integers(0, sections - 1))})


def _with_a_partner_of_its_shape(draw, op, s):
    partners = [i for i in s.usable if np.shape(s.values[i]) == s.shape]
    return Step(op, (s.index, draw(st.sampled_from(partners))), {})


_REARRANGING_DRAWS = {
    "flip": _flip, "rot90": _rot90, "roll": _roll, "tile": _tile, "repeat": _repeat,
    "diff": _diff, "diagonal": _diagonal, "trace": _diagonal, "diag": _diag,
    "kron": _with_any_partner, "append": _with_any_partner, "vecdot": _vecdot,
    "norm": _norm, "tril": _triangle, "triu": _triangle,
    "matrix_transpose": _matrix_transpose, "delete": _delete_or_insert,
    "insert": _delete_or_insert, "searchsorted": _searchsorted,
    "partition_kth": _partition_kth, "split_piece": _split_piece}


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


def _bfloat16_matmul(draw, values, usable, x_index):
    """x (as a float32 matrix) @ y, rounded to bfloat16: y an earlier float32 matrix that
    fits or a constant, wide enough at times (32 columns) for a tile unit's blocks."""
    depth = np.shape(np.atleast_2d(values[x_index]))[-1]
    fits = [i for i in usable if np.asarray(values[i]).dtype == np.float32 and
            np.ndim(values[i]) == 2 and np.shape(values[i])[0] == depth]
    if fits and draw(st.booleans()):
        return Step("matmul_bfloat16", (x_index, draw(st.sampled_from(fits))), {})
    columns = draw(st.sampled_from([0, 1, 3, 32, 33]))
    y = draw(input_values(np.dtype(np.float32), (depth, columns)))
    return Step("matmul_bfloat16", (x_index, ("const", y)), {})


DRAW_STEP = {"unary": _unary, "binary": _binary, "ternary": _ternary,
             "reduction": _reduction, "indexing": indexing_step, "shape": shape_step,
             "rearranging": rearranging_step}
# How often each kind is drawn: the big tables more often, so that each op of theirs
# comes up about as often as a ternary one.
STEP_KINDS = ["binary"] * 4 + ["unary"] * 3 + ["shape"] * 3 + ["reduction"] * 2 + \
    ["indexing"] * 2 + ["rearranging"] * 2 + ["ternary"]


def draw_steps(draw, values, usable, count, draw_step):
    """Up to `count` steps, each from draw_step(draw, x_index) on a usable x (mostly
    the newest, so that steps build on each other), tried twice as often: yields each
    step drawn (None when draw_step had nothing for x); the caller keeps it or not."""
    for _ in range(2 * count):
        newest = draw(st.booleans())
        yield draw_step(draw, usable[-1] if newest else draw(st.sampled_from(usable)))
