"""Derivatives through complex values against central differences of the real and
imaginary parts, with JAX's convention: the gradient of a real L with respect to
z = x + iy is dL/dx - i dL/dy; vjp is the transpose of the complex-linear map (no
conjugation: for holomorphic f, vjp(c) = c f'(z)); jvp pushes dx + i dy forward."""
import numpy as np
import pytest

import jitflow
from complex_checks import central_differences

rng = np.random.default_rng(11)
Z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
X = rng.standard_normal(6)

LOSSES = {
    "abs squared": lambda z, x: np.sum(np.abs(z) ** 2),
    "real of a product": lambda z, x: np.sum((z * z * x).real),
    "quotient": lambda z, x: np.sum(np.abs(z / (1.5 + z * 1j))),
    "exp": lambda z, x: np.sum(np.exp(z * 0.5).imag),
    "angle": lambda z, x: np.sum(np.angle(z) * x),
    "fft power": lambda z, x: np.sum(np.abs(np.fft.fft(z)) ** 2 * (1 + x)),
    "rfft of a real input": lambda z, x: np.sum(np.abs(np.fft.rfft(x * z.real))),
    "irfft": lambda z, x: np.sum(np.fft.irfft(z, 6) * x),
    "matmul": lambda z, x: np.abs(np.outer(z, z.conj()) @ z).sum(),
    "cube and mean": lambda z, x: np.mean(z ** 3).real,
    "solve": lambda z, x: np.abs(np.linalg.solve(np.outer(z, x) + 4 * np.eye(6), z)).sum(),
    "sqrt, log and tanh": lambda z, x: np.sum(np.abs(np.sqrt(z) + np.log(z) * np.tanh(z))),
    "power": lambda z, x: np.sum((z ** (0.5 + 1j)).real),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_gradients_follow_jaxs_convention(name, compiled):
    loss = LOSSES[name]
    gradient = jitflow.grad(loss)
    if compiled:
        gradient = jitflow.function(gradient)
    got = gradient(Z, X)
    assert got.dtype == Z.dtype and got.shape == Z.shape
    np.testing.assert_allclose(got, central_differences(loss, Z, X), rtol=1e-6, atol=1e-6)


def test_the_gradient_of_abs_squared_is_twice_the_conjugate():
    np.testing.assert_allclose(jitflow.grad(lambda z: np.abs(z) ** 2)(3 + 4j), 6 - 8j)


def test_vjp_and_jvp_of_a_holomorphic_function():
    f = lambda z: z * z * z + np.exp(z)  # noqa: E731
    derivative = 3 * Z ** 2 + np.exp(Z)
    cotangent = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    _, pullback = jitflow.vjp(f, Z)
    np.testing.assert_allclose(pullback(cotangent)[0], cotangent * derivative, rtol=1e-12)
    _, pushed = jitflow.jvp(f, (Z,), (cotangent,))
    np.testing.assert_allclose(pushed, derivative * cotangent, rtol=1e-12)


def test_single_precision_gradients_keep_the_dtype():
    z = Z.astype(np.complex64)
    got = jitflow.function(jitflow.grad(lambda z: np.sum(np.abs(np.fft.fft(z)))))(z)
    assert got.dtype == np.complex64


def test_complex_outputs_and_jacobians_are_refused_clearly():
    with pytest.raises(TypeError, match="returns a complex value"):
        jitflow.grad(lambda z: z * 2)(1 + 1j)
    with pytest.raises(TypeError, match="Jacobians of complex"):
        jitflow.jacobian(lambda z: np.abs(z))(Z)


@pytest.mark.parametrize("name", ["exp", "exp2", "expm1", "sinh", "cosh", "tanh", "sin",
                                  "cos", "tan", "sqrt", "log"])
def test_derivatives_on_the_real_axis(name):
    """Where the imaginary part is exactly 0 the functions keep that zero (C99's special
    values): its derivative must still be the function's, not the zero's."""
    z = np.array([0.3, -1.2, 0.0, 2.0]) + 0j
    if name in ("log", "sqrt"):
        z = z + 1.5

    def loss(z, x):
        value = getattr(np, name)(z)
        return np.sum(value.imag + 0.3 * value.real)
    got = jitflow.grad(loss)(z, X)
    np.testing.assert_allclose(got, central_differences(loss, z, X), rtol=1e-6, atol=1e-6)
