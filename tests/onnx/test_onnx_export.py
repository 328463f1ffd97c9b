"""jitflow.onnx.export: the model passes onnx.checker and gives in ONNX Runtime what the
function gives in jitflow (and NumPy)."""
import os
import re
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

onnx = pytest.importorskip("onnx")

import jitflow  # noqa: E402
import jitflow.onnx  # noqa: E402
from jitflow import nn  # noqa: E402
from fidelity import assert_same  # noqa: E402
from onnx_support import as_list, run_ort  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
DTYPES = [np.bool_, np.int32, np.int64, np.float32, np.float64]


def round_trip(fn, *args, rtol=0.0, atol=0.0, ulps=0):
    """Export fn at args; ONNX Runtime's results are NumPy's (fn run eagerly), dtypes
    and shapes included."""
    model = jitflow.onnx.to_model(fn, *args)
    expected = as_list(fn(*args))
    actual = _ort_or_loaded_back(model, args)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_same(a, np.asarray(e), rtol=rtol, atol=atol, ulps=ulps)
    return model


# Operators ONNX defines on float64 for which ONNX Runtime has float32 kernels only
FLOAT32_KERNELS_ONLY = {"Atan", "Asin", "Acos", "Tan"}


def _ort_or_loaded_back(model, args):
    """The model's outputs in ONNX Runtime, or, where it lacks a kernel of
    FLOAT32_KERNELS_ONLY, in jitflow (the model loaded back)."""
    try:
        return run_ort(model, *args)
    except Exception as error:
        missing = re.search(r"implementation for (\w+)\(", str(error))
        if missing is None or missing.group(1) not in FLOAT32_KERNELS_ONLY:
            raise
        return [np.asarray(v) for v in as_list(jitflow.onnx.load(model)(*args))]


# --- elementwise, over dtypes and shapes ---------------------------------------------------

def arrays(dtype, shape):
    if np.dtype(dtype).kind == "f":
        elements = st.floats(-1e3, 1e3, width=np.dtype(dtype).itemsize * 8) | \
            st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-12, -1e-12])
    elif np.dtype(dtype).kind == "i":
        elements = st.integers(-50, 50)
    else:
        elements = st.booleans()
    return hnp.arrays(dtype, shape, elements=elements)


ARITHMETIC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
              "max": np.maximum, "min": np.minimum, "floor_divide": np.floor_divide,
              "mod": np.remainder, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
              "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
              "and": np.logical_and, "xor": np.logical_xor}


@given(st.sampled_from(sorted(ARITHMETIC)), st.sampled_from(DTYPES),
       st.sampled_from(DTYPES), hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3,
                                                                 max_side=3), st.data())
def test_binary_ufuncs_with_numpy_promotion(name, dtype_x, dtype_y, shapes, data):
    ufunc = ARITHMETIC[name]
    x = data.draw(arrays(dtype_x, shapes.input_shapes[0]))
    y = data.draw(arrays(dtype_y, shapes.input_shapes[1]))
    try:
        with np.errstate(all="ignore"):
            ufunc(x, y)
    except TypeError:  # no NumPy loop (subtract of bools): nothing to export
        return
    if name in ("floor_divide", "mod") and x.dtype == y.dtype == np.bool_:
        return
    with np.errstate(all="ignore"):
        round_trip(lambda x, y: ufunc(x, y), x, y)


UNARY = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log,
         "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin, "floor": np.floor,
         "ceil": np.ceil, "sign": np.sign, "isnan": np.isnan, "isinf": np.isinf,
         "log1p": np.log1p, "expm1": np.expm1, "not": np.logical_not,
         "arctan": np.arctan, "arcsin": np.arcsin, "arccos": np.arccos,
         "signbit": np.signbit}
APPROXIMATE = {"exp", "log", "tanh", "sin", "log1p", "expm1", "arctan", "arcsin",
               "arccos"}


@given(st.sampled_from(sorted(UNARY)), st.sampled_from([np.float32, np.float64, np.int32]),
       hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), st.data())
def test_unary_ufuncs(name, dtype, shape, data):
    x = data.draw(arrays(dtype, shape))
    with np.errstate(all="ignore"):
        round_trip(lambda x: UNARY[name](x), x, ulps=4 if name in APPROXIMATE else 0)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ufuncs_at_special_values(name):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -2.5, 3.5, 1e300])
    with np.errstate(all="ignore"):
        round_trip(lambda x: UNARY[name](x), x, ulps=4 if name in APPROXIMATE else 0)


