"""NumPy arrays a compiled function closes over: read at every call (their contents
then, not at tracing), their flags left as they are, written back after a call that
succeeded when the function writes into them."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp


class Model:
    """Holds its arrays as attributes, as users' own models do."""

    def __init__(self):
        self.weights = np.arange(6.0).reshape(2, 3)
        self.total = np.zeros(3)


def test_closed_over_arrays_keep_their_flags(backend):
    weights = np.ones(3)
    jitflow.function(lambda x: x * weights)(np.ones(3))
    assert weights.flags.writeable
    weights[0] = 2.0  # the user's own in-place update still works


def test_every_call_sees_the_current_contents(backend):
    model = Model()
    step = jitflow.function(lambda x: x @ model.weights)
    x = np.ones((1, 2))
    for k in range(3):
        model.weights[0, 0] = k  # changed between calls, in place
        np.testing.assert_array_equal(step(x), x @ model.weights)
    assert step.cache_info().traces == 1


def test_large_weights_are_passed_not_copied(backend):
    weights = np.random.default_rng(0).standard_normal((200, 300))
    step = jitflow.function(lambda x: jnp.tanh(x @ weights))
    step(np.ones((2, 200)))
    (executable,) = step._cache.values()
    assert executable.state.closed[0] is weights
    weights *= 2
    np.testing.assert_allclose(step(np.ones((2, 200))), np.tanh(np.ones((2, 200)) @ weights),
                               rtol=1e-12)


def test_arrays_made_inside_the_function_stay_constants(backend):
    scale = np.arange(3.0)
    step = jitflow.function(lambda x: x * np.arange(3.0) + x * scale)
    np.testing.assert_array_equal(step(np.ones(3)), 2 * np.arange(3.0))
    (executable,) = step._cache.values()
    assert len(executable.graph.inputs) == 2  # x, then scale; np.arange(3.0) is a Lit
    assert [a is scale for a in executable.state.closed] == [True]


def test_writes_into_closed_over_arrays_reach_them_after_the_call(backend):
    model = Model()

    @jitflow.function
    def accumulate(x):
        model.total += x  # ndarray += traced value: model.total holds the result
        return model.total.sum() + np.sum(model.total)  # so NumPy's reads see it

    for call in range(1, 4):
        assert accumulate(np.ones(3)) == 6 * call
        np.testing.assert_array_equal(model.total, [call] * 3)
        assert isinstance(model.total, np.ndarray)


TOTAL = np.zeros(2)


def test_a_global_written_in_place_is_read_as_written_and_put_back(backend):
    @jitflow.function
    def accumulate(x):
        global TOTAL
        TOTAL += x
        return TOTAL * 1 + TOTAL.max()

    before = TOTAL
    TOTAL[:] = 0.0  # (each backend's run starts afresh)
    np.testing.assert_array_equal(accumulate(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(accumulate(np.ones(2)), [4.0, 4.0])
    assert TOTAL is before and TOTAL.tolist() == [2.0, 2.0]


def test_an_array_made_by_the_function_and_written_in_place_is_read_as_written(backend):
    def f(x):
        acc = np.zeros(3)
        acc += x
        acc *= 2
        return acc.sum(), acc
    np.testing.assert_array_equal(jitflow.function(f)(np.arange(3.0))[1], [0, 2, 4])
    assert jitflow.function(f)(np.arange(3.0))[0] == 6.0


def test_an_explicit_out_array_for_a_traced_value_raises(backend):
    total = np.zeros(2)

    @jitflow.function
    def f(x):
        np.add(total, x, out=total)  # rebinds no name: NumPy's reads would be stale
        return total.sum()
    with pytest.raises(TypeError, match="total|array"):
        f(np.ones(2))
    np.testing.assert_array_equal(total, np.zeros(2))


def test_a_raising_call_leaves_closed_over_arrays_unwritten(backend):
    total = np.zeros(2)

    @jitflow.function
    def f(x, i):
        nonlocal total
        total += x
        return x[i]
    with pytest.raises(IndexError):
        f(np.ones(2), np.array(3))
    np.testing.assert_array_equal(total, np.zeros(2))
    f(np.ones(2), np.array(1))
    np.testing.assert_array_equal(total, np.ones(2))


def test_closed_over_array_written_and_passed_as_argument_raises(backend):
    total = np.zeros(2)

    @jitflow.function
    def f(x):
        nonlocal total
        total += x
        return x * 2
    with pytest.raises(ValueError, match="shares memory"):
        f(total)
    np.testing.assert_array_equal(total, np.zeros(2))


def test_closed_over_arrays_read_in_a_branch_are_current(backend):
    offset = np.zeros(2)
    f = jitflow.function(lambda x: jitflow.cond(x.sum() > 0, lambda x: x + offset,
                                                lambda x: x - offset, x))
    offset[:] = 5.0
    np.testing.assert_array_equal(f(np.ones(2)), [6.0, 6.0])
    offset[:] = 1.0
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])


