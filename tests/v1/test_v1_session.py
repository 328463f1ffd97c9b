"""Session.run: fetches and feeds of every form, Variables held by the session, one
compiled function per kind of run, and the errors a user meets."""
import numpy as np
import os
import sys

import pytest

import jitflow
import jitflow.v1 as tf
from fidelity import assert_same

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


@pytest.fixture(autouse=True)
def fresh_graph(backend):
    tf.reset_default_graph()


def test_fetches_of_every_form():
    x = tf.placeholder(tf.float64, (None,), name="x")
    y = tf.multiply(x, 2.0, name="y")
    z = tf.reduce_sum(y, name="z")
    values = np.array([1.0, 2.0, 3.0])
    with tf.Session() as sess:
        assert_same(sess.run(y, {x: values}), values * 2)
        assert sess.run(z, {x: values}) == np.float64(12.0)
        assert type(sess.run(z, {x: values})) is np.float64  # 0-d comes back a scalar
        result = sess.run({"pair": (y, "z:0"), "list": [z, y.op]}, {"x:0": values})
        assert set(result) == {"pair", "list"} and isinstance(result["pair"], tuple)
        assert_same(result["pair"][0], values * 2)
        assert result["pair"][1] == 12.0 and result["list"] == [12.0, None]
        assert sess.run(y.op, {x: values}) is None
        assert sess.run([], {x: values}) == []


def test_any_tensor_can_be_fed_and_the_graph_above_it_is_not_needed():
    x = tf.placeholder(tf.float64, (2,), name="x")
    y = tf.exp(x)
    z = y + 1.0
    with tf.Session() as sess:
        assert_same(sess.run(z, {y: np.array([1.0, 2.0])}), np.array([2.0, 3.0]))


def test_placeholder_with_default_is_fed_or_not():
    x = tf.placeholder_with_default(np.array([1.0, 2.0]), shape=(None,))
    with tf.Session() as sess:
        assert_same(sess.run(x * 3), np.array([3.0, 6.0]))
        assert_same(sess.run(x * 3, {x: np.array([5.0])}), np.array([15.0]))


def test_a_repeated_run_reuses_its_compiled_function_and_a_new_shape_compiles_again():
    x = tf.placeholder(tf.float32, (None, 2), name="x")
    y = tf.reduce_sum(tf.tanh(x), axis=1)
    graph = tf.get_default_graph()
    with tf.Session() as sess:
        for rows in (3, 3, 3, 5, 5):
            value = np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)
            assert_same(sess.run(y, {x: value}), np.tanh(value).sum(1), rtol=1e-6)
    (plan,) = graph._plans.values()
    info = plan.function.cache_info()
    assert (info.traces, info.hits) == (2, 3)


def test_the_graph_mode_result_is_the_compiled_functions_and_numpys():
    x = tf.placeholder(tf.float64, (None, 3), name="x")
    w = tf.constant(np.linspace(-1, 1, 6).reshape(3, 2))
    y = tf.nn.softmax(tf.matmul(x, w) + np.array([0.5, -0.5]))

    def same(x):
        logits = x @ np.linspace(-1, 1, 6).reshape(3, 2) + np.array([0.5, -0.5])
        e = np.exp(logits - logits.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    value = np.random.default_rng(0).standard_normal((4, 3))
    with tf.Session() as sess:
        graph_result = sess.run(y, {x: value})
    assert_same(graph_result, jitflow.function(same)(value), rtol=1e-14)
    assert_same(graph_result, same(value), rtol=1e-14)


def test_variables_live_in_each_session():
    v = tf.Variable(np.array([1.0, 2.0]), name="v")
    step = v.assign_add(np.array([1.0, 1.0]))
    with tf.Session() as first, tf.Session() as second:
        first.run(tf.global_variables_initializer())
        second.run(v.initializer)
        assert_same(first.run(step), np.array([2.0, 3.0]))
        assert_same(first.run(step), np.array([3.0, 4.0]))
        assert_same(second.run(v), np.array([1.0, 2.0]))
        fetched = first.run(v)
        fetched[0] = 100.0  # the caller's copy, not the session's
        assert_same(first.run(v), np.array([3.0, 4.0]))


def test_reads_in_a_run_see_the_values_before_its_assignments():
    v = tf.Variable(1.0, name="v")
    doubled = v.assign(v * 2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([v, doubled, v * 10]) == [1.0, 2.0, 10.0]
        assert sess.run(v) == 2.0


def test_a_run_that_raises_changes_no_variable():
    v = tf.Variable(np.array([1.0, 2.0]), name="v")
    x = tf.placeholder(tf.float64, (None,), name="x")
    update = tf.group(v.assign(v + 1.0), tf.identity(v * x))
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(ValueError, match=r"cannot be broadcast(.|\n)*in operation "
                                             r"'Mul' \(Mul\), made at .*test_v1_session.py:\d+: "
                                             r"update = tf.group"):
            sess.run(update, {x: np.ones(3)})
        assert_same(sess.run(v), np.array([1.0, 2.0]))


def test_assigning_a_variable_twice_in_one_run_is_refused():
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="assigns Variable 'v' twice"):
            sess.run([v.assign_add(1.0), v.assign_add(2.0)])


def test_assignments_keep_the_variables_dtype_and_shape():
    counts = tf.Variable(np.zeros(2, np.int32), name="counts")
    with pytest.raises(TypeError, match="'counts' holds int32, and a float64 value would "
                                        "not fit"):
        counts.assign(tf.constant(np.array([1.0, 2.0])))
    v = tf.Variable(np.zeros(2, np.float32), name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(v.assign([1.5, 2.5])).dtype == np.float32
        with pytest.raises(ValueError, match=r"shape \(3,\) to Variable 'v' of shape \(2,\)"):
            sess.run(v.assign(np.ones(3, np.float32)))


def test_trainable_and_global_variables():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, trainable=False, name="b")
    assert tf.trainable_variables() == [a] and tf.global_variables() == [a, b]


def test_eval_and_run_use_the_default_session():
    v = tf.Variable(3.0, name="v")
    with tf.Session():
        v.initializer.run()
        assert (v * 2).eval() == 6.0
    with pytest.raises(ValueError, match="no session"):
        v.eval()


def test_a_missing_feed_names_the_placeholder():
    x = tf.placeholder(tf.float32, (None, 2), name="inputs")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"placeholder 'inputs' \(dtype float32, "
                                             r"shape \(\?, 2\)\) needs a value"):
            sess.run(x + 1)


