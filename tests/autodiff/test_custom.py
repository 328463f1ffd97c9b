"""custom_vjp, custom_jvp and the inline pass that removes their call nodes."""
import copy
import pickle

import numpy as np
import pytest

import jitflow
from jitflow.testing import check_grads


@jitflow.custom_vjp
def clip_gradient(x, bound):
    return x


def _clip_fwd(x, bound):
    return x, bound


def _clip_bwd(bound, ct):
    return (np.clip(ct, -bound, bound), None)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@jitflow.custom_jvp
def log1pexp(x):
    return np.log1p(np.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * jitflow.numpy.sigmoid(x)


def test_custom_vjp_replaces_the_gradient_eagerly_and_compiled():
    f = lambda x: np.sum(clip_gradient(x, 0.5) * np.array([3.0, -0.1, 1.0]))  # noqa
    x = np.arange(3.0)
    for grad in (jitflow.grad(f), jitflow.function(jitflow.grad(f))):
        np.testing.assert_allclose(grad(x), [0.5, -0.1, 0.5])
    assert jitflow.function(f)(x) == pytest.approx(1.9)  # values are the function's


def test_custom_vjp_called_outside_a_trace_is_the_function():
    assert clip_gradient(2.0, 1.0) == 2.0


def test_custom_jvp_is_used_in_both_modes():
    x = np.array([0.0, 10.0, 1000.0])  # log1p(exp(1000)) overflows; its rule does not
    f = lambda x: np.sum(log1pexp(x))  # noqa: E731
    expected = 1 / (1 + np.exp(-x))
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(jitflow.grad(f)(x), expected)
        np.testing.assert_allclose(jitflow.function(jitflow.grad(f))(x), expected)
        _, tangent = jitflow.jvp(f, (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected))


def test_custom_rules_differentiate_again():
    x = np.array([-1.0, 0.3, 2.0])
    check_grads(lambda x: log1pexp(x) * x, (x,), order=2)
    second = jitflow.grad(jitflow.grad(lambda x: log1pexp(x)))(0.3)
    assert second == pytest.approx(np.exp(-0.3) / (1 + np.exp(-0.3)) ** 2)


def scaled_by(w, rule):
    """x * w with a hand-written derivative that closes over w, a traced value."""
    if rule == "vjp":
        @jitflow.custom_vjp
        def scale(x):
            return x * w
        scale.defvjp(lambda x: (x * w, None), lambda _, ct: (ct * w,))
    else:
        @jitflow.custom_jvp
        def scale(x):
            return x * w

        @scale.defjvp
        def _(primals, tangents):
            return scale(*primals), tangents[0] * w
    return scale


@pytest.mark.parametrize("rule", ["vjp", "jvp"])
def test_rules_may_use_the_traced_values_their_function_closes_over(rule):
    def loss(w, x):
        return np.sum(scaled_by(w * 2, rule)(x) ** 3)
    w, x = 1.5, np.array([0.5, -1.0, 2.0])
    expected = 3 * x ** 2 * (2 * w) ** 3
    for grad in (jitflow.grad(loss, argnums=1), jitflow.function(jitflow.grad(loss, argnums=1))):
        np.testing.assert_allclose(grad(w, x), expected)
    hessian_diagonal = jitflow.grad(lambda x: np.sum(jitflow.grad(loss, argnums=1)(w, x)))(x)
    np.testing.assert_allclose(hessian_diagonal, 6 * x * (2 * w) ** 3)
    _, tangent = jitflow.jvp(lambda x: loss(w, x), (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected))


@pytest.mark.parametrize("rule", ["vjp", "jvp"])
def test_differentiating_a_value_a_rule_closes_over_is_an_error(rule):
    # The rule gives derivatives for the arguments only: a derivative through the
    # closure would silently miss that path.
    def loss(w, x):
        return np.sum(scaled_by(w, rule)(x))
    message = rf"custom_{rule} 'scale' closes over a traced value \(~?f64\[\]\) that is being differentiated"
    for grad in (jitflow.grad(loss), jitflow.function(jitflow.grad(loss))):
        with pytest.raises(ValueError, match=message):
            grad(1.5, np.ones(3))
    forward = lambda: jitflow.jvp(lambda w: loss(w, np.ones(3)), (1.5,), (1.0,))  # noqa
    if rule == "jvp":
        with pytest.raises(ValueError, match=message):
            forward()
    else:  # custom_vjp's forward mode differentiates the function's own body
        assert forward()[1] == pytest.approx(3.0)


def test_bwd_with_the_wrong_number_of_cotangents_is_an_error():
    @jitflow.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, ct: (ct,))
    with pytest.raises(ValueError, match="one cotangent .or None. per differentiable argument .2."):
        jitflow.grad(f)(1.0, 2.0)


def test_calling_before_the_rule_is_defined_is_an_error():
    @jitflow.custom_vjp
    def f(x):
        return x
    with pytest.raises(TypeError, match="before defvjp"):
        jitflow.grad(f)(1.0)


def test_the_inline_pass_leaves_the_body():
    traced = jitflow.function(lambda x: log1pexp(x) * 2).trace(np.ones(2))
    assert "custom_jvp_call" in str(traced)
    assert str(jitflow.optimize(traced)) == """graph(%0: f64[2]) {
  %1: f64[2] = exp %0
  %2: f64[2] = log1p %1
  %3: f64[2] = mul %2, 2:~i64[]
  return %3
}"""


def test_functions_with_custom_rules_pickle_by_name_with_their_rules():
    for function in (clip_gradient, log1pexp):
        assert pickle.loads(pickle.dumps(function)) is function
        assert copy.deepcopy(function) is function
    layer = pickle.loads(pickle.dumps(jitflow.nn.Dense(2, activation=log1pexp)))
    assert layer.activation is log1pexp
