"""jitflow_sgemm against NumPy: every transpose, tile edges, leading dimensions larger than
the rows (and nothing outside the matrices touched), NaN and infinities, alpha and beta,
the same bits for any number of threads, concurrent callers, and the narrower tiles
other machines get."""
import ctypes
import hashlib
import mmap
import os
import platform
import subprocess
import sys
import threading
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from llvmlite import ir

from jitflow.codegen.emitter import F32, I32, PTR
from jitflow.codegen.gemm import blocking
from jitflow.codegen.gemm import sgemm as gemm  # `sgemm` is the function under test here
from jitflow.codegen.jit.engine import CompiledModule, optimize_module

FLAGS = {False: gemm.NO_TRANSPOSE, True: gemm.TRANSPOSE}
EPS = np.finfo(np.float32).eps
GARBAGE = np.float32(np.nan)  # C's bytes before a beta = 0 call: never to be read
BORDER = np.float32(-7.25)  # C's elements outside the m x n window: never to be written
rng = np.random.default_rng(0)


@pytest.fixture(scope="module")
def sgemm():
    return gemm.sgemm_function()


@pytest.fixture(scope="module")
def sgemm_threads():
    return gemm.sgemm_threads_function()


# --- operands ---------------------------------------------------------------------------

def operand(rows, cols, transposed, padding=0):
    """op(X) of shape rows x cols, stored as BLAS reads it (X itself, or X^T when
    `transposed`) in a window of a wider array: its leading dimension exceeds its rows
    by `padding`. Returns (stored view, op(X))."""
    shape = (cols, rows) if transposed else (rows, cols)
    wide = rng.standard_normal((shape[0], shape[1] + padding)).astype(np.float32)
    stored = wide[:, :shape[1]]
    return stored, (stored.T if transposed else stored)


def output(rows, cols, padding=0, fill=GARBAGE):
    """C: a rows x cols window (filled with `fill`) of a wider array (BORDER around it);
    returns (window, the whole array)."""
    whole = np.full((rows + 1, cols + padding), BORDER, np.float32)
    window = whole[:rows, :cols]
    window[...] = fill
    return window, whole


def call(function, a, b, c, transpose_a, transpose_b, alpha=1.0, beta=0.0, *leading):
    """C = alpha op(A) op(B) + beta C through `function`, row-major; a and b as stored."""
    m, n = c.shape
    k = a.shape[0] if transpose_a else a.shape[1]
    function(*leading, gemm.ROW_MAJOR, FLAGS[transpose_a], FLAGS[transpose_b], m, n, k,
             alpha, a.ctypes.data, _leading(a), b.ctypes.data, _leading(b), beta,
             c.ctypes.data, _leading(c))


def _leading(view):
    assert view.strides[1] == view.itemsize
    return view.strides[0] // view.itemsize


def reference(op_a, op_b):
    """The exact product (float64 products of floats are exact; the sums nearly), and
    the rounding error allowed: k roundings of the sum of |terms|."""
    exact = op_a.astype(np.float64) @ op_b.astype(np.float64)
    magnitude = np.abs(op_a).astype(np.float64) @ np.abs(op_b).astype(np.float64)
    return exact, 2 * max(op_a.shape[1], 1) * EPS * magnitude + 1e-30


def check_product(function, m, n, k, transpose_a, transpose_b, pad_a=0, pad_b=0, pad_c=0):
    a, op_a = operand(m, k, transpose_a, pad_a)
    b, op_b = operand(k, n, transpose_b, pad_b)
    c, whole = output(m, n, pad_c)
    call(function, a, b, c, transpose_a, transpose_b)
    exact, tolerance = reference(op_a, op_b)
    assert np.all(np.abs(c - exact) <= tolerance), (m, n, k, transpose_a, transpose_b)
    outside = np.ones(whole.shape, bool)
    outside[:m, :n] = False
    assert np.all(whole[outside] == BORDER)


# --- shapes -----------------------------------------------------------------------------

