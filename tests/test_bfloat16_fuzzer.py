"""A differential fuzzer of bfloat16 programs: NumPy with ml_dtypes' loops is the reference.

Each program starts from one or two bfloat16 arrays (NaN, infinities, -0.0, subnormals,
the largest finite values and small numbers among them) and applies up to MAX_STEPS
NumPy functions to earlier values: ufuncs against bfloat16 arrays, Python scalars and
arrays of other dtypes (NumPy's promotions with ml_dtypes), reductions, running sums,
casts, shape operations, sorting and contractions. It runs in NumPy, and traced, on the
interpreter and as native code (first and repeated calls). Each result must have NumPy's
dtype, shape and values, or jitflow must raise where NumPy raises. jitflow may refuse
a bfloat16 operation NumPy computes, with a TypeError naming bfloat16; it never gives
another answer.

What native code may round differently is compared with a tolerance and not read by
later steps (as in test_program_fuzzer.py):
- transcendental functions and float powers, computed in float32 by codegen's math
  library where ml_dtypes calls the C library's float functions: one bfloat16 ulp
  (NATIVE_ULPS for a float32 or float64 result);
- contractions (float32 sums in another order) and var/std: a relative bound.

NumPy sums (and multiplies) bfloat16 by rounding the running total to bfloat16 at each
element, in the order its iterator visits memory. jitflow's order is C order; the
reductions here read C-ordered operands (np.ascontiguousarray), which fixes NumPy's.
NumPy's sort of bfloat16 orders NaN inconsistently (its generic sort compares with
`<`), so sorting is compared by values only for operands without NaN.

200 programs under the 'ci' profile, 5,000 under --hypothesis-profile=thorough.
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from fidelity import NATIVE_ULPS, ulp_distance

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

PROGRAMS_PER_EXAMPLE = 5
FUZZ = settings(max_examples=settings.default.max_examples * PROGRAMS_PER_EXAMPLE,
                deadline=None, suppress_health_check=list(HealthCheck))
MAX_STEPS = 6

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0, 1e-40,
            3.3e38, -3.3e38, 1e30, 255.0, 300.0]


def _contiguous(x):
    """x in C order, in NumPy's run (a traced value has no memory order)."""
    return np.array(x, order="C") if isinstance(x, np.ndarray) else x


# name -> (number of array operands, function). Reductions take an axis.
UNARY_EXACT = {name: getattr(np, name) for name in (
    "negative", "positive", "absolute", "fabs", "sign", "floor", "ceil", "rint", "trunc",
    "sqrt", "square", "reciprocal", "isnan", "isinf", "isfinite", "signbit",
    "logical_not", "round")}
UNARY_EXACT.update({
    f"astype_{dtype}": (lambda dtype: lambda x: x.astype(dtype))(dtype)
    for dtype in ("float32", "float64", "float16", "bool", "int32", "int8", "uint8",
                  "int64")})
UNARY_EXACT["astype_bfloat16"] = lambda x: x.astype(BF16)
UNARY_INEXACT = {name: getattr(np, name) for name in (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh",
    "sinh", "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "cbrt",
    "deg2rad", "rad2deg")}
BINARY_EXACT = {name: getattr(np, name) for name in (
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin",
    "floor_divide", "remainder", "fmod", "copysign", "less", "less_equal", "equal",
    "not_equal", "greater", "greater_equal", "logical_and", "logical_or", "heaviside")}
BINARY_EXACT["where_greater"] = lambda x, y: np.where(x > y, x, y)
BINARY_INEXACT = {name: getattr(np, name) for name in (
    "power", "arctan2", "hypot", "logaddexp", "logaddexp2")}
