"""jitflow.summary: scalars, histograms and graphs read back by tensorboard's
EventAccumulator as TensorBoard reads them."""
import numpy as np
import pytest

import jitflow
import jitflow.v1 as tf
from event_files import accumulator, plugin, series


def test_scalars_come_back_at_their_steps(tmp_path):
    values = [2.5, 1.25, 0.625]
    with jitflow.summary.create_file_writer(tmp_path) as writer:
        for step, value in enumerate(values):
            writer.scalar("loss", np.float64(value), step * 10)
        writer.scalar("count", 7, 0)
    found = accumulator(tmp_path)
    assert [(step, float(v)) for step, v in series(found, "loss")] == [
        (0, 2.5), (10, 1.25), (20, 0.625)]
    assert plugin(found, "loss") == "scalars"
    assert float(series(found, "count")[0][1]) == 7.0


def test_histogram_buckets_count_every_value_within_its_range(tmp_path):
    values = np.random.default_rng(1).normal(size=500)
    with jitflow.summary.create_file_writer(tmp_path) as writer:
        writer.histogram("weights", values, 3, buckets=20)
    (step, buckets), = series(accumulator(tmp_path), "weights")
    assert step == 3 and buckets.shape == (20, 3)
    assert buckets[:, 2].sum() == values.size
    assert buckets[0, 0] == values.min() and buckets[-1, 1] == values.max()
    inside = [(values >= lo) & (values < hi) for lo, hi, _ in buckets[:-1]]
    assert [int(m.sum()) for m in inside] == [int(c) for c in buckets[:-1, 2]]


def test_a_graph_api_graph_keeps_its_names_and_edges(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, shape=(None, 2), name="x")
        with tf.name_scope("layer"):
            y = tf.sigmoid(tf.matmul(x, tf.constant(np.ones((2, 1), np.float32))))
    with jitflow.summary.create_file_writer(tmp_path) as writer:
        writer.graph(graph)
    graph_def = accumulator(tmp_path).Graph()
    assert [n.name for n in graph_def.node] == [op.name for op in graph.get_operations()]
    sigmoid = {n.name: n for n in graph_def.node}[y.op.name]
    assert sigmoid.name.startswith("layer/") and list(sigmoid.input) == ["layer/MatMul"]
    dims = [d.size for d in sigmoid.attr["_output_shapes"].list.shape[0].dim]
    assert dims == [-1, 1]


def test_a_function_graph_shows_its_fused_region_as_a_scope(tmp_path):
    with jitflow.summary.create_file_writer(tmp_path) as writer:
        writer.graph(lambda a: np.tanh(a) * 2.0 + a, np.ones(4, np.float32))
    nodes = {n.name: n for n in accumulator(tmp_path).Graph().node}
    assert {"fused/tanh", "fused/mul", "fused/add"} <= set(nodes)
    assert list(nodes["fused/tanh"].input) == ["a"]


def test_bad_values_and_closed_writers_raise_clearly(tmp_path):
    writer = jitflow.summary.create_file_writer(tmp_path)
    with pytest.raises(ValueError, match="summary scalar 'loss': needs one number"):
        writer.scalar("loss", np.ones(3), 0)
    with pytest.raises(TypeError, match="needs real numbers"):
        writer.histogram("h", np.array(["a"]), 0)
    writer.close()
    writer.close()
    with pytest.raises(RuntimeError, match="is closed"):
        writer.scalar("loss", 1.0, 0)
