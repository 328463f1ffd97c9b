"""Random programs: the same Python program, run eagerly by NumPy and traced through
@jitflow.function (so optimized by simplify, constant folding, CSE and DCE), must give the
same values (bit for bit, NaN where NumPy has NaN, the same signed zeros) and dtypes.

A program is a list of steps `v3 = op(v0, v2, param=...)` over the inputs v0.. and the
values computed so far. Each op is written once against a namespace `xp`: NumPy for the
reference, jitflow.numpy under tracing (operators and methods are the same code).

Both backends run the programs (conftest.py). The interpreter runs NumPy's own functions,
so any program must match bit for bit. Native code rounds transcendental functions and
float sums differently (within bounds, fidelity.py), a float max reduction may keep 0.0
where NumPy keeps -0.0, and in a longer program one ulp can become anything (floor,
cancellation, comparisons, 1 / -0.0). So native programs use INEXACT steps only as
leaves: no later step reads their result. Every other step is exact and must match bit
for bit; an inexact step then gets exact inputs and its one-operation bound
(`inexact_tolerance`) applies to its result.
"""
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import note, strategies as st
from hypothesis.extra import numpy as hnp

import fidelity
import jitflow
import jitflow.numpy as jnp
from fidelity import NATIVE_ULPS, given_per_backend
from strategies import arrays, elements

# Traced programs run on the interpreter and on native code (conftest.py).
pytestmark = pytest.mark.usefixtures("backend")


# Hypothesis tries the first entry of a list most: tables start with the likeliest to
# expose a bug (floats, signed zeros, binary operations).
INPUT_DTYPES = [np.dtype(d) for d in ("float32", "float64", "int32", "int64")]
MAX_SIZE, MAX_DIMS, MIN_STEPS, MAX_STEPS = 64, 4, 6, 24

# Python scalars (weakly typed): the simplifier's identities (signed zeros, +-1) often,
# and IEEE corners.
LITERALS = [-0.0, 0.0, 1, -1, 0, 2, 1.0, -1.0, -0.0, 0.0, 0.5, 2.0, float("inf"),
            float("nan")]
# Values that float inputs hold often: the ones where exact rewrites can go wrong.
SPECIAL = [-0.0, 0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf")]

UNARY = {
    "negative": lambda xp, x: -x,
    "abs": lambda xp, x: xp.abs(x),
    "exp": lambda xp, x: xp.exp(x),
    "log1p_abs": lambda xp, x: xp.log1p(xp.abs(x)),
    "tanh": lambda xp, x: xp.tanh(x),
    "sin": lambda xp, x: xp.sin(x),
    "floor": lambda xp, x: xp.floor(x),
    "sqrt_abs": lambda xp, x: xp.sqrt(xp.abs(x)),
    "double_negative": lambda xp, x: -(-x),
    "square": lambda xp, x: x ** 2,
    "power_one": lambda xp, x: x ** 1,
}

BINARY = {
    "add": lambda xp, x, y: x + y,
    "subtract": lambda xp, x, y: xp.subtract(x, y),
    "multiply": lambda xp, x, y: x * y,
    "divide": lambda xp, x, y: x / y,
    "maximum": lambda xp, x, y: xp.maximum(x, y),
    "minimum": lambda xp, x, y: xp.minimum(x, y),
    "where_greater": lambda xp, x, y: xp.where(x > y, x, y),
    "where_less_equal": lambda xp, x, y: xp.where(x <= y, y * 2, x),
}

REDUCTIONS = {
    "sum": lambda xp, x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims),
    "max": lambda xp, x, axis, keepdims: xp.max(x, axis=axis, keepdims=keepdims),
    "mean": lambda xp, x, axis, keepdims: xp.mean(x, axis=axis, keepdims=keepdims),
}

SHAPE_OPS = {
    "transpose": lambda xp, x, perm: xp.transpose(x, perm),
    "reshape": lambda xp, x, shape: x.reshape(shape),
    "broadcast_to": lambda xp, x, shape: xp.broadcast_to(x, shape),
    "slice": lambda xp, x, index: x[index],
    "concatenate": lambda xp, x, y, axis: xp.concatenate([x, y], axis=axis),
    "pad": lambda xp, x, width, value: xp.pad(x, width, constant_values=value),
    "astype": lambda xp, x, dtype: x.astype(dtype),
}

