"""Every optimizer and option, compiled and eager, against the formulas written out in
NumPy here: twenty steps of a least-squares fit that jitflow.grad differentiates, and
twenty steps of drawn gradients.

The references compute in float64. A float64 Variable must match them to rounding; a
float32 one must keep its dtype (a promotion to float64 would make assign raise) and match
them to float32's precision: Adam's 1 - beta_2 ** t, for one, loses five digits to
cancellation in float32, as it does in Keras.
"""
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, given_per_backend
from jitflow import optim
from jitflow.optim import schedules
from strategies import FLOAT_DTYPES

STEPS = 20


# --- the formulas, in NumPy -----------------------------------------------------------
# Each reference updates one Variable: step(w, g, lr, t, state) -> new w, with t = 1 on
# the first step and `state` a dict of the Variable's slots, empty at first.

def sgd_reference(momentum=0.0, nesterov=False):
    def step(w, g, lr, t, state):
        if not momentum:
            return w - lr * g
        state["velocity"] = momentum * state.get("velocity", 0.0) - lr * g
        if nesterov:
            return w + momentum * state["velocity"] - lr * g
        return w + state["velocity"]
    return step


def adam_reference(beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                   weight_decay=0.0):
    def step(w, g, lr, t, state):
        if weight_decay:
            w = w - w * weight_decay * lr
        m, v = state.get("m", 0.0), state.get("v", 0.0)
        m = state["m"] = m + (g - m) * (1 - beta_1)
        v = state["v"] = v + (g * g - v) * (1 - beta_2)
        if amsgrad:
            v = state["vhat"] = np.maximum(state.get("vhat", 0.0), v)
        alpha = lr * np.sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        return w - alpha * m / (np.sqrt(v) + epsilon)
    return step


def rmsprop_reference(rho=0.9, momentum=0.0, epsilon=1e-7, centered=False):
    def step(w, g, lr, t, state):
        velocity = rho * state.get("velocity", 0.0) + (1 - rho) * g ** 2
        state["velocity"] = velocity
        denominator = velocity
        if centered:
            average = state["average"] = rho * state.get("average", 0.0) + (1 - rho) * g
            denominator = velocity - average ** 2
        increment = lr * g / np.sqrt(denominator + epsilon)
        if not momentum:
            return w - increment
        state["moment"] = momentum * state.get("moment", 0.0) + increment
        return w - state["moment"]
    return step


def constant(lr):
    return lambda step: lr


def exponential_staircase(lr):
    return lambda step: lr * 0.5 ** np.floor(step / 6)


def cosine(lr):
    return lambda step: lr * (0.9 * 0.5 * (1 + np.cos(np.pi * min(step, 15) / 15)) + 0.1)


def piecewise(lr):
    return lambda step: lr if step <= 5 else (lr / 2 if step <= 12 else lr / 10)


def inverse_time(lr):
    return lambda step: lr / (1 + 0.5 * step)


# name: (the optimizer for a base learning rate, its reference, the rate at a step)
CASES = {
    "sgd": (lambda lr: optim.SGD(lr), sgd_reference(), constant),
    "sgd-momentum": (lambda lr: optim.SGD(lr, momentum=0.9), sgd_reference(0.9),
                     constant),
    "sgd-nesterov": (lambda lr: optim.SGD(lr, momentum=0.8, nesterov=True),
                     sgd_reference(0.8, nesterov=True), constant),
    "sgd-exponential-decay": (
        lambda lr: optim.SGD(schedules.ExponentialDecay(lr, 6, 0.5, staircase=True),
                             momentum=0.5),
        sgd_reference(0.5), exponential_staircase),
    "adam": (lambda lr: optim.Adam(lr), adam_reference(), constant),
    "adam-amsgrad": (lambda lr: optim.Adam(lr, beta_1=0.8, beta_2=0.99, amsgrad=True),
                     adam_reference(0.8, 0.99, amsgrad=True), constant),
    "adam-cosine-decay": (lambda lr: optim.Adam(schedules.CosineDecay(lr, 15, alpha=0.1)),
                          adam_reference(), cosine),
    "adamw": (lambda lr: optim.AdamW(lr, weight_decay=0.1),
              adam_reference(weight_decay=0.1), constant),
    "adamw-amsgrad": (lambda lr: optim.AdamW(lr, amsgrad=True, epsilon=1e-3),
                      adam_reference(epsilon=1e-3, amsgrad=True, weight_decay=0.004),
                      constant),
    "rmsprop": (lambda lr: optim.RMSprop(lr), rmsprop_reference(), constant),
    "rmsprop-centered": (lambda lr: optim.RMSprop(lr, rho=0.8, centered=True),
                         rmsprop_reference(0.8, centered=True), constant),
    "rmsprop-momentum": (lambda lr: optim.RMSprop(lr, momentum=0.9),
                         rmsprop_reference(momentum=0.9), constant),
    "rmsprop-centered-momentum-piecewise": (
        lambda lr: optim.RMSprop(schedules.PiecewiseConstant([5, 12],
                                                             [lr, lr / 2, lr / 10]),
                                 momentum=0.5, centered=True),
        rmsprop_reference(momentum=0.5, centered=True), piecewise),
    "adam-lambda-schedule": (lambda lr: optim.Adam(lambda step: lr / (1 + 0.5 * step)),
                             adam_reference(), inverse_time),
}


