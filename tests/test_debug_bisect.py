"""jitflow.debug.bisect: the first operation whose native result leaves the reference
interpreter's while its operands agree; None for code that agrees."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from jitflow.ops.elementwise import exp_p, tanh_p


def model(x, y):
    a = x * y + 1.0
    b = np.exp(a)
    return np.tanh(b - a).sum() + b.mean(), (a @ a.T if a.ndim == 2 else a)


@given(dtype=st.sampled_from([np.float32, np.float64]), rows=st.integers(1, 40),
       columns=st.integers(1, 40))
@settings(max_examples=10, deadline=None)
def test_correct_code_has_no_drift(dtype, rows, columns):
    x = np.linspace(-1, 1, rows * columns).reshape(rows, columns).astype(dtype)
    assert jitflow.debug.bisect(model, x, x[::-1].copy()) is None


@pytest.mark.parametrize("primitive", [exp_p, tanh_p], ids=["exp", "tanh"])
def test_a_planted_divergence_is_found_at_its_operation(monkeypatch, primitive):
    # the reference computes this one operation slightly off: the drift starts there
    impl = primitive.impl
    monkeypatch.setattr(primitive, "impl", lambda v: impl(v) * (1 + 1e-9))
    x = np.linspace(-1, 1, 300)
    drift = jitflow.debug.bisect(model, x, x + 0.5)
    assert drift is not None and f"= {primitive.name} %0" in drift.node
    assert 0 < drift.max_rel <= 2e-9
    assert primitive.name in str(drift)
