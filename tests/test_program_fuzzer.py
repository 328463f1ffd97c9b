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

The inputs are drawn in fuzzer_inputs.py, the steps in fuzzer_steps.py, and the bounds
of inexact steps are fuzzer_tolerances.py's. test_derivatives_fuzzer.py draws float64
programs of differentiable ops from the same steps and checks their derivatives.

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

import fidelity
import jitflow
import jitflow.numpy as jnp
from fuzzer_inputs import c_contiguous, corner_values_like, input_values
from fuzzer_inputs import inputs as drawn_inputs
from fuzzer_ops import OPS
from fuzzer_steps import DRAW_STEP, STEP_KINDS, draw_steps, fits, refused
from fuzzer_tolerances import (depends_on_a_nan_sign, inexact_tolerance, is_inexact,
                               order_dependent_product)
from strategies import ALL_DTYPES as DTYPES
from test_compositions import Program, Step, assert_same, evaluate

# The thorough profile's 1000 examples make 10,000 programs; 'ci's 40 make 200.
PROGRAMS_PER_EXAMPLE = 10 if settings.default.max_examples >= 1000 else 5
FUZZ = settings(max_examples=settings.default.max_examples * PROGRAMS_PER_EXAMPLE,
                deadline=None, suppress_health_check=list(HealthCheck))

MAX_STEPS = 10

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
    arguments, layouts = draw(drawn_inputs())
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
    for step in draw_steps(draw, values, usable, count, draw_step):
        if step is None:
            continue
        program.steps.append(step)
        program.outputs = (len(values),)
        result, error = run_numpy(program, program.inputs)
        if error is not None and draw(st.integers(0, 3)) == 0:
            program.raises = True  # the last step: jitflow must raise as NumPy does
            break
        if error is not None or not fits(result[0]) or refused(step, result[0], values):
            program.steps.pop()
            continue
        if not is_inexact(step, values):
            usable.append(len(values))
        values.append(np.asarray(result[0]))
        if len(program.steps) >= count:
            break
    # Every value no step reads is a result, the refused last step's too: a value
    # nothing uses is never computed, and would not raise where NumPy's would (with
    # the corner inputs, an earlier step may be the one NumPy refuses).
    used = {a for step in program.steps for a in step.args if isinstance(a, int)}
    program.outputs = tuple(i for i in range(len(program.inputs), len(values))
                            if i not in used) + ((len(values),) if program.raises else ())
    return program


# --- the property ------------------------------------------------------------------------

def _regression(inputs, steps, outputs):
    program = Program(inputs, steps, outputs)
    program.raises, program.layouts = False, ["contiguous"] * len(inputs)
    return program


# With the corner inputs (0, 1, -1 and 0), the first power raises where the second, the
# refused step of the drawn inputs, does not: a program ending in a refused step keeps
# its other values as results, so that the first is computed (found by the fuzzer,
# when only the refused step was a result and jitflow returned the second's values).
EARLIER_STEP_REFUSED = _regression(
    [np.array([0, 0, 0], np.int32), np.array(-1, np.int32)],
    [Step("power", (0, 0), {}), Step("power", (0, 1), {})], (2, 3))


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


# add.reduceat of [inf, 1, -1, 0.5, -1/3]: the slice [1, -1, 0.5, -1/3] sums in another
# order in jitflow (a masked sum) than in NumPy's loop; its bound was the whole row's,
# infinite and so dropped (found by the fuzzer)
REDUCEAT_BESIDE_AN_INFINITY = _regression(
    [np.array(True), np.array([0, 1, -1, 2, -3], np.int32)],
    [Step("divide", (0, 1), {}), Step("add_reduceat", (2,), {})], (3,))


# -1e-30 * 1.8e-32 underflows: a fused multiply-add from +0.0 keeps the sign (-0.0),
# NumPy's product then sum does not (+0.0); the bfloat16 product was not counted among
# the sums, whose zero signs are free where products underflow (found by the fuzzer)
BFLOAT16_PRODUCT_UNDERFLOWING = _regression(
    [np.array([[-1e-30], [1.0]], np.float32)],
    [Step("matmul_bfloat16", (0, ("const", np.array([[1.8119349e-32]], np.float32))),
          {})], (1,))


# The largest float64 twice and minus half of it twice: NumPy's pairwise sum stays
# finite, jitflow's lanes add the largest to itself first; whether a partial sum
# overflows depends on the order, so such sums are compared by dtype and shape (found
# by the dynamic axes fuzzer)
HALF_MAX = np.finfo(np.float64).max / 2
SUM_PAST_THE_LARGEST = _regression(
    [np.array([2 * HALF_MAX, -HALF_MAX, -0.0, -0.0] * 2)],
    [Step("sum", (0,), {"axis": (0,), "keepdims": False})], (1,))