# A constant array as a value of its own: steps on it alone are constant-folded.
CONSTANT = {"constant": lambda xp, c: xp.asarray(c)}


def _written(xp, x, y, index, through_view):
    """A new array holding x, then written at `index` with y: assigned, or added in
    place through the view x[index] (a basic index)."""
    z = xp.zeros(np.shape(x), x.dtype)
    z[...] = x
    if not isinstance(y, (bool, int, float)):
        y = xp.asarray(y)  # an array, as the reference's 0-d values are (not scalars)
    if through_view:
        view = z[index]
        view += y
    else:
        z[index] = y
    return z


# Writes into arrays (functionalized under tracing).
WRITES = {
    "setitem": lambda xp, x, y, index: _written(xp, x, y, index, through_view=False),
    "add_through_view": lambda xp, x, y, index: _written(xp, x, y, index,
                                                         through_view=True),
}

OPS = {**UNARY, **BINARY, **REDUCTIONS, **SHAPE_OPS, **CONSTANT, **WRITES}

# Steps whose results native code may give differently from NumPy: transcendental
# functions (rounding), float sums (a mean is a sum too) added in another order, and
# float max reductions, which meet 0.0 and -0.0 in another order and keep the other one.
TRANSCENDENTAL = {"exp", "log1p_abs", "tanh", "sin"}


def is_inexact(step, values):
    """Whether native code may give `step`, applied to `values`, differently. A mean
    always may: even an integer mean sums in float64."""
    if step.op in TRANSCENDENTAL or step.op == "mean":
        return True
    return step.op in ("sum", "max") and values[step.args[0]].dtype.kind == "f"


@dataclass
class Step:
    op: str
    args: tuple     # ints name earlier values; ("lit", v) a literal; ("const", a) an array
    params: dict

    def __str__(self):
        args = [_show(a) for a in self.args]
        args += [f"{k}={v!r}" for k, v in self.params.items()]
        return f"{self.op}({', '.join(args)})"


def _show(arg):
    if isinstance(arg, int):
        return f"v{arg}"
    kind, value = arg
    return repr(value) if kind == "lit" else f"np.{value!r}"


@dataclass
class Program:
    inputs: list
    steps: list
    outputs: tuple

    def __str__(self):
        lines = [f"v{i} = input {x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray)
                 else f"v{i} = input {x!r}" for i, x in enumerate(self.inputs)]
        first = len(self.inputs)
        lines += [f"v{first + i} = {step}" for i, step in enumerate(self.steps)]
        lines.append("return " + ", ".join(f"v{i}" for i in self.outputs))
        return "\n".join(lines)


def run(program, xp, inputs):
    values = evaluate(program, xp, inputs)
    return tuple(values[i] for i in program.outputs)


def evaluate(program, xp, inputs, ops=OPS):
    """Every value of the program: its inputs, then each step's result (`ops` names the
    function of each step's op)."""
    values = list(inputs)
    for step in program.steps:
        args = [values[a] if isinstance(a, int) else a[1] for a in step.args]
        value = ops[step.op](xp, *args, **step.params)
        # NumPy keeps 0-d results as arrays, as traced values are: NumPy's scalars have
        # arithmetic of their own (a float64 scalar ** 2 calls C pow, an array squares).
        values.append(np.asarray(value) if xp is np else value)
    return values


def run_numpy(program, inputs=None):
    return tuple(evaluate_numpy(program, inputs)[i] for i in program.outputs)


def evaluate_numpy(program, inputs=None):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty slice
        return evaluate(program, np, program.inputs if inputs is None else inputs)


def special_values_like(x):
    """An array of x's shape and dtype holding the corner cases in turn."""
    if x.dtype.kind == "f":
        corners = SPECIAL + [2.5, -3.0]
    else:
        info = np.iinfo(x.dtype)
        corners = [0, 1, -1, 2, -3, info.min, info.max]
    return np.resize(np.array(corners, x.dtype), x.shape)


# --- generation -----------------------------------------------------------------------
#
# Programs are drawn one step at a time, each step applied to the real input arrays with
# NumPy at once, so later steps know the shapes and dtypes they work on.

def _fits(value):
    value = np.asarray(value)
    return value.dtype in INPUT_DTYPES and value.size <= MAX_SIZE and \
        value.ndim <= MAX_DIMS