def test_views_of_closed_over_arrays_are_read_at_every_call(backend):
    weights = np.arange(6.0).reshape(2, 3)
    step = jitflow.function(lambda x: x @ weights.T)  # weights.T: a view made by NumPy
    x = np.ones((1, 3))
    step(x)
    weights[1] = 0.0
    np.testing.assert_array_equal(step(x), x @ weights.T)


def test_read_only_arrays_are_constants(backend):
    table = np.arange(4.0)
    table.flags.writeable = False
    step = jitflow.function(lambda x: x + table)
    step(np.ones(4))
    (executable,) = step._cache.values()
    assert executable.state is None
    assert not table.flags.writeable


scale = np.ones(2)


def test_a_global_rebound_to_another_array_is_seen(backend):
    global scale
    step = jitflow.function(lambda x: x * scale)
    np.testing.assert_array_equal(step(np.ones(2)), [1.0, 1.0])
    scale = np.full(2, 3.0)
    np.testing.assert_array_equal(step(np.ones(2)), [3.0, 3.0])
    assert step.cache_info().traces == 2
    assert "'scale' names another array" in step.cache_info().reasons[0]
    scale = np.ones(2)


def test_a_closure_cell_rebound_to_another_array_is_seen(backend):
    offset = np.zeros(2)

    @jitflow.function
    def shifted(x):
        return x + offset
    np.testing.assert_array_equal(shifted(np.ones(2)), [1.0, 1.0])
    offset = np.full(2, 2.0)
    np.testing.assert_array_equal(shifted(np.ones(2)), [3.0, 3.0])


def test_a_closed_over_mask_changed_after_tracing_is_traced_again(backend):
    mask = np.array([True, False, True])
    step = jitflow.function(lambda x: x[mask] * 2)
    np.testing.assert_array_equal(step(np.arange(3.0)), [0.0, 4.0])
    mask[1] = True  # NumPy now takes three elements: the function is traced again
    np.testing.assert_array_equal(step(np.arange(3.0)), [0.0, 2.0, 4.0])
    mask[1] = False
    np.testing.assert_array_equal(step(np.arange(3.0)), [0.0, 4.0])


class Holder:
    pass


def test_a_mask_reached_through_another_function_changed_after_tracing_raises(backend):
    # named by no code of the function, so not copied: the trace's guard raises
    holder = Holder()
    holder.mask = np.array([True, False, True])
    mask = lambda: holder.mask  # noqa: E731
    step = jitflow.function(lambda x: x[mask()] * 2)
    np.testing.assert_array_equal(step(np.arange(3.0)), [0.0, 4.0])
    holder.mask[1] = True
    with pytest.raises(ValueError, match="changed since the function was traced"):
        step(np.arange(3.0))


def test_a_mask_reached_as_an_attribute_changed_after_tracing_is_traced_again(backend):
    holder = Holder()
    holder.mask = np.array([True, False, True])
    step = jitflow.function(lambda x: x[holder.mask] * 2)
    np.testing.assert_array_equal(step(np.arange(3.0)), [0.0, 4.0])
    holder.mask[1] = True
    np.testing.assert_array_equal(step(np.arange(3.0)), [0.0, 2.0, 4.0])
    assert "array 'holder.mask' changed" in step.cache_info().reasons[0]


