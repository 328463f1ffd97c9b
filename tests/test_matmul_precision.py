"""jitflow.config.matmul_precision = "bfloat16": float32 products traced under it round
their operands to bfloat16 and sum in float32, in the interpreter and in native code
alike, and so do their derivatives' products; other dtypes are untouched; changing it
traces again, with the reason said."""
import warnings

import numpy as np
import pytest

import jitflow
from jitflow.ops.contraction import bfloat16_values
from rounded_products import check_against_rounded


@pytest.fixture
def bfloat16():
    jitflow.config.matmul_precision = "bfloat16"
    yield
    jitflow.config.matmul_precision = "float32"


def operands(m=48, k=70, n=40, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(np.float32),
            rng.standard_normal((k, n)).astype(np.float32))


def matrix_products(graph):
    return [node for node in graph.nodes if node.prim.name == "matmul"]


@pytest.mark.parametrize("backend", ["native", "interpreter"])
def test_products_round_their_operands(bfloat16, backend, monkeypatch):
    monkeypatch.setattr(jitflow.config, "backend", backend)
    x, w = operands()
    f = jitflow.function(lambda x, w: x @ w)
    for _ in range(3):  # the first call, the checked path, the shortcut
        check_against_rounded(f(x, w), x, w)


def test_the_default_is_float32():
    x, w = operands()
    assert jitflow.config.matmul_precision == "float32"
    np.testing.assert_allclose(jitflow.function(lambda x, w: x @ w)(x, w), x @ w,
                               rtol=1e-5, atol=1e-5)


def test_changing_it_traces_again_and_says_why(bfloat16):
    x, w = operands()
    f = jitflow.function(lambda x, w: x @ w)
    jitflow.config.matmul_precision = "float32"
    for _ in range(3):
        exact = f(x, w)  # compiled, and called through its shortcut
    jitflow.config.matmul_precision = "bfloat16"
    check_against_rounded(f(x, w), x, w)
    assert np.abs(exact - f(x, w)).max() > 1e-3
    assert "jitflow.config.matmul_precision changed from 'float32' to 'bfloat16'" in \
        f.cache_info().reasons[-1]
    jitflow.config.matmul_precision = "float32"
    np.testing.assert_array_equal(f(x, w), exact)  # the float32 trace, kept


def test_gradients_products_take_the_precision(bfloat16):
    x, w = operands()
    ones = np.ones((x.shape[0], w.shape[1]), np.float32)
    grad_w = jitflow.grad(lambda w: (x @ w).sum())
    check_against_rounded(grad_w(w), x.T, ones)  # x.T @ 1, x rounded
    grad_x = jitflow.grad(lambda x: (x @ w).sum())
    check_against_rounded(grad_x(x), ones, w.T)
    graph = jitflow.optimize(jitflow.function(jitflow.grad(
        lambda x, w: np.tanh(x @ w).sum(), argnums=(0, 1))).trace(x, w))
    products = matrix_products(graph)
    assert len(products) == 3
    assert all(node.params.get("precision") == "bfloat16" for node in products)


def test_tangents_products_take_the_precision(bfloat16):
    x, w = operands()
    _, tangent = jitflow.jvp(lambda w: x @ w, (w,), (np.ones_like(w),))
    check_against_rounded(tangent, x, np.ones_like(w))


def test_a_vectorized_product_keeps_it(bfloat16):
    x, w = operands()
    batch = np.stack([x, 2 * x])
    out = jitflow.function(jitflow.vmap(lambda x: x @ w))(batch)
    check_against_rounded(out, batch, w)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_are_untouched(bfloat16, dtype):
    x, w = (v.astype(dtype) for v in operands())
    graph = jitflow.function(lambda x, w: x @ w).trace(x, w)
    assert all("precision" not in node.params for node in matrix_products(graph))


def test_an_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="matmul_precision must be one of 'float32', "
                                         "'bfloat16', not 'tf32'"):
        jitflow.config.matmul_precision = "tf32"
    assert jitflow.config.matmul_precision == "float32"


def test_rounding_matches_ml_dtypes_on_normal_values():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    values = np.random.default_rng(3).standard_normal(10_000).astype(np.float32) * 1e3
    expected = values.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(bfloat16_values(values), expected)


def test_eager_calls_run_numpys_float32_products(bfloat16, monkeypatch):
    """run_eagerly runs the Python function as written: NumPy's products, unrounded."""
    monkeypatch.setattr(jitflow.config, "run_eagerly", True)
    x, w = operands()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(jitflow.function(lambda x, w: x @ w)(x, w), x @ w)
