"""The core install is NumPy, llvmlite and scipy-openblas32: jitflow imports and runs
without the optional extras, and a feature that needs one says which to install."""
import subprocess
import sys
import textwrap

OPTIONAL = ["safetensors", "safetensors.numpy", "onnx", "onnxruntime", "tensorboard",
            "mpi4py", "ml_dtypes"]


def run_without_extras(code, cwd=None):
    hide = "".join(f"sys.modules[{name!r}] = None\n" for name in OPTIONAL)
    script = "import sys\n" + hide + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_jitflow_imports_and_compiles_without_the_extras():
    done = run_without_extras("""
        import numpy as np
        import jitflow, jitflow.nn, jitflow.v1
        f = jitflow.function(lambda x: np.tanh(x) * 2)
        assert np.allclose(f(np.ones(3)), np.tanh(np.ones(3)) * 2)
        assert not hasattr(jitflow.numpy, "bfloat16")  # ml_dtypes' own
        g = jitflow.function(lambda x: np.sum(x.astype(np.float16)) + np.max(x))
        assert g(np.arange(3.0)) == 5.0
        print("ran")
    """)
    assert done.returncode == 0, done.stderr
    assert "ran" in done.stdout


def test_a_feature_that_needs_an_extra_names_it(tmp_path):
    done = run_without_extras("""
        import jitflow.nn as nn
        model = nn.Sequential([nn.Input((2,)), nn.Dense(3)])
        model.save_weights("unused.npz")  # npz needs nothing more
        try:
            model.save("unused.jitflow")
        except ImportError as error:
            print(error)
    """, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pip install 'jitflow[safetensors]'" in done.stdout