TRANSPOSES = [(False, False), (False, True), (True, False), (True, True)]
TILE = gemm.tile_for(gemm.host()[2])
EDGE_SHAPES = [  # around the micro-kernel's tile and the cache blocks
    (1, 1, 1), (TILE.rows, TILE.cols, 1), (TILE.rows - 1, TILE.cols - 1, 2),
    (TILE.rows + 1, TILE.cols + 1, TILE.lanes + 1), (2 * TILE.rows, 2 * TILE.cols, 64),
    (1, 70, 33), (70, 1, 33), (5, 3, TILE.depth + 1), (300, 257, 129),
    (TILE.block_rows + 5, 40, 17), (3, TILE.block_cols + 7, 5), (37, 45, 2 * TILE.depth + 9),
]


@pytest.mark.parametrize("transpose_a, transpose_b", TRANSPOSES)
@pytest.mark.parametrize("m, n, k", EDGE_SHAPES)
def test_edge_shapes_match_numpy(sgemm, m, n, k, transpose_a, transpose_b):
    check_product(sgemm, m, n, k, transpose_a, transpose_b)


@given(m=st.integers(1, 70), n=st.integers(1, 70), k=st.integers(1, 70),
       transposes=st.sampled_from(TRANSPOSES), pads=st.tuples(*[st.integers(0, 5)] * 3))
def test_small_products_with_wide_leading_dimensions(sgemm, m, n, k, transposes, pads):
    check_product(sgemm, m, n, k, *transposes, *pads)


MLP_SHAPES = [(256, 512, 784, False, False), (256, 10, 512, False, False),
              (784, 512, 256, True, False), (256, 512, 512, False, True),
              (256, 512, 10, False, True)]


@pytest.mark.parametrize("m, n, k, transpose_a, transpose_b", MLP_SHAPES)
def test_training_step_shapes_match_numpy(sgemm, m, n, k, transpose_a, transpose_b):
    check_product(sgemm, m, n, k, transpose_a, transpose_b, pad_b=3, pad_c=1)


# --- special values ---------------------------------------------------------------------

@pytest.mark.parametrize("transpose_a, transpose_b", TRANSPOSES)
def test_nan_and_infinity_spread_like_numpy(sgemm, transpose_a, transpose_b):
    m, n, k = 29, 45, 300
    a, op_a = operand(m, k, transpose_a)
    b, op_b = operand(k, n, transpose_b)
    op_a[3, 7] = np.nan  # all of C's row 3
    op_a[5, 200] = np.inf  # row 5: +-inf, NaN where op(B) is zero
    op_b[200, 9] = 0.0
    op_b[100, 11] = -np.inf  # column 11
    c, _ = output(m, n)
    call(sgemm, a, b, c, transpose_a, transpose_b)
    with np.errstate(invalid="ignore"):  # inf * 0
        expected = op_a.astype(np.float64) @ op_b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(c), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(c), np.isinf(expected))
    np.testing.assert_array_equal(np.sign(c[np.isinf(c)]), np.sign(expected[np.isinf(c)]))
    assert np.isnan(c[3]).all() and np.isnan(c[5, 9])


@pytest.mark.parametrize("alpha, beta", [(0.5, 0.0), (1.0, 1.0), (-2.0, 0.25), (0.0, 3.0),
                                         (0.0, 0.0), (1.5, float("nan"))])
@pytest.mark.parametrize("m, n, k", [(13, 40, 7), (50, 70, 600), (256, 10, 512)])
def test_alpha_and_beta_as_blas_defines_them(sgemm, alpha, beta, m, n, k):
    a, op_a = operand(m, k, False)
    b, op_b = operand(k, n, True, padding=2)
    before = rng.standard_normal((m, n)).astype(np.float32)
    c, _ = output(m, n, padding=1, fill=before)
    call(sgemm, a, b, c, False, True, alpha, beta)
    exact, tolerance = reference(op_a, op_b)
    expected = (alpha * exact if alpha else 0) + (beta * before if beta != 0 else 0)
    allowed = abs(alpha) * tolerance + EPS * np.abs(expected) + 1e-30
    np.testing.assert_array_equal(np.isnan(c), np.isnan(expected))
    assert np.all(np.abs(c - expected)[~np.isnan(expected)] <= allowed[~np.isnan(expected)])