REDUCTIONS = {
    "sum": lambda x, axis: np.sum(_contiguous(x), axis=axis),
    "prod": lambda x, axis: np.prod(_contiguous(x), axis=axis),
    "mean": lambda x, axis: np.mean(_contiguous(x), axis=axis),
    "max": lambda x, axis: np.max(x, axis=axis),
    "min": lambda x, axis: np.min(x, axis=axis),
    "argmax": lambda x, axis: np.argmax(x, axis=axis),
    "argmin": lambda x, axis: np.argmin(x, axis=axis),
    "ptp": lambda x, axis: np.ptp(x, axis=axis),
    "cumsum": lambda x, axis: np.cumsum(x, axis=axis),
    "cumprod": lambda x, axis: np.cumprod(x, axis=axis),
    "sum_keepdims": lambda x, axis: np.sum(_contiguous(x), axis=axis, keepdims=True),
    "nansum": lambda x, axis: np.nansum(_contiguous(x), axis=axis),
    "nanmax": lambda x, axis: np.nanmax(x, axis=axis),
    "nanmin": lambda x, axis: np.nanmin(x, axis=axis),
    "amax_keepdims": lambda x, axis: np.amax(x, axis=axis, keepdims=True),
}
# NumPy's bfloat16 max of 0.0 and -0.0 is the later one; jitflow's, computed on float32
# values, either (as NumPy's own float32 max is, by layout)
EXTREMA = {"max", "min", "nanmax", "nanmin", "amax_keepdims", "ptp"}
ROUGH_REDUCTIONS = {  # sums of squares: a relative bound
    "var": lambda x, axis: np.var(_contiguous(x), axis=axis),
    "std": lambda x, axis: np.std(_contiguous(x), axis=axis),
}
SHAPE_OPS = {
    "ravel": np.ravel, "transpose": np.transpose, "flip": np.flip,
    "every_other": lambda x: x[::2] if x.ndim else x,
    "concatenate": lambda x: np.concatenate([np.atleast_1d(x), np.atleast_1d(x)]),
    "stack": lambda x: np.stack([x, x], axis=-1),
    "tile": lambda x: np.tile(x, 2), "repeat": lambda x: np.repeat(x, 2),
    "pad": lambda x: np.pad(x, 1, constant_values=1.5),
    "clip": lambda x: np.clip(x, -1, 2.5),
    "take": lambda x: np.take(x, [0, -1, 0]) if x.size else x,
    "expand": lambda x: np.broadcast_to(x, (2,) + x.shape),
    "hstack": lambda x: np.hstack([x, x]), "vstack": lambda x: np.vstack([x, x]),
    "squeeze": np.squeeze, "expand_dims": lambda x: np.expand_dims(x, 0),
    "swapaxes": lambda x: np.swapaxes(x, 0, -1) if x.ndim else x,
    "moveaxis": lambda x: np.moveaxis(x, 0, -1) if x.ndim else x,
    "atleast_2d": np.atleast_2d, "atleast_3d": np.atleast_3d,
    "diagonal": lambda x: np.diagonal(x) if x.ndim >= 2 else x,
    "trace": lambda x: np.trace(_contiguous(x)) if x.ndim >= 2 else x,
    "tril": lambda x: np.tril(x) if x.ndim >= 2 else x,
    "triu": lambda x: np.triu(x, 1) if x.ndim >= 2 else x,
    "reshape": lambda x: np.reshape(x, (-1, 1)),
    "asarray": np.asarray, "copy": np.copy, "round_1": lambda x: np.round(x, 1),
    "round_minus_1": lambda x: np.round(x, -1), "nan_to_num": np.nan_to_num,
    "zeros_like": np.zeros_like, "ones_like": np.ones_like,
    "full_like": lambda x: np.full_like(x, 2.5),
    "zeros": lambda x: np.zeros(x.shape, x.dtype), "full": lambda x: np.full(3, x.dtype.type(1.5)),
    "where_scalar": lambda x: np.where(x > 1, x, 0),
}
SORTS = {"sort": np.sort, "argsort": lambda x: np.argsort(x, kind="stable")}
CONTRACTIONS = {"matmul": np.matmul, "dot": np.dot, "tensordot": np.tensordot,
                "einsum": lambda x, y: np.einsum("...i,ij", x, y),
                "inner": lambda x, y: np.inner(x, y.T),
                "vdot": lambda x, y: np.vdot(x, y[:, :1].T * np.ones(np.shape(x), y.dtype)),
                "outer": lambda x, y: np.outer(x, y)}