# The corner inputs make polydiv divide by a polynomial of leading -0.0: its NaN come
# from other operations in NumPy's loop than in jitflow's, with another sign at one
# place, which copysign then shows (found by the fuzzer)
_LEADING_TINY = np.array([-0.0] * 5 + [-1e-30] + [-0.0] * 2, np.float32).reshape(8, 1, 1)
COPYSIGN_OF_A_COMPUTED_NAN = _regression(
    [np.array([-1e-30] + [-0.0] * 7, np.float32).reshape(8, 1, 1)],
    [Step("constant", (("const", _LEADING_TINY),), {}),
     Step("hstack", (1, 0), {}),
     Step("isfinite", (2,), {}),
     Step("polydiv_quotient", (3, 0), {}),
     Step("times_hanning", (4,), {}),
     Step("copysign", (("const", np.array(432859562321, np.uint64)), 5), {})], (6,))


@FUZZ
@example(program=COPYSIGN_OF_A_COMPUTED_NAN, background=False)
@example(program=SUM_PAST_THE_LARGEST, background=False)
@example(program=EARLIER_STEP_REFUSED, background=False)
@example(program=BFLOAT16_PRODUCT_UNDERFLOWING, background=False)
@example(program=REDUCEAT_BESIDE_AN_INFINITY, background=False)
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


def traced(program, backend, **options):
    """The program as a jitflow.function (compiled for `backend` when first called;
    `options` are jitflow.function's), its inputs named x0, x1, ..."""
    def fn(*inputs):
        values = evaluate(program, jnp, inputs, OPS)
        return tuple(values[i] for i in program.outputs)
    return compiled(fn, len(program.inputs), **options)


def compiled(fn, count, **options):
    """jitflow.function(fn, **options) for `fn(*inputs)` taking `count` inputs, named
    as parameters: calls of a function with *args never take the fast entry."""
    fn.__signature__ = inspect.Signature([
        inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for i in range(count)])
    return jitflow.function(fn, **options)


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
        if order_dependent_product(program, values, index) or \
                depends_on_a_nan_sign(program, values, index):
            result = np.asarray(result)
            assert (result.dtype, result.shape) == (values[index].dtype,
                                                    values[index].shape), label
            continue
        tolerance = inexact_tolerance(program, values, index)
        fidelity.assert_same(result, values[index], what=f"{label}: v{index}",
                             **(tolerance or {}))
        if tolerance is None:
            assert_same(result, values[index])  # NaN positions and signed zeros too


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
    assert refused(steps[0], x ** 2, [x, 2]) and not refused(steps[0], x, [x, x])


def test_isin_of_int64_and_uint64_that_numpy_sorts_as_float64_is_refused():
    """Found by the fuzzer: NumPy sorts int64 elements with uint64 test elements as
    float64 once there are enough test elements, and found -2**63 among [0, 532, ...]
    (it collides with -2**63 + 1 there). jitflow's exact answer would differ from
    NumPy's: it refuses, and the fuzzer keeps such steps no more. With few test
    elements NumPy compares exactly, as jitflow does."""
    x = np.array([-2**63, -2**63 + 1] * 8)
    tests = np.array([0] + [532] * 15, np.uint64)
    assert np.isin(x, tests)[0]  # NumPy's wrong answer that jitflow will not give
    with pytest.raises(TypeError, match="float64.*2\\*\\*53"):
        jitflow.function(lambda a, b: jnp.isin(a, b))(x, tests)
    step = Step("isin", (0, ("const", tests)), {})
    assert refused(step, np.isin(x, tests), [x])
    few = tests[:2]
    np.testing.assert_array_equal(jitflow.function(lambda a, b: jnp.isin(a, b))(x, few),
                                  np.isin(x, few))
    assert not refused(Step("isin", (0, ("const", few)), {}), np.isin(x, few), [x])


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


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs())
def test_every_value_no_step_reads_is_a_result(program):
    """A value that is neither read nor returned would be left uncomputed by jitflow,
    and could not raise as NumPy's would: programs ending in a refused step too."""
    used = {a for step in program.steps for a in step.args if isinstance(a, int)}
    first = len(program.inputs)
    unread = {i for i in range(first, first + len(program.steps)) if i not in used}
    assert unread == set(program.outputs)
