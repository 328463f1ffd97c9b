"""A model trained with jitflow, exchanged through ONNX both ways.

Trains the digits convnet for a few epochs, exports its prediction to an ONNX model,
runs that model in ONNX Runtime (when installed) and loads it back into jitflow, where
it is compiled again and differentiated: the gradient of a class's probability with
respect to the pixels shows which pixels the model looks at.

    pip install onnx onnxruntime && python examples/onnx_export.py
"""
import os
import tempfile

import numpy as np

import jitflow
import jitflow.onnx
from jitflow.datasets import load_digits

from digits_convnet import train


def exchange(epochs=3, report=print):
    """Train, export, run the model elsewhere and back here; returns the largest
    differences between jitflow's predictions and ONNX Runtime's and the loaded
    model's, and the saliency map of the first test image."""
    accuracy, model, _ = train(epochs=epochs, report=lambda *args: None)
    report(f"trained for {epochs} epochs: test accuracy {accuracy:.3f}")
    _, (images, _) = load_digits()
    batch = images[:16]
    predict = jitflow.function(lambda images: jitflow.nn.softmax(model(images)))
    path = os.path.join(tempfile.mkdtemp(), "digits.onnx")
    proto = jitflow.onnx.export(predict, path, batch)
    report(f"wrote {path}: {len(proto.graph.node)} ONNX nodes, "
           f"{len(proto.graph.initializer)} initializers")
    expected = np.asarray(predict(batch))
    runtime = _onnx_runtime_difference(path, batch, expected, report)
    loaded = jitflow.onnx.load(path)
    loaded_difference = float(np.max(np.abs(np.asarray(loaded(batch)) - expected)))
    report(f"loaded back into jitflow: largest difference {loaded_difference:.2e}")
    label = int(expected[0].argmax())
    saliency = jitflow.grad(lambda image: loaded(image)[0, label])(batch)[0, :, :, 0]
    report("where the model looks for the first test image (|d p / d pixel|):")
    for row in np.abs(saliency) / np.abs(saliency).max():
        report("  " + "".join(" .:-=+*#%@"[min(int(v * 10), 9)] for v in row))
    return runtime, loaded_difference, saliency


def _onnx_runtime_difference(path, batch, expected, report):
    try:
        import onnxruntime
    except ImportError:
        report("onnxruntime is not installed: skipping the run in ONNX Runtime")
        return None
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    (probabilities,) = session.run(None, {session.get_inputs()[0].name: batch})
    difference = float(np.max(np.abs(probabilities - expected)))
    report(f"ONNX Runtime: largest difference from jitflow {difference:.2e}")
    return difference


if __name__ == "__main__":
    exchange()
