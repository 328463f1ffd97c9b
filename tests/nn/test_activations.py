"""jitflow.nn.activations against NumPy reference formulas: eagerly and traced on both
backends, float32 and float64, 0-d and empty arrays, NaN and infinities; derivatives
against finite differences away from the kinks; the names `get` knows."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow
import jitflow.nn as nn
from jitflow.nn import activations
from jitflow.testing import check_grads
from jitflow.testing.strategies import arrays as finite_arrays

from fidelity import NATIVE_ULPS, assert_same, given_per_backend, run_traced
from normal_reference import normal_cdf_reference
from strategies import FLOAT_DTYPES, arrays

# Few shapes, so that native code compiles few signatures: 0-d, empty, and two others.
SHAPES = [(), (0,), (7,), (2, 3)]


def sigmoid_reference(x):
    with np.errstate(over="ignore"):
        return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))


def gelu_tanh_reference(x):
    """0.5 x (1 + tanh(u)) as x / (1 + exp(-2u)): the same, without 1 + tanh(u)
    rounding to 0 for negative x."""
    with np.errstate(over="ignore", invalid="ignore"):
        u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
        return x / (1 + np.exp(-2 * u))


# Keras' SELU constants (keras/src/activations/activations.py).
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def elu_reference(x, alpha=1.0):
    with np.errstate(over="ignore"):
        return np.where(x > 0, x, alpha * np.expm1(x))


# name: (the function, its NumPy reference, whether the reference is exact in x's dtype).
# Inexact references are computed in float64 and rounded to x's dtype.
CASES = {
    "linear": (activations.linear, lambda x: x, True),
    "relu": (activations.relu, lambda x: np.maximum(x, 0), True),
    "leaky_relu": (activations.leaky_relu, lambda x: np.where(x >= 0, x, x * 0.2), True),
    "leaky_relu(0.01)": (lambda x: activations.leaky_relu(x, negative_slope=0.01),
                         lambda x: np.where(x >= 0, x, x * 0.01), True),
    "elu": (activations.elu, elu_reference, False),
    "elu(0.5)": (lambda x: activations.elu(x, alpha=0.5),
                 lambda x: elu_reference(x, 0.5), False),
    "selu": (activations.selu, lambda x: SELU_SCALE * elu_reference(x, SELU_ALPHA),
             False),
    "softplus": (activations.softplus, lambda x: np.logaddexp(x, 0), False),
    "silu": (activations.silu, lambda x: x * sigmoid_reference(x), False),
    "sigmoid": (activations.sigmoid, sigmoid_reference, False),
    "tanh": (activations.tanh, np.tanh, False),
    "gelu": (activations.gelu, lambda x: x * normal_cdf_reference(x), False),
    "gelu(approximate)": (lambda x: activations.gelu(x, approximate=True),
                          gelu_tanh_reference, False),
}


def expected_and_tolerance(name, x):
    function, reference, exact = CASES[name]
    if exact:
        return reference(x), {}
    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 is NaN, as it should be
        expected = reference(x.astype(np.float64)).astype(x.dtype)
    eps = float(np.finfo(x.dtype).eps)
    # Results below the smallest normal float are products with subnormals: absolute.
    tolerance = {"ulps": 8, "atol": float(np.finfo(x.dtype).tiny)}
    if jitflow.config.backend == "native":
        tolerance["ulps"] = 2 * NATIVE_ULPS  # composites of up to two transcendentals
    if name == "gelu(approximate)":
        # Its sigmoid's argument 2u is rounded: a relative error eps magnified by |2u|.
        with np.errstate(over="ignore", invalid="ignore"):
            u = math.sqrt(2 / math.pi) * np.abs(x + 0.044715 * x.astype(np.float64) ** 3)
        tolerance["rtol"] = np.where(np.isfinite(u), 4 * eps * u, 0)
    return expected, tolerance


def check_activation(name, x):
    expected, tolerance = expected_and_tolerance(name, x)
    function = CASES[name][0]
    with np.errstate(all="ignore"):  # x^3 of gelu's tanh form overflows, as in NumPy
        assert_same(function(x), expected, what=f"{name} eagerly", **tolerance)
        # A lambda: jitflow.function would trace the parameters' defaults as arguments.
        assert_same(run_traced(lambda x: function(x), x), expected, what=f"{name} traced",
                    **tolerance)


@pytest.mark.parametrize("name", sorted(CASES))
@given_per_backend(data=st.data())
def test_activations_against_numpy(name, data):
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES), label="dtype")
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    check_activation(name, data.draw(arrays(dtype, shape), label="x"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_special_values(backend, name, dtype):
    """NaN stays NaN (relu too, as NumPy's maximum gives), infinities and the extremes
    map to their limits, and nothing overflows (softplus of the largest float is it)."""
    big = np.finfo(dtype).max
    x = np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, big, -big, 10.0, -10.0,
                  30.0, -30.0, 800.0, -800.0], dtype)
    check_activation(name, x)


def test_limits():
    """gelu(-inf) and silu(-inf) are NaN, -inf * 0, as their formulas give in NumPy."""
    x = np.array([math.nan, math.inf, -math.inf, 1e30, -1e30], np.float32)
    assert_same(nn.relu(x), np.array([math.nan, math.inf, 0, 1e30, 0], np.float32))
    assert_same(nn.softplus(x), np.array([math.nan, math.inf, 0, 1e30, 0], np.float32))
    assert_same(nn.elu(x), np.array([math.nan, math.inf, -1, 1e30, -1], np.float32))
    with np.errstate(invalid="ignore", over="ignore"):  # -inf * 0; x^3 of 1e30
        for gelu in (nn.gelu, lambda x: nn.gelu(x, approximate=True)):
            assert_same(gelu(x), np.array([math.nan, math.inf, math.nan, 1e30, -0.0],
                                          np.float32))


# --- dtypes and parameters ---------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_stays_float32(name):
    x = np.linspace(-3, 3, 5, dtype=np.float32)
    assert CASES[name][0](x).dtype == np.float32
    assert CASES[name][0](np.float32(0.5)).dtype == np.float32


def test_parameters_do_not_promote_float32():
    x = np.linspace(-3, 3, 5, dtype=np.float32)
    assert nn.leaky_relu(x, np.float64(0.1)).dtype == np.float32
    assert nn.elu(x, np.float64(0.5)).dtype == np.float32
    traced = jitflow.function(lambda x, a: nn.leaky_relu(x, a))(x, np.float64(0.1))
    assert_same(traced, np.where(x >= 0, x, x * np.float32(0.1)))


def test_integers_follow_numpy():
    x = np.arange(-3, 4)
    assert_same(nn.relu(x), np.maximum(x, 0))
    assert nn.gelu(x).dtype == nn.softplus(x).dtype == np.float64


# --- derivatives -------------------------------------------------------------------------

GRADIENT_CASES = {name: case[0] for name, case in CASES.items()
                  if name not in ("sigmoid", "tanh")}  # jitflow.numpy's, checked there


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
@settings(max_examples=max(2, settings.default.max_examples // 8))
@given(x=finite_arrays(shape=(4,), min_value=-6, max_value=6, avoid=[0.0], margin=0.05))
def test_gradients(name, x):
    check_grads(GRADIENT_CASES[name], (x,), order=2)


def test_gradients_of_the_parameters():
    x = np.array([-2.0, -0.5, 0.7, 3.0])
    check_grads(lambda x, a: activations.leaky_relu(x, a), (x, 0.3))
    check_grads(lambda x, a: activations.elu(x, a), (x, 0.7))


def test_derivatives_at_zero():
    """Where the one-sided derivatives agree, the derivative at 0 is theirs; at relu's
    kink jitflow takes the middle of the subgradient, 1/2."""
    expected = {"relu": 0.5, "elu": 1.0, "softplus": 0.5, "silu": 0.5, "gelu": 0.5,
                "gelu(approximate)": 0.5}
    for name, slope in expected.items():
        grad = jitflow.grad(lambda x: CASES[name][0](x))(0.0)
        assert grad == pytest.approx(slope, rel=1e-15), name


def test_gradients_stay_finite_at_extreme_inputs():
    """Branches not taken (exp of large x in elu, the erf tails in gelu) must not make
    0 * inf = NaN derivatives: each derivative is its limit."""
    x = np.array([-800.0, 800.0])
    limits = {"linear": [1, 1], "relu": [0, 1], "leaky_relu": [0.2, 1],
              "leaky_relu(0.01)": [0.01, 1], "elu": [0, 1], "elu(0.5)": [0, 1],
              "selu": [0, SELU_SCALE], "softplus": [0, 1], "silu": [0, 1],
              "sigmoid": [0, 0], "tanh": [0, 0], "gelu": [0, 1],
              "gelu(approximate)": [0, 1]}
    assert set(limits) == set(CASES)
    for name, limit in limits.items():
        grad = jitflow.grad(lambda x: np.sum(CASES[name][0](x)))
        for result in (grad(x), jitflow.function(grad)(x)):
            assert_same(result, np.array(limit, np.float64), atol=1e-300, what=name,
                        zero_sign=False)


def test_compiled_gradients_equal_eager():
    x = np.linspace(-4, 4, 9)
    for name in ("gelu", "softplus", "selu"):
        grad = jitflow.grad(lambda x: np.sum(CASES[name][0](x)))
        np.testing.assert_allclose(jitflow.function(grad)(x), grad(x), rtol=1e-14)


# --- softmax, get and the package --------------------------------------------------------

def test_softmax_and_log_softmax_over_an_axis():
    x = np.array([[1000.0, 0.0], [1000.0, -1000.0]], np.float32)
    assert_same(nn.softmax(x, axis=0), np.array([[0.5, 1.0], [0.5, 0.0]], np.float32))
    assert_same(run_traced(lambda x: nn.log_softmax(x, axis=0), x),
                np.array([[-math.log(2), 0.0], [-math.log(2), -1000.0]], np.float32),
                rtol=1e-7)


def test_get():
    for name in ("relu", "leaky_relu", "elu", "selu", "softplus", "silu", "swish", "gelu",
                 "sigmoid", "tanh", "softmax", "log_softmax", "linear"):
        assert activations.get(name) is getattr(activations, name)
    assert activations.get(None) is activations.linear
    assert activations.get(np.cos) is np.cos
    with pytest.raises(ValueError, match="unknown activation 'rellu'.*gelu.*relu"):
        activations.get("rellu")
    with pytest.raises(ValueError, match="unknown activation 3"):
        activations.get(3)


def test_the_package_exports_the_activations_and_submodules():
    assert nn.activations is activations
    for module in ("initializers", "losses"):
        assert getattr(nn, module).__name__ == f"jitflow.nn.{module}"
    for name in activations.__all__:
        if name != "get":
            assert getattr(nn, name) is getattr(activations, name)
