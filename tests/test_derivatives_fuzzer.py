"""The derivatives' side of the program fuzzer (test_program_fuzzer.py draws and runs the
programs): float64 programs of differentiable ops, whose derivatives are checked eagerly
against central differences (jitflow.testing.check_grads) where no op has a kink, and
compiled (interpreter and native, first and repeated calls, C-contiguous copies) against
the eager ones.

50 programs under 'ci', 2,500 under
`pytest tests/test_derivatives_fuzzer.py --hypothesis-profile=thorough`.
"""
import numpy as np
from hypothesis import example, given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fidelity
import jitflow
import jitflow.numpy as jnp
from fuzzer_ops import (DIFFERENTIABLE_BINARY, DIFFERENTIABLE_UNARY, GRAD_OPS, INDEXING,
                        KINKED, REARRANGING)
from jitflow.testing import check_grads
from test_compositions import Program, Step, broadcasts, draw_axis, evaluate
from strategies import arrays
from fuzzer_inputs import LAYOUTS, c_contiguous, laid_out
from fuzzer_tolerances import SUMS_OF_PRODUCTS
from fuzzer_steps import draw_steps, fits, indexing_step, rearranging_step, shape_step
from test_program_fuzzer import FUZZ, call, compiled, numpy_values


@st.composite
def differentiable_programs(draw):
    """float64 programs of ops with derivatives (almost) everywhere, on inputs in
    [-2, 2], whose results stay moderate."""
    count = draw(st.integers(1, 2))
    shapes = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=count, max_dims=3, min_side=1, max_side=3)).input_shapes
    values = [laid_out(draw(arrays(np.float64, s, min_value=-2, max_value=2)),
                       draw(st.sampled_from(LAYOUTS))) for s in shapes]
    program = Program(list(values), [], ())
    usable, count = list(range(len(values))), draw(st.integers(1, 6))

    def draw_step(draw, x_index):
        return _differentiable_step(draw, values, x_index)
    for step in draw_steps(draw, values, usable, count, draw_step):
        if step is None:
            continue
        program.steps.append(step)
        program.outputs = (len(values),)
        result, error = fidelity.numpy_outcome(
            lambda: evaluate(program, np, program.inputs, GRAD_OPS)[-1])
        if error is not None or not fits(result) or np.size(result) == 0 or \
                not np.all(np.abs(result) < 1e3):
            program.steps.pop()
            continue
        usable.append(len(values))
        values.append(np.asarray(result))
        if len(program.steps) >= count:
            break
    program.outputs = (len(values) - 1,)
    return program


def _differentiable_step(draw, values, x_index):
    x = values[x_index]
    shape = np.shape(x)
    kind = draw(st.sampled_from(["unary", "binary", "structure"]))
    if kind == "unary":
        return Step(draw(st.sampled_from(list(DIFFERENTIABLE_UNARY))), (x_index,), {})
    if kind == "binary":
        partners = [i for i in range(len(values)) if broadcasts(values[i], x)]
        y = draw(st.sampled_from(partners))
        op = draw(st.sampled_from(list(DIFFERENTIABLE_BINARY)))
        if op == "where":
            mask_shape = np.broadcast_shapes(shape, np.shape(values[y]))
            return Step(op, (x_index, y), {"mask": draw(hnp.arrays(np.bool_, mask_shape))})
        return Step(op, (x_index, y), {})
    op = draw(st.sampled_from([k for k in GRAD_OPS if k not in DIFFERENTIABLE_UNARY and
                               k not in DIFFERENTIABLE_BINARY]))
    if op in ("sum", "mean", "max", "min", "prod", "nansum", "nanmean", "average", "ptp",
              "median", "quantile"):
        return Step(op, (x_index,), {"axis": draw_axis(draw, len(shape)),
                                     "keepdims": draw(st.booleans())})
    if op in ("cumsum", "sort"):
        return Step(op, (x_index,), {"axis": None if not shape else
                                     draw(st.integers(-len(shape), len(shape) - 1))})
    if op in INDEXING:
        return indexing_step(draw, values, [], x_index, op=op)
    if op in REARRANGING:
        return rearranging_step(draw, values, list(range(len(values))), x_index, op=op)
    return shape_step(draw, values, list(range(len(values))), x_index, op=op)


# tanh(550 x) at 0: its third derivative, -2 * 550**3, puts the central difference
# 0.0055 from 550 at check_grads' default step (found by the fuzzer). Central
# differences err by the third derivative times eps**2 / 6 (truncation), plus about
# |f| 1e-16 / eps (rounding): at FD_STEP, for the steepest programs drawn (results below
# 1e3 from inputs in [-2, 2]), both stay well inside check_grads' tolerance.
STEEP = Program([np.array(0.0)], [Step("multiply", (0, ("const", np.array(550.0))), {}),
                                  Step("tanh", (1,), {})], (2,))
