"""Complex values through ONNX (jitflow/onnx/complex_io.py, load_fourier.py): functions
of complex values exported as models of their real parts (a complex array a real one
with a last axis of 2, a complex scalar two real scalars, each saying so in its
doc_string), run in ONNX Runtime against NumPy, and loaded back as functions of the
complex values; ONNX's DFT loaded against ONNX Runtime."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

import jitflow  # noqa: E402
import jitflow.onnx  # noqa: E402
from fidelity import assert_same  # noqa: E402
from onnx_support import as_list, make_model, run_ort  # noqa: E402

RNG = np.random.default_rng(3)


def complex_normal(*shape, dtype=np.complex64):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


Z, W = complex_normal(2, 4), complex_normal(4)
S, X = np.complex64(0.5 - 2j), RNG.normal(size=(3, 4)).astype(np.float32)
PROGRAMS = {
    "arithmetic": (lambda z, w, s: z * w - np.conj(z) / s + 2j, (Z, W, S)),
    "parts_and_abs": (lambda z, x: (z.real * x[:2], np.abs(z), np.angle(z)), (Z, X)),
    "exp_and_power": (lambda z: (np.exp(z), z ** 3), (Z,)),
    "products": (lambda z, w: (z @ w, np.vdot(w, w), np.outer(w, w).sum()), (Z, W)),
    "fft": (lambda z: (np.fft.fft(z), np.fft.ifft(z, axis=0), np.fft.fft2(z)), (Z,)),
    "real_fft": (lambda x: (np.fft.rfft(x), np.fft.irfft(np.fft.rfft(x, axis=0), axis=0)),
                 (X,)),
    "complex128": (lambda z: np.sqrt(z) * z.sum(), (Z.astype(np.complex128),)),
    "from_real": (lambda x: x * (1 - 1j), (X,)),
}


def interleaved(value):
    value = np.asarray(value)
    return np.stack([value.real, value.imag], axis=-1)


def model_inputs(args):
    """The real arrays the model takes for `args`."""
    inputs = []
    for arg in args:
        if np.iscomplexobj(arg):
            inputs += [interleaved(arg)] if np.ndim(arg) else [np.asarray(arg.real),
                                                               np.asarray(arg.imag)]
        else:
            inputs.append(arg)
    return inputs


def joined(real, imag):
    """The complex array of these parts, each kept bit for bit (real + 1j * imag would
    make -0.0 + 0j a +0.0 and 1j * inf a NaN)."""
    real, imag = np.asarray(real), np.asarray(imag)
    value = np.empty(real.shape, np.result_type(real.dtype, np.complex64))
    value.real, value.imag = real, imag
    return value


def complex_results(model, outputs):
    """The model's outputs joined into the values they hold, as their notes say."""
    notes = [v.doc_string for v in model.graph.output]
    results, i = [], 0
    while i < len(outputs):
        if notes[i].endswith("along the last axis"):
            results.append(joined(outputs[i][..., 0], outputs[i][..., 1]))
        elif notes[i].endswith("the real part"):
            results.append(joined(outputs[i], outputs[i + 1]))
            i += 1
        else:
            assert notes[i] == "", notes[i]
            results.append(outputs[i])
        i += 1
    return results


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_exported_complex_programs_give_numpy_results_in_onnx_runtime(name):
    fn, args = PROGRAMS[name]
    model = jitflow.onnx.to_model(fn, *args)
    expected = as_list(fn(*args))
    got = complex_results(model, run_ort(model, *model_inputs(args)))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5 * max(1, np.abs(e).max()))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_exported_complex_programs_load_back_as_functions_of_complex_values(name):
    fn, args = PROGRAMS[name]
    loaded = jitflow.onnx.load(jitflow.onnx.to_model(fn, *args))
    for g, e in zip(as_list(loaded(*args)), as_list(fn(*args)), strict=True):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5 * max(1, np.abs(e).max()))


