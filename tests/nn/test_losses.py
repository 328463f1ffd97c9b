"""jitflow.nn.losses against float64 NumPy references, eagerly and traced on both
backends: ordinary and huge logits (+-1000, where naive formulas overflow), every
reduction, float32 and float64; derivatives; and the errors for mismatched shapes."""
import math
import os

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from jitflow.nn import losses
from jitflow.testing import check_grads

from fidelity import assert_same, given_per_backend, run_traced
from strategies import FLOAT_DTYPES

# (examples, classes) and one more batch axis: few shapes, few native compiles.
SHAPES = [(5, 3), (2, 2, 4)]
REDUCTIONS = ["mean", "sum", "none"]


# --- float64 references ------------------------------------------------------------------

def log_softmax_reference(x, axis=-1):
    peak = np.max(x, axis=axis, keepdims=True)
    shifted = x - peak
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def reduce_reference(losses, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](losses)


def mse_reference(y_true, y_pred):
    return (y_pred - y_true) ** 2


def bce_reference(labels, logits):
    return np.logaddexp(0, logits) - logits * labels


def softmax_ce_reference(labels, logits):
    return -np.sum(labels * log_softmax_reference(logits), axis=-1)


def sparse_ce_reference(labels, logits):
    picked = np.take_along_axis(log_softmax_reference(logits), labels[..., None], -1)
    return -picked[..., 0]


CASES = {
    "mean_squared_error": (losses.mean_squared_error, mse_reference),
    "binary_crossentropy_from_logits": (losses.binary_crossentropy_from_logits,
                                        bce_reference),
    "softmax_cross_entropy_from_logits": (losses.softmax_cross_entropy_from_logits,
                                          softmax_ce_reference),
    "sparse_softmax_cross_entropy_from_logits": (
        losses.sparse_softmax_cross_entropy_from_logits, sparse_ce_reference),
}


# --- inputs ------------------------------------------------------------------------------

def draw_logits(data, shape, dtype):
    """Ordinary logits and huge ones, whose exp overflows float64."""
    values = st.floats(-30, 30, width=np.dtype(dtype).itemsize * 8) | \
        st.sampled_from([1000.0, -1000.0])
    return data.draw(hnp.arrays(dtype, shape, elements=values), label="logits")


def draw_labels(data, name, shape):
    """Targets, one-hot or probability rows, class indices: whatever `name` takes."""
    if name == "sparse_softmax_cross_entropy_from_logits":
        return data.draw(hnp.arrays(np.int64, shape[:-1],
                                    elements=st.integers(0, shape[-1] - 1)), label="labels")
    if name == "mean_squared_error":
        return data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-30, 30)),
                         label="targets")
    weights = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from(
        [0.0, 0.0, 0.25, 1.0, 3.0])), label="weights")
    if name == "binary_crossentropy_from_logits":
        return np.minimum(weights, 1.0)
    totals = np.sum(weights, axis=-1, keepdims=True)
    return np.where(totals > 0, weights / np.where(totals > 0, totals, 1), 0)


def expected(name, labels, logits, reduction):
    """The reference in float64 on the inputs as the loss sees them (float targets in
    the logits' dtype), rounded to the logits' dtype."""
    if labels.dtype.kind == "f":
        labels = labels.astype(logits.dtype).astype(np.float64)
    result = reduce_reference(CASES[name][1](labels, logits.astype(np.float64)), reduction)
    return np.asarray(result).astype(logits.dtype)


def tolerance(logits):
    """A few roundings per term, relative; and log_softmax's absolute errors, which
    grow with the size of the logits it subtracts."""
    eps = float(np.finfo(logits.dtype).eps)
    scale = max(1.0, float(np.max(np.abs(logits), initial=0)))
    return {"rtol": 64 * eps, "atol": 64 * eps * scale, "zero_sign": False}