def test_log1p_and_expm1_stay_accurate_near_zero():
    x = np.array([1e-300, -1e-20, 1e-10, 3e-8, -0.5, 0.0, -0.0, 700.0, -1.0, np.inf])
    with np.errstate(all="ignore"):
        round_trip(lambda x: (np.log1p(x), np.expm1(x)), x, ulps=2)


def test_floor_division_and_remainder_follow_numpy_at_their_edges():
    x = np.array([1.0, -1.0, 7.0, -7.0, 0.0, -0.0, 5.0, 1.0, -1.0, np.inf])
    y = np.array([0.1, np.inf, -2.0, 2.0, -3.0, 3.0, 0.0, -np.inf, 3.0, 2.0])
    i = np.array([7, -7, 7, -7, 0, 5, np.iinfo(np.int32).min], np.int32)
    j = np.array([2, 2, -2, -2, 3, 0, -1], np.int32)
    with np.errstate(all="ignore"):
        round_trip(lambda x, y, i, j: (x // y, x % y, i // j, i % j), x, y, i, j)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_copysign_and_arctan2_on_every_pair_of_special_values(dtype):
    # composed of several operators (export_composed.py); ONNX Runtime has no float64
    # Atan, so float64's arctan2 is checked loaded back into jitflow
    values = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -3.0, np.inf, -np.inf, np.nan, 1e-30,
                       -1e30, 7e-39]).astype(dtype) if dtype != np.int32 else \
        np.array([0, 1, -1, 3, -7, 2**31 - 1], np.int32)
    y, x = (grid.ravel() for grid in np.meshgrid(values, values, indexing="ij"))
    with np.errstate(all="ignore"):
        round_trip(lambda y, x: np.copysign(y, x), y, x)
        if np.result_type(dtype, np.float32) == np.float32:
            round_trip(lambda y, x: np.arctan2(y, x), y, x, ulps=2)
        else:
            model = jitflow.onnx.to_model(lambda y, x: np.arctan2(y, x), y, x)
            assert_same(np.asarray(jitflow.onnx.load(model)(y, x)), np.arctan2(y, x),
                        ulps=2)


# --- structure -----------------------------------------------------------------------------

def test_reductions_keep_numpy_dtypes_and_nans():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -6.0]], np.float32)
    b = np.array([[True, False, True], [False, False, True]])
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    round_trip(lambda x, b, i: (x.max(axis=1), x.min(axis=0, keepdims=True), b.sum(0),
                                i.prod(), i.max(1), b.any(1), np.argmax(x, axis=1),
                                np.argmin(i), np.cumsum(i, axis=1), x.sum()), x, b, i)