OTHER_OPERANDS = ("float32", "float64", "int8", "uint8", "bool", "int32", "float16")
LITERALS = [2, -1, 0, 3, 0.5, 1.5, -0.0, 1e30, True]


@st.composite
def bfloat16_arrays(draw, shape):
    values = draw(hnp.arrays(np.float32, shape, elements=st.sampled_from(SPECIALS) |
                             st.floats(-1e4, 1e4, width=32) | st.integers(-8, 8)))
    return values.astype(BF16)


@st.composite
def operands(draw, x):
    """A second operand for x: an array that broadcasts with it (bfloat16 mostly), or a
    Python literal."""
    kind = draw(st.sampled_from(["bfloat16", "bfloat16", "other", "literal"]))
    if kind == "literal":
        return ("lit", draw(st.sampled_from(LITERALS)))
    shape = np.shape(x)[draw(st.integers(0, np.ndim(x))):]
    values = draw(bfloat16_arrays(shape))
    if kind == "other":
        dtype = np.dtype(draw(st.sampled_from(OTHER_OPERANDS)))
        with np.errstate(all="ignore"):
            values = values.astype(np.float32)
            if dtype.kind in "iub":
                values = np.nan_to_num(values, posinf=1, neginf=-1).clip(-100, 100)
            values = values.astype(dtype)
    return ("const", values)


class Program:
    def __init__(self, inputs):
        self.inputs, self.steps, self.leaves = inputs, [], []

    def run(self, inputs):
        """Each value the program makes (inputs first), by plain NumPy calls, which
        jitflow's traced values take too."""
        values = list(inputs)
        for name, function, args, params in self.steps:
            operands = [values[a] if isinstance(a, int) else a[1] for a in args]
            values.append(function(*operands, **params))
        return values

    def __str__(self):
        lines = [f"inputs: {[x.shape for x in self.inputs]}"]
        lines += [f"v{i + len(self.inputs)} = {name}({', '.join(map(_argument, args))}"
                  f"{', ' if params else ''}{params or ''})"
                  for i, (name, _, args, params) in enumerate(self.steps)]
        return "\n".join(lines + [f"leaves: {self.leaves}"])


def _argument(a):
    return f"v{a}" if isinstance(a, int) else f"{a[0]} {np.asarray(a[1]).dtype}"


# How each step's result is compared: "exact" (bit for bit), "inexact" (in ulps),
# "rough" (a bound on sums), "sort" (exact but for NaN), "zero_sign_open" (exact, but
# +0.0 for -0.0 where NumPy's own float32 and float64 loops differ by layout),
# "extremum" (exact, but either zero: EXTREMA).
KINDS = ["unary_exact", "unary_inexact", "binary_exact", "binary_exact", "binary_inexact",
         "reduction", "reduction", "rough_reduction", "shape", "sort", "contraction"]


