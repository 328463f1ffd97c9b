"""Small float32 products in the graph's own code (codegen/gemm/small_products.py): the
same bits as jitflow's sgemm, whose call they replace, for every shape around the vector
and register-block widths, transposed x or y, batches (broadcast too) split between
threads, and NaN, infinities and -0.0; and which products take that path."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.gemm import small_products
from jitflow.codegen.gemm.matmul import own_sgemm

pytestmark = pytest.mark.skipif(not own_sgemm(64),
                                reason="float32 products go to OpenBLAS on this CPU")

SIZES = [1, 2, 7, 16, 17, 31, 64, 65, 70]
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)


def product(x, y):
    return x @ y


def x_transposed_product(x_t, y):
    return x_t.T @ y


def y_transposed_product(x, y_t):  # y's rows not contiguous: copied first
    return x @ y_t.T


PRODUCTS = {"none": product, "x": x_transposed_product, "y": y_transposed_product}


def native(fn, *args):
    return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(*args)), "f")


def both_paths(fn, *args):
    """fn's results through small_products.py and through jitflow's sgemm, and the IR
    of the first."""
    small = native(fn, *args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(small_products, "SMALL_PRODUCT_FLOPS", 0)
        patch.setattr(small_products, "NARROW_PRODUCT_FLOPS", 0)
        patch.setattr(small_products, "SHALLOW_DEPTH", 0)
        packed = native(fn, *args)
    assert "small.k" not in packed.llvm_ir
    return small(list(args))[0], packed(list(args))[0], small.llvm_ir


def this_path_with_sgemms_bits(x, y, transposed):
    """x @ y computed here, with the operand named by `transposed` ("x", "y" or
    "none") handed in transposed; asserts the path was taken and sgemm's bits."""
    args = {"none": (x, y), "x": (np.ascontiguousarray(x.T), y),
            "y": (x, np.ascontiguousarray(y.T))}[transposed]
    small, packed, code = both_paths(PRODUCTS[transposed], *args)
    assert "small.k" in code
    np.testing.assert_array_equal(small, packed, strict=True)
    return small


def operand(rng, shape, specials):
    values = rng.standard_normal(shape).astype(np.float32)
    if specials and values.size:
        values.flat[rng.integers(0, values.size, 3)] = rng.choice(SPECIALS, 3)
    return values


@settings(max_examples=80, deadline=None)
@given(m=st.sampled_from(SIZES), n=st.sampled_from(SIZES + [1, 128]),
       k=st.sampled_from(SIZES), transposed=st.sampled_from(list(PRODUCTS)),
       specials=st.booleans(), seed=st.integers(0, 99))
def test_small_products_keep_sgemms_bits(m, n, k, transposed, specials, seed):
    assume(2 * m * n * k <= small_products.SMALL_PRODUCT_FLOPS)
    assume(own_sgemm(n))  # (with AVX2, OpenBLAS takes products of few columns)
    rng = np.random.default_rng(seed)
    x, y = operand(rng, (m, k), specials), operand(rng, (k, n), specials)
    small = this_path_with_sgemms_bits(x, y, transposed)
    finite = np.isfinite(x).all() and np.isfinite(y).all()
    if finite:
        np.testing.assert_allclose(small, x @ y, rtol=1e-4, atol=1e-4 * k)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_batch_of_small_products_splits_with_the_same_bits(threads, monkeypatch):
    # attention's shape: a batch of (64 x 32) @ (32 x 64), y broadcast over the heads
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    rng = np.random.default_rng(threads)
    x, y = operand(rng, (16, 4, 64, 32), True), operand(rng, (16, 1, 32, 64), True)
    small, packed, code = both_paths(product, x, y)
    assert "small.k" in code
    np.testing.assert_array_equal(small, packed, strict=True)


def test_narrow_products_take_this_path_up_to_their_own_size():
    # a convnet's 4096x9 by 9x16: 1.2 MFLOP, but 16 columns
    x, y = np.ones((4096, 9), np.float32), np.ones((9, 16), np.float32)
    small, packed, code = both_paths(product, x, y)
    assert "small.k" in code
    np.testing.assert_array_equal(small, packed, strict=True)
    # 16.8 MFLOP, 64 columns and k = 32: neither narrow nor shallow
    wide = np.ones((4096, 32), np.float32), np.ones((32, 64), np.float32)
    assert "small.k" not in native(product, *wide).llvm_ir


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m, n, k, transposed", [
    (256, 512, 10, "y"),    # an MLP's output layer, backward: d @ W.T
    (101, 300, 16, "x"),    # rows that split unevenly, the deepest shallow k
    (256, 10, 512, "none"),  # narrow: an MLP's output layer, forward
    (512, 10, 256, "x"),    # narrow, x transposed: its weight gradient h.T @ d
])
def test_one_product_splits_its_rows_with_the_same_bits(threads, m, n, k, transposed,
                                                        monkeypatch):
    if not own_sgemm(n):
        pytest.skip("with AVX2, OpenBLAS takes products of few columns")
    monkeypatch.setenv("JITFLOW_THREADS", str(threads))
    rng = np.random.default_rng(m + n + k)
    x, y = operand(rng, (m, k), True), operand(rng, (k, n), True)
    small = this_path_with_sgemms_bits(x, y, transposed)
    finite = np.isfinite(x).all(axis=1)[:, None] & np.isfinite(y).all(axis=0)[None, :]
    expected = x.astype(np.float64) @ y.astype(np.float64)
    np.testing.assert_allclose(small[finite], expected[finite], rtol=1e-4, atol=1e-4 * k)


def test_shallow_products_take_this_path_up_to_k_16():
    x, y = np.ones((256, 16), np.float32), np.ones((16, 512), np.float32)  # 4.2 MFLOP
    assert "small.k" in native(product, x, y).llvm_ir
    x, y = np.ones((256, 17), np.float32), np.ones((17, 512), np.float32)
    assert "small.k" not in native(product, x, y).llvm_ir


def test_large_or_deep_products_still_take_sgemm():
    x = np.ones((128, 128), np.float32)
    assert "small.k" not in native(product, x, x).llvm_ir  # 4 MFLOP: packing pays
    deep = np.ones((1, 4096), np.float32)
    # k beyond one depth block: sgemm sums its blocks apart, which this path would not
    assert "small.k" not in native(product, deep, deep.T.copy()).llvm_ir
