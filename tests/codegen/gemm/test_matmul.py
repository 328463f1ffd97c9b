"""matmul in native code against NumPy, on both routes: BLAS's gemm for float results
(codegen/gemm/blas.py), and the generated kernel, which integer and bool results always
take and every result takes with JITFLOW_BLAS=0.

Float results are compared as fidelity.py says for contractions: within k roundings of
sum |x| |y| where finite, NaN and infinities exactly. The operands' values are moderate
(no sum can overflow) with a few NaN, inf and -0.0 among them, so which results are not
finite does not depend on the order the products are added in.
"""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import jitflow
import jitflow.numpy as jnp
from fidelity import assert_same, numpy_outcome, products_underflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.gemm import blas, sgemm, small_products
from jitflow.codegen.jit import target
from jitflow.codegen.jit.engine import host
from strategies import DTYPES, elements

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
SPECIALS = [np.nan, np.inf, -np.inf, -0.0]
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


# route -> (JITFLOW_BLAS, JITFLOW_SGEMM)
ROUTES = {"blas": ("1", "blas"), "sgemm": ("1", "jitflow"), "generated": ("0", "blas")}


@pytest.fixture(params=list(ROUTES), scope="module")
def route(request):
    """Float matmul lowers through OpenBLAS ("blas"), float32 through jitflow's sgemm
    and float64 through OpenBLAS ("sgemm"), or all through the generated kernel."""
    if request.param != "generated" and blas.library() is None:
        pytest.skip("OpenBLAS (scipy-openblas32) is not loadable here")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JITFLOW_BLAS", ROUTES[request.param][0])
        patch.setenv("JITFLOW_SGEMM", ROUTES[request.param][1])
        yield request.param


@pytest.fixture
def blas_on(monkeypatch):
    if blas.library() is None:
        pytest.skip("OpenBLAS (scipy-openblas32) is not loadable here")
    monkeypatch.setenv("JITFLOW_BLAS", "1")
    monkeypatch.setenv("JITFLOW_SGEMM", "blas")


@pytest.fixture
def blas_off(monkeypatch):
    monkeypatch.setenv("JITFLOW_BLAS", "0")
    monkeypatch.setenv("JITFLOW_SGEMM", "blas")


def test_the_dependency_loads_from_its_folder():
    """scipy-openblas32 is a dependency: its library must load, found without importing
    the package, and report the kernels it runs."""
    path = blas._library_path()
    assert os.path.isfile(path) and "scipy_openblas" in os.path.basename(path)
    assert blas.library() is not None
    assert blas.core_name()


def compile_native(fn, *args):
    return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(*args)), "f")


def run(fn, *args):
    """fn traced, compiled and run on args; also returns the NativeGraph."""
    native = compile_native(fn, *args)
    (result,) = native(list(args))
    return result, native


def calls_blas(native):
    return "scipy_cblas_" in native.llvm_ir


def calls_gemm(native):
    """Whether the code calls a gemm routine, OpenBLAS's or jitflow's."""
    return calls_blas(native) or "jitflow_sgemm" in native.llvm_ir


def contraction_atol(x, y, dtype):
    """k roundings of sum |x| |y| (fidelity.py), for results of `dtype`."""
    if np.dtype(dtype).kind != "f":
        return 0.0
    with np.errstate(invalid="ignore"):  # inf * 0: no bound is needed where not finite
        magnitude = np.matmul(np.abs(x.astype(np.float64)), np.abs(y.astype(np.float64)))
    return x.shape[-1] * float(np.finfo(dtype).eps) * np.nan_to_num(magnitude, posinf=0.0)


def assert_matmul(result, x, y, *, what=""):
    """result is NumPy's x @ y, within the rounding the summation order allows."""
    expected, _ = numpy_outcome(np.matmul, x, y)
    assert_same(result, expected, atol=contraction_atol(x, y, expected.dtype), what=what,
                zero_sign=not products_underflow(x, y, expected.dtype))


def test_a_product_that_underflows_leaves_the_sign_of_its_zero_open():
    # OpenBLAS (fused multiply-add) gives -0.0 here, NumPy's loop +0.0 (found by the
    # property test below); both are the rounding of -2.5e-356
    x, y = np.array([[5.33732105e-253]]), np.array([[-4.61059108e-104]])
    assert products_underflow(x, y, np.float64)
    assert not products_underflow(x, np.array([[-1.0]]), np.float64)
    assert not products_underflow(np.zeros((2, 3)), np.ones((3, 2)), np.float64)
    assert_matmul(np.array([[-0.0]]), x, y)


