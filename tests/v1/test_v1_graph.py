"""jitflow.v1's Graph, Operation, Tensor and TensorShape: names, scopes, lookups, static
shapes with unknown dimensions, operations with several outputs."""
import numpy as np
import pytest

import jitflow.v1 as tf
from fidelity import NATIVE_ULPS, assert_same


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()


def test_names_are_scoped_and_made_unique_as_tensorflow_makes_them():
    x = tf.placeholder(tf.float32, (None, 3), name="x")
    w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    with tf.name_scope("dense"):
        first = tf.matmul(x, w)
        second = tf.matmul(x, w)
        with tf.name_scope("inner"):
            named = tf.add(first, second, name="total")
    with tf.name_scope("dense"):
        again = tf.matmul(x, w)
    assert [first.name, second.name, named.name, again.name] == \
        ["dense/MatMul:0", "dense/MatMul_1:0", "dense/inner/total:0", "dense_1/MatMul:0"]
    assert w.name == "w:0" and w.initializer.name == "w/Assign"
    assert [op.name for op in tf.get_default_graph().get_operations()] == [
        "x", "w/initial_value", "w", "w/Assign", "dense/MatMul", "dense/MatMul_1",
        "dense/inner/total", "dense_1/MatMul"]


def test_a_name_ending_in_a_slash_reenters_its_scope():
    with tf.name_scope("block") as scope:
        pass
    with tf.name_scope(scope):
        c = tf.constant(1.0, name="c")
    assert c.name == "block/c:0"


def test_operations_and_tensors_are_found_by_name():
    graph = tf.get_default_graph()
    a = tf.constant(2.0, name="a")
    b = tf.square(a, name="b")
    assert graph.get_operation_by_name("b") is b.op
    assert graph.get_tensor_by_name("b:0") is b
    assert b.op.type == "Square" and b.op.inputs == (a,) and b.op.outputs == (b,)
    assert b.op.graph is graph and b.graph is graph and b.value_index == 0
    with pytest.raises(KeyError, match="'nothing'"):
        graph.get_operation_by_name("nothing")
    with pytest.raises(KeyError, match="1 outputs"):
        graph.get_tensor_by_name("b:1")
    with pytest.raises(ValueError, match="not a tensor name"):
        graph.get_tensor_by_name("b")


def test_a_finalized_graph_refuses_new_operations():
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0)
        graph.finalize()
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(2.0, name="late")


def test_each_graph_is_the_default_inside_its_block():
    outer = tf.get_default_graph()
    graph = tf.Graph()
    with graph.as_default():
        assert tf.get_default_graph() is graph
        c = tf.constant(1)
    assert tf.get_default_graph() is outer and c.graph is graph


def test_inputs_from_two_graphs_are_refused():
    a = tf.constant(1.0)
    with tf.Graph().as_default():
        b = tf.constant(2.0)
    with pytest.raises(ValueError, match="different graphs"):
        tf.add(a, b)


def test_static_shapes_keep_unknown_dimensions():
    x = tf.placeholder(tf.float32, (None, 4), name="x")
    assert x.shape.as_list() == [None, 4] and str(x.shape) == "(?, 4)"
    assert tf.matmul(x, np.ones((4, 3), np.float32)).shape.as_list() == [None, 3]
    assert tf.reduce_sum(x, axis=0).shape.as_list() == [4]
    assert tf.reduce_sum(x, axis=1).shape.as_list() == [None]
    assert tf.reshape(x, [-1, 2]).shape.as_list() == [None, 2]
    assert tf.transpose(x).shape.as_list() == [4, None]
    assert tf.concat([x, x], axis=1).shape.as_list() == [None, 8]
    assert tf.cast(x, tf.int32).dtype == np.int32
    assert x[:5].shape.as_list() == [None, 4]  # 5 rows, or fewer
    assert x[:, :2].shape.as_list() == [None, 2]
    assert tf.squeeze(x).shape.ndims is None  # an unknown dimension may be 1
    assert tf.argmax(x, axis=1).dtype == np.int64
    unknown = tf.placeholder(tf.float64, name="anything")
    assert unknown.shape.ndims is None and (unknown * 2).dtype == np.float64
    with pytest.raises(ValueError, match="unknown rank"):
        unknown.shape.as_list()


def test_shape_errors_raise_while_the_graph_is_built_naming_the_users_line():
    x = tf.placeholder(tf.float32, (None, 4))
    with pytest.raises(ValueError, match=r"test_v1_graph.py:\d+: .*tf.matmul\(x, "):
        tf.matmul(x, np.ones((3, 2), np.float32))


def test_python_values_take_tensorflows_dtypes():
    assert tf.constant(15).dtype == np.int32
    assert tf.constant([1.5, 2.0]).dtype == np.float32
    assert tf.constant(np.arange(3)).dtype == np.int64
    assert tf.constant(1, dtype=tf.float64).dtype == np.float64
    assert (tf.constant(2.0) * 3).dtype == np.float32  # a Python number is weak


def test_operations_with_several_outputs():
    x = tf.placeholder(tf.float32, (None, 6))
    parts = tf.split(x, 3, axis=1)
    assert [p.name for p in parts] == ["Split:0", "Split:1", "Split:2"]
    assert all(p.shape.as_list() == [None, 2] for p in parts)
    rows = tf.unstack(tf.constant(np.arange(6.0).reshape(3, 2)))
    assert len(rows) == 3 and rows[2].op is rows[0].op and rows[2].value_index == 2
    with pytest.raises(ValueError, match="number of outputs depends"):
        tf.unstack(x)
    assert len(tf.split(x, [1, -1], axis=1)) == 2


