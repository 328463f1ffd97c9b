"""examples/onnx_export.py at a reduced size: the trained convnet crosses ONNX both ways
with the same predictions, and the loaded model differentiates."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))

import onnx_export  # noqa: E402


def test_the_exported_convnet_predicts_the_same_everywhere():
    # untrained (epochs=0): no training step to compile
    runtime, loaded, saliency = onnx_export.exchange(epochs=0, report=lambda *a: None)
    assert runtime < 1e-5
    assert loaded < 1e-6
    assert saliency.shape == (8, 8) and np.isfinite(saliency).all() and saliency.any()
