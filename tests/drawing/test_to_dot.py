"""jitflow.to_dot: DOT text that reads back (dot_reader) into the graph's own nodes,
edges and clusters: name scopes, fused regions as the native code runs them, and
control-flow bodies."""
import collections
import shutil

import numpy as np
import pytest

import jitflow
import jitflow.v1 as tf
from dot_reader import read_dot
from jitflow.drawing import GraphvizNotFoundError, to_dot, to_svg


def _two_regions(x, w):
    h = np.tanh(x @ w) * 2.0
    return np.sqrt(np.abs(np.exp(h - h.max(axis=1, keepdims=True)) @ w.T)) + 1.0


def _arguments():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(4, 3)).astype(np.float32),
            rng.normal(size=(3, 5)).astype(np.float32))


def _cluster_path(dot, node):
    """The clusters around `node`, outermost first."""
    path, cluster = [], dot.node_cluster[node]
    while cluster is not None:
        path.insert(0, cluster)
        cluster = dot.clusters[cluster][0]
    return path


def test_every_edge_joins_declared_nodes_and_inputs_are_named():
    dot = read_dot(to_dot(_two_regions, *_arguments()))
    assert dot.name == "_two_regions"
    for source, target, _ in dot.edges:
        assert source in dot.nodes and target in dot.nodes
    assert {"x", "w"} <= set(dot.nodes)
    assert dot.nodes["x"]["label"] == "x\nInput"
    assert ("x", "matmul", {"label": "float32[4,3]"}) in dot.edges


def test_fused_regions_are_the_clusters_of_the_native_codes_fused_nodes():
    fn = jitflow.function(_two_regions)
    x, w = _arguments()
    lowered = fn.lower(x, w)._native.graph  # what native code runs
    expected = sorted(sorted(n.op for n in node.subgraphs[0].nodes)
                      for node in lowered.nodes if node.op == "fused")
    assert len(expected) >= 2
    dot = read_dot(to_dot(fn, x, w))
    fused = [name for name, (_, attributes) in dot.clusters.items()
             if attributes["label"].endswith("(fused region)")]
    members = collections.defaultdict(list)
    for node, cluster in dot.node_cluster.items():
        if cluster in fused and dot.nodes[node]["class"] != "Const":
            members[cluster].append(dot.nodes[node]["class"])
    assert sorted(sorted(ops) for ops in members.values()) == expected
    outside = [dot.nodes[n]["class"] for n, c in dot.node_cluster.items() if c is None]
    assert outside.count("matmul") == 2


def _scoped_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, shape=(None, 2), name="x")
        with tf.name_scope("dense"):
            w = tf.constant(np.ones((2, 3), np.float32), name="w")
            h = tf.nn.relu(tf.matmul(x, w))
        with tf.name_scope("dense"):  # a second scope of that name: dense_1
            h = tf.matmul(h, tf.constant(np.ones((3, 3), np.float32)))
        with tf.name_scope("outer"):
            with tf.name_scope("inner"):
                y = tf.add(h, 1.0, name="add")
        tf.reduce_sum(y, name="total")
    return graph


def test_graph_api_name_scopes_are_nested_clusters():
    graph = _scoped_graph()
    dot = read_dot(to_dot(graph))
    operations = graph.get_operations()
    assert set(dot.nodes) == {op.name for op in operations}
    assert sorted((s, t) for s, t, _ in dot.edges) == sorted(
        (tensor.op.name, op.name) for op in operations for tensor in op.inputs)
    assert _cluster_path(dot, "dense/MatMul") == ["cluster_dense"]
    assert _cluster_path(dot, "dense_1/MatMul") == ["cluster_dense_1"]
    assert _cluster_path(dot, "outer/inner/add") == ["cluster_outer", "cluster_outer/inner"]
    assert _cluster_path(dot, "total") == []
    assert dot.clusters["cluster_outer/inner"][1]["label"] == "inner"
    assert ("dense/MatMul", "dense/Relu", {"label": "float32[?,3]"}) in dot.edges


def test_control_flow_bodies_are_clusters_with_their_arguments_and_results():
    def count_down(x):
        return jitflow.while_loop(lambda c: c[0] > 0, lambda c: (c[0] - 1, c[1] * 2.0),
                                  (x, np.float32(1.0)))[1]
    dot = read_dot(to_dot(count_down, np.int64(3)))
    bodies = {name: attributes["label"] for name, (_, attributes) in dot.clusters.items()
              if attributes["label"].endswith("(subgraph)")}
    assert sorted(bodies.values()) == ["subgraph0 (subgraph)", "subgraph1 (subgraph)"]
    for cluster in bodies:
        ops = [dot.nodes[n]["class"] for n, c in dot.node_cluster.items() if c == cluster]
        assert "Arg" in ops and "Return" in ops
    loop = [n for n in dot.nodes if dot.nodes[n]["class"] == "while"]
    assert len(loop) == 1 and dot.node_cluster[loop[0]] == "cluster_" + loop[0]


def test_an_ir_graph_is_drawn_as_it_is():
    graph = jitflow.function(lambda a: np.sin(a) + 1.0).trace(np.ones(3))
    dot = read_dot(to_dot(graph))
    labels = sorted(attributes["class"] for attributes in dot.nodes.values())
    assert labels == sorted(["Input", "sin", "Const", "add", "Output"])
    assert dot.clusters == {}


def test_what_cannot_be_drawn_is_refused_clearly():
    with pytest.raises(TypeError, match="cannot draw a int"):
        to_dot(42)
    with pytest.raises(TypeError, match="example arguments are for functions"):
        to_dot(_scoped_graph(), np.ones(2))


def test_svg_needs_graphviz():
    if shutil.which("dot") is None:
        with pytest.raises(GraphvizNotFoundError, match="Graphviz's `dot` program"):
            to_svg(_scoped_graph())
    else:
        svg = to_svg(_scoped_graph())
        assert "<svg" in svg and "dense" in svg
