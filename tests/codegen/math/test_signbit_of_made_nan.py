"""The sign of a NaN that arithmetic made, as the CPU made it: x86 makes 0 * inf (and
0 / 0) the negative NaN, and NumPy's signbit and copysign read that sign. LLVM takes
such a NaN's sign as unspecified and would fold signbit((1 / x) * x) to False from the
signs it knows (x >= 0 from uint8, so 1 / x >= 0). signbit and copysign read their
operand through Emitter.opaque, which LLVM cannot see into. Found by the program fuzzer
(polydiv of a zero polynomial by itself)."""
import numpy as np
import pytest

import jitflow

DTYPES = [np.float16, np.float32, np.float64]
# Scalar loops, one vector with a masked tail, whole vectors, and vectors wider than the
# registers of every target (split into register-sized asm operands).
SIZES = [1, 3, 16, 17, 100]


def reciprocal_times_itself(v, dtype):
    x = v.astype(dtype)
    return (np.asarray(1, dtype) / x) * x


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_signbit_of_zero_times_infinity_is_the_cpus(dtype, size):
    x = np.zeros(size, np.uint8)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.signbit(reciprocal_times_itself(x, dtype))
    assert expected.all()  # x86's NaN from 0 * inf is negative
    compiled = jitflow.function(lambda v: np.signbit(reciprocal_times_itself(v, dtype)))
    np.testing.assert_array_equal(compiled(x), expected)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_copysign_from_zero_times_infinity_is_the_cpus(dtype, size):
    x = np.zeros(size, np.uint8)
    two = np.asarray(2, dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.copysign(two, reciprocal_times_itself(x, dtype))
    assert (expected == -2).all()
    compiled = jitflow.function(lambda v: np.copysign(two, reciprocal_times_itself(v, dtype)))
    got = compiled(x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_signbit_of_ordinary_values_still_vectorizes():
    x = np.array([-0.0, 0.0, -1.5, 2.0, -np.inf, np.inf, np.nan, -np.nan] * 5, np.float32)
    compiled = jitflow.function(np.signbit)
    np.testing.assert_array_equal(compiled(x), np.signbit(x))
    assert "<16 x float>" in compiled.lower(x).llvm_ir()