# --- operands as the kernel sees them -----------------------------------------------------

LAYOUTS = ["contiguous", "transposed", "rows stepped", "columns stepped", "rows reversed",
           "one row broadcast"]


def as_layout(matrix, layout):
    """(argument, reading, operand): the traced function gets `argument`, and
    `reading(argument)` gives it `operand` (equal to `matrix` but for the broadcast
    layout) as a view the lowering represents without a copy."""
    if layout == "transposed":
        return (np.transpose(matrix, _swap_last(matrix)).copy(),
                lambda a: jnp.transpose(a, _swap_last(a)), matrix)
    if layout == "rows stepped":
        return _stepped(matrix, -2), lambda a: a[..., ::2, :], matrix
    if layout == "columns stepped":
        return _stepped(matrix, -1), lambda a: a[..., ::2], matrix
    if layout == "rows reversed":
        return matrix[..., ::-1, :].copy(), lambda a: a[..., ::-1, :], matrix
    if layout == "one row broadcast":
        row, shape = matrix[..., :1, :].copy(), matrix.shape
        return row, lambda a: jnp.broadcast_to(a, shape), np.broadcast_to(row, shape)
    return matrix, lambda a: a, matrix


def _swap_last(a):
    axes = list(range(a.ndim))
    axes[-2:] = axes[-1], axes[-2]
    return axes


def _stepped(matrix, axis):
    """`matrix` on every other index of `axis`, NaN (or 7) between: never to be read."""
    shape = list(matrix.shape)
    shape[axis] *= 2
    filler = np.nan if matrix.dtype.kind == "f" else 7
    argument = np.full(shape, filler).astype(matrix.dtype)
    index = [slice(None)] * matrix.ndim
    index[axis] = slice(None, None, 2)
    argument[tuple(index)] = matrix
    return argument


@st.composite
def matrices(draw, shape, dtype):
    """Moderate values of `dtype` (any integer), a few specials among the floats."""
    dtype = np.dtype(dtype)
    bounds = {} if dtype.kind != "f" else {"min_value": -1000, "max_value": 1000}
    array = draw(hnp.arrays(dtype, shape, elements=elements(dtype, **bounds)))
    if dtype.kind == "f" and array.size:
        for _ in range(draw(st.integers(0, 2))):
            special = draw(st.sampled_from(SPECIALS))
            array.flat[draw(st.integers(0, array.size - 1))] = special
    return array


def draw_operand(data, shape, name):
    """(argument, reading, operand) of any dtype and layout (see as_layout)."""
    dtype = data.draw(st.sampled_from(DTYPES), label=f"{name} dtype")
    matrix = data.draw(matrices(shape, dtype), label=name)
    return as_layout(matrix, data.draw(st.sampled_from(LAYOUTS), label=f"{name} layout"))


@given(st.data())
def test_matches_numpy_for_every_dtype_layout_and_batch(route, data):
    batch_x, batch_y = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, max_dims=2, max_side=3), label="batch shapes").input_shapes
    m, k, n = (data.draw(st.integers(0, 4), label=name) for name in "mkn")
    x_arg, read_x, x = draw_operand(data, batch_x + (m, k), "x")
    y_arg, read_y, y = draw_operand(data, batch_y + (k, n), "y")
    result, native = run(lambda a, b: read_x(a) @ read_y(b), x_arg, y_arg)
    assert_matmul(result, x, y)
    uses_gemm = route != "generated" and result.dtype.kind == "f" and min(m, k, n) > 0
    assert calls_gemm(native) == uses_gemm


# --- which code runs --------------------------------------------------------------------

@pytest.mark.parametrize("dtype, routine", [(F32, "sgemm"), (F64, "dgemm")])
def test_floats_call_gemm_in_place_through_transposes_and_slices(dtype, routine, blas_on):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 6, 5)).astype(dtype), rng.standard_normal((8, 6))
    y = y.astype(dtype)
    result, native = run(lambda a, b: jnp.transpose(a, (0, 2, 1)) @ b.T[:, ::2], x, y)
    assert_matmul(result, np.transpose(x, (0, 2, 1)), y.T[:, ::2])
    assert f'call void @"scipy_cblas_{routine}"' in native.llvm_ir
    assert native.workspace_size == 0  # both operands read where they lie


