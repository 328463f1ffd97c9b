"""jitflow.onnx.load: ONNX models built by hand (and exported by jitflow) run as jitflow
functions, with ONNX Runtime's results, and differentiate."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

import jitflow  # noqa: E402
import jitflow.onnx  # noqa: E402
from fidelity import assert_same  # noqa: E402
from onnx_support import as_list, make_model, run_ort  # noqa: E402

RNG = np.random.default_rng(0)


def normal(*shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


def same_as_ort(model, *args, rtol=1e-6, atol=1e-6):
    loaded = jitflow.onnx.load(model)
    actual = as_list(loaded(*args))
    expected = run_ort(model, *args)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_same(np.asarray(a), e, rtol=rtol, atol=atol, zero_sign=False)
    return loaded


X = normal(2, 3, 4)
I = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
# (op type, inputs, constant inputs (initializers), attributes): one node each
CASES = [
    ("Relu", {"x": X}, {}, {}), ("Sigmoid", {"x": X}, {}, {}),
    ("LeakyRelu", {"x": X}, {}, {"alpha": 0.3}), ("Elu", {"x": X}, {}, {}),
    ("Selu", {"x": X}, {}, {}), ("Softplus", {"x": X}, {}, {}),
    ("HardSigmoid", {"x": X}, {}, {}), ("Gelu", {"x": X}, {}, {"approximate": "tanh"}),
    ("Erf", {"x": X}, {}, {}), ("Exp", {"x": X}, {}, {}), ("Abs", {"x": X}, {}, {}),
    ("Clip", {"x": X}, {"lo": np.float32(-0.5), "hi": np.float32(0.5)}, {}),
    ("Reciprocal", {"x": X}, {}, {}), ("Round", {"x": X * 3}, {}, {}),
    ("Add", {"x": X, "y": normal(3, 1)}, {}, {}), ("Pow", {"x": np.abs(X), "y": X}, {}, {}),
    ("Div", {"x": I, "y": np.array([4, -3, 5, 7], np.int64)}, {}, {}),
    ("Mod", {"x": I, "y": np.array([4, -3, 5, 7], np.int64)}, {}, {}),
    ("Mod", {"x": X, "y": normal(4)}, {}, {"fmod": 1}),
    ("Max", {"x": X, "y": normal(4), "z": normal(3, 1)}, {}, {}),
    ("Mean", {"x": X, "y": normal(4)}, {}, {}),
    ("Where", {"c": X > 0, "x": X, "y": normal(4)}, {}, {}),
    ("Less", {"x": X, "y": normal(4)}, {}, {}),
    ("Cast", {"x": X * 10}, {}, {"to": onnx.TensorProto.INT32}),
    ("ReduceSum", {"x": X}, {"axes": np.array([0, -1])}, {"keepdims": 0}),
    ("ReduceMean", {"x": X}, {"axes": np.array([1])}, {}),
    ("ReduceMax", {"x": X}, {}, {"keepdims": 0}),
    ("ReduceLogSumExp", {"x": X}, {"axes": np.array([2])}, {}),
    ("ReduceL2", {"x": X}, {"axes": np.array([1])}, {}),
    ("ArgMax", {"x": X}, {}, {"axis": 1, "select_last_index": 1}),
    ("ArgMin", {"x": X}, {}, {"axis": -1, "keepdims": 0}),
    ("CumSum", {"x": X}, {"axis": np.int64(1)}, {"exclusive": 1, "reverse": 1}),
    ("MatMul", {"x": X, "y": normal(4, 5)}, {}, {}),
    ("Gemm", {"a": normal(4, 3), "b": normal(5, 4), "c": normal(5)}, {},
     {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}),
    ("Softmax", {"x": X}, {}, {"axis": 1}), ("LogSoftmax", {"x": X}, {}, {}),
    ("Reshape", {"x": X}, {"shape": np.array([0, -1, 2])}, {}),
    ("Transpose", {"x": X}, {}, {"perm": [1, 0, 2]}), ("Flatten", {"x": X}, {}, {"axis": 2}),
    ("Squeeze", {"x": X[:1]}, {"axes": np.array([0])}, {}),
    ("Unsqueeze", {"x": X}, {"axes": np.array([-1, 1])}, {}),
    ("Concat", {"x": X, "y": normal(2, 1, 4)}, {}, {"axis": 1}),
    ("Slice", {"x": X}, {"starts": np.array([-1, 3]), "ends": np.array([-100, 0]),
                         "axes": np.array([1, 2]), "steps": np.array([-2, -1])}, {}),
    ("Gather", {"x": X, "i": np.array([[0, -1], [2, 1]])}, {}, {"axis": 1}),
    ("GatherElements", {"x": X, "i": np.array([[[0, 2, 1, 1]], [[1, 1, 0, -1]]])}, {},
     {"axis": 1}),
    ("Expand", {"x": normal(3, 1)}, {"shape": np.array([2, 1, 5])}, {}),
    ("Tile", {"x": X}, {"repeats": np.array([1, 2, 1])}, {}),
    ("Pad", {"x": X}, {"pads": np.array([0, 1, 2, 0, 0, 1]), "v": np.float32(-1)}, {}),
    ("Pad", {"x": X}, {"pads": np.array([1, 2, 0, 0, 1, 3])}, {"mode": "reflect"}),
    ("Pad", {"x": X}, {"pads": np.array([1, 2, 0, 0, 1, 3])}, {"mode": "edge"}),
    ("Pad", {"x": X}, {"pads": np.array([1, 2, 0, 0, 1, 3])}, {"mode": "wrap"}),
    ("PRelu", {"x": X, "slope": normal(4)}, {}, {}), ("Softsign", {"x": X}, {}, {}),
    ("HardSwish", {"x": X}, {}, {}), ("Mish", {"x": X}, {}, {}),
    ("ThresholdedRelu", {"x": X}, {}, {"alpha": 0.5}),
    ("Einsum", {"x": X, "y": normal(4, 5)}, {}, {"equation": "bij,jk->bki"}),
    ("Trilu", {"x": X}, {"k": np.int64(1)}, {"upper": 0}),
    ("OneHot", {"i": np.array([[0, 3], [-1, 2]])}, {"depth": np.int64(4),
                                                    "values": np.array([-1.0, 2.0], np.float32)},
     {"axis": 1}),
    ("GatherND", {"x": X, "i": np.array([[0, 2], [1, -1], [1, 0]])}, {}, {}),
    ("ScatterND", {"x": X, "i": np.array([[1, 2], [0, -3]]), "u": normal(2, 4)}, {}, {}),
    ("ScatterND", {"x": X, "i": np.array([[1], [0], [1]]), "u": normal(3, 3, 4)}, {},
     {"reduction": "add"}),
    ("ScatterElements", {"x": X, "i": np.array([[[0, 2, 1, -1]], [[1, 1, 0, 2]]]),
                         "u": normal(2, 1, 4)}, {}, {"axis": 1}),
    ("DepthToSpace", {"x": normal(1, 8, 2, 3)}, {}, {"blocksize": 2, "mode": "CRD"}),
    ("DepthToSpace", {"x": normal(1, 8, 2, 3)}, {}, {"blocksize": 2}),
    ("SpaceToDepth", {"x": normal(1, 2, 4, 6)}, {}, {"blocksize": 2}),
    ("InstanceNormalization", {"x": normal(2, 3, 4, 5)}, {"s": normal(3), "b": normal(3)},
     {}),
    ("BatchNormalization", {"x": X}, {"s": normal(3), "b": normal(3), "m": normal(3),
                                      "v": np.abs(normal(3))}, {"epsilon": 1e-3}),
    ("LayerNormalization", {"x": X, "s": normal(4), "b": normal(4)}, {}, {}),
    ("GlobalAveragePool", {"x": normal(2, 3, 4, 5)}, {}, {}),
    ("Conv", {"x": normal(1, 4, 7, 6), "w": normal(6, 2, 3, 2), "b": normal(6)}, {},
     {"group": 2, "strides": [2, 1], "auto_pad": "SAME_UPPER"}),
    ("Conv", {"x": normal(2, 3, 9), "w": normal(2, 3, 3)}, {}, {"dilations": [2],
                                                               "pads": [1, 2]}),
    ("ConvTranspose", {"x": normal(2, 4, 3, 5), "w": normal(4, 3, 3, 2), "b": normal(6)}, {},
     {"group": 2, "strides": [2, 3], "pads": [1, 0, 0, 1], "output_padding": [1, 0],
      "dilations": [1, 2]}),
    ("ConvTranspose", {"x": normal(1, 2, 5), "w": normal(2, 3, 3)}, {},
     {"strides": [2], "output_shape": [10]}),
    ("ConvTranspose", {"x": normal(1, 2, 4, 4), "w": normal(2, 1, 2, 2)}, {},
     {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ("Resize", {"x": normal(1, 2, 3, 4)}, {"roi": np.zeros(0, np.float32),
                                         "scales": np.array([1, 1, 2, 1.5], np.float32)},
     {"mode": "nearest"}),
    ("Resize", {"x": normal(1, 2, 3, 4)}, {"roi": np.zeros(0, np.float32),
                                         "scales": np.array([1, 1, 2, 0.5], np.float32)},
     {"mode": "linear"}),
    ("Resize", {"x": normal(2, 3, 5)}, {"roi": np.zeros(0, np.float32),
                                      "scales": np.zeros(0, np.float32),
                                      "sizes": np.array([2, 3, 8])},
     {"mode": "linear", "coordinate_transformation_mode": "align_corners"}),
    ("Resize", {"x": normal(1, 1, 4, 4)}, {"roi": np.zeros(0, np.float32),
                                         "scales": np.zeros(0, np.float32),
                                         "sizes": np.array([1, 1, 7, 3])},
     {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
      "nearest_mode": "ceil"}),
    ("Resize", {"x": normal(1, 1, 4, 4)}, {"roi": np.zeros(0, np.float32),
                                         "scales": np.array([1, 1, 1.7, 2.5], np.float32)},
     {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}),
    ("MaxPool", {"x": normal(1, 2, 7, 7)}, {}, {"kernel_shape": [3, 3], "strides": [2, 2],
                                               "ceil_mode": 1}),
    ("AveragePool", {"x": normal(1, 2, 6, 7)}, {}, {"kernel_shape": [3, 2],
                                                   "pads": [1, 1, 1, 0],
                                                   "count_include_pad": 1}),
    ("AveragePool", {"x": normal(1, 2, 6, 7)}, {}, {"kernel_shape": [2, 2],
                                                   "auto_pad": "SAME_LOWER"}),
]


@pytest.mark.parametrize("op, inputs, constants, attributes", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_one_operator_gives_what_onnx_runtime_gives(op, inputs, constants, attributes):
    node = helper.make_node(op, [*inputs, *constants], ["out"], **attributes)
    model = make_model([node], inputs, ["out"], constants)
    same_as_ort(model, *inputs.values(), rtol=1e-5, atol=1e-6)


# Operators whose inputs and attributes changed between opsets, in their older forms
OLD_FORMS = [
    ("Softmax", {"x": X}, {}, {"axis": 1}, 11),  # the input seen as a (2, 12) matrix
    ("LogSoftmax", {"x": X}, {}, {}, 11),
    ("ReduceSum", {"x": X}, {}, {"axes": [1, 2], "keepdims": 0}, 11),
    ("ReduceMax", {"x": X}, {}, {"axes": [-1]}, 13),
    ("Squeeze", {"x": X[:, :1]}, {}, {"axes": [1]}, 11),
    ("Squeeze", {"x": X[:1, :, :1]}, {}, {}, 13),
    ("Unsqueeze", {"x": X}, {}, {"axes": [0, 4]}, 11),
    ("Slice", {"x": X}, {}, {"starts": [1, -3], "ends": [3, 100], "axes": [1, 2]}, 9),
    ("Pad", {"x": X}, {}, {"pads": [0, 1, 0, 0, 2, 1], "value": 7.0}, 9),
    ("Clip", {"x": X}, {}, {"min": -0.3, "max": 0.2}, 6),
    ("Split", {"x": X}, {}, {"axis": 2, "split": [1, 3]}, 11),
    ("Identity", {"x": X}, {}, {}, 21),
    ("Upsample", {"x": normal(1, 1, 2, 3)}, {"scales": np.array([1, 1, 2, 1.5], np.float32)},
     {"mode": "nearest"}, 9),
    ("Upsample", {"x": normal(1, 1, 2, 3)}, {"scales": np.array([1, 1, 3, 2], np.float32)},
     {"mode": "linear"}, 9),
]


@pytest.mark.parametrize("op, inputs, constants, attributes, opset", OLD_FORMS,
                         ids=[f"{c[0]}-{c[4]}-{i}" for i, c in enumerate(OLD_FORMS)])
def test_older_forms_of_operators(op, inputs, constants, attributes, opset):
    outputs = ["a", "b"] if op == "Split" else ["out"]
    node = helper.make_node(op, [*inputs, *constants], outputs, **attributes)
    model = make_model([node], inputs, outputs, constants, opset=opset)
    same_as_ort(model, *inputs.values(), rtol=1e-6)


def test_constants_made_in_the_graph_are_folded():
    nodes = [helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0, 3.0, 4.0]),
             helper.make_node("ConstantOfShape", ["shape"], ["ones"],
                              value=onnx.numpy_helper.from_array(np.ones(1, np.float32))),
             helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
             helper.make_node("Cast", ["r"], ["rf"], to=onnx.TensorProto.FLOAT),
             helper.make_node("Mul", ["x", "c"], ["xc"]),
             helper.make_node("Add", ["xc", "ones"], ["y"]),
             helper.make_node("Sub", ["y", "rf"], ["out"])]
    model = make_model(nodes, {"x": X}, ["out"],
                       {"shape": np.array([3, 1]), "start": np.float32(0),
                        "limit": np.float32(4), "delta": np.float32(1)})
    same_as_ort(model, X)


def test_shape_arithmetic_is_folded_while_tracing():
    """A PyTorch-style flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
             helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
             helper.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["flat"]),
             helper.make_node("Split", ["flat"], ["a", "b"], axis=1, num_outputs=2)]
    model = make_model(nodes, {"x": X}, ["a", "b"],
                       {"zero": np.int64(0), "axes": np.array([0]),
                        "minus_one": np.array([-1])}, opset=18)
    same_as_ort(model, X)