def _step(draw, kind, x_index, x):
    """(name, function, args, params, how it compares) for one step on x."""
    ndim = np.ndim(x)
    if kind.startswith("unary"):
        table = UNARY_EXACT if kind == "unary_exact" else UNARY_INEXACT
        name = draw(st.sampled_from(sorted(table)))
        return name, table[name], (x_index,), {}, kind.split("_")[1]
    if kind.startswith("binary"):
        table = BINARY_EXACT if kind == "binary_exact" else BINARY_INEXACT
        name = draw(st.sampled_from(sorted(table)))
        other = draw(operands(x))
        args = (x_index, other) if draw(st.booleans()) else (other, x_index)
        comparison = "zero_sign_open" if name in ("fmax", "fmin") else kind.split("_")[1]
        return name, table[name], args, {}, comparison
    if kind.endswith("reduction"):
        table = REDUCTIONS if kind == "reduction" else ROUGH_REDUCTIONS
        name = draw(st.sampled_from(sorted(table)))
        axis = None if ndim == 0 or draw(st.booleans()) else draw(st.integers(-ndim, ndim - 1))
        comparison = "rough" if kind != "reduction" else \
            "extremum" if name in EXTREMA else "exact"
        return name, table[name], (x_index,), {"axis": axis}, comparison
    if kind == "shape":
        name = draw(st.sampled_from(sorted(SHAPE_OPS)))
        return name, SHAPE_OPS[name], (x_index,), {}, _shape_comparison(name)
    if kind == "sort":
        if ndim == 0:
            return None
        name = draw(st.sampled_from(sorted(SORTS)))
        return name, SORTS[name], (x_index,), {}, "sort"
    if ndim == 0:
        return None
    name = draw(st.sampled_from(sorted(CONTRACTIONS)))
    right = draw(bfloat16_arrays((x.shape[-1], draw(st.integers(1, 3)))))
    return name, CONTRACTIONS[name], (x_index, ("const", right)), {}, "rough"


