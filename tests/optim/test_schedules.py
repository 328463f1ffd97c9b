"""Learning-rate schedules against their formulas in NumPy, on step counts given eagerly
and traced; and the rate an optimizer takes from a schedule at each step."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitflow
from fidelity import assert_same, given_per_backend
from jitflow import optim
from jitflow.optim import schedules

STEPS = np.arange(0, 40, dtype=np.int64)
RATES = st.floats(1e-4, 10.0)


def exponential_decay(initial, decay_steps, decay_rate, staircase):
    def rate(step):
        exponent = step / decay_steps
        return initial * decay_rate ** (math.floor(exponent) if staircase else exponent)
    return rate


def piecewise_constant(boundaries, values):
    def rate(step):
        for boundary, value in zip(boundaries, values):
            if step <= boundary:
                return value
        return values[-1]
    return rate


def cosine_decay(initial, decay_steps, alpha):
    def rate(step):
        fraction = min(step, decay_steps) / decay_steps
        return initial * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * fraction)) + alpha)
    return rate


@st.composite
def schedule_and_formula(draw):
    """A schedule and its formula, with drawn parameters."""
    kind = draw(st.sampled_from(["exponential", "piecewise", "cosine"]))
    if kind == "exponential":
        arguments = (draw(RATES), draw(st.integers(1, 15)), draw(st.floats(0.05, 1.5)),
                     draw(st.booleans()))
        return schedules.ExponentialDecay(*arguments), exponential_decay(*arguments)
    if kind == "piecewise":
        boundaries = sorted(draw(st.lists(st.integers(-1, 45), max_size=4, unique=True)))
        values = draw(st.lists(RATES, min_size=len(boundaries) + 1,
                               max_size=len(boundaries) + 1))
        return (schedules.PiecewiseConstant(boundaries, values),
                piecewise_constant(boundaries, values))
    arguments = (draw(RATES), draw(st.integers(1, 50)), draw(st.floats(0.0, 1.0)))
    return schedules.CosineDecay(*arguments), cosine_decay(*arguments)


def assert_follows(rate, formula, step):
    """To rounding, relative to the largest rate: near the end of a cosine decay with
    alpha 0, 1 + cos(...) cancels."""
    scale = max(abs(formula(int(other))) for other in STEPS)
    assert_same(rate, np.float64(formula(int(step))), rtol=1e-13, atol=1e-13 * scale,
                what=f"step {step}")


@given(schedule_and_formula())
def test_schedules_follow_their_formulas_eagerly(pair):
    schedule, formula = pair
    for step in STEPS:
        assert_follows(schedule(step), formula, step)


@given_per_backend(pair=schedule_and_formula())
def test_schedules_follow_their_formulas_traced(pair, backend):
    """One trace serves every step: the step count is a traced int64 value."""
    schedule, formula = pair
    traced = jitflow.function(lambda step: schedule(step))
    for step in STEPS[::7]:
        assert_follows(traced(step), formula, step)
    assert traced.cache_info().traces == 1


def test_piecewise_constant_keeps_a_value_up_to_and_at_its_boundary():
    schedule = schedules.PiecewiseConstant([3, 5], [1.0, 0.5, 0.1])
    rates = [float(schedule(np.int64(step))) for step in range(8)]
    assert rates == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.1, 0.1]


def test_piecewise_constant_needs_one_value_more_than_boundaries():
    with pytest.raises(ValueError, match="2 boundaries need 3 values, got 2"):
        schedules.PiecewiseConstant([3, 5], [1.0, 0.5])


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_an_optimizer_takes_the_schedules_rate_at_its_step_count(compiled, backend):
    """With a gradient of 1, plain SGD moves a Variable by exactly the rate, which is the
    schedule's at the step count before the step (0 on the first)."""
    w = jitflow.Variable(np.float64(0.0), name="w")
    optimizer = optim.SGD(schedules.PiecewiseConstant([1, 3], [0.5, 0.25, 0.125]))

    def step():
        optimizer.apply_gradients([(np.float64(1.0), w)])
    step = jitflow.function(step) if compiled else step
    moves = []
    for _ in range(6):
        before = w.numpy()
        step()
        moves.append(float(before - w.value))
    assert moves == [0.5, 0.5, 0.25, 0.25, 0.125, 0.125]


def test_a_schedules_rate_is_cast_to_each_variables_dtype(backend):
    w32 = jitflow.Variable(np.ones(2, np.float32), name="w32")
    w64 = jitflow.Variable(np.ones(2), name="w64")
    optimizer = optim.SGD(schedules.ExponentialDecay(0.1, 2, 0.5))

    @jitflow.function
    def step():
        optimizer.apply_gradients([(np.ones(2, np.float32), w32), (np.ones(2), w64)])
    step()
    step()
    rate = 0.1 * 0.5 ** 0.5  # at step 1
    expected32 = np.float32(1) - np.float32(0.1) - np.float32(rate)
    assert_same(w32.value, np.full(2, expected32), ulps=8)
    assert_same(w64.value, np.full(2, 1 - 0.1 - rate), ulps=8)