@pytest.mark.parametrize("name", sorted(CASES))
@given_per_backend(data=st.data())
def test_losses_against_numpy(name, data):
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES), label="dtype")
    shape = data.draw(st.sampled_from(SHAPES), label="shape")
    reduction = data.draw(st.sampled_from(REDUCTIONS), label="reduction")
    logits = draw_logits(data, shape, dtype)
    labels = draw_labels(data, name, shape)
    function = CASES[name][0]
    want = expected(name, labels, logits, reduction)
    assert np.all(np.isfinite(want))
    assert_same(function(labels, logits, reduction=reduction), want, what=f"{name} eagerly",
                **tolerance(logits))
    traced = run_traced(lambda a, b: function(a, b, reduction=reduction), labels, logits)
    assert_same(traced, want, what=f"{name} traced", **tolerance(logits))


def test_huge_logits_exactly(backend):
    """+-1000 overflows exp in every float dtype; the losses stay exact."""
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 1000.0]], np.float32)
    one_hot = np.array([[0, 1, 0], [1, 0, 0]], np.float32)
    cases = {
        "binary_crossentropy_from_logits": (one_hot, [[1000, 1000, math.log(2)],
                                                      [1000, 1000, 1000]]),
        "softmax_cross_entropy_from_logits": (one_hot, [2000, 2000 + math.log(2)]),
        "sparse_softmax_cross_entropy_from_logits": (np.array([1, 0]),
                                                     [2000, 2000 + math.log(2)]),
    }
    for name, (labels, values) in cases.items():
        function = CASES[name][0]
        want = np.array(values, np.float32)
        assert_same(function(labels, logits, reduction="none"), want, rtol=1e-7, what=name)
        assert_same(run_traced(lambda a, b: function(a, b, reduction="none"), labels,
                               logits), want, rtol=1e-7, what=f"{name} traced")


def test_a_certain_prediction_costs_positive_zero(backend):
    logits = np.array([[1000.0, -1000.0]])
    for name, labels in (("softmax_cross_entropy_from_logits", np.array([[1.0, 0.0]])),
                         ("sparse_softmax_cross_entropy_from_logits", np.array([0]))):
        function = CASES[name][0]
        assert_same(run_traced(lambda a, b: function(a, b, reduction="none"), labels,
                               logits), np.array([0.0]), what=name)


def test_masked_logits_with_zero_labels_add_nothing(backend):
    logits = np.array([[2.0, -np.inf, 0.0]])
    labels = np.array([[1.0, 0.0, 0.0]])
    want = -log_softmax_reference(np.array([2.0, 0.0]))[:1]
    function = losses.softmax_cross_entropy_from_logits
    assert_same(run_traced(lambda a, b: function(a, b, reduction="none"), labels, logits),
                want, rtol=1e-15)
    assert_same(losses.sparse_softmax_cross_entropy_from_logits(np.array([0]), logits,
                                                                 reduction="none"),
                want, rtol=1e-15)
    grad = jitflow.grad(lambda x: function(labels, x))(logits)
    assert np.all(np.isfinite(grad)) and grad[0, 1] == 0


def test_out_of_range_class_labels_give_nan(backend):
    logits = np.zeros((3, 4))
    function = losses.sparse_softmax_cross_entropy_from_logits
    result = run_traced(lambda a, b: function(a, b, reduction="none"), np.array([4, -1, 3]),
                        logits)
    assert_same(result, np.array([math.nan, math.nan, math.log(4)]), rtol=1e-15)


def test_softmax_cross_entropy_over_another_axis():
    logits = np.random.default_rng(0).normal(size=(4, 3))
    labels = np.eye(4)[:, :3]
    want = -np.sum(labels * log_softmax_reference(logits, axis=0), axis=0)
    assert_same(losses.softmax_cross_entropy_from_logits(labels, logits, axis=0,
                                                         reduction="none"), want,
                rtol=1e-14)


# --- dtypes ------------------------------------------------------------------------------

def test_targets_take_the_predictions_dtype():
    logits = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    for name, function in ((name, case[0]) for name, case in CASES.items()):
        labels = np.array([0, 2]) if name.startswith("sparse") else np.ones((2, 3))
        assert function(labels, logits).dtype == np.float32, name
        traced = run_traced(lambda a, b: function(a, b), labels, logits)
        assert traced.dtype == np.float32, name
    predictions = np.array([1, 2, 3])
    assert_same(losses.mean_squared_error(np.array([1.5, 2.0, 2.0]), predictions),
                np.float64(1.25 / 3))