def test_operands_blas_cannot_read_are_copied_first(route):
    x = np.arange(24.0).reshape(4, 6)
    result, native = run(lambda a: a[:, ::2] @ a[:3, ::3], x)  # strided on both axes
    assert_matmul(result, x[:, ::2], x[:3, ::3])
    assert calls_gemm(native) == (route != "generated")


def test_mixed_dtypes_are_converted_to_the_result_dtype(route):
    x = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    y = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
    for a, b in ((x, y), (y.T, x.T), (x > 0, y), (x, x.T.astype(np.float64))):
        result, native = run(lambda p, q: p @ q, a, b)
        assert_matmul(result, a, b, what=f"{a.dtype} @ {b.dtype}")
        assert calls_gemm(native) == (route != "generated")


def test_constants_in_the_function_are_operands_too(route):
    weights = np.arange(12.0).reshape(4, 3) - 5
    x = np.linspace(-2, 2, 8).reshape(2, 4)
    for constant in (weights, np.ones((4, 3))):  # an array, and a uniform constant
        result, _ = run(_times(constant), x)
        assert_matmul(result, x, constant)


def _times(constant):
    return lambda a: a @ constant


def test_batched_matmul_makes_one_call_per_batch_element_of_broadcast_batches(blas_on):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 1, 5, 3)), rng.standard_normal((4, 3, 6))
    result, native = run(lambda a, b: a @ b, x, y)
    assert_matmul(result, x, y)
    assert native.llvm_ir.count('call void @"scipy_cblas_dgemm"') == 1  # inside a loop
    assert native.workspace_size == 0


def test_a_batch_times_one_matrix_is_one_product_of_all_its_rows(blas_on):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((6, 5, 7)), rng.standard_normal((7, 4))
    result, native = run(lambda a, b: a @ b, x, y)
    assert_matmul(result, x, y)
    # rows, columns, depth: 30 rows in one call, no loop over the batch around it
    assert re.search(r'call void @"scipy_cblas_dgemm"\(i32 101, i32 111, i32 111, '
                     r'i32 30, i32 4, i32 7', native.llvm_ir)
    result, native = run(lambda a, b: jnp.transpose(a, (1, 0, 2)) @ b, x, y)
    assert_matmul(result, np.transpose(x, (1, 0, 2)), y)  # rows not evenly spaced
    assert "i32 30, i32 4, i32 7" not in native.llvm_ir


def test_without_the_library_the_generated_kernel_runs(monkeypatch, blas_on):
    monkeypatch.setattr(blas, "library", lambda: None)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    result, native = run(lambda a: a @ a.T, x)
    assert_matmul(result, x, x.T)
    assert not calls_blas(native)


@pytest.mark.parametrize("dtype, operation", [("int32", r"mul <\d+ x i32>"),
                                              ("int64", r"mul <\d+ x i64>"),
                                              ("bool", r"and <\d+ x i8>"),
                                              ("float32", r"fmul <\d+ x float>")])
def test_generated_kernel_vectorizes_its_inner_loop(dtype, operation, blas_off):
    if dtype == "int64" and target.preferred_vector_bits() < 256:
        pytest.skip("SSE has no vector multiply of int64: LLVM rightly keeps it scalar")
    x = np.ones((16, 64), dtype)
    native = compile_native(lambda a, b: a @ b, x, np.ones((64, 64), dtype))
    assert re.search(operation, native.compiled.optimized_ir)


# --- edge cases -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("shapes", [((3, 0), (0, 4)), ((0, 2), (2, 3)), ((3, 2), (2, 0)),
                                    ((2, 0, 5), (5, 1)), ((1, 1), (1, 1))])
def test_empty_and_single_element_products(route, dtype, shapes):
    x, y = ((np.arange(np.prod(s)).reshape(s) + 2).astype(dtype) for s in shapes)
    result, _ = run(lambda a, b: a @ b, x, y)
    assert_same(result, x @ y)  # k = 0: +0.0 everywhere, as NumPy