def test_k_zero_only_scales_and_beta_zero_ignores_what_c_held(sgemm):
    a = np.ones(1, np.float32)  # never read
    c, whole = output(6, 9, padding=2)  # NaN
    product = (gemm.ROW_MAJOR, gemm.NO_TRANSPOSE, gemm.NO_TRANSPOSE, 6, 9, 0, 1.0,
               a.ctypes.data, 1, a.ctypes.data, 9)
    sgemm(*product, 0.0, c.ctypes.data, _leading(c))
    assert np.all(c == 0)
    c[...] = 2.0
    sgemm(*product, -1.5, c.ctypes.data, _leading(c))
    assert np.all(c == -3.0) and np.sum(whole == BORDER) == whole.size - c.size


def test_column_major_order(sgemm):
    m, n, k = 37, 53, 41
    a = np.asfortranarray(rng.standard_normal((m, k)).astype(np.float32))
    b = np.asfortranarray(rng.standard_normal((n, k)).astype(np.float32))
    c = np.asfortranarray(np.full((m, n), np.nan, np.float32))
    sgemm(gemm.COLUMN_MAJOR, gemm.NO_TRANSPOSE, gemm.TRANSPOSE, m, n, k, 1.0,
          a.ctypes.data, m, b.ctypes.data, n, 0.0, c.ctypes.data, m)
    exact, tolerance = reference(a, b.T)
    assert np.all(np.abs(c - exact) <= tolerance)


@pytest.mark.parametrize("order, trans_a, m, lda, ldc", [
    (99, gemm.NO_TRANSPOSE, 4, 4, 4), (gemm.ROW_MAJOR, 7, 4, 4, 4),
    (gemm.ROW_MAJOR, gemm.NO_TRANSPOSE, -1, 4, 4), (gemm.ROW_MAJOR, gemm.NO_TRANSPOSE, 4, 3, 4),
    (gemm.ROW_MAJOR, gemm.TRANSPOSE, 5, 4, 5), (gemm.ROW_MAJOR, gemm.NO_TRANSPOSE, 4, 4, 3),
    (gemm.COLUMN_MAJOR, gemm.NO_TRANSPOSE, 4, 4, 3)])
def test_arguments_cblas_rejects_leave_c_alone(sgemm, order, trans_a, m, lda, ldc):
    a = np.ones(64, np.float32)
    c = np.full(64, BORDER, np.float32)
    sgemm(order, trans_a, gemm.NO_TRANSPOSE, m, 4, 4, 1.0, a.ctypes.data, lda, a.ctypes.data,
          4, 0.0, c.ctypes.data, ldc)
    assert np.all(c == BORDER)


# --- threads ----------------------------------------------------------------------------

SPLIT_SHAPES = [(300, 257, 129, False, False), (64, 700, 200, True, False),
                (784, 512, 256, True, False), (256, 512, 512, False, True),
                (97, 1000, 64, True, True)]


def product_bits(function, m, n, k, transpose_a, transpose_b, *leading, seed=1):
    generator = np.random.default_rng(seed)
    a = generator.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = generator.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    call(function, a, b, c, transpose_a, transpose_b, 1.0, 0.0, *leading)
    return c.tobytes()


@pytest.mark.parametrize("shape", SPLIT_SHAPES)
def test_any_thread_count_gives_the_same_bits(sgemm_threads, shape):
    assert 2 * shape[0] * shape[1] * shape[2] >= gemm.MIN_PARALLEL_FLOPS
    one = product_bits(sgemm_threads, *shape, 1)
    for threads in (2, 3, 5):
        assert product_bits(sgemm_threads, *shape, threads) == one, threads