def test_lists_are_taken_as_arrays():
    assert_same(losses.mean_squared_error([1.0, 2.0], [1.5, 2.0]), np.float64(0.125))
    assert_same(losses.sparse_softmax_cross_entropy_from_logits([0], [[0.0, 0.0]]),
                np.float64(math.log(2)))


# --- derivatives -------------------------------------------------------------------------

def test_gradients():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3, 4))
    targets = rng.uniform(0, 1, size=(3, 4))
    probabilities = targets / targets.sum(axis=1, keepdims=True)
    classes = np.array([0, 3, 1])
    for reduction in REDUCTIONS:
        check_grads(lambda t, p: losses.mean_squared_error(t, p, reduction=reduction),
                    (targets, logits))
        check_grads(lambda z, x: losses.binary_crossentropy_from_logits(
            z, x, reduction=reduction), (targets, logits))
        check_grads(lambda q, x: losses.softmax_cross_entropy_from_logits(
            q, x, reduction=reduction), (probabilities, logits))
        check_grads(lambda x: losses.sparse_softmax_cross_entropy_from_logits(
            classes, x, reduction=reduction), (logits,))


def test_gradients_of_huge_logits_are_exact(backend):
    """sigmoid(x) - z and softmax(x) - labels, the exact derivatives, at +-1000."""
    logits = np.array([[1000.0, -1000.0, 0.0], [-1000.0, 1000.0, 1000.0]])
    one_hot = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    bce = jitflow.function(jitflow.grad(lambda x: losses.binary_crossentropy_from_logits(
        one_hot, x, reduction="sum")))
    assert_same(bce(logits), np.array([[1.0, -1.0, 0.5], [-1.0, 1.0, 1.0]]))
    softmax = jitflow.function(jitflow.grad(
        lambda x: losses.softmax_cross_entropy_from_logits(one_hot, x, reduction="sum")))
    assert_same(softmax(logits), np.array([[1.0, -1.0, 0.0], [-1.0, 0.5, 0.5]]),
                zero_sign=False)


# --- errors ------------------------------------------------------------------------------

def user_line_pattern():
    """The location at_user_line appends: this file, a line number and the code."""
    return rf"\n  at .*{os.path.basename(__file__)}:\d+: "


@pytest.mark.parametrize("name", sorted(CASES))
def test_mismatched_shapes_name_the_function_and_the_shapes(name):
    function = CASES[name][0]
    sparse = name.startswith("sparse")
    labels = np.zeros(4, int) if sparse else np.zeros(4)
    logits = np.zeros((4, 1)) if not sparse else np.zeros((3, 2))
    shapes = r"\(4,\).*\((4, 1|3, 2)\)"
    with pytest.raises(ValueError, match=rf"^{name}: .*{shapes}.*{user_line_pattern()}"):
        function(labels, logits)
    with pytest.raises(ValueError, match=rf"^{name}: .*{shapes}.*{user_line_pattern()}"):
        jitflow.function(lambda a, b: function(a, b))(labels, logits)


def test_other_errors():
    logits = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"^mean_squared_error: reduction 'average' is not "
                                         r"one of mean, sum, none" + user_line_pattern()):
        losses.mean_squared_error(logits, logits, reduction="average")
    with pytest.raises(TypeError, match=r"labels must be integer class indices, not "
                                        r"float64;.*" + user_line_pattern()):
        losses.sparse_softmax_cross_entropy_from_logits(np.zeros(2), logits)
    with pytest.raises(ValueError, match=r"axis 2 is not an axis of logits of shape "
                                         r"\(2, 3\)" + user_line_pattern()):
        losses.softmax_cross_entropy_from_logits(logits, logits, axis=2)
    with pytest.raises(ValueError, match=r"labels of shape \(\) do not fit logits of "
                                         r"shape \(\)"):
        losses.sparse_softmax_cross_entropy_from_logits(np.int64(0), np.float64(1.0))
