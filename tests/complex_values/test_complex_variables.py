"""Complex Variables: held, assigned and read eagerly and inside @jitflow.function
(as arguments and closed over, complex64 and complex128, 0-d and n-d) as NumPy computes
the same steps; left as they were by a call that raises; differentiated by
GradientTape with jitflow.grad's convention; updated by the optimizers as their parts;
pickled."""
import pickle

import numpy as np
import pytest

import jitflow
from complex_checks import assert_complex_same

pytestmark = pytest.mark.usefixtures("backend")

rng = np.random.default_rng(11)
Z = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))


def test_eager_assignments_keep_the_dtype_and_cast_python_numbers():
    v = jitflow.Variable(Z.astype(np.complex64))
    assert v.dtype == np.complex64 and v.shape == (2, 3)
    v.assign(2j)
    assert_complex_same(v.numpy(), np.full((2, 3), 2j, np.complex64))
    v.assign_add(1.5)
    assert_complex_same(v.numpy(), np.full((2, 3), 1.5 + 2j, np.complex64))
    v.assign(np.ones((2, 3), np.complex64) * (1 - 1j))
    assert_complex_same(np.asarray(v * 2), np.full((2, 3), 2 - 2j, np.complex64))
    with pytest.raises(TypeError, match="complex128, but the Variable holds complex64"):
        v.assign(Z)
    with pytest.raises(ValueError, match="shape"):
        v.assign(np.zeros(3, np.complex64))
    with pytest.raises(TypeError, match="holds float64"):
        jitflow.Variable(np.zeros(2)).assign(1j)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_traced_steps_read_and_assign_as_numpy_computes(dtype, shape):
    start = np.asarray(np.resize(Z.ravel(), shape), dtype)
    closed = jitflow.Variable(start)
    passed = jitflow.Variable(start * 2)

    @jitflow.function
    def step(v, x):
        closed.assign(closed * x + v)
        v.assign(np.conj(v) - 1j)
        return closed.real.sum() + v.imag.sum()

    a, b = start.copy(), start * 2
    for x in (np.float32(0.5), np.float32(2.0), np.float32(-1.0)):
        result = step(passed, x)
        a = (a * x + b).astype(dtype)
        b = (np.conj(b) - 1j).astype(dtype)
        expected = a.real.sum() + b.imag.sum()
        assert_complex_same(closed.numpy(), a, eps=1e-6, what="closed over")
        assert_complex_same(passed.numpy(), b, what="passed")
        np.testing.assert_allclose(result, expected, rtol=1e-5)
        assert closed.dtype == dtype and closed.shape == shape


def test_a_call_that_raises_leaves_complex_variables_as_they_were():
    v = jitflow.Variable(Z.copy())

    @jitflow.function
    def step(i):
        v.assign(v * 2)
        return np.take(v, i)  # (an index out of bounds raises after the assignment)

    step(np.int64(0))
    before = v.numpy()
    with pytest.raises(IndexError):
        step(np.int64(99))
    assert_complex_same(v.numpy(), before)


def loss_of(z):
    return np.sum(np.abs(z * (2 - 1j) - 1) ** 2) + np.sum(np.angle(z + 3))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_tape_gradients_follow_jitflow_grads_convention(compiled):
    v = jitflow.Variable(Z.copy())
    unused = jitflow.Variable(np.zeros(2, np.complex64))

    def gradients():
        with jitflow.GradientTape() as tape:
            loss = loss_of(v)
        return tape.gradient(loss, [v, unused], unconnected_gradients="zero")

    if compiled:
        gradients = jitflow.function(gradients)
    got, zero = gradients()
    expected = jitflow.grad(loss_of)(Z)  # dL/dx - i dL/dy
    assert_complex_same(got, expected, eps=1e-12, scale=10)
    np.testing.assert_array_equal(zero, np.zeros(2, np.complex64))
    assert zero.dtype == np.complex64


def test_gradient_descent_on_a_complex_variable_finds_the_minimum():
    """L = |a z - 1|^2 is least at z = 1 / a; a step goes against conj(gradient)."""
    a = 2 - 1j
    v = jitflow.Variable(np.array([3 + 3j]))

    @jitflow.function
    def step():
        with jitflow.GradientTape() as tape:
            loss = np.sum(np.abs(a * v - 1) ** 2)
        v.assign_sub(0.1 * np.conj(tape.gradient(loss, v)))
        return loss

    for _ in range(100):
        step()
    np.testing.assert_allclose(v.numpy(), [1 / a], rtol=1e-8)


def test_a_complex_variable_pickles_with_its_value():
    v = jitflow.Variable(Z.astype(np.complex64), name="phases")
    copy = pickle.loads(pickle.dumps(v))
    assert copy.name == "phases"
    assert_complex_same(copy.numpy(), v.numpy())


OPTIMIZERS = {
    "SGD": lambda: jitflow.optim.SGD(0.05), "momentum": lambda: jitflow.optim.SGD(
        0.02, momentum=0.9, nesterov=True),
    "Adam": lambda: jitflow.optim.Adam(0.05), "AdamW": lambda: jitflow.optim.AdamW(0.05),
    "RMSprop": lambda: jitflow.optim.RMSprop(0.01),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_optimizers_update_a_complex_variable_as_its_parts(name, compiled):
    """A complex Variable steps exactly as a float Variable holding its parts (last axis
    real, imaginary) would, with the parts' gradient (dL/dx, dL/dy): each part is a
    parameter of its own, as PyTorch updates complex parameters."""
    a = np.array([2 - 1j, 0.5 + 1j, -1j])

    def loss_of_parts(p):
        z = p[..., 0] + 1j * p[..., 1]
        return np.sum(np.abs(a * z - 1) ** 2)

    start = np.array([3 + 3j, -1 + 0j, 0.5j])
    complex_variable = jitflow.Variable(start)
    parts_variable = jitflow.Variable(np.stack([start.real, start.imag], axis=-1))
    optimizers = OPTIMIZERS[name](), OPTIMIZERS[name]()

    def step():
        with jitflow.GradientTape() as tape:
            loss = loss_of_parts(np.stack([complex_variable.real, complex_variable.imag], -1))
        optimizers[0].apply_gradients([(tape.gradient(loss, complex_variable),
                                        complex_variable)])
        with jitflow.GradientTape() as tape:
            loss = loss_of_parts(parts_variable)
        optimizers[1].apply_gradients([(tape.gradient(loss, parts_variable), parts_variable)])
    if compiled:
        step = jitflow.function(step)
    for _ in range(5):
        step()
    parts = parts_variable.numpy()
    np.testing.assert_allclose(complex_variable.numpy(), parts[..., 0] + 1j * parts[..., 1],
                               rtol=1e-12, atol=1e-12)
    assert [s.shape for s in optimizers[0].variables()[1:]] == \
        [s.shape for s in optimizers[1].variables()[1:]]
