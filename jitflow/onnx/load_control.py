"""ONNX's If and Loop (filled in below)."""
CONTROL_OPS = {}
