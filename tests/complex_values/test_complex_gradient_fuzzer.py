"""The complex fuzzer's derivatives: complex128 programs of differentiable steps and a
real loss of their result; jitflow.grad, eager and compiled, must match central
differences of NumPy's loss in the real and imaginary part of each input element,
combined by JAX's convention: dL/dx - i dL/dy.

Programs per run: 33 under the 'ci' profile, 1,000 under
`--hypothesis-profile=thorough`."""
import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fidelity
import jitflow
import jitflow.numpy as jnp
from complex_fuzzer_compare import _parts
from complex_fuzzer_ops import (ELEMENTWISE_OPS, EXACT_OPS, FFT_OPS, INVERSE,
                                PRODUCT_OPS, SUM_OPS)
from complex_fuzzer_draws import MAX_STEPS, NORMS
from test_complex_fuzzer import FUZZ
from test_compositions import (Program, Step, broadcasts, draw_axis, draw_new_shape,
                               draw_slice_index, evaluate, fits_beside)
from fuzzer_inputs import LAYOUTS, c_contiguous, laid_out
from test_program_fuzzer import call, compiled

GRADIENT_FUZZ = settings(FUZZ, max_examples=FUZZ.max_examples // 3)


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
