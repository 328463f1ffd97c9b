"""A fused loop's math calls take their routes knowing the loop's other calls
(mathlib.loop_calling): float32 exp goes inline on AVX-512 targets in a loop of its own,
and through libmvec beside sin and tanh, whose calls would clobber its constants."""
import numpy as np
import pytest

import jitflow
from jitflow.codegen.math import math_inline, mathlib

pytestmark = pytest.mark.skipif(
    not (mathlib.has_libmvec() and math_inline.scale_in_one_step()),
    reason="needs libmvec and a target that scales in one step (AVX-512)")


def _optimized_ir(fn, *args):
    return jitflow.function(fn).lower(*args).llvm_ir()


def test_exp_alone_is_inline():
    x = np.linspace(-5, 5, 1000, dtype=np.float32)
    text = _optimized_ir(lambda x: np.exp(x - 1) * 2, x)
    assert "_ZGV" not in text and "expf" not in text
    assert "llvm.x86.avx512.mask.scalef" in text


def test_exp_beside_other_calls_takes_libmvec():
    x = np.linspace(-5, 5, 1000, dtype=np.float32)
    text = _optimized_ir(lambda x: np.exp(-x * x) * np.sin(x) + np.tanh(x), x)
    assert "expf" in text and "sinf" in text


def test_results_agree_with_numpy_either_way():
    x = np.linspace(-110, 95, 100_003, dtype=np.float32)  # subnormal and infinite too
    alone = jitflow.function(lambda x: np.exp(x))
    beside = jitflow.function(lambda x: (np.exp(x), np.sin(x)))
    with np.errstate(over="ignore"):
        want = np.exp(x)
    np.testing.assert_array_max_ulp(alone(x), want, maxulp=4)
    got_exp, got_sin = beside(x)
    np.testing.assert_array_max_ulp(got_exp, want, maxulp=6)
    np.testing.assert_allclose(got_sin, np.sin(x), rtol=1e-6, atol=1e-7)
