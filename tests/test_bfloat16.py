"""bfloat16 (ml_dtypes') against NumPy with ml_dtypes' loops: its promotions, its casts,
its sums rounded at every step, its contractions, its derivatives, and clear errors
where jitflow does not take it. test_bfloat16_fuzzer.py runs whole programs."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
from fidelity import given_per_backend, run_traced

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
OTHERS = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                "uint16", "uint32", "uint64", "float16", "float32",
                                "float64")]
SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3.39e38, -3.39e38,
            1.00390625, 1.01171875, 255.0, -129.5, 2.0 ** 24 + 2.0 ** 16]


def bfloat16_values(shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=5)):
    elements = st.sampled_from(SPECIALS) | st.floats(width=32, allow_nan=False)
    return hnp.arrays(np.float32, shape, elements=elements).map(lambda a: a.astype(BF16))


def same_bits(actual, expected):
    """Equal values, NaN for NaN and the same sign of every zero."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, \
        (actual.dtype, actual.shape, expected.dtype, expected.shape)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(e))
    known = ~np.isnan(e)
    np.testing.assert_array_equal(a[known], e[known])
    np.testing.assert_array_equal(np.signbit(a[known]), np.signbit(e[known]))


def test_the_dtype_is_jitflow_numpys_as_jax_numpys():
    assert jitflow.numpy.bfloat16 is ml_dtypes.bfloat16
    assert str(jitflow.ir.types.TensorType((2,), BF16)) == "bf16[2]"


# --- promotion: NumPy's with ml_dtypes, measured ---------------------------------------

@pytest.mark.parametrize("other, expected", [
    (1.0, np.float32), (1, BF16), (True, BF16), (np.float32(1), np.float32),
    (np.ones(2, np.int8), BF16), (np.ones(2, np.uint8), BF16),
    (np.ones(2, np.int32), np.float64), (np.ones(2, np.float64), np.float64)])
def test_arithmetic_promotes_as_numpy_with_ml_dtypes(backend, other, expected):
    x = np.array([1.5, -2.25], BF16)
    result = run_traced(lambda x: x + other, x)
    assert np.asarray(result).dtype == np.dtype(expected) == (x + other).dtype
    same_bits(result, x + other)


def test_with_float16_it_computes_in_float32_though_no_dtype_is_common(backend):
    x, h = np.array([1.5, np.nan], BF16), np.array([0.25, 1], np.float16)
    with pytest.raises(TypeError):
        np.result_type(x, h)
    same_bits(run_traced(lambda x, h: x + h, x, h), x + h)  # float32: NumPy's loop
    with pytest.raises(TypeError):  # (NumPy: no common dtype)
        run_traced(lambda x, h: np.concatenate([x, h]), x, h)


# --- casts --------------------------------------------------------------------------

@given_per_backend(x=bfloat16_values(), other=st.sampled_from(OTHERS))
def test_casts_from_and_to_bfloat16_are_numpys(x, other):
    """Every cast goes through float32 (float64 and int64 values are rounded twice).
    A float to integer cast of NaN, inf or an out-of-range value is undefined in C++
    and NumPy: ml_dtypes' bfloat16 to uint32 of NaN is 2**31 where NumPy's float32's
    is 0, jitflow's too (x86's answer, README). Those are left out."""
    if other.kind in "iu":
        info = np.iinfo(other)
        wide = x.astype(np.float64)
        x = np.where(np.isfinite(wide) & (wide >= info.min) & (wide < info.max + 1.0),
                     x, np.zeros((), BF16))
    with np.errstate(invalid="ignore", over="ignore"):
        expected_from = x.astype(other)
        back = expected_from.astype(BF16)
    same_bits(run_traced(lambda x: x.astype(other), x), expected_from)
    same_bits(run_traced(lambda y: y.astype(BF16), expected_from), back)


def test_float64_to_bfloat16_rounds_through_float32_as_ml_dtypes():
    # 1 + 2**-8 + 2**-30: just above a tie in bfloat16, but a tie once in float32
    x = np.array([1 + 2.0 ** -8 + 2.0 ** -30, 2.0 ** 24 + 2.0 ** 16 + 1])
    f = jitflow.function(lambda x: x.astype(BF16))
    same_bits(f(x), x.astype(BF16))
    assert f(x)[0] == 1.0


# --- sums rounded at every step; contractions --------------------------------------

def test_a_sum_rounds_its_running_total_to_bfloat16_at_every_step(backend):
    ones = np.ones(1000, BF16)
    same_bits(run_traced(np.sum, ones), np.sum(ones))  # 256: 256 + 1 rounds to 256
    assert float(run_traced(np.sum, ones)) == 256.0
    same_bits(run_traced(np.mean, ones), np.mean(ones))


