"""The reference for products of operands rounded to bfloat16 (matmul precision
"bfloat16"): the float64 product of NumPy's rounding of each operand, and the bound a
float32 sum of those products in any order stays within."""
import numpy as np

from jitflow.ops.contraction import bfloat16_values


def check_against_rounded(out, x, y):
    """out (float32, ... x m x n) is rounded(x) @ rounded(y) summed in float32: NaN and
    infinities where the exact product has them, else within k roundings of float32."""
    xr, yr = bfloat16_values(x).astype(np.float64), bfloat16_values(y).astype(np.float64)
    depth = x.shape[-1]
    with np.errstate(invalid="ignore", over="ignore"):
        expected = np.matmul(xr, yr)
        bound = (depth + 1) * 2.0 ** -23 * np.matmul(np.abs(xr), np.abs(yr))
    bound += depth * 1.2e-38  # sums below float32's normal range may flush to zero
    assert out.dtype == np.float32 and out.shape == expected.shape
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(out), nan)
    infinite = np.isinf(expected)
    assert np.array_equal(out[infinite], expected[infinite])
    finite = ~nan & ~infinite
    assert (np.abs(out[finite] - expected[finite]) <= bound[finite]).all()