def broadcasts(a, b):
    try:
        np.broadcast_shapes(np.shape(a), np.shape(b))
        return True
    except ValueError:
        return False


def _operand(draw, values, usable, x):
    """A second operand for x: an earlier (usable) value it broadcasts with, a literal,
    or a constant array."""
    kind = draw(st.sampled_from(["literal", "value", "constant"]))
    if kind == "value":
        partners = [i for i in usable if broadcasts(values[i], x)]
        return draw(st.sampled_from(partners))
    if kind == "literal":
        return ("lit", draw(st.sampled_from(LITERALS)))
    shape = np.shape(x)[draw(st.integers(0, np.ndim(x))):]
    dtype = draw(st.sampled_from(INPUT_DTYPES))
    return ("const", draw(arrays(dtype, shape, min_value=-3, max_value=3)))


def draw_axis(draw, ndim):
    """None, an int (negative too) or a tuple of distinct axes."""
    if ndim == 0 or draw(st.booleans()):
        return None
    axes = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    axes = [a - ndim if draw(st.booleans()) else a for a in axes]
    return axes[0] if len(axes) == 1 and draw(st.booleans()) else tuple(axes)


def draw_new_shape(draw, shape):
    """A shape of the same size: flattened, an axis of 1 added, two axes merged, or an
    axis split in two."""
    size = int(np.prod(shape))
    choices = [(size,), shape + (1,), (1,) + shape]
    if len(shape) >= 2:
        i = draw(st.integers(0, len(shape) - 2))
        choices.append(shape[:i] + (shape[i] * shape[i + 1],) + shape[i + 2:])
    for i, d in enumerate(shape):
        for factor in (2, 3):
            if d and d % factor == 0:
                choices.append(shape[:i] + (factor, d // factor) + shape[i + 1:])
    return draw(st.sampled_from(choices))


def draw_broadcast_target(draw, shape):
    """A shape x broadcasts to: axes of 1 grown, new leading axes."""
    grown = tuple(draw(st.integers(1, 3)) if d == 1 else d for d in shape)
    lead = tuple(draw(st.lists(st.integers(0, 3), max_size=MAX_DIMS - len(shape))))
    return lead + grown


def draw_slice_index(draw, shape):
    entries = []
    for length in shape:
        if length and draw(st.integers(0, 3)) == 0:
            entries.append(draw(st.integers(-length, length - 1)))
        else:
            bound = st.none() | st.integers(-length - 1, length + 1)
            step = st.none() | st.sampled_from([1, 2, -1, -2])
            entries.append(slice(draw(bound), draw(bound), draw(step)))
    return tuple(entries)


def _draw_step(draw, values, usable):
    """A step on the values whose indices are listed in `usable`."""
    # Mostly the newest value, so that steps build on each other.
    x_index = draw(st.sampled_from([usable[-1], None]))
    x_index = draw(st.sampled_from(usable)) if x_index is None else x_index
    x = values[x_index]
    kind = draw(st.sampled_from(["binary", "unary", "shape", "reduction", "write"]))
    if kind == "write":
        op = draw(st.sampled_from(list(WRITES)))
        index = draw_slice_index(draw, np.shape(x))
        if op == "setitem" and np.ndim(x) and np.shape(x)[0] and draw(st.booleans()):
            length = np.shape(x)[0]  # integer arrays, repeats too: the last write stays
            index = np.array(draw(st.lists(st.integers(-length, length - 1), max_size=4)),
                             np.int64)
        return Step(op, (x_index, _operand(draw, values, usable, x)), {"index": index})
    if kind == "unary":
        return Step(draw(st.sampled_from(list(UNARY))), (x_index,), {})
    if kind == "binary":
        y = _operand(draw, values, usable, x)
        args = (x_index, y) if draw(st.booleans()) else (y, x_index)
        return Step(draw(st.sampled_from(list(BINARY))), args, {})
    if kind == "reduction":
        params = {"axis": draw_axis(draw, np.ndim(x)), "keepdims": draw(st.booleans())}
        return Step(draw(st.sampled_from(list(REDUCTIONS))), (x_index,), params)
    shape = np.shape(x)
    op = draw(st.sampled_from(list(SHAPE_OPS)))
    if op == "reshape":
        return Step(op, (x_index,), {"shape": draw_new_shape(draw, shape)})
    if op == "transpose":  # reversed axes (x.T) first: transposes of transposes
        perms = st.just(tuple(reversed(range(len(shape))))) | st.permutations(
            range(len(shape))).map(tuple)
        return Step(op, (x_index,), {"perm": draw(perms)})
    if op == "broadcast_to":
        return Step(op, (x_index,), {"shape": draw_broadcast_target(draw, shape)})
    if op == "slice":
        return Step(op, (x_index,), {"index": draw_slice_index(draw, shape)})
    if op == "pad":
        width = draw(st.integers(0, 2) | st.tuples(st.integers(0, 2), st.integers(0, 2)))
        value = draw(st.sampled_from(LITERALS))
        return Step(op, (x_index,), {"width": width, "value": value})
    if op == "astype":  # float to int is undefined for NaN and inf: not drawn
        kind = np.asarray(x).dtype.kind
        dtypes = [d for d in INPUT_DTYPES if d.kind == "f" or kind == "i"]
        return Step(op, (x_index,), {"dtype": draw(st.sampled_from(dtypes))})
    if not shape:
        return None  # concatenate needs an axis
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    partners = [i for i in usable if fits_beside(np.shape(values[i]), shape, axis)]
    return Step(op, (x_index, draw(st.sampled_from(partners))), {"axis": axis})


def fits_beside(shape, other, axis):
    """Whether arrays of these shapes concatenate along `axis`."""
    axis %= len(other)
    return len(shape) == len(other) and all(
        a == b for k, (a, b) in enumerate(zip(shape, other)) if k != axis)


@st.composite
def programs(draw, inexact_leaves=False):
    """A program; with inexact_leaves, no step reads the result of an inexact one."""
    count = draw(st.integers(1, 3))
    shapes = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=count, max_dims=3, min_side=0, max_side=4)).input_shapes
    inputs = [draw(input_arrays(draw(st.sampled_from(INPUT_DTYPES)), s)) for s in shapes]
    program = Program(inputs, [], ())
    values = list(inputs)
    if draw(st.booleans()):
        constant = draw(input_arrays(draw(st.sampled_from(INPUT_DTYPES)), shapes[0]))
        program.steps.append(Step("constant", (("const", constant),), {}))
        values.append(constant)
    usable = list(range(len(values)))
    for _ in range(draw(st.integers(MIN_STEPS, MAX_STEPS))):
        step = _draw_step(draw, values, usable)
        if step is None:
            continue
        program.steps.append(step)
        program.outputs = (len(values),)
        try:
            (value,) = run_numpy(program)
        except (ValueError, TypeError, IndexError, ArithmeticError):
            value = None  # NumPy refuses it (max of nothing, say): not a program
        if value is None or not _fits(value):
            program.steps.pop()
            continue
        if not (inexact_leaves and is_inexact(step, values)):
            usable.append(len(values))
        values.append(value)
    # Return every value no later step uses, so that no step is dead code.
    used = {a for step in program.steps for a in step.args if isinstance(a, int)}
    program.outputs = tuple(i for i in range(len(inputs), len(values)) if i not in used)
    return program


