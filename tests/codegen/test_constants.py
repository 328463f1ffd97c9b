"""Array constants: small ones inside the module, large ones named by their contents and
kept outside it, including when the code comes back from the disk cache. (A writable
array a function closes over is an input instead, read at every call: these close over
read-only ones.)"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitflow
from jitflow.codegen import constants
from jitflow.codegen.memory import ALIGNMENT


def frozen(array):
    array = array.copy()
    array.flags.writeable = False
    return array


def closing_over(weights):
    weights = frozen(weights)
    return jitflow.function(lambda x: np.tanh(x @ weights) + weights[0])


def test_a_large_constant_is_named_not_written_into_the_module():
    weights = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    f = closing_over(weights)
    x = np.random.default_rng(1).standard_normal((4, 300)).astype(np.float32)
    np.testing.assert_allclose(f(x), np.tanh(x @ weights) + weights[0], rtol=1e-4, atol=1e-4)
    ir_text = f.lower(x).llvm_ir()
    assert constants.external(weights) in ir_text
    assert len(ir_text) < weights.nbytes // 10  # no initializer of 60000 floats


def test_equal_shapes_with_different_contents_get_different_symbols():
    rng = np.random.default_rng(2)
    first, second = (rng.standard_normal((40, 40)) for _ in range(2))
    assert constants.external(first) != constants.external(second)
    assert constants.external(first) == constants.external(first.copy())
    assert constants.external(first) != constants.external(first.astype(np.float32))
    x = rng.standard_normal((3, 40))
    for weights in (first, second):
        np.testing.assert_allclose(closing_over(weights)(x),
                                   np.tanh(x @ weights) + weights[0], rtol=1e-12)


def test_small_constants_stay_inline():
    small = frozen(np.arange(4.0))
    text = jitflow.function(lambda x: x * small).lower(np.ones(4)).llvm_ir()
    assert "jitflow_constant_" not in text


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float64])
def test_kept_bytes_are_aligned_read_only_copies(dtype):
    data = (np.arange(1000) % 3).astype(dtype)
    name = constants.external(data)
    kept = constants._kept[name]
    assert kept.ctypes.data % ALIGNMENT == 0 and not kept.flags.writeable
    np.testing.assert_array_equal(kept, data)


def test_a_cached_module_finds_its_constant_in_a_new_process(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, jitflow
        weights = np.arange(5000.0).reshape(50, 100) / 5000
        weights.flags.writeable = False
        f = jitflow.function(lambda x: x @ weights.T)
        x = np.ones((2, 100))
        f(x); f.wait()
        np.testing.assert_allclose(f(x), x @ weights.T)
        (executable,) = f._cache.values()
        print(executable.native.compiled.from_cache)
    """)
    env = {"JITFLOW_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    loaded = []
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        loaded.append(run.stdout.split()[-1])
    assert loaded == ["False", "True"]
