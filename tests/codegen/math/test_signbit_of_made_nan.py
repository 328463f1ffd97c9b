"""signbit of a NaN that arithmetic made: x86 makes 0 * inf (and 0 / 0) the negative
NaN, and NumPy's signbit says True. LLVM takes such a NaN's sign as unspecified and
folds signbit from the signs it knows of the operands: here x >= 0 (from uint8) and
1 / x >= 0, so it folds signbit((1 / x) * x) to False. Found by the program fuzzer
(polydiv of a zero polynomial by itself); not fixed yet: an empty asm in signbit hides
the value from LLVM in scalar code, but no register constraint takes the wide vectors
jitflow's loops use. Strict: it fails once the fold is prevented, to be made a plain
test then."""
import numpy as np
import pytest

import jitflow


def reciprocal_times_itself(v):
    x = v.astype(np.float64)
    return np.signbit((1.0 / x) * x)


@pytest.mark.xfail(strict=True, reason="LLVM folds signbit of a NaN made by arithmetic")
def test_signbit_of_zero_times_infinity_is_the_cpus():
    x = np.zeros(3, np.uint8)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = reciprocal_times_itself(x)
    assert expected.all()  # x86's NaN from 0 * inf is negative
    np.testing.assert_array_equal(jitflow.function(reciprocal_times_itself)(x), expected)