def test_a_feed_of_the_wrong_shape_or_dtype_shows_both():
    x = tf.placeholder(tf.float32, (None, 2), name="x")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"shape \(2, 3\) to tensor 'x:0' of shape "
                                             r"\(\?, 2\)\n  at .*test_v1_session.py"):
            sess.run(x + 1, {x: np.ones((2, 3), np.float32)})
        with pytest.raises(TypeError, match="dtype complex128 to tensor 'x:0' of dtype "
                                            "float32"):
            sess.run(x + 1, {x: np.ones((1, 2), complex)})
        with pytest.raises(TypeError, match="dtype float64 to tensor 'n:0' of dtype int32"):
            sess.run(tf.placeholder(tf.int32, name="n") + 1, {"n:0": 1.5})
        # a value that fits is cast, as NumPy's same-kind casting allows
        assert sess.run(x + 1, {x: [[1.0, 2.0]]}).dtype == np.float32


def test_an_uninitialized_variable_is_named():
    v = tf.Variable(1.0, name="weights")
    with tf.Session() as sess:
        with pytest.raises(tf.FailedPreconditionError, match="'weights' is read before "
                                                             "it is initialized"):
            sess.run(v + 1)


def test_fetching_from_another_graph_is_refused():
    with tf.Graph().as_default():
        other = tf.constant(1.0, name="other")
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="'other:0' is not an element of this graph"):
            sess.run(other)
        with pytest.raises(KeyError, match="the name .missing. refers to no operation"):
            sess.run("missing:0")


def test_a_closed_session_refuses_to_run():
    sess = tf.Session()
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(tf.constant(1.0))


def test_the_seeds_first_program():
    import v1_graph_basics
    assert v1_graph_basics.main() == 3.75


def test_jitflow_numpy_and_nn_functions_on_graph_tensors_add_operations():
    x = tf.placeholder(tf.float64, (None, 3), name="x")
    v = tf.Variable(np.array([1.0, -1.0, 2.0]), name="v")
    made = [jitflow.numpy.exp(x), jitflow.nn.relu(x - 1),
            jitflow.numpy.concatenate([x, x], axis=1), jitflow.numpy.mean(x, axis=0),
            jitflow.nn.softmax(x), jitflow.numpy.dot(x, v)]
    assert all(isinstance(t, tf.Tensor) for t in made)
    assert [t.shape.as_list() for t in made] == [[None, 3], [None, 3], [None, 6], [3],
                                                [None, 3], [None]]
    value = np.arange(6.0).reshape(2, 3)
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(made, {x: value})
    e = np.exp(value - value.max(1, keepdims=True))
    expected = [np.exp(value), np.maximum(value - 1, 0), np.concatenate([value, value], 1),
                value.mean(0), e / e.sum(1, keepdims=True), value @ np.array([1.0, -1.0, 2.0])]
    for g, want in zip(got, expected):
        assert_same(g, want, rtol=1e-14)


def test_a_session_runs_the_graph_it_is_given():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, (2,), name="x")
        y = tf.reduce_sum(x * x)
    assert tf.get_default_graph() is not graph
    with tf.Session(graph=graph) as sess:
        assert tf.get_default_graph() is graph  # inside its block, as TensorFlow does
        assert sess.run(y, {"x:0": [1.0, 2.0]}) == 5.0


def test_run_eagerly_runs_the_same_operations_on_numpy():
    x = tf.placeholder(tf.float64, (None,), name="x")
    v = tf.Variable(np.array([1.0, 2.0]), name="v")
    step = v.assign(v * tf.reduce_sum(x))
    saved = jitflow.config.run_eagerly
    jitflow.config.run_eagerly = True
    try:
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert_same(sess.run(step, {x: np.array([1.0, 2.0])}), np.array([3.0, 6.0]))
            assert_same(sess.run(v), np.array([3.0, 6.0]))
    finally:
        jitflow.config.run_eagerly = saved
