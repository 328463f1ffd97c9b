"""The complex fuzzer's programs (tests/complex_values/test_complex_fuzzer.py) exported
to ONNX, their complex values as real arrays of their parts: run in ONNX Runtime (where
it has the kernels) and loaded back into jitflow as functions of complex values, each
gives NumPy's values, dtypes and shapes, compared as the complex fuzzer compares."""
import os
import sys

import numpy as np
import pytest
from hypothesis import given, note, settings

pytest.importorskip("onnx")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "complex_values"))
import jitflow.onnx  # noqa: E402
from complex_fuzzer_ops import OPS  # noqa: E402
from test_complex_fuzzer import FUZZ, check, programs, run_numpy  # noqa: E402
from test_onnx_complex import complex_results, model_inputs  # noqa: E402
from test_onnx_fuzzer import as_function, runtime_results  # noqa: E402
from test_program_fuzzer import numpy_values  # noqa: E402


@settings(FUZZ, max_examples=max(1, FUZZ.max_examples // 2))
@given(program=programs())
def test_exported_complex_programs_give_numpy_results(program):
    if program.raises or not program.outputs:
        return  # (what NumPy refuses is the complex fuzzer's own test)
    note(f"program:\n{program}")
    inputs = [np.asarray(x) if not isinstance(x, (int, float, complex)) else x
              for x in program.inputs]
    values = numpy_values(program, inputs, OPS)
    try:
        model = jitflow.onnx.to_model(as_function(program, OPS), *inputs)
    except jitflow.onnx.UnsupportedError:
        return  # (a primitive without an ONNX form: named, and tested elsewhere)
    expected = run_numpy(program, inputs)
    with np.errstate(all="ignore"):
        outputs = runtime_results(model, model_inputs(inputs))
        loaded = jitflow.onnx.load(model)(*inputs)
    if outputs is not None:
        results = complex_results(model, list(outputs))
        check("onnxruntime", (tuple(results), None), expected, program, inputs, values)
    loaded = loaded if isinstance(loaded, tuple) else (loaded,)
    check("loaded back", (tuple(map(np.asarray, loaded)), None), expected, program,
          inputs, values)
