"""The program fuzzer's programs (tests/test_program_fuzzer.py), exported to ONNX, run in
ONNX Runtime and loaded back into jitflow: each gives NumPy's values, dtypes and shapes
both ways, within the fuzzer's own tolerances for rounded operations."""
import inspect

import numpy as np
import pytest
from hypothesis import given, note

pytest.importorskip("onnx")

import jitflow.numpy as jnp  # noqa: E402
import jitflow.onnx  # noqa: E402
from fuzzer_ops import OPS  # noqa: E402
from onnx_support import run_ort  # noqa: E402
from strategies import CORE_DTYPES  # noqa: E402
from test_compositions import evaluate  # noqa: E402
from test_program_fuzzer import check, numpy_values, programs, run_numpy  # noqa: E402


def as_function(program, ops=OPS):
    def fn(*inputs):
        values = evaluate(program, jnp, inputs, ops)
        return tuple(values[i] for i in program.outputs)
    fn.__signature__ = inspect.Signature([
        inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for i in range(len(program.inputs))])
    return fn


def _reads_a_nans_sign(program, values):
    """Whether a copysign of the program takes its sign from a NaN. NumPy's NaNs carry
    one (x86 makes sqrt(-1) a NaN with the sign bit set); ONNX has no operator that
    reads it, so the exported copysign counts every NaN positive, as np.nan is."""
    for step in program.steps:
        if step.op == "copysign":
            source = step.args[1]
            source = values[source] if isinstance(source, int) else source[1]
            if np.isnan(np.asarray(source, np.float64)).any():
                return True
    return False


def runtime_results(model, inputs):
    """The model's outputs in ONNX Runtime; None where it has no kernel for one of the
    model's operators in its dtype (float64 Atan and Tan: the model is valid ONNX, and
    the loaded-back run still checks it)."""
    try:
        return tuple(run_ort(model, *inputs))
    except Exception as error:
        if "NOT_IMPLEMENTED : Could not find an implementation" not in str(error):
            raise
        return None


@given(program=programs())
def test_exported_programs_give_numpy_results_in_onnx_runtime_and_loaded_back(program):
    if program.raises or not program.outputs:
        return  # (what NumPy refuses is the fuzzer's own test)
    note(f"program:\n{program}")
    values = numpy_values(program, program.inputs)
    if any(np.asarray(v).dtype not in CORE_DTYPES for v in values):
        return  # (the 8- and 16-bit, unsigned and half dtypes: tests/onnx/test_onnx_export.py)
    if _reads_a_nans_sign(program, values):
        return  # (ONNX cannot read a NaN's sign bit: copysign counts it positive)
    try:
        model = jitflow.onnx.to_model(as_function(program), *program.inputs)
    except jitflow.onnx.UnsupportedError:
        return  # (a primitive without an ONNX form: named, and tested elsewhere)
    expected = run_numpy(program, program.inputs)
    with np.errstate(all="ignore"):
        results = runtime_results(model, program.inputs)
        loaded = jitflow.onnx.load(model)(*map(np.asarray, program.inputs))
    if results is not None:
        check("onnxruntime", (results, None), expected, program, values)
    loaded = loaded if isinstance(loaded, tuple) else (loaded,)
    check("loaded back", (tuple(map(np.asarray, loaded)), None), expected, program, values)
