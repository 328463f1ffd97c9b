"""grad, value_and_grad, vjp, jvp, Jacobians and Hessians: eager and compiled, pytrees,
higher orders, errors, and the cases known to trip autodiff systems."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from jitflow.testing import check_grads


def mlp_loss(params, x, y):
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"]
    return np.mean((logits - y) ** 2)


def mlp_params(rng, dtype=np.float64):
    return {"w1": rng.standard_normal((4, 5)).astype(dtype),
            "b1": rng.standard_normal(5).astype(dtype),
            "w2": rng.standard_normal((5, 2)).astype(dtype)}


# --- values ---------------------------------------------------------------------------

def test_grad_matches_the_analytic_derivative():
    x = np.linspace(-2, 2, 7)
    grad = jitflow.grad(lambda x: np.sum(np.tanh(x) * x ** 2))(x)
    expected = (1 - np.tanh(x) ** 2) * x ** 2 + 2 * x * np.tanh(x)
    np.testing.assert_allclose(grad, expected, rtol=1e-13)
    assert grad.dtype == np.float64 and grad.shape == x.shape


def test_gradient_keeps_the_argument_dtype():
    x = np.linspace(-1, 1, 5).astype(np.float32)
    for fn in (jitflow.grad(lambda x: np.sum(x * 2.0)),
               jitflow.function(jitflow.grad(lambda x: np.sum(np.exp(x) * 2.0)))):
        assert fn(x).dtype == np.float32


@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([np.float32, np.float64]))
def test_eager_and_compiled_gradients_agree(seed, dtype):
    rng = np.random.default_rng(seed)
    params = mlp_params(rng, dtype)
    x, y = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((3, 2)).astype(dtype)
    eager_value, eager = jitflow.value_and_grad(mlp_loss)(params, x, y)
    compiled_value, compiled = jitflow.function(jitflow.value_and_grad(mlp_loss))(
        params, x, y)
    rtol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(compiled_value, eager_value, rtol=rtol)
    for name in params:
        assert compiled[name].dtype == dtype
        np.testing.assert_allclose(compiled[name], eager[name], rtol=rtol, atol=rtol)


def test_mlp_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 2))
    check_grads(lambda p: mlp_loss(p, x, y), (mlp_params(rng),), order=2)


# --- pytrees, argnums, aux -----------------------------------------------------------------

def test_argnums_and_pytrees():
    def f(a, b, c):
        return np.sum(a["u"] * b[0] + b[1] ** 2) * c
    a, b, c = {"u": np.ones(3)}, (np.arange(3.0), np.full(3, 2.0)), 3.0
    ga, gc = jitflow.grad(f, argnums=(0, 2))(a, b, c)
    np.testing.assert_allclose(ga["u"], np.arange(3.0) * 3)
    np.testing.assert_allclose(gc, np.sum(np.arange(3.0) + 4))
    (gb0, gb1) = jitflow.grad(f, argnums=1)(a, b, c)
    np.testing.assert_allclose(gb1, 2 * b[1] * 3)


def test_has_aux():
    def f(x):
        return np.sum(x ** 2), {"mean": np.mean(x)}
    for fn in (jitflow.value_and_grad(f, has_aux=True),
               jitflow.function(jitflow.value_and_grad(f, has_aux=True))):
        (value, aux), grad = fn(np.arange(3.0))
        assert value == 5.0 and aux["mean"] == 1.0
        np.testing.assert_allclose(grad, [0, 2, 4])
    grad, aux = jitflow.grad(f, has_aux=True)(np.arange(3.0))
    assert aux["mean"] == 1.0


def test_an_unused_argument_gets_a_zero_gradient():
    grad = jitflow.grad(lambda x, y: np.sum(y), argnums=(0, 1))(np.ones(2), np.ones(3))
    np.testing.assert_array_equal(grad[0], np.zeros(2))
    grad[0][0] = 5.0  # the user owns it: writable, not a broadcast view


def test_broadcasting_is_undone_in_cotangents():
    x, y = np.ones((3, 1)), np.arange(4.0)
    gx, gy = jitflow.grad(lambda x, y: np.sum((x + y) * y), argnums=(0, 1))(x, y)
    assert gx.shape == (3, 1) and gy.shape == (4,)
    np.testing.assert_allclose(gx, np.full((3, 1), 6.0))
    np.testing.assert_allclose(gy, 3 * (1 + 2 * y))


# --- vjp and jvp -----------------------------------------------------------------------------

def test_vjp_and_jvp_agree_with_the_jacobian():
    fn = lambda x, w: np.sin(x @ w)  # noqa: E731
    x, w = np.arange(6.0).reshape(2, 3) / 6, np.ones((3, 2))
    out, vjp_fn = jitflow.vjp(fn, x, w)
    ct = np.array([[1.0, -2.0], [0.5, 3.0]])
    cx, cw = vjp_fn(ct)
    jac = jitflow.jacobian(fn, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(cx, np.einsum("ij,ijkl->kl", ct, jac[0]), rtol=1e-12)
    np.testing.assert_allclose(cw, np.einsum("ij,ijkl->kl", ct, jac[1]), rtol=1e-12)
    tx = np.ones_like(x)
    _, tangent = jitflow.jvp(fn, (x, w), (tx, np.zeros_like(w)))
    np.testing.assert_allclose(tangent, np.einsum("ijkl,kl->ij", jac[0], tx), rtol=1e-12)


def test_jacfwd_equals_jacrev():
    fn = lambda x: np.cumsum(np.exp(x) * x[::-1])  # noqa: E731
    x = np.linspace(0, 1, 4)
    np.testing.assert_allclose(jitflow.jacfwd(fn)(x), jitflow.jacrev(fn)(x), rtol=1e-13)
    compiled = jitflow.function(jitflow.jacfwd(fn))(x)
    np.testing.assert_allclose(compiled, jitflow.jacrev(fn)(x), rtol=1e-12)


def test_hessian_and_hessian_vector_products():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    fn = lambda x: 0.5 * x @ a @ x + np.sum(x ** 3)  # noqa: E731
    x, v = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    expected = a + np.diag(6 * x)
    np.testing.assert_allclose(jitflow.hessian(fn)(x), expected, rtol=1e-13)
    np.testing.assert_allclose(jitflow.function(jitflow.hessian(fn))(x), expected)
    # forward over reverse, and reverse over reverse
    fwd_rev = jitflow.jvp(jitflow.grad(fn), (x,), (v,))[1]
    rev_rev = jitflow.grad(lambda x: np.sum(jitflow.grad(fn)(x) * v))(x)
    np.testing.assert_allclose(fwd_rev, expected @ v, rtol=1e-13)
    np.testing.assert_allclose(rev_rev, expected @ v, rtol=1e-13)


def test_any_order():
    third = jitflow.grad(jitflow.grad(jitflow.grad(lambda x: np.sin(x) * x)))
    x = 0.7
    expected = -3 * np.sin(x) - x * np.cos(x)
    assert np.isclose(third(x), expected)
    assert np.isclose(jitflow.function(third)(x), expected)


# --- eager debugging ---------------------------------------------------------------------

def test_eager_functions_see_concrete_values(capsys):
    def f(x):
        print("x is", x)
        if x.sum() > 0 and float(x[0]) > 0:  # Python control flow on values
            return np.sum(x * 2)
        return np.sum(x * 3)
    np.testing.assert_allclose(jitflow.grad(f)(np.array([1.0, 2.0])), [2, 2])
    np.testing.assert_allclose(jitflow.grad(f)(np.array([-1.0, -2.0])), [3, 3])
    assert "x is [1. 2.]" in capsys.readouterr().out


def test_python_if_on_values_inside_function_suggests_cond():
    def f(x):
        return np.sum(x) if np.sum(x) > 0 else -np.sum(x)
    with pytest.raises(jitflow.ConcretizationError, match="cond"):
        jitflow.function(jitflow.grad(f))(np.ones(3))


# --- stop_gradient and symbolic zeros --------------------------------------------------------

def test_stop_gradient():
    fn = lambda x: np.sum(x * jitflow.stop_gradient(x))  # noqa: E731
    x = np.arange(3.0)
    np.testing.assert_allclose(jitflow.grad(fn)(x), x)
    np.testing.assert_allclose(jitflow.function(jitflow.grad(fn))(x), x)
    assert "stop_gradient" not in str(jitflow.optimize(jitflow.function(fn).trace(x)))


def test_integer_values_carry_no_gradient():
    def f(x, n):
        return np.sum(x * n + (n > 1))
    grad = jitflow.grad(f)(np.ones(3), np.arange(3))
    np.testing.assert_allclose(grad, np.arange(3.0))


# --- errors -------------------------------------------------------------------------------------

def test_grad_of_a_non_scalar_is_an_error():
    with pytest.raises(TypeError, match=r"one float scalar.*float64\[3\]"):
        jitflow.grad(lambda x: x * 2)(np.ones(3))
    with pytest.raises(TypeError, match="test_api.py"):
        jitflow.grad(lambda x: x * 2)(np.ones(3))


def test_grad_with_respect_to_an_integer_is_an_error():
    with pytest.raises(TypeError, match="int64.*float inputs"):
        jitflow.grad(lambda n: np.sum(n * 1.5))(np.arange(3))


def test_bad_argnums_and_cotangents_are_errors():
    with pytest.raises(ValueError, match="argnums 2"):
        jitflow.grad(lambda x: np.sum(x), argnums=2)(np.ones(2))
    _, vjp_fn = jitflow.vjp(lambda x: x * 2, np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\).*expected shape \(3,\)"):
        vjp_fn(np.ones(2))
    with pytest.raises(ValueError, match="tangents"):
        jitflow.jvp(lambda x: x, (np.ones(3),), (np.ones(4),))


# --- known tricky cases ---------------------------------------------------------------------

def softmax_cross_entropy(logits, label):
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    return -np.sum(log_probs[..., label])


@pytest.mark.parametrize("logits", [[1.0, 3.0, 3.0], [1e4, -1e4, 1e4], [500.0, 0.0, -300.0]])
def test_softmax_cross_entropy_with_ties_and_large_logits(logits):
    logits = np.array(logits)
    grad = jitflow.grad(softmax_cross_entropy)(logits, 0)
    probs = np.exp(logits - logits.max()) / np.sum(np.exp(logits - logits.max()))
    np.testing.assert_allclose(grad, probs - np.eye(3)[0], atol=1e-15)
    np.testing.assert_allclose(jitflow.function(jitflow.grad(softmax_cross_entropy),
                                                static_argnames="label")(logits, 0),
                               probs - np.eye(3)[0], atol=1e-15)


def test_where_keeps_nan_out_of_the_taken_branch():
    x = np.array([-1.0, 4.0])
    # The untaken branch's value is NaN; its derivative stays in that branch.
    grad = jitflow.grad(lambda x: np.sum(np.where(x > 0, np.log(np.abs(x)) * x, x)))(x)
    np.testing.assert_allclose(grad, [1.0, np.log(4.0) + 1])
    # sqrt'(x) is NaN for x < 0, and 0 * NaN is NaN (the convention of every reverse-mode
    # system); guard the argument with a second where to keep the gradient finite.
    safe = lambda x: np.sum(np.where(x > 0, np.sqrt(np.where(x > 0, x, 1.0)), 0.0))  # noqa
    np.testing.assert_allclose(jitflow.grad(safe)(x), [0.0, 0.25])


def test_conventions_at_kinks_and_ties():
    # |x|' = sign(x): 0 at 0; maximum and max split the derivative equally between ties.
    assert jitflow.grad(lambda x: np.abs(x))(0.0) == 0.0
    assert jitflow.grad(lambda x: np.maximum(x, 1.0))(1.0) == 0.5
    np.testing.assert_allclose(jitflow.grad(lambda x: np.max(x))(np.array([2.0, 2.0, 1.0])),
                               [0.5, 0.5, 0.0])
    # max(x, x) is x: the two halves add up.
    assert jitflow.grad(lambda x: np.maximum(x, x))(3.0) == 1.0


def test_sqrt_and_pow_at_zero():
    assert jitflow.grad(np.sqrt)(0.0) == np.inf
    assert jitflow.grad(lambda x: x ** 2)(0.0) == 0.0
    assert jitflow.grad(lambda x: x ** 0.0)(0.0) == 0.0
    # d(0 ** y)/dy is taken as 0 (the limit from the right for y > 0), not NaN.
    assert jitflow.grad(lambda y: 0.0 ** y, argnums=0)(2.0) == 0.0


@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, min_side=1, max_side=4),
                    elements=st.floats(-3, 3)))
def test_gradient_of_logsumexp_is_softmax(x):
    grad = jitflow.grad(lambda x: jitflow.numpy.logsumexp(x))(x)
    np.testing.assert_allclose(grad, np.exp(x - np.max(x)) / np.sum(np.exp(x - np.max(x))),
                               rtol=1e-12, atol=1e-15)


def test_closures_over_traced_and_recorded_values():
    @jitflow.function
    def step(w, x):
        return jitflow.grad(lambda w: np.sum((x @ w) ** 2))(w)  # closes over traced x
    w, x = np.ones(3), np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(step(w, x), 2 * x.T @ (x @ w))

    def outer(x):  # the inner gradient closes over the value being differentiated
        return np.sum(jitflow.grad(lambda y: np.sum(np.sin(x * y)))(x))
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(jitflow.function(jitflow.grad(outer))(x),
                               jitflow.grad(outer)(x), rtol=1e-13)
    check_grads(outer, (x,), order=2)


def test_jacobians_of_integer_outputs_are_errors():
    for jacobian in (jitflow.jacrev, jitflow.jacfwd):
        with pytest.raises(TypeError, match="Jacobians need float outputs"):
            jacobian(lambda x: np.argmax(x))(np.ones(3))


# --- cost: batched Jacobians, cotangents nobody needs -------------------------------------

@pytest.mark.parametrize("jacobian", [jitflow.jacrev, jitflow.jacfwd])
def test_jacobians_take_one_batched_pass_whatever_the_size(jacobian):
    weights = {n: np.linspace(-1, 1, n * n).reshape(n, n) for n in (3, 40)}

    def fn(x):
        return np.tanh(x @ weights[x.shape[0]]) * x

    sizes = []
    for n in (3, 40):
        x = np.linspace(-1, 1, n)
        graph = jitflow.function(jacobian(fn)).trace(x)
        sizes.append(len(graph.nodes))
        expected = jitflow.jacrev(fn)(x) if jacobian is jitflow.jacfwd else None
        got = jitflow.function(jacobian(fn))(x)
        eps = 1e-6
        numeric = np.stack([(fn(x + eps * e) - fn(x - eps * e)) / (2 * eps)
                            for e in np.eye(n)], axis=1)
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)
        if expected is not None:
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    assert sizes[0] == sizes[1]


def count_evaluations(monkeypatch, name):
    from jitflow.ir.primitive import REGISTRY
    prim, calls = REGISTRY[name], []
    original = prim.impl
    monkeypatch.setattr(prim, "impl", lambda *a, **k: calls.append(1) or original(*a, **k))
    return calls


def test_eager_gradients_skip_the_products_nobody_needs(monkeypatch):
    calls = count_evaluations(monkeypatch, "matmul")
    x, w = np.ones((8, 5)), np.ones((5, 3))
    jitflow.grad(lambda w: np.sum(x @ w))(w)  # d/dx of the product is not asked for
    assert len(calls) == 2  # forward, and d/dw only


def test_a_constant_exponent_gets_no_derivative_and_no_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log(x) of a negative x would warn
        grad = jitflow.grad(lambda v: np.sum(v ** 2))(np.array([-1.5, 2.0]))
        _, tangent = jitflow.jvp(lambda v: np.sum(v ** 3), (np.array([-1.0]),),
                                 (np.array([1.0]),))
    np.testing.assert_allclose(grad, [-3.0, 4.0])
    np.testing.assert_allclose(tangent, 3.0)
