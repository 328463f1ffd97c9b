"""Regression tests for what the complex fuzzer (test_complex_fuzzer.py) found: each
a minimal program, on the interpreter and in native code, against NumPy."""
import numpy as np
import pytest

import fidelity
import jitflow
import jitflow.numpy as jnp
from complex_fuzzer_compare import _parts, compare
from complex_fuzzer_draws import NAN
from test_complex_gradient_fuzzer import _assert_gradients, central_differences
from test_compositions import Step
from test_program_fuzzer import call, compiled


def _run_everywhere(fn, *args):
    """fn(*args) traced on each backend, with NumPy's errors and warnings silenced."""
    results = []
    for backend in ("interpreter", "native"):
        got, error = call(compiled(fn, len(args)), backend, args)
        if error is not None:
            raise error
        results.append(got)
    return results


def _assert_parts_equal(got, expected):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    for _, a, b in _parts(got, expected):
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("z, axis", [
    (np.array(-np.inf + 3j, np.complex64), None),
    (np.array([[np.nan + 3j, 1 - 2j], [0.5j, np.inf + 1j]], np.complex128), 0),
    (np.zeros((0, 2), np.complex64), 0),
    (np.zeros((2, 0), np.complex128), None)])
def test_mean_divides_as_numpy_does(z, axis):
    # NumPy's mean divides the sum by n + 0i: an infinite part makes the other NaN
    # (np.mean([-inf + 3j]) is -inf + nanj), an empty mean is NaN in both parts
    expected = fidelity.numpy_outcome(np.mean, z, axis=axis)[0]
    for got in _run_everywhere(lambda z: jnp.mean(z, axis=axis), z):
        fidelity.assert_same(np.isnan(got.imag), np.isnan(expected.imag))
        fidelity.assert_same(np.isnan(got.real), np.isnan(expected.real))
        compare("mean", got, expected, Step("mean", (0,), {"axis": axis,
                                                          "keepdims": False}), [z])


@pytest.mark.parametrize("name, kwargs", [("fft2", {}), ("ifft2", {}), ("fftn", {}),
                                          ("ifftn", {"axes": (0,)}),
                                          ("irfftn", {"s": (2, 4), "axes": (0, 1)})])
def test_many_axis_transforms_of_traced_complex_values(name, kwargs):
    # they asked jitflow.numpy.ndim of the complex value, which raised TypeError
    z = np.array([[1 + 2j, -0.5j, 3.0], [2 - 1j, 0.25, 1j]], np.complex128)
    expected = getattr(np.fft, name)(z, **kwargs)
    for got in _run_everywhere(lambda z: getattr(jnp.fft, name)(z, **kwargs), z):
        fidelity.assert_same(got.real, expected.real, atol=1e-14)
        fidelity.assert_same(got.imag, expected.imag, atol=1e-14)
    assert _run_everywhere(lambda z: (jnp.ndim(z), jnp.shape(z), jnp.size(z)), z)[0] == \
        (2, (2, 3), 6)


@pytest.mark.parametrize("x, axis", [(np.array(1j), -1), (np.array(1j), 0),
                                     (np.ones(3, np.complex64), 1)])
def test_transform_axis_out_of_bounds_is_numpys_error(x, axis):
    # NumPy raises IndexError (or AxisError, which is both an IndexError and a
    # ValueError); jitflow raised a plain ValueError
    expected = fidelity.numpy_outcome(np.fft.fft, x, axis=axis)[1]
    assert isinstance(expected, IndexError)
    for backend in ("interpreter", "native"):
        _, error = call(compiled(lambda x: jnp.fft.fft(x, axis=axis), 1), backend, [x])
        assert isinstance(error, IndexError), error


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn"])
@pytest.mark.parametrize("length", [0, 3])
def test_many_axis_transforms_check_every_axis_first(name, length):
    # NumPy takes the shape at every axis before transforming: fft2 of a 1-d array
    # raises its IndexError for axis -2; jitflow transformed axis -1 first, and for
    # length 0 raised a ValueError about the number of data points
    x = np.zeros(length, np.float32)
    expected = fidelity.numpy_outcome(getattr(np.fft, name), x, axes=(-2, -1))[1]
    assert isinstance(expected, IndexError)
    for backend in ("interpreter", "native"):
        _, error = call(compiled(lambda x: getattr(jnp.fft, name)(x, axes=(-2, -1)), 1),
                        backend, [x])
        assert isinstance(error, IndexError), error