def test_numpy_functions_and_operators_on_tensors_add_operations():
    x = tf.placeholder(tf.float64, (2, 3), name="x")
    w = np.ones((3, 4))
    made = [np.exp(x), x @ w, np.sum(x, axis=0), np.concatenate([x, x]), -x, 2.0 - x,
            x[:, 1], np.maximum(x, 0.5), x > 1, abs(x), x.T]
    assert [t.op.type for t in made] == [
        "Exp", "MatMul", "Sum", "ConcatV2", "Neg", "Sub", "StridedSlice", "Maximum",
        "Greater", "Abs", "Transpose"]
    assert made[1].shape.as_list() == [2, 4]
    with pytest.raises(TypeError, match="truth value"):
        bool(x)
    with pytest.raises(TypeError, match="no value while the graph is built"):
        np.asarray(x)


# Every operator a Tensor has (tensor_methods.py installs them), the same expression on
# NumPy's value, and the operation it adds. Pow and Exp may round as jitflow's native
# math does (tests/fidelity.py).
FLOAT_OPERATORS = [
    (lambda x: x + 2.0, "AddV2"), (lambda x: 2.0 + x, "AddV2"),
    (lambda x: x - 2.0, "Sub"), (lambda x: 2.0 - x, "Sub"),
    (lambda x: x * 3.0, "Mul"), (lambda x: 3.0 * x, "Mul"),
    (lambda x: x / 4.0, "RealDiv"), (lambda x: 4.0 / x, "RealDiv"),
    (lambda x: x // 0.75, "FloorDiv"), (lambda x: 7.0 // x, "FloorDiv"),
    (lambda x: x % 0.75, "FloorMod"), (lambda x: 7.0 % x, "FloorMod"),
    (lambda x: x ** 2.0, "Pow"), (lambda x: 2.0 ** x, "Pow"),
    (lambda x: x @ np.ones((3, 2)), "MatMul"), (lambda x: [[1.0, 2.0]] @ x, "MatMul"),
    (lambda x: x < 1.5, "Less"), (lambda x: x <= 1.5, "LessEqual"),
    (lambda x: x > 1.5, "Greater"), (lambda x: x >= 1.5, "GreaterEqual"),
    (lambda x: -x, "Neg"), (lambda x: abs(x), "Abs"),
    (lambda x: x.astype(np.float32), "Cast"), (lambda x: x.T, "Transpose"),
    (lambda x: x[1, ::2], "StridedSlice"), (lambda x: np.exp(x), "Exp"),
    (lambda x: np.sum(x, axis=1), "Sum"),
]
BOOL_OPERATORS = [
    (lambda b: b & True, "LogicalAnd"), (lambda b: True & b, "LogicalAnd"),
    (lambda b: b | False, "LogicalOr"), (lambda b: False | b, "LogicalOr"),
    (lambda b: b ^ True, "LogicalXor"), (lambda b: True ^ b, "LogicalXor"),
    (lambda b: ~b, "LogicalNot"),
]


@pytest.mark.parametrize("as_variable", [False, True], ids=["tensor", "variable"])
def test_every_operator_of_a_tensor_adds_its_operation_and_computes_numpys_value(
        as_variable):
    value = np.array([[0.5, 1.5, 2.5], [3.0, -1.25, 4.0]])
    flags = np.array([[True, False, True], [False, False, True]])
    if as_variable:  # a Variable is a Tensor: it has the operators too
        x, b = tf.Variable(value), tf.Variable(flags)
        feeds = {}
    else:
        x, b = tf.placeholder(tf.float64, (2, 3)), tf.placeholder(tf.bool, (2, 3))
        feeds = {x: value, b: flags}
    cases = [(f, kind, x, value) for f, kind in FLOAT_OPERATORS] + \
        [(f, kind, b, flags) for f, kind in BOOL_OPERATORS]
    made = [f(tensor) for f, _, tensor, _ in cases]
    assert [t.op.type for t in made] == [kind for _, kind, _, _ in cases]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(made, feeds)
    for result, (f, kind, _, operand) in zip(got, cases):
        assert_same(np.asarray(result), np.asarray(f(operand)), what=kind,
                    **({"ulps": NATIVE_ULPS} if kind in ("Pow", "Exp") else {}))


def test_tensor_shape():
    shape = tf.TensorShape([None, 3])
    assert shape == [None, 3] and shape.ndims == 2 and not shape.is_fully_defined()
    assert shape.is_compatible_with((5, 3)) and not shape.is_compatible_with((5, 2))
    assert not shape.is_compatible_with((5, 3, 1))
    assert tf.TensorShape(None).is_compatible_with((1, 2, 3))


def test_set_shape_narrows_the_static_shape():
    x = tf.placeholder(tf.float32, (None, None))
    x.set_shape([None, 3])
    assert x.shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match=r"does not fit Tensor 'Placeholder:0' of shape "
                                         r"\(\?, 3\)"):
        x.set_shape([2, 4])
    anything = tf.placeholder(tf.float32)
    anything.set_shape([5])
    assert anything.shape.as_list() == [5]
