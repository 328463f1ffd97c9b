"""jitflow.onnx: models exchanged with the ONNX ecosystem.

    jitflow.onnx.export(fn, "model.onnx", x)      # fn traced at x, as an ONNX model
    predict = jitflow.onnx.load("model.onnx")      # any ONNX model, as a jitflow.function

export writes the graph jitflow.function compiles for the example arguments (their
shapes and dtypes are the model's), optimized, with Variables and closed-over arrays as
initializers and cond/switch/while_loop/scan as If and Loop (opset 21); the model passes
onnx.checker and gives NumPy's results in ONNX Runtime. A function that assigns
Variables cannot be exported (a model keeps no state), nor one that prints.

load runs a model's operators on jitflow.numpy, so the model is compiled per input
signature like any function and differentiates. Shapes, axes and the like must be known
when it is compiled (computed from shapes and constants, as exporters write them);
models run for inference (no training-mode dropout or batch statistics).

Both raise UnsupportedError naming every primitive or operator that has no counterpart.
Needs the `onnx` package (the `onnx` extra); importing jitflow alone does not import it.
"""
from .errors import UnsupportedError
from .export import export, to_model
from .load import load

__all__ = ["export", "to_model", "load", "UnsupportedError"]
