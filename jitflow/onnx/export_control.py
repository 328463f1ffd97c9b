"""Control flow as ONNX's: switch as If, while as Loop (filled in below)."""
CONTROL_RULES = {}
