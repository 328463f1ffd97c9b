"""Running ONNX models in ONNX Runtime, the reference the exchanged models are held to."""
import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")


def run_ort(model, *args):
    """The model's outputs in ONNX Runtime, its inputs fed in order."""
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, {name: np.asarray(a) for name, a in zip(names, args,
                                                                       strict=True)})


def as_list(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def make_model(nodes, inputs, outputs, initializers=None, opset=21):
    """A checked model of `nodes`: `inputs` maps names to example arrays (their dtypes
    and shapes declared), `initializers` names constant arrays; the outputs are names
    (their types inferred) or ValueInfoProtos."""
    import onnx
    from onnx import helper, numpy_helper
    graph = helper.make_graph(
        nodes, "test",
        [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype),
                                       list(a.shape)) for name, a in inputs.items()],
        [helper.make_value_info(name, onnx.TypeProto()) if isinstance(name, str) else name
         for name in outputs],
        initializer=[numpy_helper.from_array(np.asarray(a), name)
                     for name, a in (initializers or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model