def input_arrays(dtype, shape):
    if dtype.kind != "f":
        return arrays(dtype, shape)
    return hnp.arrays(dtype, shape, elements=st.sampled_from(SPECIAL) | elements(dtype))


# --- the property ---------------------------------------------------------------------

def assert_same(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"dtype {got.dtype}, NumPy gives {expected.dtype}"
    assert got.shape == expected.shape, f"shape {got.shape}, NumPy gives {expected.shape}"
    np.testing.assert_array_equal(got, expected)  # NaN matches NaN
    if expected.dtype.kind == "f":  # and -0.0 must stay -0.0
        numbers = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(got[numbers]),
                                      np.signbit(expected[numbers]))


@given_per_backend(data=st.data(), check_ir=st.booleans())
def test_traced_program_matches_numpy(data, check_ir, backend):
    program = data.draw(programs(inexact_leaves=backend == "native"), label="program")
    note(f"program:\n{program}")
    fn = jitflow.function(lambda *inputs: run(program, jnp, inputs))
    saved = jitflow.config.check_ir
    jitflow.config.check_ir = check_ir  # verify the IR after every pass
    try:
        # The drawn inputs, then (same signature: the cached function) every corner case.
        for inputs in (program.inputs, [special_values_like(x) for x in program.inputs]):
            note(f"inputs: {inputs}")
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # NumPy on constants
                got = fn(*inputs)
            values = evaluate_numpy(program, inputs)
            assert len(got) == len(program.outputs)
            for g, index in zip(got, program.outputs):
                tolerance = inexact_tolerance(program, values, index)
                if backend == "native" and tolerance is not None:
                    fidelity.assert_same(g, values[index], what=f"v{index}", **tolerance)
                else:
                    assert_same(g, values[index])
    finally:
        jitflow.config.check_ir = saved