def test_a_real_operand_adds_a_zero_imaginary_part():
    # 0.0 + (0 - 0j) is 0 + 0j: the imaginary part is 0.0 + -0.0. ONNX Runtime's
    # optimizer dropped that Add of a zero constant (found by the complex fuzzer)
    z, x = np.array([complex(0, -0.0), 1 - 0j], np.complex64), np.array(0.0, np.float32)
    model = jitflow.onnx.to_model(lambda z, x: x + z, z, x)
    (got,) = complex_results(model, run_ort(model, *model_inputs([z, x])))
    assert not np.signbit(got.imag).any()


def test_the_inputs_and_outputs_say_what_they_hold():
    model = jitflow.onnx.to_model(lambda z, s, x: (z * s, (z * s).sum(), x), Z, S, X)
    described = [(v.name, [d.dim_value for d in v.type.tensor_type.shape.dim],
                  v.doc_string) for v in [*model.graph.input, *model.graph.output]]
    along = "complex64: real and imaginary parts along the last axis"
    assert described == [
        ("z", [2, 4, 2], along), ("s.real", [], "complex64: the real part"),
        ("s.imag", [], "complex64: the imaginary part"), ("x", [3, 4], ""),
        ("output_0", [2, 4, 2], along), ("output_1", [], "complex64: the real part"),
        ("output_2", [], "complex64: the imaginary part"), ("output_3", [3, 4], "")]


def test_a_loaded_complex_model_differentiates_and_checks_its_inputs():
    def fn(z, w):
        return np.abs(z * w) ** 2

    loaded = jitflow.onnx.load(jitflow.onnx.to_model(fn, Z, W))
    gradient = jitflow.grad(lambda z: loaded(z, W).sum())(Z)
    np.testing.assert_allclose(gradient, jitflow.grad(lambda z: fn(z, W).sum())(Z),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="input 'z' is complex64, got complex128"):
        loaded(Z.astype(np.complex128), W)
    with pytest.raises(TypeError, match="input 'z' is complex64, got float32"):
        loaded(Z.real, W)


# --- ONNX's DFT, loaded ----------------------------------------------------------------------

DFT_CASES = {  # (signal, attributes, dft_length, axis input (opset 20))
    "complex": (interleaved(complex_normal(3, 8)), {}, None, 1),
    "complex_inverse": (interleaved(complex_normal(8, 3)), {"inverse": 1}, None, 0),
    "real": (RNG.normal(size=(2, 6, 1)).astype(np.float32), {}, None, None),
    "real_onesided": (RNG.normal(size=(5, 2, 1)).astype(np.float64), {"onesided": 1}, None,
                      0),
    "padded": (interleaved(complex_normal(2, 5)), {}, 8, -2),
    "cut": (interleaved(complex_normal(2, 6)), {"inverse": 1}, 4, 1),
}


@pytest.mark.parametrize("name", sorted(DFT_CASES))
def test_dft_matches_onnx_runtime(name):
    signal, attributes, length, axis = DFT_CASES[name]
    initializers, inputs = {}, ["signal", ""]
    if length is not None:
        initializers["length"], inputs[1] = np.array(length, np.int64), "length"
    if axis is not None:
        initializers["axis"] = np.array(axis, np.int64)
        inputs.append("axis")
    node = helper.make_node("DFT", [name for name in inputs], ["spectrum"], **attributes)
    model = make_model([node], {"signal": signal}, ["spectrum"], initializers)
    (expected,) = run_ort(model, signal)
    loaded = jitflow.onnx.load(model)
    tolerance = 1e-5 if signal.dtype == np.float32 else 1e-12
    assert_same(np.asarray(loaded(signal)), expected, rtol=tolerance, atol=tolerance,
                zero_sign=False)


def test_dft_of_opset_17_takes_its_axis_as_an_attribute():
    signal = interleaved(complex_normal(4, 3))
    node = helper.make_node("DFT", ["signal"], ["spectrum"], axis=0)
    model = make_model([node], {"signal": signal}, ["spectrum"], opset=17)
    (expected,) = run_ort(model, signal)
    assert_same(np.asarray(jitflow.onnx.load(model)(signal)), expected, rtol=1e-5,
                atol=1e-5, zero_sign=False)
