"""Native products of matmul precision "bfloat16" (codegen/gemm/bfloat16_products.py and
matmul.py's choice): on the tile unit where the CPU has one, and as float32 products of
rounded copies elsewhere (forced here by patching the choice), against the float64
product of NumPy's rounded operands; shapes around the tile blocks, transposed and
broadcast operands, batches, constants, NaN and infinities, one and two threads."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.gemm import amx, bfloat16_products
from rounded_products import check_against_rounded

SIZES = [1, 3, 16, 31, 32, 33, 64, 70]
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-39], np.float32)
ROUTES = ["tiles", "rounded copies"]


@pytest.fixture(autouse=True)
def bfloat16_precision():
    jitflow.config.matmul_precision = "bfloat16"
    yield
    jitflow.config.matmul_precision = "float32"


def native(fn, args, route):
    """fn compiled with its products on `route`, and its LLVM IR."""
    with pytest.MonkeyPatch.context() as patch:
        if route == "rounded copies":
            patch.setattr(bfloat16_products, "MIN_TILE_SIZES", (2 ** 40,) * 3)
        graph = jitflow.optimize(jitflow.function(fn).trace(*args))
        compiled = NativeGraph(graph, "f")
    return compiled(list(args))[0], compiled.llvm_ir


def routes():
    return ROUTES if amx.available() else ROUTES[1:]


def operand(rng, shape, specials):
    values = rng.standard_normal(shape).astype(np.float32) * 4
    if specials and values.size:
        values.flat[rng.integers(0, values.size, 2)] = rng.choice(SPECIALS, 2)
    return values


def product(x, y):
    return x @ y


def x_transposed_product(x_t, y):
    return np.swapaxes(x_t, -1, -2) @ y


def y_transposed_product(x, y_t):
    return x @ np.swapaxes(y_t, -1, -2)


PRODUCTS = {"none": product, "x": x_transposed_product, "y": y_transposed_product}


@settings(max_examples=40, deadline=None)
@given(m=st.sampled_from(SIZES), n=st.sampled_from(SIZES), k=st.sampled_from(SIZES),
       batch=st.sampled_from([(), (2,), (3, 1)]), broadcast=st.booleans(),
       transposed=st.sampled_from(list(PRODUCTS)), specials=st.booleans(),
       route=st.sampled_from(ROUTES), seed=st.integers(0, 99))
def test_products_of_rounded_operands(m, n, k, batch, broadcast, transposed, specials,
                                      route, seed):
    if route not in routes():
        return
    rng = np.random.default_rng(seed)
    y_batch = batch[:-1] + (1,) if broadcast and batch else batch
    x, y = operand(rng, batch + (m, k), specials), operand(rng, y_batch + (k, n), specials)
    args = {"none": (x, y), "x": (np.ascontiguousarray(np.swapaxes(x, -1, -2)), y),
            "y": (x, np.ascontiguousarray(np.swapaxes(y, -1, -2)))}[transposed]
    out, code = native(PRODUCTS[transposed], args, route)
    check_against_rounded(out, x, y)
    on_tiles = "jitflow_amx_bf16gemm" in code
    if route == "rounded copies" or min(k, n) < 32:
        assert not on_tiles
    elif min(m, k, n) >= 32:
        assert on_tiles


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("x_shape, y_shape", [((300, 200), (200, 150)),
                                              ((40, 1000), (1000, 40)),
                                              ((8, 4, 64, 32), (8, 1, 32, 64))])
def test_large_products_cut_between_threads(threads, route, x_shape, y_shape, monkeypatch):
    """(40, 1000) @ (1000, 40): the last 16 rows and columns of the packed operands are
    all padding, a part of the packing with nothing to read. The batch (attention's
    heads, y broadcast) is cut along the batch, each worker with buffers of its own."""
    if route not in routes():
        pytest.skip("no tile unit here")
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    rng = np.random.default_rng(threads)
    x, y = operand(rng, x_shape, True), operand(rng, y_shape, True)
    out, _ = native(lambda x, y: np.tanh(x) @ y, (x, y), route)
    check_against_rounded(out, np.tanh(x), y)


@pytest.mark.parametrize("route", ROUTES)
def test_a_constant_operand(route):
    if route not in routes():
        pytest.skip("no tile unit here")
    x = np.random.default_rng(0).standard_normal((40, 36)).astype(np.float32)
    out, _ = native(lambda x: x @ np.full((36, 48), 1.7, np.float32), (x,), route)
    check_against_rounded(out, x, np.full((36, 48), 1.7, np.float32))


def test_the_rounding_is_to_nearest_even_and_flushes_subnormals():
    """Both routes round like the interpreter: 1 + 2**-8 (a tie) to 1, 1 + 2**-8 +
    2**-20 up, a float32 subnormal to zero."""
    x = np.array([[1 + 2.0 ** -8], [1 + 2.0 ** -8 + 2.0 ** -20], [1e-39]], np.float32)
    y = np.ones((1, 40), np.float32)
    for route in routes():
        out, _ = native(product, (x, y), route)
        assert out[:, 0].tolist() == [1.0, 1 + 2.0 ** -7, 0.0]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("constant_shape, other_shape", [((3, 4, 5), (5, 6)),
                                                         ((5, 6), (3, 4, 5)),
                                                         ((2, 1, 1), (1, 1))])
def test_a_uniform_constant_broadcast_along_the_batch(route, constant_shape, other_shape):
    """A uniform constant has no memory: its copy holds one matrix, which every batch
    index reads (each index read its own, past the copy's end; found by the fuzzer)."""
    if route not in routes():
        pytest.skip("no tile unit here")
    constant = np.full(constant_shape, 1.5, np.float32)
    other = np.random.default_rng(1).standard_normal(other_shape).astype(np.float32)
    x_first = len(constant_shape) == 3
    fn = (lambda v: constant @ v) if x_first else (lambda v: v @ constant)
    out, _ = native(fn, (other,), route)
    check_against_rounded(out, *((constant, other) if x_first else (other, constant)))