def inexact_tolerance(program, values, index):
    """How far native code's v<index> may be from NumPy's (None: not at all), for a
    step applied to exact inputs: NATIVE_ULPS for a transcendental function; for a float
    sum, n roundings of the sum of magnitudes of its n terms (a mean divides that by n
    and rounds once more); a float max is exact but for the sign of a zero."""
    step = program.steps[index - len(program.inputs)] if index >= len(program.inputs) \
        else None
    if step is None or not is_inexact(step, values):
        return None
    if step.op in TRANSCENDENTAL:
        return {"ulps": NATIVE_ULPS}
    if step.op == "max":
        return {"zero_sign": False}
    result = values[index]
    eps = float(np.finfo(result.dtype).eps)
    terms = values[step.args[0]].astype(result.dtype).astype(np.float64)
    axis = step.params["axis"]
    count = terms.size // max(result.size, 1)
    magnitude = np.sum(np.abs(terms), axis=axis, keepdims=step.params["keepdims"])
    atol = count * eps * np.nan_to_num(magnitude, posinf=0.0)
    if step.op == "mean":
        return {"atol": atol / max(count, 1), "rtol": eps}
    return {"atol": atol}


# Short programs on the identities the simplifier knows (and near misses), run on every
# corner case of each dtype: each must give what NumPy gives, bit for bit.
IDENTITIES = {
    "x + -0.0": lambda x: x + -0.0, "x + 0.0": lambda x: x + 0.0, "0 + x": lambda x: 0 + x,
    "x - 0.0": lambda x: x - 0.0, "x - -0.0": lambda x: x - -0.0, "x - 0": lambda x: x - 0,
    "0.0 - x": lambda x: 0.0 - x, "x * 1": lambda x: x * 1, "x * 1.0": lambda x: x * 1.0,
    "x * -1": lambda x: x * -1, "-1.0 * x": lambda x: -1.0 * x, "x * 0": lambda x: x * 0,
    "x / 1": lambda x: x / 1, "x / -1": lambda x: x / -1, "x ** 1": lambda x: x ** 1,
    "x ** 2": lambda x: x ** 2, "x ** 1.0": lambda x: x ** 1.0, "-(-x)": lambda x: -(-x),
    "x + (-x)": lambda x: x + (-x), "x - (-x)": lambda x: x - (-x),
    "0.0 + (-x)": lambda x: 0.0 + (-x), "abs(abs(x))": lambda x: np.abs(np.abs(x)),
    "abs(-x)": lambda x: np.abs(-x), "max(x, x)": lambda x: np.maximum(x, x),
    "min(x, -x)": lambda x: np.minimum(x, -x),
    "where(c, x, x)": lambda x: np.where(x > 0, x, x),
    "where(true, x, 0)": lambda x: np.where(np.ones(x.shape, bool), x, 0),
    "where(false, x, 1.0)": lambda x: np.where(np.zeros(x.shape, bool), x, 1.0),
    "x.T.T": lambda x: x.T.T,
    "transposes": lambda x: np.transpose(np.transpose(x.reshape(2, 3, 2), (1, 2, 0)),
                                         (1, 0, 2)),
    "transpose methods": lambda x: x.reshape(2, 3, 2).transpose(1, 2, 0).transpose(
        (2, 0, 1)).transpose([0, 2, 1]).transpose().transpose(None),
    "reshapes": lambda x: x.reshape(2, 6).reshape(3, 4).reshape(12),
    "broadcasts": lambda x: np.broadcast_to(np.broadcast_to(x[:1], (2, 4)), (5, 2, 4)),
    "x[:, :]": lambda x: x[:, :], "x[::-1][::-1]": lambda x: x[::-1][::-1],
    "astype(own dtype)": lambda x: x.astype(x.dtype),
    "exp(x) + exp(x)": lambda x: np.exp(x) + np.exp(x),
    "sum(x, 1) - sum(x, 1)": lambda x: np.sum(x, axis=1) - np.sum(x, axis=1),
    "(x + 1) - 1": lambda x: (x + 1) - 1,
}


