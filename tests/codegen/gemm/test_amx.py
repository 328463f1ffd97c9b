"""The tile unit's bfloat16 product (codegen/gemm/amx.py, amx_ir.py), called directly:
against float64 products of the operands rounded to bfloat16 by NumPy, for shapes
around the 16 x 32 tiles and the 32 x 32 blocks, K past a depth block, operands in
either order or strided, C's rows computed in two ranges, and NaN, infinities, -0.0
and subnormals. Runs only where the CPU has AMX-BF16 and the kernel grants it."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitflow.codegen.gemm import amx
from jitflow.codegen.gemm.amx_ir import DEPTH_BLOCK
from rounded_products import check_against_rounded

pytestmark = pytest.mark.skipif(not amx.available(),
                                reason="no AMX-BF16 tile unit on this CPU or target")

SIZES = [1, 2, 15, 16, 17, 31, 32, 33, 64, 65, 100]
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-39, -3e-40], np.float32)


def round_up(size, multiple):
    return -(-size // multiple) * multiple


def amx_product(a, b, split=None, extra_cols=3):
    """C = a @ b through the library, C's rows in two calls (at `split`), in a C wider
    than the product (to see that nothing else is written)."""
    pack_a, pack_b, product = amx.functions()
    (m, k), n = a.shape, b.shape[1]
    rows, depth, cols = round_up(m, 32), round_up(k, 32), round_up(n, 32)
    packed_a = np.empty(rows * depth, np.uint16)
    packed_b = np.empty(depth * cols, np.uint16)
    pack_a(a.ctypes.data, a.strides[0] // 4, a.strides[1] // 4, m, k, packed_a.ctypes.data,
           rows, depth)
    pack_b(b.ctypes.data, b.strides[0] // 4, b.strides[1] // 4, k, n, packed_b.ctypes.data,
           depth, cols)
    c = np.full((m, n + extra_cols), 7.0, np.float32)
    split = m if split is None else split
    for begin, end in ((0, split), (split, m)):
        product(packed_a.ctypes.data, packed_b.ctypes.data, depth, begin, end, m, n,
                c.ctypes.data, n + extra_cols)
    assert (c[:, n:] == 7.0).all(), "wrote past the product's columns"
    return c[:, :n]


def operand(draw, rows, cols, layout):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    scale = draw(st.sampled_from([1.0, 1e-20, 1e15]))
    matrix = (rng.standard_normal((rows, cols)) * scale).astype(np.float32)
    for _ in range(draw(st.integers(0, 3))):
        matrix[draw(st.integers(0, rows - 1)), draw(st.integers(0, cols - 1))] = \
            draw(st.sampled_from(SPECIALS))
    if layout == "transposed":
        return np.asfortranarray(matrix)
    if layout == "strided":
        wide = np.zeros((rows, 2 * cols), np.float32)
        wide[:, ::2] = matrix
        return wide[:, ::2]
    return matrix


@st.composite
def products(draw):
    m, n, k = (draw(st.sampled_from(SIZES)) for _ in range(3))
    layouts = st.sampled_from(["rows", "transposed", "strided"])
    a, b = operand(draw, m, k, draw(layouts)), operand(draw, k, n, draw(layouts))
    split = draw(st.sampled_from([s for s in range(0, m + 1, 32)] + [m]))
    return a, b, split


@settings(deadline=None)
@given(products())
def test_matches_the_rounded_operands_product(case):
    a, b, split = case
    check_against_rounded(amx_product(a, b, split), a, b)


def test_depth_past_a_block_adds_to_the_first_blocks_sums():
    rng = np.random.default_rng(0)
    k = DEPTH_BLOCK + 70
    a = rng.standard_normal((40, k)).astype(np.float32)
    b = rng.standard_normal((k, 50)).astype(np.float32)
    check_against_rounded(amx_product(a, b, split=32), a, b)


def test_exact_for_products_of_small_integers():
    """Integers below 2**8 are bfloat16 exactly and their sums float32 exactly."""
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 8, (70, 130)).astype(np.float32)
    b = rng.integers(-8, 8, (130, 90)).astype(np.float32)
    assert np.array_equal(amx_product(a, b), a @ b)


def test_rounds_to_nearest_even():
    """1 + 2**-8 lies halfway between bfloat16's 1 and 1 + 2**-7: even is 1."""
    halfway = np.float32(1 + 2.0 ** -8)
    above = np.float32(1 + 2.0 ** -8 + 2.0 ** -20)
    a = np.array([[halfway], [above]], np.float32)
    out = amx_product(a, np.ones((1, 1), np.float32))
    assert out[:, 0].tolist() == [1.0, 1 + 2.0 ** -7]