def test_masks_made_inside_the_function_are_constants(backend):
    step = jitflow.function(lambda x: x[np.array([True, False, True])])
    step(np.arange(3.0))
    (executable,) = step._cache.values()
    assert executable.state is None


def test_arrays_read_through_numpy_alone_are_traced_again_when_they_change(backend):
    # NumPy computes weights.sum() once while tracing: the trace holds its value, so a
    # change of the array must make a new trace, not keep the old sum
    weights = np.array([1.0, 0.0, 2.0])
    step = jitflow.function(lambda x: x * weights.sum() + weights.max())
    x = np.ones(3)
    np.testing.assert_array_equal(step(x), x * weights.sum() + weights.max())
    weights[0] = 5.0
    np.testing.assert_array_equal(step(x), x * weights.sum() + weights.max())
    assert step.cache_info().traces == 2
    assert "array 'weights' changed" in step.cache_info().reasons[0]
    weights[1] = -0.0  # the same number, other bits: NumPy's result may differ in sign
    step(x)
    assert step.cache_info().traces == 3


def test_arrays_read_as_inputs_are_not_traced_again(backend):
    weights = np.ones(3)
    step = jitflow.function(lambda x: x * weights)
    for value in (2.0, 3.0):
        weights[:] = value
        np.testing.assert_array_equal(step(np.ones(3)), weights)
    assert step.cache_info().traces == 1


@pytest.mark.parametrize("wrap", [lambda y: (y,), lambda y: [y], lambda y: {"y": y}],
                         ids=["tuple", "list", "dict"])
def test_repeated_calls_keep_a_single_result_in_its_container(backend, wrap):
    # calls that read closed-over arrays go through the stateful direct entry, which
    # hands back one output bare like the plain one
    holder = Holder()
    holder.mask = np.array([True, False, True])
    weights = np.full(3, 2.0)
    step = jitflow.function(lambda x: wrap(x[holder.mask] * weights[:2]))
    for _ in range(3):
        result = step(np.arange(3.0))
        (value,) = result.values() if isinstance(result, dict) else result
        np.testing.assert_array_equal(value, [0.0, 4.0])
        assert type(result) is type(wrap(None))


class Network:
    """A user's model: arrays as attributes, in a dict and in a list of layers."""

    def __init__(self):
        self.scale = np.array([1.0, 2.0, 3.0])
        self.params = {"bias": np.zeros(3)}
        self.layers = [Holder()]
        self.layers[0].weights = np.ones(3)

    @jitflow.function
    def normalized(self, x):
        return x / self.scale.sum() + self.params["bias"]

    @jitflow.function
    def through_layers(self, x):
        return x + self.layers[0].weights.max()

    @jitflow.function
    def calls_a_method(self, x):
        return self.shift(x)

    def shift(self, x):
        return x + self.scale.min()


def test_arrays_reached_from_self_through_numpy_alone_are_traced_again(backend):
    net, x = Network(), np.ones(3)
    np.testing.assert_array_equal(net.normalized(x), x / 6.0)
    net.scale[0] = 4.0  # in place: read by NumPy alone while tracing
    np.testing.assert_array_equal(net.normalized(x), x / 9.0)
    assert "array 'self.scale' changed" in net.normalized.cache_info().reasons[0]
    net.params["bias"] = np.full(3, 0.5)  # another array under the same key
    np.testing.assert_array_equal(net.normalized(x), x / 9.0 + 0.5)
    assert "'self.params['bias']' names another array" in \
        net.normalized.cache_info().reasons[1]


def test_arrays_in_a_list_of_objects_are_watched(backend):
    net, x = Network(), np.zeros(3)
    np.testing.assert_array_equal(net.through_layers(x), np.ones(3))
    net.layers[0].weights[1] = 7.0
    np.testing.assert_array_equal(net.through_layers(x), np.full(3, 7.0))
    net.layers[0].weights = np.full(3, 2.0)
    np.testing.assert_array_equal(net.through_layers(x), np.full(3, 2.0))