def test_nan_and_inf_propagate_as_in_numpy(route):
    x = np.array([[np.inf, 1.0], [np.nan, 2.0], [1.0, 2.0], [np.inf, -np.inf],
                  [-0.0, -0.0]], np.float32)
    y = np.array([[0.0, 1.0, -1.0], [1.0, 2.0, 3.0]], np.float32)
    result, _ = run(lambda a, b: a @ b, x, y)
    expected, _ = numpy_outcome(np.matmul, x, y)
    assert np.isnan(expected[0, 0]) and np.isposinf(expected[0, 1])
    assert_same(result, expected)


def test_integers_wrap_and_bool_is_or_of_ands(route):
    big = np.array([[2 ** 30, 2 ** 30, 3], [-2 ** 31, 1, 1]], np.int32)
    result, _ = run(lambda a, b: a @ b, big, np.full((3, 2), 4, np.int32))
    assert_same(result, big @ np.full((3, 2), 4, np.int32))
    rng = np.random.default_rng(2)
    p, q = rng.random((5, 7)) < 0.2, rng.random((7, 4)) < 0.2
    result, _ = run(lambda a, b: a @ b, p, q)
    assert_same(result, p @ q)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_generated_kernel_on_products_larger_than_its_cache_blocks(dtype):
    # k = 1001: blocks of whole groups of 4 products, a shorter block, then one product
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, (5, 1001)).astype(dtype)
    y = rng.integers(-50, 50, (1001, 300)).astype(dtype)
    result, _ = run(lambda a, b: a @ b, x, y)
    assert_same(result, x @ y)


def test_generated_float_kernel_adds_products_in_k_order(blas_off):
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((3, 700)), rng.standard_normal((700, 400))
    result, _ = run(lambda a, b: a @ b, x, y)
    expected = np.zeros((3, 400))
    for k in range(x.shape[1]):  # one rounded product and one rounded sum at a time
        expected = expected + x[:, k:k + 1] * y[k]
    assert_same(result, expected)


def test_blas_results_are_deterministic(blas_on):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((256, 300)).astype(np.float32)  # large enough for 2 threads
    native = compile_native(lambda a, b: a @ b, x, x.T.copy())
    first = native([x, x.T.copy()])[0]
    for _ in range(3):
        assert native([x, x.T.copy()])[0].tobytes() == first.tobytes()
    assert_matmul(first, x, x.T)


# --- jitflow's sgemm ---------------------------------------------------------------------

@pytest.mark.parametrize("columns", [10, 64])
def test_float32_takes_jitflows_sgemm_where_it_beats_openblas(monkeypatch, columns):
    monkeypatch.delenv("JITFLOW_SGEMM", raising=False)
    monkeypatch.setenv("JITFLOW_BLAS", "1")
    x = np.linspace(-1, 1, 4 * columns, dtype=np.float32).reshape(columns, 4)
    result, native = run(lambda a, b: a @ b.T, x[:3], x)  # 3 x columns
    assert_matmul(result, x[:3], x.T)
    features = target.features()
    expected = (blas.library() is None or "avx512f" in features
                or ({"avx2", "fma"} <= features and columns >= 16))
    # jitflow's own code: its sgemm, or for a product this small, the graph's own loops
    # (small_products.py)
    ours = "jitflow_sgemm" in native.llvm_ir or "small.k" in native.llvm_ir
    assert ours == expected
    _, native = run(lambda a, b: a @ b.T, x.astype(np.float64), x.astype(np.float64))
    assert "jitflow_sgemm" not in native.llvm_ir  # float64 stays with BLAS


def test_an_unknown_sgemm_route_is_an_error(monkeypatch):
    monkeypatch.setenv("JITFLOW_SGEMM", "fastest")
    x = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="JITFLOW_SGEMM must be one of auto, jitflow, blas"):
        run(lambda a: a @ a, x)


@pytest.mark.parametrize("batch", [(), (3,)])
def test_large_products_are_cut_into_a_share_per_worker_with_the_same_bits(monkeypatch,
                                                                           batch):
    """With workers, each computes its share of the product (a call per worker, not a
    pool job from inside the graph's own); the result is the same bits as on one
    thread, and as the product alone."""
    monkeypatch.setenv("JITFLOW_SGEMM", "jitflow")
    rng = np.random.default_rng(6)
    x = rng.standard_normal(batch + (200, 130)).astype(np.float32)
    y = rng.standard_normal((130, 150)).astype(np.float32)
    results = {}
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("JITFLOW_THREADS", threads)
        # an exact epilogue (a transcendental one rounds by the CPU's vector width)
        results[threads], native = run(lambda a, b: jnp.maximum(a @ b, 0) * 2, x, y)
        assert ('"jitflow_sgemm_shares"' in native.llvm_ir) == (threads != "1")
    assert results["1"].tobytes() == results["2"].tobytes() == results["3"].tobytes()
    alone = sgemm.sgemm_threads_function()
    for index in np.ndindex(*batch):
        product = np.empty((200, 150), np.float32)
        alone(1, 101, 111, 111, 200, 150, 130, 1.0, x[index].ctypes.data, 130,
              y.ctypes.data, 150, 0.0, product.ctypes.data, 150)
        np.testing.assert_array_equal(results["1"][index], np.maximum(product, 0) * 2)


