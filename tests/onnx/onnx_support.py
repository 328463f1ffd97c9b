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