def numpy_outcome(program, inputs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return program.run(inputs), None
        except (TypeError, ValueError, ArithmeticError, IndexError) as error:
            return None, error


@st.composite
def programs(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    inputs = [draw(bfloat16_arrays(shape)) for _ in range(draw(st.integers(1, 2)))]
    program = Program(inputs)
    usable = list(range(len(inputs)))
    program.comparisons = {i: "exact" for i in usable}
    for _ in range(draw(st.integers(1, MAX_STEPS))):
        x_index = usable[-1] if draw(st.booleans()) else draw(st.sampled_from(usable))
        values, _ = numpy_outcome(program, inputs)
        step = _step(draw, draw(st.sampled_from(KINDS)), x_index, values[x_index])
        if step is None:
            continue
        *record, comparison = step
        program.steps.append(tuple(record))
        values, error = numpy_outcome(program, inputs)
        if error is not None or np.asarray(values[-1]).size > 4096:
            program.steps.pop()
            continue
        index = len(values) - 1
        program.comparisons[index] = comparison
        if comparison == "exact":  # the others are leaves: nothing reads their rounding
            usable.append(index)
    used = {a for _, _, args, _ in program.steps for a in args if isinstance(a, int)}
    program.leaves = [i for i in range(len(inputs), len(inputs) + len(program.steps))
                      if i not in used]
    return program


def traced(program):
    def fn(*inputs):
        values = program.run(inputs)
        return tuple(values[i] for i in program.leaves)
    return jitflow.function(fn)


def _shape_comparison(name):
    """trace sums the diagonal, in another order than NumPy's: exact only where every
    partial sum is (not a float64 quotient's, found by the thorough run)."""
    return "rough" if name == "trace" else "exact"


def _trace_of_a_quotient():
    """trace(1.004 / x): a sum of float64 quotients, which jitflow adds in another order
    than NumPy, one bit apart here (found by the thorough run, when trace compared
    exactly)."""
    x = np.ones((4, 4), np.float32)
    np.fill_diagonal(x, [7.5, 15.0, 35.0, 3.75])
    program = Program([x.astype(BF16)])
    program.steps = [("divide", np.divide, (("const", np.full((4, 4), 1.004)), 0), {}),
                     ("trace", SHAPE_OPS["trace"], (1,), {})]
    program.comparisons = {0: "exact", 1: "exact", 2: _shape_comparison("trace")}
    program.leaves = [2]
    return program


@FUZZ
@example(program=_trace_of_a_quotient())
@given(program=programs())
def test_bfloat16_programs_match_numpy(program):
    note(str(program))
    expected = numpy_outcome(program, program.inputs)[0]
    runs = [("interpreter", traced(program))] + [("native", traced(program))] * 2
    for backend, fn in runs:
        saved = jitflow.config.backend, jitflow.config.background_compile
        jitflow.config.backend, jitflow.config.background_compile = backend, False
        try:
            with np.errstate(all="ignore"):
                results = fn(*program.inputs)
        except TypeError as error:
            assert "bfloat16" in str(error), f"{backend}: {error!r}, NumPy computes it"
            return  # a clear refusal
        finally:
            jitflow.config.backend, jitflow.config.background_compile = saved
        for index, result in zip(program.leaves, results):
            compare(f"{backend}: v{index}", result, expected[index],
                    program.comparisons[index], _operands_of(program, expected, index))


def _operands_of(program, values, index):
    step = program.steps[index - len(program.inputs)]
    return [values[a] if isinstance(a, int) else a[1] for a in step[2]]


def compare(label, actual, expected, comparison, operands):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape), \
        f"{label}: {actual.dtype}{actual.shape}, NumPy gives {expected.dtype}{expected.shape}"
    actual, expected = actual.reshape(-1), expected.reshape(-1)  # 0-d too
    if comparison == "sort" and any(np.isnan(np.asarray(x, np.float32)).any()
                                    for x in operands):
        return
    if comparison == "sort":  # NumPy's default sort is not stable: 0.0 and -0.0 in
        actual, expected = actual + 0.0, expected + 0.0  # either order (argsort's is)
    if comparison == "extremum" or comparison == "zero_sign_open" and expected.dtype != BF16:
        # NumPy's SIMD fmax and fmin of float32 and float64 return either zero of a
        # tie, by layout (test_program_fuzzer.py); ml_dtypes' loop, the second
        actual, expected = actual + 0.0, expected + 0.0
    if expected.dtype.kind not in "fV" or comparison in ("exact", "sort", "zero_sign_open",
                                                         "extremum"):
        _assert_bits_match(label, actual, expected)
    elif comparison == "inexact":
        ulps = 1 if expected.dtype == BF16 else NATIVE_ULPS
        _assert_within_ulps(label, actual, expected, ulps)
    else:
        _assert_roughly(label, actual, expected, operands)


def _assert_bits_match(label, actual, expected):
    """Equal values, NaN where NumPy has NaN, and the same sign of every zero."""
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    same = (a == e) & (np.signbit(a) == np.signbit(e)) | (np.isnan(a) & np.isnan(e))
    assert same.all(), f"{label}: {actual[~same]}, NumPy gives {expected[~same]}"


def _assert_within_ulps(label, actual, expected, ulps):
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(e) & np.isfinite(a)
    close = ~finite & ((a == e) | (np.isnan(a) & np.isnan(e)))
    close[finite] = ulp_distance(actual[finite], expected[finite]) <= ulps
    assert close.all(), f"{label}: {actual[~close]}, NumPy gives {expected[~close]}"


def _assert_roughly(label, actual, expected, operands):
    """Sums in another order: within a few roundings of the result's dtype of the sum of
    magnitudes involved (compared only where NumPy's result is finite and every operand
    is: an inf among the terms makes inf or NaN by the order of the additions)."""
    if not all(np.isfinite(np.asarray(x, np.float64)).all() for x in operands):
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(e)
    scale = max(float(np.max(np.abs(np.asarray(x, np.float64)), initial=1.0))
                for x in operands) ** 2
    size = max(np.size(x) for x in operands)
    eps = 2.0 ** -7 if expected.dtype == BF16 else float(np.finfo(expected.dtype).eps)
    bound = 4 * size * eps * scale + 2 * eps * np.abs(e)
    close = ~finite | (np.abs(a - e) <= bound)
    assert close.all(), f"{label}: {actual[~close]}, NumPy gives {expected[~close]}"