def reference_run(case, lr, start, gradient_of):
    """The references' values after each step: a list of STEPS lists of arrays (one per
    Variable). gradient_of(values, t) gives the gradients at the values before step t."""
    _, reference, rate = CASES[case]
    values = [np.asarray(v, np.float64) for v in start]
    states = [{} for _ in values]
    history = []
    for t in range(1, STEPS + 1):
        gradients = gradient_of(values, t)
        values = [reference(w, g, rate(lr)(t - 1), t, state)
                  for w, g, state in zip(values, gradients, states)]
        history.append(values)
    return history


def tolerance(dtype, lr):
    """How close a Variable must come to the float64 reference after up to STEPS steps
    of size about lr: to rounding in float64. In float32 Adam's step size is 1e-5 off
    (1 - beta_2 ** t cancels, as in Keras) and the steps add up: at most 6e-5 * lr was
    seen; allowed are 1e-5 relative plus 2e-4 * lr."""
    if dtype == np.float64:
        return dict(rtol=1e-12, atol=1e-11)
    return dict(rtol=1e-5, atol=2e-4 * lr)


def same_as_eager(backend, dtype, lr):
    """How close compiled must come to eager: the interpreter runs NumPy's own functions
    on the same operations, exactly; native code computes pow (beta ** t, schedules)
    itself, within a few ulp, which later steps carry on."""
    return {} if backend == "interpreter" else tolerance(dtype, lr)


def assert_matches(actual, expected, dtype, lr, what):
    """Close to the reference; the sign of a zero may differ, the reference computing in
    another order."""
    assert_same(actual, expected.astype(dtype), **tolerance(dtype, lr), zero_sign=False,
                what=what)


# --- a least-squares fit, differentiated by jitflow.grad ------------------------------
RNG = np.random.default_rng(7)
X = RNG.standard_normal((8, 3))
Y = X @ np.array([1.5, -2.0, 0.5]) + 0.3 + 0.1 * RNG.standard_normal(8)
START_W, START_B = np.array([0.2, 0.1, -0.3]), np.float64(0.0)


def least_squares_gradients(values, t):
    w, b = values
    residual = X @ w + b - Y
    return [2 * X.T @ residual / len(Y), 2 * residual.sum() / len(Y)]


def make_training_step(case, dtype, lr):
    """A train step closing over its Variables and optimizer, and those Variables."""
    w = jitflow.Variable(START_W.astype(dtype), name="w")
    b = jitflow.Variable(START_B.astype(dtype), name="b")
    x, y = X.astype(dtype), Y.astype(dtype)
    optimizer = CASES[case][0](lr)

    def loss(w, b):
        return jnp.mean((x @ w + b - y) ** 2)

    def train_step():
        gradients = jitflow.grad(loss, argnums=(0, 1))(w, b)
        optimizer.apply_gradients(zip(gradients, [w, b]))
    return train_step, (w, b), optimizer


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("case", CASES)
def test_a_compiled_training_step_follows_the_formulas(case, dtype, backend):
    lr = 0.05
    eager_step, eager_variables, _ = make_training_step(case, dtype, lr)
    compiled_step, variables, optimizer = make_training_step(case, dtype, lr)
    compiled_step = jitflow.function(compiled_step)
    history = reference_run(case, lr, [START_W, START_B], least_squares_gradients)
    for t, expected in enumerate(history, 1):
        eager_step()
        compiled_step()
        for variable, eager, want in zip(variables, eager_variables, expected):
            what = f"{variable.name} after step {t}"
            assert_matches(variable.value, want, dtype, lr, what)
            assert_matches(eager.value, want, dtype, lr, f"eagerly, {what}")
            assert_same(variable.value, eager.value, **same_as_eager(backend, dtype, lr),
                        what=what)
    assert_same(optimizer.iterations.value, np.int64(STEPS))
    assert compiled_step.cache_info().traces == 1


# --- drawn gradients ------------------------------------------------------------------
SHAPE = (2, 3)


def make_gradient_step(case, start, lr):
    """A step applying the gradient it is given, its Variable and its optimizer."""
    w = jitflow.Variable(start, name="w")
    optimizer = CASES[case][0](lr)

    def apply(gradient):
        optimizer.apply_gradients([(gradient, w)])
    return apply, w, optimizer


@given_per_backend(case=st.sampled_from(list(CASES)), dtype=st.sampled_from(FLOAT_DTYPES),
                   lr=st.floats(1e-3, 1.0), data=st.data())
def test_steps_with_drawn_gradients_follow_the_formulas(case, dtype, lr, data, backend):
    values = st.floats(-10, 10, width=np.dtype(dtype).itemsize * 8)
    start = data.draw(hnp.arrays(dtype, SHAPE, elements=values), label="start")
    gradients = data.draw(hnp.arrays(dtype, (STEPS,) + SHAPE, elements=values),
                          label="gradients")
    eager_apply, eager_w, _ = make_gradient_step(case, start, lr)
    apply, w, _ = make_gradient_step(case, start, lr)
    apply = jitflow.function(apply)
    history = reference_run(case, lr, [start],
                            lambda values, t: [gradients[t - 1].astype(np.float64)])
    for t, (expected,) in enumerate(history, 1):
        eager_apply(gradients[t - 1])
        apply(gradients[t - 1])
        assert_matches(eager_w.value, expected, dtype, lr, f"eagerly, step {t}")
        assert_matches(w.value, expected, dtype, lr, f"compiled, step {t}")
        assert_same(w.value, eager_w.value, **same_as_eager(backend, dtype, lr),
                    what=f"step {t}")