def test_jitflow_threads_sets_the_split_of_jitflow_sgemm(sgemm):
    """A new process, built for one thread, gives the bits of this one (built for
    JITFLOW_THREADS or all CPUs)."""
    shape = SPLIT_SHAPES[2]
    script = ("import sys, hashlib; sys.path[:0] = sys.argv[1:]\n"
              "from test_gemm import product_bits, gemm\n"
              f"print(hashlib.sha256(product_bits(gemm.sgemm_function(), *{shape})).hexdigest())")
    here = Path(__file__).resolve().parent
    environment = {**os.environ, "JITFLOW_THREADS": "1"}
    printed = subprocess.run([sys.executable, "-c", script, str(here), str(here.parents[2])],
                             env=environment, check=True, capture_output=True, text=True)
    assert hashlib.sha256(product_bits(sgemm, *shape)).hexdigest() == printed.stdout.split()[-1]


def test_concurrent_callers(sgemm):
    """Python threads calling at once (ctypes releases the GIL): whoever finds the pool
    busy computes alone, with packing buffers of its own."""
    expected = {seed: product_bits(sgemm, *SPLIT_SHAPES[seed % 3], seed=seed)
                for seed in range(4)}
    start, failures = threading.Barrier(len(expected)), []

    def caller(seed):
        start.wait()
        for _ in range(15):
            if product_bits(sgemm, *SPLIT_SHAPES[seed % 3], seed=seed) != expected[seed]:
                failures.append(seed)

    threads = [threading.Thread(target=caller, args=(seed,)) for seed in expected]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads) and not failures


# --- other builds -----------------------------------------------------------------------

def compiled_function(module, name=gemm.SGEMM):
    compiled = CompiledModule(str(module))
    function = ctypes.CFUNCTYPE(None, *gemm.CBLAS_ARGUMENTS)(compiled.address(name))
    return compiled, function


def compiled_for(module, cpu, features):
    """`module` optimized and compiled for another x86 CPU (which this one can run): an
    engine and SGEMM as a ctypes function."""
    def machine():
        return llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(
            cpu=cpu, features=features, opt=3, jit=True)
    parsed = llvm.parse_assembly(str(module))
    optimize_module(parsed, machine())
    engine = llvm.create_mcjit_compiler(parsed, machine())  # owns its machine
    engine.finalize_object()
    address = engine.get_function_address(gemm.SGEMM)
    return engine, ctypes.CFUNCTYPE(None, *gemm.CBLAS_ARGUMENTS)(address)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 CPUs")
@pytest.mark.parametrize("tile, cpu, features", [
    (gemm.AVX_TILE, "haswell", "+avx2,+fma,-avx512f"),
    (gemm.SSE_TILE, "x86-64", ""),
    (gemm.AVX512_TILE, "x86-64", ""),  # 16-lane vectors legalized into SSE's 4 lanes
], ids=["avx2", "sse2", "avx512-tile-on-sse2"])
def test_other_machines(tile, cpu, features):
    """The tiles and instructions of machines without AVX-512, run here."""
    engine, function = compiled_for(gemm.build_module(tile, threads=2), cpu, features)
    for m, n, k in [(1, 1, 1), (tile.rows + 1, tile.cols - 1, tile.lanes + 3),
                    (70, 45, 300), (150, 33, 20)]:
        for transposes in TRANSPOSES:
            check_product(function, m, n, k, *transposes, pad_a=1, pad_c=2)


def test_without_packing_buffers_the_same_bits(sgemm):
    """When aligned_alloc fails, the unpacked product takes over, with the same bits."""
    module = gemm.build_module(TILE, threads=2)
    failing = module.globals["aligned_alloc"]
    ir.IRBuilder(failing.append_basic_block()).ret(ir.Constant(PTR, None))
    compiled, function = compiled_function(module)
    for shape in [(300, 257, 129, False, False), (37, 45, 600, True, True),
                  (13, 40, 7, False, True)]:
        assert product_bits(function, *shape) == product_bits(sgemm, *shape), shape