def test_a_convnet_with_batch_norm_and_a_classifier_head():
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c1", "s", "t", "m", "v"], ["n1"]),
             helper.make_node("Relu", ["n1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["p1"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["logits"], transB=1),
             helper.make_node("Softmax", ["logits"], ["probabilities"])]
    weights = {"w1": normal(8, 1, 3, 3), "b1": normal(8), "s": normal(8), "t": normal(8),
               "m": normal(8), "v": np.abs(normal(8)) + 0.5, "w2": normal(10, 8),
               "b2": normal(10)}
    model = make_model(nodes, {"x": normal(4, 1, 8, 8)}, ["probabilities"], weights)
    same_as_ort(model, normal(4, 1, 8, 8), rtol=1e-5)


def test_a_model_exported_by_jitflow_loads_back():
    def mlp(x, w, b):
        return jitflow.nn.log_softmax(np.tanh(x @ w + b)), (x ** 2).mean(axis=0)
    args = normal(5, 3), normal(3, 4), normal(4)
    model = jitflow.onnx.to_model(mlp, *args)
    loaded = same_as_ort(model, *args)
    for a, e in zip(loaded(*args), jitflow.function(mlp)(*args)):
        assert_same(a, e, rtol=1e-6, atol=1e-6)


def test_a_loaded_model_differentiates_like_finite_differences():
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"]),
             helper.make_node("Tanh", ["h"], ["t"]),
             helper.make_node("Unsqueeze", ["t", "axes"], ["t4"]),
             helper.make_node("Conv", ["t4", "k"], ["c"], pads=[0, 1, 0, 1]),
             helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[1, 2]),
             helper.make_node("BatchNormalization", ["p", "s", "o", "m", "v"], ["n"]),
             helper.make_node("ReduceLogSumExp", ["n"], ["out"], keepdims=0)]
    x = normal(3, 4, dtype=np.float64)
    model = make_model(nodes, {"x": x}, ["out"],
                       {"w": normal(4, 5, dtype=np.float64), "b": normal(5, dtype=np.float64),
                        "k": normal(2, 1, 2, 3, dtype=np.float64), "axes": np.array([0, 1]),
                        **{name: np.abs(normal(2, dtype=np.float64)) for name in "somv"}})
    jitflow.testing.check_grads(jitflow.onnx.load(model), (x,), order=1)