@given_per_backend(x=bfloat16_values(hnp.array_shapes(min_dims=1, max_dims=3, max_side=6)),
                   data=st.data())
def test_reductions_of_bfloat16_are_numpys(x, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    with np.errstate(all="ignore"):
        for reduce in (np.sum, np.prod, np.mean, np.cumsum):
            same_bits(run_traced(lambda x: reduce(x, axis=axis), x), reduce(x, axis=axis))
        if x.size:
            extremum = run_traced(lambda x: np.max(x, axis=axis), x)
            np.testing.assert_array_equal(np.asarray(extremum, np.float64),
                                          np.max(x, axis=axis).astype(np.float64))


def test_matmul_is_float32_and_dot_rounds_to_bfloat16(backend):
    """NumPy has no bfloat16 matmul loop: it computes in float32 and keeps that. Its dot
    (and tensordot, inner, vdot) sums in float32 and rounds to bfloat16."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 7)).astype(BF16)
    b = rng.standard_normal((7, 3)).astype(BF16)
    product = run_traced(lambda a, b: a @ b, a, b)
    assert product.dtype == (a @ b).dtype == np.float32
    np.testing.assert_allclose(product, a @ b, rtol=1e-6)
    dot = run_traced(np.dot, a, b)
    assert dot.dtype == np.dot(a, b).dtype == BF16
    np.testing.assert_allclose(dot.astype(np.float32), np.dot(a, b).astype(np.float32),
                               rtol=2.0 ** -7)


def test_einsum_of_bfloat16_raises_as_numpys(backend):
    x = np.ones((2, 2), BF16)
    with pytest.raises(TypeError):
        np.einsum("ij,jk", x, x)
    with pytest.raises(TypeError, match="einsum"):
        run_traced(lambda x: np.einsum("ij,jk", x, x), x)


# --- what jitflow does not take: a clear error, naming the function and the line -----

@pytest.mark.parametrize("function", [lambda x: np.median(x), lambda x: np.linalg.inv(x),
                                      lambda x: np.fft.fft(x), lambda x: np.nextafter(x, x)])
def test_a_function_not_taking_bfloat16_says_so(backend, function):
    x = np.eye(2, dtype=BF16)
    with pytest.raises(TypeError, match="bfloat16") as raised:
        run_traced(function, x)
    assert "test_bfloat16.py" in str(raised.value)


# --- derivatives --------------------------------------------------------------------

def test_the_gradient_with_respect_to_bfloat16_is_bfloat16():
    x = np.array([1.5, -2.0, 0.25], BF16)
    grad = jitflow.grad(lambda x: np.sum(x.astype(np.float32) ** 2))
    compiled = jitflow.function(grad)
    for result in (grad(x), compiled(x)):
        assert result.dtype == BF16
        same_bits(result, (2 * x.astype(np.float32)).astype(BF16))


def test_a_compiled_step_updates_a_bfloat16_variable():
    weights = jitflow.Variable(np.array([1.0, 2.0, 3.0], BF16))

    @jitflow.function
    def step(x):
        loss, grad = jitflow.value_and_grad(
            lambda w: np.sum((w.astype(np.float32) * x) ** 2))(weights.value)
        weights.assign(weights.value - (0.125 * grad).astype(BF16))
        return loss

    x = np.array([1.0, 0.5, 2.0], np.float32)
    step(x)
    w = np.array([1.0, 2.0, 3.0], np.float32)
    expected = (w - (0.125 * (2 * w * x * x)).astype(BF16)).astype(BF16)
    same_bits(weights.value, expected.astype(BF16))


def test_a_closed_over_bfloat16_array_is_watched_for_changes():
    """A closed-over array NumPy reads while tracing is copied, and each call compares
    its bytes with the copy's (a memoryview of the array itself refuses bfloat16)."""
    table = np.array([1.5, 2.0], BF16)
    f = jitflow.function(lambda x: x * np.float32(table[0]))
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(f(x), x * 1.5)
    table[0] = 4.0
    np.testing.assert_array_equal(f(x), x * 4.0)


def test_a_bfloat16_function_exports_to_onnx_and_loads_back():
    onnx = pytest.importorskip("onnx")
    import jitflow.onnx
    x = np.array([[1.0, 2.5, -3.0, np.nan]], BF16)
    model = jitflow.onnx.to_model(jitflow.function(lambda x: np.tanh(x) * 2 + x), x)
    assert model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
    loaded = jitflow.onnx.load(model)
    same_bits(loaded(x), np.tanh(x) * 2 + x)
