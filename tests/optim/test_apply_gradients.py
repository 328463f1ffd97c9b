"""Optimizer.apply_gradients, eagerly and compiled: the pairs it skips, the ones it
refuses (naming the optimizer, the Variable and the user's line), its step count, its
slots, and steps that raise, which change nothing."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same
from jitflow import optim

THIS_FILE = "test_apply_gradients.py"
OPTIMIZERS = {
    "sgd": lambda: optim.SGD(0.1),
    "sgd-momentum": lambda: optim.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: optim.Adam(0.1, amsgrad=True),
    "adamw": lambda: optim.AdamW(0.1),
    "rmsprop": lambda: optim.RMSprop(0.1, momentum=0.5, centered=True),
}


def run(apply, compiled):
    """`apply` as an eager call, or as the body of a @jitflow.function step."""
    return jitflow.function(apply)() if compiled else apply()


def snapshot(*variables):
    return [variable.numpy() for variable in variables]


def ids(variables):
    return [id(variable) for variable in variables]


def assert_unchanged(before, variables):
    assert len(before) == len(variables)
    for value, variable in zip(before, variables):
        assert_same(variable.value, value, what=variable.name)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_pairs_without_a_gradient_are_skipped(make, compiled, backend):
    updated = jitflow.Variable(np.ones(3), name="updated")
    frozen = jitflow.Variable(np.ones(2, np.float32), name="frozen")
    optimizer = make()
    for _ in range(3):
        run(lambda: optimizer.apply_gradients(
            zip([np.full(3, 0.5), None], [updated, frozen])), compiled)
    assert_same(frozen.value, np.ones(2, np.float32))
    assert np.all(updated.value < 1.0)
    assert_same(optimizer.iterations.value, np.int64(3))
    assert not any("frozen" in variable.name for variable in optimizer.variables())


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_iterations_count_steps_and_slots_are_made_once(compiled, backend):
    w = jitflow.Variable(np.ones(3, np.float32), name="w")
    b = jitflow.Variable(np.float32(0.0), name="b")
    optimizer = optim.Adam(0.01)
    assert_same(optimizer.iterations.value, np.int64(0))
    assert ids(optimizer.variables()) == [id(optimizer.iterations)]  # no slots yet

    def step():
        optimizer.apply_gradients([(np.ones(3, np.float32), w)])
        optimizer.apply_gradients([(np.ones(3, np.float32), w), (np.float32(2.0), b)])
    step = jitflow.function(step) if compiled else step
    for count in range(1, 6):
        step()
        assert_same(optimizer.iterations.value, np.int64(2 * count))
    names = [variable.name for variable in optimizer.variables()]
    assert names == ["Adam/iterations", "Adam/w/m", "Adam/w/v", "Adam/b/m", "Adam/b/v"]
    for slot in optimizer.variables()[1:]:
        assert not slot.trainable and slot.dtype == np.float32
    assert not optimizer.iterations.trainable
    if compiled:
        assert step.cache_info().traces == 1


def test_hyperparameters_given_as_numpy_scalars_keep_float32_updates():
    """A float64 NumPy scalar would promote a float32 update to float64."""
    w = jitflow.Variable(np.ones(2, np.float32), name="w")
    for optimizer in [optim.SGD(np.float64(0.1), momentum=np.float64(0.9)),
                      optim.Adam(np.float64(0.1), beta_1=np.float64(0.9),
                                 beta_2=np.float64(0.99), epsilon=np.float64(1e-7)),
                      optim.AdamW(np.float64(0.1), weight_decay=np.float64(0.1)),
                      optim.RMSprop(np.float64(0.1), rho=np.float64(0.9),
                                    momentum=np.float64(0.5), centered=True)]:
        optimizer.apply_gradients([(np.ones(2, np.float32), w)])
    assert w.dtype == np.float32


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_a_python_number_is_a_gradient_for_a_0d_variable(make, compiled, backend):
    """It steps as the same number in the Variable's dtype does."""
    by_number = jitflow.Variable(np.float32(1.0), name="by_number")
    by_array = jitflow.Variable(np.float32(1.0), name="by_array")
    optimizer = make()
    for gradient in [1.0, -2, 0.5]:
        run(lambda: optimizer.apply_gradients([(gradient, by_number),
                                               (np.float32(gradient), by_array)]),
            compiled)
    assert_same(by_number.value, by_array.value)
    assert by_number.value != np.float32(1.0)


