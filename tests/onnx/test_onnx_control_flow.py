"""Control flow across ONNX: cond/switch exported as If and while_loop as Loop, run in
ONNX Runtime; If and Loop models loaded, run and differentiated by jitflow."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import jitflow  # noqa: E402
import jitflow.onnx  # noqa: E402
from fidelity import assert_same  # noqa: E402
from onnx_support import make_model, run_ort  # noqa: E402


def branches_and_a_loop(x, n):
    y = jitflow.cond(x.sum() > 0, lambda x: x * 2, lambda x: -x, x)
    z = jitflow.switch(n, [lambda x: x + 1, lambda x: x * x, lambda x: np.sin(x) + y], x)

    def halve(carry):
        i, v = carry
        return i + 1, v * 0.5 + y
    return (y, z) + jitflow.while_loop(
        lambda carry: (carry[0] < n + 3) & (carry[1].sum() < 1e3), halve, (0, x))


@pytest.mark.parametrize("n", [-1, 0, 1, 2, 7])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_branches_and_loops_export_as_if_and_loop(n, sign):
    x, index = sign * np.arange(1.0, 4.0), np.int64(n)
    model = jitflow.onnx.to_model(branches_and_a_loop, x, index)
    assert {"If", "Loop"} <= {node.op_type for node in model.graph.node}
    expected = jitflow.function(branches_and_a_loop)(x, index)
    for actual, e in zip(run_ort(model, x, index), expected, strict=True):
        assert_same(actual, np.asarray(e), rtol=1e-15)
    for actual, e in zip(jitflow.onnx.load(model)(x, index), expected, strict=True):
        assert_same(actual, e, rtol=1e-15)


def test_a_loaded_loop_differentiates_like_finite_differences():
    def newton_sqrt(a):
        return jitflow.fori_loop(0, 5, lambda i, x: 0.5 * (x + a / x), a)
    a = np.array([2.0, 9.0, 0.5])
    loaded = jitflow.onnx.load(jitflow.onnx.to_model(newton_sqrt, a))
    assert_same(loaded(a), np.asarray(jitflow.function(newton_sqrt)(a)), rtol=1e-15)
    jitflow.testing.check_grads(loaded, (a,), order=1)


def _loop_body(scan=True, stop_early=True):
    """Body of a Loop: s = s + x * i; goes on while s < 50 if stop_early (and scans
    s * 2)."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x", "fi"], ["step"]),
             helper.make_node("Add", ["s_in", "step"], ["s_out"]),
             helper.make_node("ReduceSum", ["s_out"], ["total"], keepdims=0),
             helper.make_node("Less", ["total", "limit"], ["less"]),
             helper.make_node("Identity", ["less" if stop_early else "c"], ["more"])]
    outputs = [helper.make_tensor_value_info("more", TensorProto.BOOL, []),
               helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [3])]
    if scan:
        nodes.append(helper.make_node("Add", ["s_out", "s_out"], ["doubled"]))
        outputs.append(helper.make_tensor_value_info("doubled", TensorProto.FLOAT, [3]))
    return helper.make_graph(
        nodes, "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                        helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [3])],
        outputs)


@pytest.mark.parametrize("scan, stop_early", [(False, True), (False, False),
                                              (True, False)])
def test_a_loop_built_by_hand_runs_as_in_onnx_runtime(scan, stop_early):
    x = np.array([1.0, 2.0, 0.5], np.float32)
    outputs = [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3]),
               helper.make_tensor_value_info("scanned", TensorProto.FLOAT, ["n", 3])]
    outputs = outputs[:1 + scan]
    loop = helper.make_node("Loop", ["m", "", "s0"], [o.name for o in outputs],
                            body=_loop_body(scan, stop_early))
    model = make_model([loop], {"x": x}, outputs,
                       {"m": np.int64(6), "s0": np.zeros(3, np.float32),
                        "limit": np.float32(50)})
    actual = jitflow.onnx.load(model)(x)
    for a, e in zip(actual if scan else [actual], run_ort(model, x), strict=True):
        assert_same(np.asarray(a), e)


def test_a_loop_whose_scan_outputs_have_a_length_known_only_at_run_time_is_refused():
    x = np.array([1.0, 2.0, 0.5], np.float32)
    outputs = [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3]),
               helper.make_tensor_value_info("scanned", TensorProto.FLOAT, ["n", 3])]
    loop = helper.make_node("Loop", ["m", "", "s0"], ["s", "scanned"], body=_loop_body())
    model = make_model([loop], {"x": x}, outputs,
                       {"m": np.int64(6), "s0": np.zeros(3, np.float32),
                        "limit": np.float32(50)})
    with pytest.raises(ValueError, match="Loop .* condition .* must be known"):
        jitflow.onnx.load(model)(x)


def test_an_if_on_a_value_known_while_tracing_runs_one_branch():
    """An exporter's shape test: If(Shape(x)[0] == 2) picks a branch when traced."""
    def branch(name, op):
        return helper.make_graph([helper.make_node(op, ["x"], [name])], name, [],
                                 [helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                                [2, 3])])
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["rows"], axis=0),
             helper.make_node("Equal", ["rows", "two"], ["is_two"]),
             helper.make_node("If", ["is_two"], ["y"], then_branch=branch("t", "Exp"),
                              else_branch=branch("e", "Neg"))]
    x = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
    model = make_model(nodes, {"x": x}, ["y"], {"zero": np.int64(0), "two": np.int64(2)})
    assert_same(jitflow.onnx.load(model)(x), run_ort(model, x)[0], rtol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_a_scan_exports_as_a_loop_over_its_rows(reverse):
    def running(xs, h):
        return jitflow.scan(lambda c, x: (np.tanh(c + x * h), c * x), np.zeros(3), xs,
                            reverse=reverse)
    xs, h = np.random.default_rng(1).normal(size=(4, 3)), np.float64(0.7)
    model = jitflow.onnx.to_model(running, xs, h)
    expected = jitflow.pytree.flatten(jitflow.function(running)(xs, h))[0]
    for actual, e in zip(run_ort(model, xs, h), expected, strict=True):
        assert_same(actual, np.asarray(e), rtol=1e-15)