@pytest.mark.parametrize("name, dtype", [
    pytest.param(name, dtype, id=f"{name}-{dtype}")
    for name in IDENTITIES for dtype in INPUT_DTYPES])
def test_identity_programs_match_numpy(name, dtype):
    fn = IDENTITIES[name]
    x = special_values_like(np.empty((3, 4), dtype))
    with np.errstate(all="ignore"):
        expected = fn(x)
        got = jitflow.function(fn)(x)
    if name.startswith("exp") and jitflow.config.backend == "native":
        # exp rounded natively, then doubled exactly: still NATIVE_ULPS from NumPy's
        fidelity.assert_same(got, expected, ulps=NATIVE_ULPS)
    else:
        assert_same(got, expected)


def test_a_program_prints_readably():
    x = np.zeros((2, 3), np.float32)
    program = Program([x], [Step("add", (0, ("lit", -0.0)), {}),
                            Step("sum", (1,), {"axis": 1, "keepdims": True})], (2,))
    assert str(program) == ("v0 = input float32[2, 3]\n"
                            "v1 = add(v0, -0.0)\n"
                            "v2 = sum(v1, axis=1, keepdims=True)\n"
                            "return v2")


# Regression tests for bugs the random programs found in the passes.

@pytest.mark.parametrize("x, axis, keepdims", [(np.array(-0.0), None, False),
                                               (np.array([[-0.0]]), 1, True)])
def test_sum_that_reduces_nothing_gives_positive_zero(x, axis, keepdims):
    # NumPy's float sums start from +0.0: the sum of a single -0.0 is +0.0.
    for reduce in (np.sum, np.mean):
        fn = jitflow.function(lambda x: reduce(x, axis=axis, keepdims=keepdims))
        assert_same(fn(x), reduce(x, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("fn, x", [(lambda x: -0.0 - x, np.array([1, 2], np.int32)),
                                   (lambda x: np.array([-0.0, -0.0]) - x, np.array(1.0))])
def test_negative_zero_minus_y_keeps_the_type(fn, x):
    # -0.0 - y -> -y only when -y has the node's dtype and shape.
    assert_same(jitflow.function(fn)(x), fn(x))


def test_float_plus_negated_integer():
    x = np.array([-0.0, 1.0, 0.0], np.float32)
    y = np.array([0, np.iinfo(np.int32).min, 0], np.int32)
    for fn in (lambda x, y: x + (-y), lambda x, y: x - (-y)):
        assert_same(jitflow.function(fn)(x, y), fn(x, y))


def test_pads_with_signed_zeros():
    def fn(x):
        return np.pad(x, 1, constant_values=0.0), np.pad(x, 1, constant_values=-0.0)
    x = np.ones(2)
    for got, expected in zip(jitflow.function(fn)(x), fn(x)):
        assert_same(got, expected)


def test_pad_converts_its_value_like_numpy():
    # A 0-d array has nothing to pad, and NumPy converts no value for it (not even inf
    # into an integer array); 2.5 pads an integer array with 2.
    def fn(x, y):
        return np.pad(x, 0, constant_values=np.inf), np.pad(y, 1, constant_values=2.5)
    x, y = np.array(3, np.int32), np.array([1, 2], np.int64)
    for got, expected in zip(jitflow.function(fn)(x, y), fn(x, y)):
        assert_same(got, expected)


@pytest.mark.parametrize("x", [np.array(0, np.int32),
                               np.array([0.0, -0.0, 1.0, -2.0, np.nan], np.float32)])
def test_selects_of_selects_keep_numpys_zeros_and_nans(x):
    # maximum returns its second operand on ties, where(c, a, b) takes b where c is
    # false (NaN compares false): here -0.0 or 0.0 for x = 0 and x = NaN. LLVM once
    # folded each pair of selects into the first one, giving +0.0, -0.0 and NaN.
    def fn(x):
        clipped = np.where(0.0 > x, 0.0, x)
        return (np.maximum(np.maximum(-0.0, x), -0.0), np.minimum(np.minimum(0.0, x), 0.0),
                np.where(clipped > 0.0, clipped, 0.0))
    for got, expected in zip(jitflow.function(fn)(x), fn(x)):
        assert_same(got, expected)