FD_STEP = 1e-6
# Ops computed through an iterative eigen- or singular value solver are accurate to
# ~1e-13 relative, not an ulp: at FD_STEP their rounding, |f| 1e-13 / eps, passes the
# tolerance (poly of a gram matrix squared and factored: 740 * 1e-13 / 1e-6, measured
# 1.6e-5 off where autodiff matched Richardson's extrapolation to 1e-9; found by the
# fuzzer). A step of 1e-4 keeps both errors small for them.
ITERATIVE = {"poly_gram", "pinv_gram", "eigvalsh_top_gram"}
# sinc's derivative at 1e-8: (y cos y - sin y) / y**2 was rounding noise, 30% off, and
# compiled and eager code differed (found by the fuzzer; sinc is now a series there)
SINC_NEAR_ZERO = Program([np.array(0.0), np.array([1e-8, 1e-8, 1e-8])],
                         [Step("negative", (0,), {}), Step("sinc", (1,), {}),
                          Step("extract_sized", (3,), {})], (4,))
ITERATIVE_FD_STEP = 1e-4
# a program found by the fuzzer: central differences at FD_STEP were 1.6e-5 off
POLY_OF_A_SQUARE = Program([np.array([[0.5, 0.0, 0.0]])],
                           [Step("poly_gram", (0,), {}), Step("multiply", (1, 1), {}),
                            Step("cholesky_gram", (2,), {})], (3,))
# a bounded arccos at 0, then an iterative op: with the old bounding x / (2 + |x|) its
# second derivative jumped there, and central differences at ITERATIVE_FD_STEP were
# 7.9e-5 off (found by the fuzzer)
ARCCOS_AT_ZERO_THEN_EIGVALSH = Program(
    [np.array(0.0), np.array(0.0)],
    [Step("negative", (0,), {}), Step("arccos_bounded", (0,), {}),
     Step("eigvalsh_top_gram", (3,), {})], (4,))
# partition of a tie: which of the two equal values lands at kth jumps as they move, so
# central differences there see a kink (found by the fuzzer)
PARTITION_TIE = Program([np.array([0.0, 0.0]), np.array(0.0)],
                        [Step("partition_kth", (0,), {"kth": 0, "axis": 0})], (2,))


# the gradient of vecdot(x, x) at x = [1.7e-42, -5.3e-248] is 2 g x, whose second
# product underflows: the eager gradient's matmul (NumPy's loop, from +0.0) gives +0.0,
# the compiled one's (OpenBLAS's fused multiply-add) -0.0. A zero's sign from products
# that underflow is rounding (fidelity.products_underflow), as for the program
# fuzzer's contractions (found by the fuzzer).
UNDERFLOWING_VECDOT_GRADIENT = Program(
    [np.array([1.72382808e-042, -5.29469979e-248])],
    [Step("vecdot", (0, 0), {}), Step("sinc", (1,), {}), Step("negative", (2,), {})],
    (3,))


@settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 4))
@given(program=differentiable_programs())
@example(program=UNDERFLOWING_VECDOT_GRADIENT)
@example(program=STEEP)
@example(program=PARTITION_TIE)
@example(program=POLY_OF_A_SQUARE)
@example(program=SINC_NEAR_ZERO)
@example(program=ARCCOS_AT_ZERO_THEN_EIGVALSH)
def test_derivatives_match_central_differences(program):
    note(f"program:\n{program}")
    index = program.outputs[0]

    def fn(*inputs):
        return evaluate(program, jnp, inputs, GRAD_OPS)[index]
    if not any(step.op in KINKED for step in program.steps):
        iterative = any(step.op in ITERATIVE for step in program.steps)
        check_grads(fn, tuple(program.inputs), order=1,
                    eps=ITERATIVE_FD_STEP if iterative else FD_STEP)
    output = numpy_values(program, program.inputs, GRAD_OPS)[index]
    weights = np.cos(np.arange(np.size(output))).reshape(np.shape(output))

    def loss(*inputs):  # the value and gradient of a weighted sum of the output
        return jnp.sum(fn(*inputs) * weights)
    gradient = jitflow.value_and_grad(loss, argnums=tuple(range(len(program.inputs))))
    expected = gradient(*program.inputs)
    # A derivative through a sum of products is a product too: where one underflows,
    # the sign of a zero is rounding (see UNDERFLOWING_VECDOT_GRADIENT).
    zero_sign = not any(step.op in SUMS_OF_PRODUCTS for step in program.steps)
    copies = [c_contiguous(x) for x in program.inputs]
    for backend in ("interpreter", "native"):
        compiled_gradient = compiled(gradient, len(program.inputs))
        for number, inputs in enumerate([program.inputs] * 3 + [copies] * 2):
            got, error = call(compiled_gradient, backend, inputs)
            if error is not None:
                raise AssertionError(f"{backend}, call {number + 1}: {error!r}") from error
            got_leaves, _, got_structure = jitflow.pytree.flatten(got)
            leaves, _, structure = jitflow.pytree.flatten(expected)
            assert got_structure == structure, f"{backend}, call {number + 1}: {got}"
            for g, e in zip(got_leaves, leaves, strict=True):
                fidelity.assert_same(g, e, rtol=1e-9, atol=1e-9, zero_sign=zero_sign,
                                     what=f"{backend}, call {number + 1}")
