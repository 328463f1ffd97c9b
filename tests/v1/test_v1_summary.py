"""v1.summary.FileWriter: the graph as TensorBoard reads it, with its name scopes."""
import numpy as np

import jitflow.v1 as tf
from event_files import accumulator, series


def _perceptron():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, shape=(None, 2), name="x")
        with tf.name_scope("perceptron"):
            w = tf.Variable(np.full((2, 1), 0.5, np.float32), name="w")
            p = tf.sigmoid(tf.matmul(x, w), name="p")
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.square(p - 1.0))
    return graph, x, loss


def test_file_writer_writes_the_graph_with_its_name_scopes(tmp_path):
    graph, _, loss = _perceptron()
    writer = tf.summary.FileWriter(str(tmp_path), graph)
    writer.close()
    graph_def = accumulator(tmp_path).Graph()
    names = [node.name for node in graph_def.node]
    assert names == [op.name for op in graph.get_operations()]
    scopes = {name.partition("/")[0] for name in names if "/" in name}
    assert scopes == {"perceptron", "loss"}
    by_name = {node.name: node for node in graph_def.node}
    assert by_name[loss.op.name].op == loss.op.type
    assert list(by_name["perceptron/p"].input) == ["perceptron/MatMul"]


def test_file_writer_takes_a_sessions_graph_and_summaries(tmp_path):
    graph, x, loss = _perceptron()
    with tf.Session(graph=graph) as session:
        session.run(tf.global_variables_initializer())
        with tf.summary.FileWriter(str(tmp_path), session.graph) as writer:
            written = []
            for step in range(3):
                written.append(session.run(loss, {x: [[1.0, 2.0 * step]]}))
                writer.add_scalar("loss", written[-1], step)
    found = accumulator(tmp_path)
    assert found.Graph() is not None
    expected = [np.mean((1 / (1 + np.exp(-(0.5 + step))) - 1.0) ** 2) for step in range(3)]
    np.testing.assert_allclose(written, expected, rtol=1e-6)
    assert [(step, v) for step, v in series(found, "loss")] == [
        (step, np.float32(value)) for step, value in enumerate(written)]
