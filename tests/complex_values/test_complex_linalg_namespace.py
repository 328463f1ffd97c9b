"""The rest of numpy.linalg's namespace on complex values (its products, diagonals and
traces over the last two axes, cross products, tensorinv and tensorsolve) and
np.vecdot, which conjugates its first operand: NumPy's values to rounding and dtypes,
with a real operand mixed in where NumPy allows one, and their derivatives."""
import numpy as np
import pytest

import jitflow
from complex_checks import assert_complex_same
from test_complex_decompositions import complex_normal
from test_complex_derivatives import central_differences

pytestmark = pytest.mark.usefixtures("backend")

rng = np.random.default_rng(12)
STACK, SQUARE, VECTORS = complex_normal(rng, (2, 3, 3)), complex_normal(rng, (3, 3)), \
    complex_normal(rng, (2, 3))
TENSOR = complex_normal(rng, (2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3

FUNCTIONS = {
    "matmul": (np.linalg.matmul, (STACK, SQUARE.real)),
    "tensordot": (lambda a, b: np.linalg.tensordot(a, b, axes=1), (STACK, SQUARE)),
    "outer": (np.linalg.outer, (VECTORS[0], VECTORS[1].real)),
    "matrix_transpose": (np.linalg.matrix_transpose, (STACK,)),
    "diagonal": (lambda a: np.linalg.diagonal(a, offset=-1), (STACK,)),
    "trace": (np.linalg.trace, (STACK,)),
    "trace, complex64": (lambda a: np.linalg.trace(a, dtype=np.complex64), (STACK,)),
    "vecdot": (np.vecdot, (VECTORS, VECTORS[1])),
    "vecdot, real first": (np.linalg.vecdot, (VECTORS.real, VECTORS)),
    "vecdot along axis 0": (lambda a, b: np.vecdot(a, b, axis=0), (STACK, STACK[:, :1])),
    "cross": (np.cross, (VECTORS, VECTORS[::-1])),
    "linalg.cross": (np.linalg.cross, (VECTORS, VECTORS[0].real)),
    "tensorinv": (lambda a: np.linalg.tensorinv(a, ind=2), (TENSOR,)),
    "tensorsolve": (np.linalg.tensorsolve, (TENSOR, VECTORS)),
    "tensorsolve, real a": (np.linalg.tensorsolve, (TENSOR.real, VECTORS)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_linalg_namespace_is_numpys(name):
    fn, args = FUNCTIONS[name]
    got, expected = jitflow.function(fn)(*args), fn(*args)
    assert_complex_same(got, expected, scale=10 * max(1, np.max(np.abs(expected))),
                        eps=4 * np.finfo(np.asarray(expected).dtype).eps)


def test_mismatched_vectors_and_real_dtypes_raise():
    with pytest.raises(ValueError, match="lengths differ"):
        jitflow.function(lambda a, b: np.vecdot(a, b, axis=0))(STACK, SQUARE)
    with pytest.raises(ValueError, match="one-dimensional"):
        jitflow.function(np.linalg.outer)(STACK, VECTORS)
    with pytest.raises(TypeError, match="real dtype"):
        jitflow.function(lambda a: np.linalg.trace(a, dtype=np.float64))(STACK)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_derivatives_through_vecdot_and_tensorsolve(compiled):
    def loss(z):
        z = z.reshape(SQUARE.shape)
        return np.abs(np.vecdot(z, SQUARE)).sum() + \
            np.abs(np.linalg.tensorsolve(z + 3 * np.eye(3), z[0])).sum()
    gradient = jitflow.grad(loss)
    if compiled:
        gradient = jitflow.function(gradient)
    expected = central_differences(lambda z, _: loss(z), SQUARE.ravel(), None)
    np.testing.assert_allclose(gradient(SQUARE.ravel()), expected, rtol=1e-6, atol=1e-6)