W_SHAPE = (3,)
ERRORS = [  # (gradients and Variables, error, words)
    (lambda w, i: [(np.zeros(2), w)], ValueError,
     r"SGD.apply_gradients: the gradient of Variable 'w' has shape \(2,\), but the "
     r"Variable has shape \(3,\)"),
    (lambda w, i: [(np.zeros(3, np.float32), w)], TypeError,
     "SGD.apply_gradients: the gradient of Variable 'w' has dtype float32, but the "
     "Variable holds float64"),
    (lambda w, i: [(np.zeros(3), np.zeros(3))], TypeError,
     "SGD.apply_gradients: expected .gradient, jitflow.Variable. pairs, got a ndarray "
     "in place of a Variable"),
    (lambda w, i: [(np.zeros(3), w), (np.zeros(2, np.int64), i)], TypeError,
     "SGD.apply_gradients: Variable 'count' has dtype int64; optimizers update float "
     "and complex Variables only"),
    (lambda w, i: [(np.zeros(3), w), (np.ones(3), w)], ValueError,
     "SGD.apply_gradients: Variable 'w' appears twice"),
    (lambda w, i: [(None, w)], ValueError,
     r"SGD.apply_gradients: no gradient for any Variable \('w'\)"),
    (lambda w, i: [("a", w)], TypeError,
     "SGD.apply_gradients: the gradient of Variable 'w' is a str, not an array"),
]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("pairs, kind, words", ERRORS)
def test_a_wrong_pair_is_a_clear_error_at_the_users_line(pairs, kind, words, compiled,
                                                          backend):
    w = jitflow.Variable(np.ones(W_SHAPE), name="w")
    count = jitflow.Variable(np.zeros(2, np.int64), name="count")
    optimizer = optim.SGD(0.1, momentum=0.9)
    with pytest.raises(kind, match=words) as error:
        run(lambda: optimizer.apply_gradients(pairs(w, count)), compiled)
    assert THIS_FILE in str(error.value)
    assert_same(w.value, np.ones(W_SHAPE))
    assert ids(optimizer.variables()) == [id(optimizer.iterations)]
    assert_same(optimizer.iterations.value, np.int64(0))


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_a_step_that_raises_changes_nothing(make, compiled, backend):
    first = jitflow.Variable(np.ones(3), name="first")
    second = jitflow.Variable(np.ones(2), name="second")
    late = jitflow.Variable(np.ones(4), name="late")  # slots made by the failing step
    optimizer = make()
    step = (jitflow.function(optimizer.apply_gradients) if compiled
            else optimizer.apply_gradients)
    for _ in range(2):
        step([(np.full(3, 0.5), first), (np.full(2, -0.5), second)])
    kept = optimizer.variables()
    before = snapshot(first, second, late, *kept)
    with pytest.raises(ValueError, match="'second' has shape"):
        step([(np.full(3, 0.5), first), (np.full(4, 0.5), late),
              (np.full(3, -0.5), second)])
    assert ids(optimizer.variables()) == ids(kept)
    assert_unchanged(before, [first, second, late, *kept])
    step([(np.full(3, 0.5), first), (np.full(2, -0.5), second)])  # still works
    assert_same(optimizer.iterations.value, np.int64(3))


class FailingOnSecond(optim.SGD):
    """SGD whose update of the Variable named 'second' raises."""

    def update_step(self, gradient, variable, slots, rate):
        if variable.name == "second":
            raise ArithmeticError("no update for 'second'")
        return super().update_step(gradient, variable, slots, rate)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_every_value_is_computed_before_any_is_assigned(compiled, backend):
    first = jitflow.Variable(np.ones(3), name="first")
    second = jitflow.Variable(np.ones(2), name="second")
    optimizer = FailingOnSecond(0.1, momentum=0.9)
    run(lambda: optimizer.apply_gradients([(np.ones(3), first)]), compiled)
    kept = optimizer.variables()
    before = snapshot(first, second, *kept)
    with pytest.raises(ArithmeticError, match="no update for 'second'"):
        run(lambda: optimizer.apply_gradients([(np.ones(3), first), (np.ones(2), second)]),
            compiled)
    assert_unchanged(before, [first, second, *kept])


@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_a_compiled_step_that_raises_while_running_changes_nothing(make, backend):
    """The step's assignments, the optimizer's too, are written back only once the whole
    compiled call has succeeded."""
    w = jitflow.Variable(np.arange(3.0), name="w")
    optimizer = make()

    @jitflow.function
    def step(index):
        optimizer.apply_gradients([(jnp.ones(3), w)])
        return jnp.take(w, index)
    step(np.array([0, 2]))
    kept = optimizer.variables()
    before = snapshot(w, *kept)
    with pytest.raises(IndexError):
        step(np.array([0, 7]))
    assert_unchanged(before, [w, *kept])
    assert ids(optimizer.variables()) == ids(kept)


def test_a_schedule_that_gives_no_scalar_is_a_clear_error_that_changes_nothing():
    w = jitflow.Variable(np.ones(2), name="w")
    optimizer = optim.SGD(lambda step: np.full(2, 0.1))
    with pytest.raises(ValueError, match=r"SGD.apply_gradients: the learning rate schedule "
                                         r"gave a value of shape \(2,\), not a scalar"):
        optimizer.apply_gradients([(np.ones(2), w)])
    assert_unchanged([np.ones(2), np.int64(0)], [w, optimizer.iterations])


@pytest.mark.parametrize("momentum", [-0.1, 1.5])
def test_sgd_momentum_outside_0_to_1_is_refused(momentum):
    with pytest.raises(ValueError, match=r"SGD: momentum must be in \[0, 1\]"):
        optim.SGD(momentum=momentum)