def test_a_loaded_transposed_convolution_differentiates():
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 1],
                              pads=[1, 0, 0, 1]),
             helper.make_node("AveragePool", ["y"], ["p"], kernel_shape=[2, 2]),
             helper.make_node("ReduceSumSquare", ["p"], ["out"], keepdims=0)]
    x = normal(1, 2, 3, 4, dtype=np.float64)
    model = make_model(nodes, {"x": x}, ["out"], {"w": normal(2, 3, 3, 2, dtype=np.float64)})
    jitflow.testing.check_grads(jitflow.onnx.load(model), (x,), order=1)


def test_operators_jitflow_cannot_run_are_all_named():
    nodes = [helper.make_node("Det", ["x"], ["d"]),
             helper.make_node("NonZero", ["x"], ["n"])]
    model = make_model(nodes, {"x": normal(3, 3)}, ["d", "n"])
    with pytest.raises(jitflow.onnx.UnsupportedError, match="Det, NonZero"):
        jitflow.onnx.load(model)


def test_a_shape_computed_from_values_is_a_clear_error():
    nodes = [helper.make_node("Cast", ["n"], ["shape"], to=onnx.TensorProto.INT64),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    model = make_model(nodes, {"x": normal(6), "n": np.array([2.0, 3.0], np.float32)},
                       ["y"])
    with pytest.raises(ValueError, match="Reshape .* shape must be known"):
        jitflow.onnx.load(model)(normal(6), np.array([2.0, 3.0], np.float32))


def test_inputs_must_have_the_declared_dtype_and_shape():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": normal(2, 3)}, ["y"])
    loaded = jitflow.onnx.load(model)
    with pytest.raises(TypeError, match="declared float32 of shape \\[2, 3\\], got float64"):
        loaded(np.ones((2, 3)))
    with pytest.raises(TypeError, match="got float32 of shape \\[3\\]"):
        loaded(normal(3))


def test_load_reads_a_file(tmp_path):
    path = tmp_path / "relu.onnx"
    onnx.save(make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": X}, ["y"]), path)
    assert_same(jitflow.onnx.load(str(path))(X), np.maximum(X, 0))


# --- drawn shapes and dtypes ---------------------------------------------------------------

from hypothesis import given, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

NUMERIC = [np.float32, np.float64, np.int32, np.int64]


def values(dtype, shape, nonzero=False):
    if np.dtype(dtype).kind == "f":
        elements = st.floats(-100, 100, width=np.dtype(dtype).itemsize * 8)
    else:
        elements = st.integers(-100, 100).filter(lambda v: v != 0 or not nonzero)
    return hnp.arrays(dtype, shape, elements=elements)


@given(st.sampled_from(["Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less",
                        "Greater"]), st.sampled_from(NUMERIC),
       hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3), st.data())
def test_binary_operators_broadcast_in_their_one_dtype(op, dtype, shapes, data):
    x = data.draw(values(dtype, shapes.input_shapes[0]))
    y = data.draw(values(dtype, shapes.input_shapes[1], nonzero=op == "Div"))
    model = make_model([helper.make_node(op, ["x", "y"], ["out"])], {"x": x, "y": y},
                       ["out"])
    with np.errstate(all="ignore"):
        same_as_ort(model, x, y, rtol=1e-6, atol=0)


@given(st.sampled_from(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceProd",
                        "ReduceSumSquare", "ReduceL1"]),
       st.sampled_from([np.float32, np.int64]), hnp.array_shapes(max_dims=3, max_side=3),
       st.booleans(), st.data())
def test_reductions_over_drawn_axes(op, dtype, shape, keepdims, data):
    x = data.draw(values(dtype, shape))
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a:
                              a % len(shape), max_size=len(shape)))
    model = make_model([helper.make_node(op, ["x", "axes"], ["out"], keepdims=int(keepdims))],
                       {"x": x}, ["out"], {"axes": np.array(axes, np.int64)})
    same_as_ort(model, x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("largest", [0, 1])
def test_top_k_with_ties_matches_onnx_runtime(dtype, largest):
    x = RNG.integers(-3, 3, (4, 7)).astype(dtype)  # (ties everywhere)
    if np.dtype(dtype).kind == "i":
        x[0, :2] = np.iinfo(dtype).min, np.iinfo(dtype).max
    node = helper.make_node("TopK", ["x", "k"], ["values", "positions"], axis=1,
                            largest=largest)
    model = make_model([node], {"x": x}, ["values", "positions"],
                       {"k": np.array([5], np.int64)})
    same_as_ort(model, x, rtol=0, atol=0)
