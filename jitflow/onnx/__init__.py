"""jitflow.onnx: models exchanged with the ONNX ecosystem.

    jitflow.onnx.export(fn, "model.onnx", x)      # fn traced at x, as an ONNX model
    predict = jitflow.onnx.load("model.onnx")      # any ONNX model, as a jitflow.function

Exported models pass onnx.checker and run in ONNX Runtime; loaded models are compiled
like any jitflow function and differentiate. Needs the `onnx` package (the `onnx`
extra); importing jitflow alone does not import it.
"""
from .errors import UnsupportedError
from .export import export, to_model
from .load import load

__all__ = ["export", "to_model", "load", "UnsupportedError"]
