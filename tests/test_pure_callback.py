"""jitflow.pure_callback: Python called from compiled code with declared results,
eagerly, in the interpreter and in native code; its results checked; under vmap, grad
(refused by name, or given by custom_vjp) and constant folding."""
import math

import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from fidelity import run_traced

pytestmark = pytest.mark.usefixtures("backend")


def host_erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def like(x):
    return jitflow.ShapeDtypeStruct(x.shape, x.dtype)


def test_results_come_back_into_the_computation():
    x = np.linspace(-2, 2, 7)

    def f(x):
        return jitflow.pure_callback(host_erf, like(x), x) * 2 + jnp.sin(x)
    expected = host_erf(x) * 2 + np.sin(x)
    np.testing.assert_allclose(f(x), expected, rtol=1e-15)
    np.testing.assert_allclose(run_traced(f, x), expected, rtol=1e-15)


def test_several_results_of_several_dtypes_in_a_pytree():
    x, n = np.arange(6.0).reshape(2, 3), np.array([1, 2, 3], np.int32)

    def host(x, n, *, scale):
        return {"sum": (x * scale + n).astype(np.float32), "count": np.int64(n.sum())}

    def f(x, n):
        shapes = {"sum": jitflow.ShapeDtypeStruct((2, 3), np.float32),
                  "count": jitflow.ShapeDtypeStruct((), np.int64)}
        return jitflow.pure_callback(host, shapes, x, n, scale=2.0)
    got = jitflow.function(f)(x, n)
    np.testing.assert_array_equal(got["sum"], (x * 2 + n).astype(np.float32))
    assert got["count"] == 6 and got["count"].dtype == np.int64


def test_a_result_that_differs_from_its_declaration_raises():
    x = np.ones(3)
    with pytest.raises(TypeError, match=r"float32\[3\], declared float64\[3\]"):
        run_traced(lambda x: jitflow.pure_callback(lambda a: a.astype(np.float32), like(x),
                                                   x), x)
    with pytest.raises(TypeError, match=r"float64\[2\], declared float64\[3\]"):
        run_traced(lambda x: jitflow.pure_callback(lambda a: a[:2], like(x), x), x)
    with pytest.raises(TypeError, match="has no shape and dtype"):
        run_traced(lambda x: jitflow.pure_callback(host_erf, 3, x), x)


def test_an_exception_in_the_function_reaches_the_caller():
    def failing(x):
        raise KeyError("from the callback")
    with pytest.raises(KeyError, match="from the callback"):
        run_traced(lambda x: jitflow.pure_callback(failing, like(x), x), np.ones(2))


def test_vmap_calls_it_once_per_element():
    calls = []

    def host(row):
        calls.append(row.shape)
        return row[::-1].copy()
    x = np.arange(6.0).reshape(2, 3)
    got = jitflow.vmap(lambda r: jitflow.pure_callback(host, like(r), r))(x)
    np.testing.assert_array_equal(got, x[:, ::-1])
    assert calls == [(3,), (3,)]


def test_it_has_no_derivative_of_its_own_but_takes_a_custom_one():
    x = np.array([0.3, -0.7, 1.1])
    with pytest.raises(NotImplementedError, match="custom_vjp"):
        jitflow.grad(lambda x: jnp.sum(jitflow.pure_callback(host_erf, like(x), x)))(x)

    @jitflow.custom_vjp
    def erf(x):
        return jitflow.pure_callback(host_erf, like(x), x)

    def forward(x):
        return erf(x), x

    def backward(x, ct):
        return (ct * 2 / np.sqrt(np.pi) * jnp.exp(-x * x),)
    erf.defvjp(forward, backward)
    gradient = jitflow.grad(lambda x: jnp.sum(erf(x) * x))
    expected = host_erf(x) + x * 2 / np.sqrt(np.pi) * np.exp(-x * x)
    np.testing.assert_allclose(gradient(x), expected, rtol=1e-14)
    np.testing.assert_allclose(jitflow.function(gradient)(x), expected, rtol=1e-14)
    eps = 1e-6  # and the custom derivative is erf's: central differences
    numeric = (host_erf(x + eps) - host_erf(x - eps)) / (2 * eps)
    np.testing.assert_allclose(jitflow.grad(lambda x: jnp.sum(erf(x)))(x), numeric,
                               rtol=1e-8)
