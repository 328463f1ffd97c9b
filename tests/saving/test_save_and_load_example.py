"""examples/save_and_load.py: what the fresh process prints is what the trained model
gives here."""
import os
import sys

import numpy as np

import jitflow

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))

import save_and_load  # noqa: E402


def test_the_fresh_process_classifies_and_differentiates_as_the_original(monkeypatch):
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    monkeypatch.setenv("PYTHONPATH", os.path.abspath(root))
    classify, points, output = save_and_load.main(steps=50)
    lines = output.splitlines()
    classes = classify(points).argmax(axis=1).tolist()
    saliency = jitflow.grad(lambda p: classify(p)[:, 1].sum())(points)
    assert lines[1] == f"classes: {classes}"
    assert lines[2] == f"saliency of the first point: {np.round(saliency[0], 4).tolist()}"