@pytest.mark.parametrize("name", ["dot", "outer", "inner", "kron"])
@pytest.mark.parametrize("scalar", [2 - 1j, 2.0, 3])
def test_products_take_python_scalars_as_arrays(name, scalar):
    # np.dot(complex64, 2 - 1j) is complex128: products make arrays of their operands,
    # a Python scalar is not weakly typed there (jitflow gave complex64). (A real
    # operand takes two real products in jitflow, not NumPy's four of a complex one:
    # -0.5j * 2.0 has the real part -0.0 there, +0.0 in NumPy; zero signs not compared)
    z = np.array([1 + 2j, -0.5j], np.complex64)
    expected = getattr(np, name)(z, scalar)
    for got in _run_everywhere(lambda z: getattr(jnp, name)(z, scalar), z):
        for _, a, b in _parts(np.asarray(got), expected):
            fidelity.assert_same(a, b, rtol=1e-6, zero_sign=False)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "hfft", "irfft"])
def test_ortho_transforms_keep_single_precision(name):
    # the ortho scale 1/sqrt(n) was a NumPy float64, which made float32 parts float64
    # (a ValueError: parts of a complex value must share shape and dtype)
    x = np.array([[1, -2, 3], [0.5, 4, -1]], np.float32)
    expected = getattr(np.fft, name)(x, n=3, norm="ortho")
    for got in _run_everywhere(lambda x: getattr(jnp.fft, name)(x, n=3, norm="ortho"), x):
        fidelity.assert_same(np.real(got), np.real(expected), atol=1e-5)
        fidelity.assert_same(np.imag(got), np.imag(expected), atol=1e-5)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "float16"])
@pytest.mark.parametrize("name", ["fft", "rfft", "rfftn", "ihfft", "hfft"])
def test_transforms_compute_in_numpys_precision(dtype, name):
    # NumPy transforms bool and every integer in complex128 (float16 in complex64);
    # jitflow gave complex64 for bool, int8, uint8 and int16
    if name == "hfft" and dtype == "float16":
        pytest.skip("NumPy's hfft and irfft of float16 are float16; jitflow's float32")
    x = np.array([[1, 0, 1, 1], [0, 1, 1, 0]]).astype(dtype)
    expected = getattr(np.fft, name)(x)
    for got in _run_everywhere(lambda x: getattr(jnp.fft, name)(x), x):
        tolerance = 1e-5 if expected.dtype == np.complex64 else 1e-12
        fidelity.assert_same(got.real, expected.real, atol=tolerance)
        fidelity.assert_same(got.imag, expected.imag, atol=tolerance)


def test_transforms_over_no_axes_are_numpys():
    # NumPy's fftn over no axes returns its input as it is; rfftn and irfftn refuse
    x = np.array(2.5)
    for name in ("fftn", "ifftn"):
        for got in _run_everywhere(lambda x: getattr(jnp.fft, name)(x), x):
            _assert_parts_equal(got, getattr(np.fft, name)(x))
    for name in ("rfftn", "irfftn"):
        assert isinstance(fidelity.numpy_outcome(getattr(np.fft, name), x)[1], IndexError)
        for backend in ("interpreter", "native"):
            _, error = call(compiled(lambda x: getattr(jnp.fft, name)(x), 1), backend, [x])
            assert isinstance(error, IndexError), error


def test_conj_method_of_bool():
    # the method conj of a traced bool array gave int8, as np.conj does; NumPy's method
    # returns the real array itself
    b = np.array([True, False])
    _assert_parts_equal(jitflow.function(lambda b: b.conj())(b), b.conj())


