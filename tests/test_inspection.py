"""Function.lower: the fused graph, LLVM IR and assembly of one compiled signature."""
import numpy as np
import pytest

import jitflow


def chain(x, y):
    return np.exp(-x * x) * np.sin(y) + 0.5 * np.tanh(x * y)


def test_lower_shows_fusion_vector_code_and_assembly():
    f = jitflow.function(chain)
    x = np.linspace(-1, 1, 4096, dtype=np.float32)
    lowered = f.lower(x, x)
    assert lowered.graph_ir().count("fused") == 1  # one region for the whole chain
    optimized = lowered.llvm_ir()
    assert "define" in optimized and "x float>" in optimized  # vectorized by LLVM
    assert "jitflow_entry" in lowered.llvm_ir(optimized=False)
    assembly = lowered.asm()
    assert "jitflow_entry:" in assembly
    assert any(register in assembly for register in ("xmm", "ymm", "zmm"))
    np.testing.assert_allclose(f(x, x), chain(x, x), rtol=1e-5, atol=1e-6)
    assert f.cache_info().traces == 1  # the call reused the lowered signature


def test_each_signature_lowers_on_its_own():
    f = jitflow.function(lambda x: x * 2)
    as_f32 = f.lower(np.ones(3, np.float32)).llvm_ir(optimized=False)
    as_f64 = f.lower(np.ones(3)).llvm_ir(optimized=False)
    assert "double" in as_f64 and "double" not in as_f32
    assert f.cache_info().traces == 2


def test_lower_is_for_arrays_and_native_code():
    f = jitflow.function(lambda x: x + 1)
    with pytest.raises(TypeError, match=r"lower\(\) needs arrays"):
        jitflow.function(lambda x: f.lower(x))(np.ones(2))
    previous = jitflow.config.backend
    jitflow.config.backend = "interpreter"
    try:
        with pytest.raises(ValueError, match="lower\\(\\) shows native code"):
            jitflow.function(lambda x: x - 1).lower(np.ones(2))
    finally:
        jitflow.config.backend = previous
