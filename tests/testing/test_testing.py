"""jitflow.testing: check_grads catches wrong derivatives and names the failing element;
the strategies respect their bounds."""
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given

import jitflow
from jitflow.testing import GradientCheckError, check_grads
from jitflow.testing.strategies import arrays, broadcastable_arrays


@jitflow.custom_jvp
def wrong_sin(x):
    return np.sin(x)


@wrong_sin.defjvp
def _wrong_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return wrong_sin(x), t * np.cos(x) * 1.01  # one percent off


def test_check_grads_passes_correct_derivatives():
    check_grads(lambda x, y: np.sum(np.sin(x) * y), (np.arange(3.0), np.ones(3)), order=2)


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads_reports_a_wrong_derivative(modes):
    with pytest.raises(GradientCheckError, match=r"(?s)disagrees .* element .*Input"):
        check_grads(wrong_sin, (np.array([0.1, 0.2, 0.3]),), order=1, modes=modes)


def test_check_grads_catches_a_wrong_second_derivative():
    @jitflow.custom_jvp
    def square(x):
        return x * x

    @square.defjvp
    def _rule(primals, tangents):  # right first derivative, wrong second (2 x -> 2 x0)
        (x,), (t,) = primals, tangents
        return square(x), t * 2 * jitflow.stop_gradient(x)
    check_grads(square, (np.array([1.0, 2.0]),), order=1)
    with pytest.raises(GradientCheckError):
        check_grads(square, (np.array([1.0, 2.0]),), order=2)


@given(arrays(min_value=-2, max_value=3, avoid=[0.0, 1.0], margin=0.25))
def test_arrays_respect_bounds_and_avoided_points(x):
    assert x.dtype == np.float64
    assert np.all((x >= -2) & (x <= 3))
    assert np.all(np.abs(x) >= 0.25) and np.all(np.abs(x - 1) >= 0.25)


@given(broadcastable_arrays(3, dtype=np.float32, min_value=0.5, max_value=2))
def test_broadcastable_arrays_broadcast(xs):
    np.broadcast_shapes(*(x.shape for x in xs))
    assert all(x.dtype == np.float32 for x in xs)


@given(arrays(min_value=0.1, max_value=10, max_side=3))
def test_strategies_and_check_grads_together(x):
    check_grads(lambda x: np.log(x) * np.sqrt(x), (x,), order=2)


def test_jitflow_testing_is_an_attribute_of_jitflow_without_hypothesis():
    """`import jitflow` alone offers jitflow.testing.check_grads, and does not import
    hypothesis (only jitflow.testing.strategies needs it)."""
    program = ("import sys, jitflow; "
               "print(jitflow.testing.check_grads.__name__, 'hypothesis' in sys.modules)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         cwd=root, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "check_grads False\n"