def test_softmax_and_logsumexp():
    x = np.random.default_rng(0).normal(size=(3, 5)) * 30
    round_trip(lambda x: (nn.softmax(x), jitflow.numpy.logsumexp(x, axis=0)), x, ulps=8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_sort_and_argsort_are_stable_with_nans_last(dtype):
    rng = np.random.default_rng(4)
    pool = [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf] if np.dtype(dtype).kind == "f" \
        else [0, 1, 3, -2]
    x = rng.choice(np.array(pool), (4, 9)).astype(dtype)
    for axis in (0, 1, -1):
        model = round_trip(lambda x: (np.sort(x, axis=axis, kind="stable"),
                                      np.argsort(x, axis=axis, kind="stable")), x)
        loaded = jitflow.onnx.load(model)(x)
        assert_same(np.asarray(loaded[1]), np.argsort(x, axis=axis, kind="stable"))


def test_slices_gathers_scatters_and_padding():
    x = np.arange(24.0).reshape(2, 3, 4)
    rows = np.array([[1, -1], [0, 2]])
    cols = np.array([3, -4])

    def f(x, rows, cols):
        y = x.copy()
        y[:, rows[0], 1:3] = -1.0  # a scatter
        z = np.zeros_like(x)
        z[0] += 1.0
        return (x[:, ::-2, 1:], x[1, rows, cols], x[..., cols], y, z, np.pad(x, 1),
                np.concatenate([x, x[:, :1]], axis=1), x @ x[0].T[None], x[::-1, 2, ::3])
    round_trip(f, x, rows, cols)


def test_a_gradient_graph_exports_with_its_scatter_adds():
    x = np.random.default_rng(1).normal(size=(4, 3))
    index = np.array([0, 2, 2, 3])

    def loss(x):
        return (np.tanh(x[index]) ** 2).sum()
    grad = jitflow.grad(loss)
    model = jitflow.onnx.to_model(grad, x)
    assert "ScatterND" in {n.op_type for n in model.graph.node}
    assert_same(run_ort(model, x)[0], np.asarray(grad(x)), rtol=1e-12, atol=1e-15)


def test_where_cast_and_python_scalars():
    x = np.linspace(-2, 2, 7).astype(np.float32)
    round_trip(lambda x, k: (np.where(x > 0, x, 0.5 * x).astype(np.int32), x * k,
                             (x > k).astype(np.float64)), x, 1.5)


def test_where_keeps_the_sign_of_a_zero_from_either_operand():
    x = np.array([1.0, -1.0, 0.0, -0.0, np.nan, -np.inf])
    with np.errstate(invalid="ignore"):  # (-0.0 * inf)
        round_trip(lambda x: (np.where(x > 0, -0.0 * x, x), np.where(x < 0, x, -0.0),
                              np.where(x != x, x, 0.0 * x)), x)


# --- models --------------------------------------------------------------------------------

def test_a_sequential_mlp_has_its_weights_as_named_initializers():
    rng = np.random.default_rng(0)
    model = nn.Sequential([nn.Dense(16, activation="relu", rng=rng),
                           nn.Dense(3, activation="softmax", rng=rng)])
    x = rng.normal(size=(5, 4)).astype(np.float32)
    model(x)  # builds the weights
    exported = round_trip(jitflow.function(lambda x: model(x)), x, ulps=8, atol=1e-7)
    names = {t.name for t in exported.graph.initializer}
    assert {v.name for v in model.trainable_variables} <= names
    assert [i.name for i in exported.graph.input] == ["x"]


def test_the_digits_convnet_exports():
    import digits_convnet
    model = digits_convnet.build_model()
    images = np.random.default_rng(2).normal(size=(3, 8, 8, 1)).astype(np.float32)
    predict = jitflow.function(lambda images: model(images))
    exported = jitflow.onnx.to_model(predict, images)
    assert_same(run_ort(exported, images)[0], np.asarray(predict(images)),
                rtol=1e-5, atol=1e-6)


def test_export_writes_a_file_that_onnx_reads_back(tmp_path):
    path = tmp_path / "f.onnx"
    jitflow.onnx.export(lambda x: x * 2.0, path, np.ones(3))
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert_same(run_ort(model, np.arange(3.0))[0], np.arange(3.0) * 2)


# --- errors --------------------------------------------------------------------------------

def test_primitives_without_an_onnx_form_are_all_named():
    def f(x):
        jitflow.debug.print("x is {}", x)
        return x + 1
    with pytest.raises(jitflow.onnx.UnsupportedError, match="debug_callback"):
        jitflow.onnx.to_model(f, np.ones(2))


def test_products_of_bfloat16_precision_are_refused(monkeypatch):
    monkeypatch.setattr(jitflow.config, "_matmul_precision", "bfloat16")
    x = np.ones((2, 3), np.float32)
    with pytest.raises(jitflow.onnx.UnsupportedError,
                       match="matmul_precision = 'float32'.*matmul precision='bfloat16'"):
        jitflow.onnx.to_model(lambda x: x @ x.T, x)


def test_a_function_that_assigns_a_variable_cannot_be_exported():
    v = jitflow.Variable(np.zeros(2), name="v")

    def f(x):
        v.assign(v + x)
        return x
    with pytest.raises(ValueError, match="assigns Variables"):
        jitflow.onnx.to_model(f, np.ones(2))


def test_arguments_of_unsupported_kinds_are_named():
    with pytest.raises(TypeError, match="argument x"):
        jitflow.onnx.to_model(lambda x: x, np.ones(2, np.longdouble))


def test_importing_jitflow_leaves_onnx_unimported():
    import subprocess
    code = "import sys, jitflow; print('onnx' in sys.modules, 'jitflow.onnx' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=os.path.join(os.path.dirname(__file__), "..", ".."))
    assert result.stdout.split() == ["False", "False"]