def test_arrays_read_by_the_methods_a_method_calls_are_watched(backend):
    net, x = Network(), np.zeros(3)
    np.testing.assert_array_equal(net.calls_a_method(x), np.ones(3))
    net.scale[:] = 5.0
    np.testing.assert_array_equal(net.calls_a_method(x), np.full(3, 5.0))


def test_a_closed_over_object_attribute_rebound_is_seen(backend):
    model = Model()
    step = jitflow.function(lambda x: x @ model.weights)
    x = np.ones((1, 2))
    step(x)
    model.weights = np.ones((2, 3))  # a new array, not an in-place update
    np.testing.assert_array_equal(step(x), x @ model.weights)
    assert "'model.weights' names another array" in step.cache_info().reasons[0]


def test_arrays_the_code_does_not_name_are_not_copied(backend):
    model = Model()
    model.dataset = np.zeros(10**6)  # not read by the step: neither copied nor compared
    step = jitflow.function(lambda x: x @ model.weights)
    step(np.ones((1, 2)))
    assert [found[0] for found in step._named.found] == ["model.weights"]


def test_an_empty_array_read_through_numpy_alone_is_compared_without_error(backend):
    empty = np.zeros((0, 0), np.float32)
    step = jitflow.function(lambda x: x + empty.sum())
    for _ in range(2):
        np.testing.assert_array_equal(step(np.ones(2, np.float32)), np.ones(2))
    assert step.cache_info().traces == 1


def test_an_input_array_also_read_through_numpy_is_traced_again_when_it_changes(backend):
    # x * weights reads weights at every call; weights.sum() was NumPy's, once
    weights = np.array([1.0, 2.0, 3.0])
    step = jitflow.function(lambda x: x * weights + weights.sum())
    x = np.ones(3)
    for value in (5.0, 7.0):
        np.testing.assert_array_equal(step(x), x * weights + weights.sum())
        weights[0] = value
    np.testing.assert_array_equal(step(x), x * weights + weights.sum())
    assert step.cache_info().traces == 3
    assert "NumPy read it while tracing" in step.cache_info().reasons[0]


@pytest.mark.parametrize("read", [
    lambda w: float(w[0]), lambda w: np.linalg.norm(w), lambda w: w.copy()[::-1],
    lambda w: w.max(), lambda w: np.sum(w.T), lambda w: w.item(1), lambda w: w.tolist()[2],
    lambda w: sum(w), lambda w: w.astype(np.float32)],
    ids=["item", "norm", "copy", "max", "sum-of-view", "item-method", "tolist", "iterate",
         "astype"])
def test_every_kind_of_numpy_read_of_an_input_array_is_seen(backend, read):
    weights = np.array([1.0, 2.0, 3.0])
    step = jitflow.function(lambda x: x * weights + read(weights))
    x = np.ones(3)
    step(x)
    weights[:] = [4.0, -1.0, 0.5]
    np.testing.assert_allclose(step(x), x * weights + read(weights), rtol=1e-6)


def test_views_of_an_input_array_are_not_reads(backend):
    weights = np.arange(6.0).reshape(2, 3)
    step = jitflow.function(lambda x: x * weights + (x @ weights.T)[0, 0] +
                            np.transpose(weights)[:, 1] + weights.shape[0] +
                            np.ndim(weights))
    x = np.ones((2, 3))
    for value in (1.0, 2.0):
        weights[1, 0] = value
        np.testing.assert_array_equal(
            step(x), x * weights + (x @ weights.T)[0, 0] + weights.T[:, 1] + 2 + 2)
    assert step.cache_info().traces == 1


def test_named_arrays_are_themselves_again_after_a_trace_even_a_failing_one(backend):
    model = Model()
    weights = model.weights

    def broken(x):
        assert type(model.weights) is not np.ndarray  # watched while tracing
        raise ValueError("broken on purpose")
    with pytest.raises(ValueError, match="broken on purpose"):
        jitflow.function(broken)(np.ones(3))
    assert model.weights is weights and type(weights) is np.ndarray
    step = jitflow.function(lambda x: x * model.total.sum() + model.weights[0])
    step(np.ones(3))
    assert model.weights is weights and type(model.weights) is np.ndarray
