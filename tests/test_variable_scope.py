"""Variables inside @jitflow.function: read as graph inputs, assigned as graph outputs,
written back only once a call has fully succeeded; on both backends."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, given_per_backend
from strategies import FLOAT_DTYPES, arrays, shapes

THIS_FILE = "test_variable_scope.py"


@given_per_backend(st.sampled_from(FLOAT_DTYPES), shapes(max_dims=2), st.data())
def test_compiled_steps_update_variables_as_eager_steps_do(dtype, shape, data):
    start = data.draw(arrays(dtype, shape, min_value=-10, max_value=10))
    inputs = [data.draw(arrays(dtype, shape, min_value=-10, max_value=10))
              for _ in range(4)]

    def make_step():
        weights = jitflow.Variable(start, name="weights")
        steps = jitflow.Variable(np.int64(0), name="steps")

        def step(x):
            weights.assign(weights * 0.5 + x)
            steps.assign_add(1)
            return (weights * x).sum(), weights  # reads see the new value
        return step, weights, steps
    eager, eager_weights, eager_steps = make_step()
    compiled, weights, steps = make_step()
    compiled = jitflow.function(compiled)
    for x in inputs:
        expected_sum, expected_weights = eager(x)
        total, returned = compiled(x)
        assert_same(returned, expected_weights)
        assert_same(weights.value, eager_weights.value)
        assert_same(total, np.asarray(expected_sum), rtol=1e-6 if dtype == np.float32
                    else 1e-12, atol=1e-5)
    assert_same(steps.value, np.int64(len(inputs)))
    assert compiled.cache_info().traces == 1


def test_each_variable_passed_as_an_argument_has_its_own_trace(backend):
    """A trace may key state to the Variable it saw (an optimizer's slots)."""
    @jitflow.function
    def scale(v, factor):
        v.assign(v * factor)
        return v.sum()
    a = jitflow.Variable(np.ones(3, np.float32), name="a")
    b = jitflow.Variable(np.full(3, 2.0, np.float32), name="b")
    assert scale(a, 2.0) == 6.0
    assert scale(b, 3.0) == 18.0
    assert scale(a, 2.0) == 12.0
    assert_same(a.value, np.full(3, 4.0, np.float32))
    assert_same(b.value, np.full(3, 6.0, np.float32))
    assert scale.cache_info().traces == 2
    assert "argument 'v' changed from Variable 'a'" in scale.cache_info().reasons[0]


def test_an_optimizer_keeps_each_argument_variables_own_state(backend):
    import jitflow.optim
    optimizer = jitflow.optim.SGD(learning_rate=1.0, momentum=0.5)

    @jitflow.function
    def descend(v):
        optimizer.apply_gradients([(np.ones(2), v)])
    a, b = jitflow.Variable(np.zeros(2), name="a"), jitflow.Variable(np.zeros(2), name="b")
    descend(a)
    descend(a)
    descend(b)
    assert_same(a.value, np.full(2, -2.5))  # velocity -1, then -1.5
    assert_same(b.value, np.full(2, -1.0))  # b's velocity starts from zero


def test_a_callable_object_compiles():
    class Doubler:
        def __call__(self, x):
            return x * 2
    assert_same(jitflow.function(Doubler())(np.ones(2)), np.full(2, 2.0))


def test_one_variable_passed_twice_is_a_signature_of_its_own(backend):
    @jitflow.function
    def bump(first, second):
        first.assign_add(1.0)
        second.assign_add(second)  # reads the value first's assignment left
        return first.value
    a = jitflow.Variable(np.zeros(2), name="a")
    b = jitflow.Variable(np.zeros(2), name="b")
    bump(a, b)
    assert_same(b.value, np.zeros(2))
    bump(a, a)
    assert_same(a.value, np.full(2, 4.0))  # (1 + 1) + (1 + 1)
    assert bump.cache_info().traces == 2


def test_a_variable_reaching_the_function_two_ways_is_one_variable(backend):
    shared = jitflow.Variable(np.zeros(2), name="shared")

    @jitflow.function
    def add_both(v):
        v.assign_add(1.0)
        shared.assign_add(1.0)
    other = jitflow.Variable(np.zeros(2))
    add_both(other)
    add_both(shared)
    assert_same(other.value, np.ones(2))
    assert_same(shared.value, np.full(2, 3.0))


def test_a_step_that_raises_while_running_changes_no_variable(backend):
    table = jitflow.Variable(np.arange(4.0), name="table")
    count = jitflow.Variable(np.int64(0), name="count")

    @jitflow.function
    def step(index):
        count.assign_add(1)
        table.assign(table * 2.0)
        return jnp.take(table, index)
    assert step(np.array([1, 2])).tolist() == [2.0, 4.0]
    with pytest.raises(IndexError):
        step(np.array([1, 9]))
    assert_same(table.value, np.arange(4.0) * 2.0)
    assert_same(count.value, np.int64(1))


def test_a_step_that_raises_while_tracing_changes_no_variable(backend):
    v = jitflow.Variable(np.ones(2), name="v")

    @jitflow.function
    def step(x):
        v.assign(x * 3.0)
        raise ValueError("stop here")
    with pytest.raises(ValueError, match="stop here"):
        step(np.ones(2))
    assert_same(v.value, np.ones(2))


def test_a_wrong_assignment_names_the_variable_and_the_line(backend):
    v = jitflow.Variable(np.zeros(3, np.float32), name="w")

    @jitflow.function
    def step(x):
        v.assign(x)
    with pytest.raises(TypeError, match="'w'.assign: the value has dtype float64") as error:
        step(np.zeros(3))
    assert THIS_FILE in str(error.value)
    with pytest.raises(ValueError, match=r"shape \(2,\), but the Variable has shape"):
        step(np.zeros(2, np.float32))


def test_assigning_inside_a_transformation_is_a_clear_error(backend):
    v = jitflow.Variable(np.ones(2), name="v")

    def loss(x):
        v.assign(x)
        return (x * x).sum()

    @jitflow.function
    def step(x):
        return jitflow.grad(loss)(x)
    with pytest.raises(TypeError, match="'v': assigned inside a transformation"):
        step(np.ones(2))


def test_gradients_with_respect_to_variables_passed_to_grad(backend):
    w = jitflow.Variable(np.array([1.0, -2.0, 3.0]), name="w")
    b = jitflow.Variable(np.float64(0.5), name="b")
    x = np.array([0.5, 1.5, -1.0])

    def loss(w, b):
        return jnp.tanh(w * x + b).sum()

    def expected(w, b):
        slope = 1 - np.tanh(w * x + b) ** 2
        return slope * x, slope.sum()

    @jitflow.function
    def step():
        gw, gb = jitflow.grad(loss, argnums=(0, 1))(w, b)
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return gw, gb
    for _ in range(3):
        want_w, want_b = expected(w.numpy(), b.numpy())
        eager_w, eager_b = jitflow.grad(loss, argnums=(0, 1))(w, b)
        assert_same(eager_w, want_w, rtol=1e-14)
        gw, gb = step()
        assert_same(gw, want_w, rtol=1e-13)
        assert_same(gb, want_b, rtol=1e-13)
        assert_same(w.value, w.numpy())


def test_variables_made_while_tracing_persist(backend):
    layer = {}

    @jitflow.function
    def step(x):
        if "w" not in layer:
            layer["w"] = jitflow.Variable(np.ones(x.shape[-1]), name="lazy")
        layer["w"].assign(layer["w"] * x)
        return layer["w"].value
    step(np.full(2, 2.0))
    step(np.full(2, 3.0))
    assert_same(layer["w"].value, np.full(2, 6.0))
    assert step.cache_info().traces == 1


def test_a_variable_has_no_concrete_value_while_tracing(backend):
    v = jitflow.Variable(np.ones(2), name="v")

    @jitflow.function
    def step():
        return v.numpy()
    with pytest.raises(jitflow.ConcretizationError, match="Variable 'v'"):
        step()


def test_a_function_called_inside_a_trace_is_inlined_with_its_variables(backend):
    v = jitflow.Variable(np.zeros(2), name="v")

    @jitflow.function
    def inner():
        v.assign_add(1.0)

    @jitflow.function
    def outer(x):
        inner()
        inner()
        return v.value * x
    assert_same(outer(np.full(2, 3.0)), np.full(2, 6.0))
    assert_same(v.value, np.full(2, 2.0))
    assert inner.cache_info().traces == 0


def test_variables_as_arguments_of_vmap_and_custom_vjp(backend):
    rows = jitflow.Variable(np.arange(6.0).reshape(3, 2), name="rows")

    @jitflow.custom_vjp
    def double(x):
        return 2.0 * x
    double.defvjp(lambda x: (2.0 * x, None), lambda _, ct: (2.0 * ct,))

    @jitflow.function
    def step():
        return jitflow.vmap(lambda row: row.sum())(rows), double(rows)
    sums, doubled = step()
    assert_same(sums, np.array([1.0, 5.0, 9.0]))
    assert_same(doubled, 2.0 * rows.numpy())
    eager_sums = jitflow.vmap(lambda row: row.sum())(rows)
    assert_same(eager_sums, sums)