def test_a_batch_of_small_products_is_cut_between_workers_with_the_same_bits(monkeypatch):
    """Attention's products, each too small to cut: each worker computes whole products
    of its part of the batch, every one the bits of the product alone."""
    monkeypatch.setenv("JITFLOW_SGEMM", "jitflow")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 3, 48, 40)).astype(np.float32)
    y = rng.standard_normal((5, 3, 40, 48)).astype(np.float32)
    assert 2 * 48 * 48 * 40 < sgemm.MIN_PARALLEL_FLOPS <= 2 * 15 * 48 * 48 * 40
    results = {}
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("JITFLOW_THREADS", threads)
        results[threads], native = run(lambda a, b: jnp.maximum(a @ b, 0) * 2, x, y)
        assert "jitflow_sgemm_shares" not in native.llvm_ir
        assert ("jitflow_pool_run" in native.llvm_ir) == (threads != "1")
    assert results["1"].tobytes() == results["2"].tobytes() == results["3"].tobytes()
    alone = sgemm.sgemm_threads_function()
    for index in np.ndindex(5, 3):
        product = np.empty((48, 48), np.float32)
        alone(1, 101, 111, 111, 48, 48, 40, 1.0, x[index].ctypes.data, 40,
              y[index].ctypes.data, 48, 0.0, product.ctypes.data, 48)
        np.testing.assert_array_equal(results["1"][index], np.maximum(product, 0) * 2)


def test_small_products_run_on_one_worker(monkeypatch):
    # (in jitflow's sgemm: the graph's own loops would take this product otherwise)
    monkeypatch.setattr(small_products, "SMALL_PRODUCT_FLOPS", 0)
    monkeypatch.setattr(small_products, "NARROW_PRODUCT_FLOPS", 0)
    monkeypatch.setenv("JITFLOW_SGEMM", "jitflow")
    monkeypatch.setenv("JITFLOW_THREADS", "2")
    x = np.ones((8, 8), np.float32)
    result, native = run(lambda a: a @ a, x)
    assert_matmul(result, x, x)
    assert '"jitflow_sgemm_threads"' in native.llvm_ir
    assert "jitflow_sgemm_shares" not in native.llvm_ir


# --- the disk cache ---------------------------------------------------------------------

FRESH_PROCESS = textwrap.dedent("""
    import numpy as np
    import jitflow
    from jitflow.codegen import NativeGraph
    x = (np.arange(64 * 72) % 7).astype(np.float32).reshape(64, 72)
    graph = jitflow.optimize(jitflow.function(lambda a, b: a @ b.T).trace(x, x))
    native = NativeGraph(graph, "f")
    assert native.compiled.from_cache, "expected the object code from the disk cache"
    np.testing.assert_array_equal(native([x, x])[0], x @ x.T)
    print("ok")
""")


@pytest.mark.parametrize("sgemm", ["blas", "jitflow"])
def test_cached_object_code_calling_gemm_links_in_a_fresh_process(tmp_path, monkeypatch,
                                                                  blas_on, sgemm):
    monkeypatch.setenv("JITFLOW_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("JITFLOW_CACHE", "1")
    monkeypatch.setenv("JITFLOW_SGEMM", sgemm)
    # (large enough for a gemm call: smaller products run in the graph's own loops)
    x = (np.arange(64 * 72) % 7).astype(np.float32).reshape(64, 72)
    native = compile_native(lambda a, b: a @ b.T, x, x)  # stored on disk
    assert calls_gemm(native) and calls_blas(native) == (sgemm == "blas")
    done = subprocess.run([sys.executable, "-c", FRESH_PROCESS], cwd=ROOT, env=os.environ,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
