"""A differential fuzzer of programs over complex values (jitflow/complex_values).

Each program is a few steps (test_compositions.py's Step and Program) over complex64
and complex128 inputs and their real partners (float32, float64, int32): arithmetic
with arrays and Python scalars, conj, abs, angle, real, imag, exp, integer powers,
comparisons and NumPy's order of complex numbers (less, maximum, fmin, max, argmin,
...), where, sums, products, shape functions, indexing, partition, lexsort,
selections (nonzero, extract, compress) and triangles, casts, numpy.fft's
transforms, C99's elementary functions, numpy.linalg's functions of Hermitian
positive definite matrices made from a value, polyfit and polydiv
(complex_fuzzer_ops.py holds them all).
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

What it draws is complex_fuzzer_draws.py's, how results are compared
complex_fuzzer_compare.py's; the derivatives' fuzzer is
test_complex_gradient_fuzzer.py.

Programs per run: 100 under the 'ci' profile, 3,000 under
`pytest tests/complex_values --hypothesis-profile=thorough`. What it found
has regression tests in test_complex_fuzzer_regressions.py.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

import fidelity
import jitflow
import jitflow.numpy as jnp
from complex_fuzzer_compare import (_all_finite, _in_memory_order, _is_complex,
                                    _zero_sign_open, compare)
from complex_fuzzer_draws import (COMPLEX_DTYPES, CORNERS, DRAW_STEP, MAX_DIMS, MAX_SIZE,
                                  MAX_STEPS, PART_CORNERS, STEP_KINDS,
                                  VALUE_DTYPES, _refusal, corner_values_like)
from complex_fuzzer_draws import inputs as drawn_inputs
from complex_fuzzer_ops import ELEMENTARY, EXTREMES, INEXACT, LINALG_OPS, OPS, ORDERED_BINARY
from test_compositions import Program, Step, evaluate
from fuzzer_inputs import c_contiguous
from test_program_fuzzer import call, compiled, numpy_values, same_kind

THOROUGH = settings.default.max_examples >= 1000
FUZZ = settings(max_examples=3000 if THOROUGH else 100, deadline=None,
                suppress_health_check=list(HealthCheck))


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
    arguments, layouts = draw(drawn_inputs())
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
        if step.op not in INEXACT and not _zero_sign_open(step, arguments) and \
                not _nan_by_memory_order(step, arguments):
            usable.append(len(values))
        values.append(np.asarray(result[0]))
        if len(program.steps) >= count:
            break
    used = {a for step in program.steps for a in step.args if isinstance(a, int)}
    program.outputs = tuple(i for i in range(len(program.inputs), len(values))
                            if i not in used)
    return program


def _nan_by_memory_order(step, arguments):
    """Whether NumPy's result of `step` is the max or min its loop meets first in memory
    while jitflow's is the first in C order (a known difference, in README): which NaN
    element it is then differs, and so does a later step's result (the real part of
    the ptp of [[1+2j, 7+nanj], [nan+5j, 3]] laid out transposed: 0 in jitflow, NaN in
    NumPy; found by the thorough run). compare() allows it in the step's own result;
    such a step is a leaf."""
    return step.op in EXTREMES and _in_memory_order(arguments[0])


def traced(program):
    def fn(*inputs):
        values = evaluate(program, jnp, inputs, OPS)
        return tuple(values[i] for i in program.outputs)
    return compiled(fn, len(program.inputs))


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
    program.raises = False
    program.layouts = ["python" if isinstance(x, float) else "contiguous" for x in inputs]
    return program


# nanmax of a real [0.0, -0.0]: NumPy's 0.0, jitflow's -0.0 (found by the fuzzer)
NANMAX_OF_ZEROS = _example([np.array([0.0, -0.0], np.float32)],
                           [Step("nanmax", (0,), {"axis": None, "keepdims": False})], (1,))

# fmax of a weak -0.0 and lexsort's int64 0: NumPy's float64 scalar loop keeps the
# first, its vector loop (and jitflow) the second (found by the fuzzer)
FMAX_OF_ZEROS = _example([np.array(0j, np.complex64), -0.0],
                         [Step("lexsort", (0, 0), {}), Step("fmax", (1, 2), {})], (3,))


@FUZZ
@example(program=NANMAX_OF_ZEROS)
@example(program=FMAX_OF_ZEROS)
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


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs())
def test_no_step_reads_an_extreme_numpy_finds_by_memory_order(program):
    """Such a max or min (or ptp) may be another NaN element than jitflow's: a leaf."""
    steps = program.steps[:-1] if program.raises else program.steps  # (NumPy refuses it)
    values = numpy_values(Program(program.inputs, steps, ()), program.inputs, OPS)
    first = len(program.inputs)
    read = {a for step in program.steps for a in step.args if isinstance(a, int)}
    for number, step in enumerate(steps):
        arguments = [values[a] if isinstance(a, int) else a[1] for a in step.args]
        if _nan_by_memory_order(step, arguments):
            assert first + number not in read


def test_a_transposed_operands_extreme_takes_another_nan_than_numpy():
    """The difference the leaf rule above is for, as README states it."""
    v = np.array([[1 + 2j, complex(np.nan, 5)], [complex(7, np.nan), 3]]).T
    step = Step("ptp", (0,), {"axis": None, "keepdims": False})
    assert _nan_by_memory_order(step, [v])
    got = jitflow.function(lambda v: np.ptp(v))(v)
    assert got.real == 0 and np.isnan(got.imag) and np.isnan(np.ptp(v).real)


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
