"""ONNX's own test cases of its operators (onnx.backend.test.case.node), run by
jitflow.onnx.load: every case of operators jitflow runs gives ONNX's expected outputs,
or raises one of the clear errors (an element type jitflow does not have, an attribute
value it does not support, a shape that would depend on values). None gives a wrong
answer.

ONNX's cases often pass shapes, axes and scales as graph inputs; jitflow compiles for
static shapes, so a case refused for that runs again with every input but the first (the
data) as initializers.
Graphs run on the interpreter backend: the semantics are what is tested, and it skips
an LLVM compile per case. ONNX makes its cases' expected outputs when they are collected,
which takes 10 to 20 seconds: the sweep runs when JITFLOW_ONNX_CONFORMANCE=1 is set.

    JITFLOW_ONNX_CONFORMANCE=1 pytest tests/onnx/test_onnx_conformance.py
"""
import os
import re
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

import jitflow  # noqa: E402
import jitflow.onnx  # noqa: E402
from jitflow.onnx.load import OPS, operators_in  # noqa: E402

if not os.environ.get("JITFLOW_ONNX_CONFORMANCE"):
    pytest.skip("ONNX's conformance sweep runs with JITFLOW_ONNX_CONFORMANCE=1",
                allow_module_level=True)
with warnings.catch_warnings():  # (the case generators' own overflows)
    warnings.simplefilter("ignore")
    from onnx.backend.test.case.node import collect_testcases
    CASES = [case for case in collect_testcases(None)
             if isinstance(case.model, onnx.ModelProto) and case.data_sets and
             operators_in(case.model.graph) <= set(OPS)]
CLEAR = re.compile(r"not support|must be known|inference only|jitflow runs|has no shape")


@pytest.fixture(autouse=True, scope="module")
def interpreter():
    saved, jitflow.config.backend = jitflow.config.backend, "interpreter"
    yield
    jitflow.config.backend = saved


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_onnx_node_case(case):
    inputs, expected = ([_array(v) for v in values] for values in case.data_sets[0])
    try:
        actual = _run(case.model, inputs)
    except (TypeError, ValueError, NotImplementedError) as error:
        assert CLEAR.search(str(error)), f"{type(error).__name__}: {error}"
        return
    assert len(actual) >= len(expected)
    for a, e in zip(actual, expected):
        a = np.asarray(a)
        assert (a.dtype, a.shape) == (e.dtype, e.shape)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(a, e, rtol=1e-3, atol=1e-4)
        else:
            np.testing.assert_array_equal(a, e)


def _run(model, inputs):
    try:
        return _outputs(jitflow.onnx.load(model)(*inputs))
    except ValueError as error:
        if "must be known" not in str(error):
            raise
    static = list(range(1, len(inputs)))
    if not static:
        raise ValueError("its one input is a shape or an axis here, which must be known")
    model = _with_initializers(model, {model.graph.input[i].name: inputs[i] for i in static})
    return _outputs(jitflow.onnx.load(model)(*(v for i, v in enumerate(inputs)
                                                if i not in static)))


def _with_initializers(model, values):
    """The model with the inputs `values` names made initializers."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    model.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), name)
                                   for name, v in values.items())
    kept = [i for i in model.graph.input if i.name not in values]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return model


def _array(value):
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else value


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]