@pytest.mark.parametrize("declare, leading", [(gemm.declare, []),
                                             (gemm.declare_threads, [I32(1)])])
def test_declared_in_another_module_it_links_by_name(declare, leading):
    module = ir.Module("caller")
    target = declare(module)
    assert declare(module) is target
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR] * 3), "product")
    b = ir.IRBuilder(entry.append_basic_block())
    a, b_, c = entry.args
    b.call(target, [*leading, I32(gemm.ROW_MAJOR), I32(gemm.NO_TRANSPOSE), I32(gemm.TRANSPOSE),
                    I32(20), I32(30), I32(40), ir.Constant(F32, 1.0), a, I32(40), b_, I32(40),
                    ir.Constant(F32, 0.0), c, I32(30)])
    b.ret_void()
    compiled = CompiledModule(str(module))
    product = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3)(compiled.address("product"))
    x, y = (rng.standard_normal(shape).astype(np.float32) for shape in [(20, 40), (30, 40)])
    z = np.empty((20, 30), np.float32)
    product(x.ctypes.data, y.ctypes.data, z.ctypes.data)
    exact, tolerance = reference(x, y.T)
    assert np.all(np.abs(z - exact) <= tolerance)


# --- micro-panels read in place ---------------------------------------------------------

IN_PLACE_SHAPES = [  # whole and partial panels, one and several K blocks, rows of
    # A transposed close, farther apart with few column panels or many, and far apart
    (2 * TILE.rows, 2 * TILE.cols, 7), (TILE.rows + 5, TILE.cols + 3, TILE.depth + 9),
    (130, 390, 300), (1, TILE.cols, 5), (TILE.rows, 1, 5), (300, 70, 40), (300, 200, 40),
    (600, 40, 20)]


@pytest.mark.parametrize("transpose_a, transpose_b", TRANSPOSES)
@pytest.mark.parametrize("shape", IN_PLACE_SHAPES)
def test_panels_read_in_place_give_the_packed_bits(sgemm, monkeypatch, shape, transpose_a,
                                                   transpose_b):
    """Where the rows of op(A) lie next to each other, its micro-panels are read where
    they lie; packing them all gives the same bits."""
    monkeypatch.setattr(blocking, "READ_A_IN_PLACE", False)
    compiled, packed = compiled_function(gemm.build_module(TILE, threads=1))
    assert product_bits(packed, *shape, transpose_a, transpose_b) == \
        product_bits(sgemm, *shape, transpose_a, transpose_b)


def at_the_end_of_mapped_memory(values):
    """A copy of the 2-d float32 `values` whose last byte is the last before a page the
    process may not read: reading past the matrix faults."""
    page = mmap.PAGESIZE
    size = -(-values.nbytes // page) * page
    region = mmap.mmap(-1, size + page)
    start = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert libc.mprotect(start + size, page, 0) == 0  # PROT_NONE
    copy = np.frombuffer(region, np.float32, values.size, size - values.nbytes)
    copy = copy.reshape(values.shape)
    copy[...] = values
    return copy


@pytest.mark.parametrize("transpose_a, transpose_b", TRANSPOSES)
@pytest.mark.parametrize("m, n, k", [(TILE.rows + 1, TILE.cols + 1, 3), (37, 45, 20),
                                     (2 * TILE.rows, 2 * TILE.cols, 2)])
def test_nothing_past_the_operands_is_read(sgemm, m, n, k, transpose_a, transpose_b):
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    c = np.empty((m, n), np.float32)
    call(sgemm, at_the_end_of_mapped_memory(a), at_the_end_of_mapped_memory(b), c,
         transpose_a, transpose_b)
    exact, tolerance = reference(a.T if transpose_a else a, b.T if transpose_b else b)
    assert np.all(np.abs(c - exact) <= tolerance)