def test_python_complex_argument():
    # jitflow/pytree.py's _joined called complex() on the traced parts
    z = np.array([1 + 2j, -0.5j], np.complex64)
    got = jitflow.function(lambda z, c: z * c)(z, 1 - 2j)
    _assert_parts_equal(got, z * (1 - 2j))


@pytest.mark.parametrize("z", [1e200 + 1e200j, -6.6e-16 - 2.5e200j, 3 - 1e-300j])
@pytest.mark.parametrize("n", [-3, -2])
def test_negative_powers_multiply_as_numpy_does(z, n):
    # np.power's loop for a negative exponent starts from 1 * z, whose inf * 0 terms
    # make NaN where z z overflows; jitflow squared directly and gave 0
    z = np.array([z, 1 - 2j])
    expected = fidelity.numpy_outcome(np.power, z, n)[0]
    for got in _run_everywhere(lambda z: jnp.power(z, n), z):
        np.testing.assert_array_equal(np.isnan(got.real), np.isnan(expected.real))
        np.testing.assert_array_equal(np.isnan(got.imag), np.isnan(expected.imag))
        compare("power", got, expected, Step("power", (0,), {"n": n}), [z])


def test_exp_of_nan_keeps_a_zero_imaginary_part():
    # C99 (and so NumPy): exp(NaN + 0i) is NaN + 0i; jitflow gave NaN + NaN i
    z = np.array([complex(NAN, 0.0), complex(NAN, -0.0), complex(NAN, 1.0)], np.complex64)
    expected = fidelity.numpy_outcome(np.exp, z)[0]
    for got in _run_everywhere(jnp.exp, z):
        _assert_parts_equal(got, expected)


@pytest.mark.parametrize("z", [-4 + 0j, 1.5 - 0j, complex(-0.5, -0.0)])
def test_gradient_of_exp_at_a_zero_imaginary_part(z):
    # exp keeps a zero imaginary part exactly (where(y == 0, y, e^x sin y)), which made
    # its derivative in y 1 there, not e^x cos y = e^x
    def loss(z):
        w = jnp.exp(z)
        return jnp.imag(w) * 0.75 + jnp.real(w) * 0.5
    z = np.array(z)
    expected = central_differences(lambda z: np.imag(np.exp(z)) * 0.75 +
                                   np.real(np.exp(z)) * 0.5, [z])
    _assert_gradients("eager", jitflow.grad(loss)(z), expected, rtol=1e-7, atol=1e-9,
                      zero_sign=False)
    for backend in ("interpreter", "native"):
        got, error = call(compiled(jitflow.grad(loss), 1), backend, [z])
        assert error is None, error
        _assert_gradients(backend, got, expected, rtol=1e-7, atol=1e-9, zero_sign=False)


@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setdiff1d", "setxor1d"])
@pytest.mark.parametrize("other", [1 + 2j, 1.5, [1 + 2j]], ids=["complex", "float", "list"])
def test_set_functions_take_python_numbers_as_numpy_does(name, other):
    # NumPy's unique makes a complex128 array of a Python complex (intersect1d,
    # setxor1d, setdiff1d's second operand); its concatenate keeps the number weak
    # (union1d) (found by the fuzzer: complex64 where NumPy gives complex128)
    z = np.array([1 + 2j, 3], np.complex64)
    for first, second in ((z, other), (other, z)):
        expected = getattr(np, name)(first, second)
        size = expected.size
        for got in _run_everywhere(lambda z: getattr(jnp, name)(
                z if first is z else first, z if second is z else second, size=size), z):
            _assert_parts_equal(got, expected)


@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setdiff1d", "setxor1d"])
def test_set_functions_take_a_python_number_passed_in_as_numpy_does(name):
    # a Python float passed to the compiled function is traced weakly typed; NumPy's
    # unique makes a float64 array of it (complex64 with it: complex128) (found by
    # the fuzzer)
    z = np.array([0j, 2], np.complex64)
    expected = getattr(np, name)(z, 2.0)
    for backend in ("interpreter", "native"):
        got, error = call(compiled(lambda z, x: getattr(jnp, name)(z, x, size=expected.size),
                                   2), backend, [z, 2.0])
        assert error is None, error
        _assert_parts_equal(got, expected)
