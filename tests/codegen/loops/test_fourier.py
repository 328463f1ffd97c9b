"""The dft primitive: native code's Stockham FFT gives numpy.fft's values to rounding
for every length it takes, tile of rows and layout of its operands, eagerly, natively,
under vmap, and differentiated."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitflow
from jitflow import ops
from jitflow.codegen.loops.fourier import LARGEST_RADIX, radices, supported
from fidelity import NATIVE_SHARE
from strategies import FLOAT_DTYPES

# Powers of two and three, products of the odd radices, primes up to the largest radix,
# and lengths whose tiles of rows and stages have edges.
LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 25, 30, 31, 32, 49, 60, 64, 81, 100,
           128, 210, 243, 256, 286, 1000, 1024, 2 * 29 * 31]
ROWS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33]


def reference(real, imag, sign):
    z = real.astype(np.float64) + 1j * imag.astype(np.float64)
    return np.fft.fft(z) if sign < 0 else np.fft.ifft(z, norm="forward")


def assert_transform(result, real, imag, sign):
    """Each row within a few roundings per stage of the exact transform (the error
    bound of an FFT, in the 2-norm of the row)."""
    expected = reference(real, imag, sign)
    got = result[0].astype(np.float64) + 1j * result[1].astype(np.float64)
    assert result[0].dtype == result[1].dtype == real.dtype
    assert got.shape == expected.shape
    n = real.shape[-1]
    eps = float(np.finfo(real.dtype).eps)
    bound = 4 * eps * (math.log2(max(n, 2)) + 1) * np.linalg.norm(expected, axis=-1)
    error = np.linalg.norm(got - expected, axis=-1)
    assert np.all(error <= bound + 1e-300), (error / np.maximum(bound, 1e-300)).max()


def layouts(draw, rows, n, dtype, rng):
    """Parts of (rows, n) as the operands native code gets: contiguous, transposed,
    reversed or every other element of a larger array."""
    layout = draw(st.sampled_from(["contiguous", "transposed", "reversed", "strided"]))
    values = rng.standard_normal((rows, n)).astype(dtype)
    if layout == "transposed":
        return np.ascontiguousarray(values.T).T
    if layout == "reversed":
        return np.ascontiguousarray(values[::-1, ::-1])[::-1, ::-1]
    if layout == "strided":
        wide = np.zeros((rows, 2 * n), dtype)
        wide[:, ::2] = values
        return wide[:, ::2]
    return values


def test_radices_multiply_to_the_length():
    for n in range(1, 3000):
        factors = radices(n)
        assert math.prod(factors) == n
        assert supported(n) == all(p <= LARGEST_RADIX for p in factors)


@settings(max_examples=max(4, settings.default.max_examples // NATIVE_SHARE))
@given(data=st.data())
def test_native_transforms_match_numpy(data):
    rows = data.draw(st.sampled_from(ROWS), label="rows")
    n = data.draw(st.sampled_from(LENGTHS), label="n")
    dtype = data.draw(st.sampled_from(FLOAT_DTYPES), label="dtype")
    sign = data.draw(st.sampled_from([-1, 1]), label="sign")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    real = layouts(data.draw, rows, n, dtype, rng)
    imag = layouts(data.draw, rows, n, dtype, rng)
    transform = jitflow.function(lambda r, i: ops.dft(r, i, sign=sign))
    assert_transform(transform(real, imag), real, imag, sign)
    assert_transform(ops.dft(real, imag, sign=sign), real, imag, sign)  # eagerly


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_many_rows_split_between_threads(dtype):
    rng = np.random.default_rng(0)
    real, imag = rng.standard_normal((2, 4003, 96)).astype(dtype)
    transform = jitflow.function(lambda r, i: ops.dft(r, i, sign=-1))
    assert_transform(transform(real, imag), real, imag, -1)


def test_a_constant_part_is_read_as_one():
    real = np.random.default_rng(1).standard_normal((5, 24))
    transform = jitflow.function(lambda r: ops.dft(r, np.zeros((5, 24)), sign=1))
    assert_transform(transform(real), real, np.zeros_like(real), 1)


def test_a_nan_reaches_what_it_reaches_in_numpy_and_stays_in_its_row():
    """Butterflies multiply by i as a swap of parts, as pocketfft does, so a NaN reaches
    the same parts of the same terms."""
    real = np.ones((12, 16))
    real[9, 3] = np.nan
    fr, fi = jitflow.function(lambda r: ops.dft(r, np.zeros_like(r), sign=-1))(real)
    expected = np.fft.fft(real)
    np.testing.assert_array_equal(np.isnan(fr), np.isnan(expected.real))
    np.testing.assert_array_equal(np.isnan(fi), np.isnan(expected.imag))
    assert not np.isnan(np.delete(fr, 9, axis=0)).any()


def test_vmap_transforms_every_batch_element():
    rng = np.random.default_rng(2)
    real, imag = rng.standard_normal((2, 3, 4, 20))
    batched = jitflow.vmap(lambda r, i: ops.dft(r, i, sign=-1), in_axes=(0, None))
    fr, fi = batched(real, imag[0])
    for b in range(3):
        assert_transform((fr[b], fi[b]), real[b], imag[0], -1)


def test_the_adjoint_is_the_opposite_transform():
    """<dft(x), c> = <x, dft'(c)> for the real inner product of the parts: the rule's
    formula, checked on native code."""
    rng = np.random.default_rng(3)
    x, c = rng.standard_normal((2, 2, 6, 45))
    pullback = jitflow.function(
        lambda xr, xi, cr, ci: jitflow.vjp(lambda a, b: ops.dft(a, b, sign=-1),
                                           xr, xi)[1]((cr, ci)))
    gr, gi = pullback(x[0], x[1], c[0], c[1])
    fr, fi = ops.dft(x[0], x[1], sign=-1)
    np.testing.assert_allclose(np.sum(fr * c[0] + fi * c[1]),
                               np.sum(x[0] * gr + x[1] * gi), rtol=1e-12)


@pytest.mark.parametrize("n, message", [(37, "prime factor above 31"),
                                        (2 * 41, "prime factor above 31")])
def test_lengths_with_large_prime_factors_are_refused(n, message):
    with pytest.raises(ValueError, match=message):
        ops.dft(np.zeros((1, n)), np.zeros((1, n)), sign=-1)


@pytest.mark.parametrize("real, imag, message", [
    (np.zeros((2, 4), np.float32), np.zeros((2, 4)), "one dtype"),
    (np.zeros((2, 4), np.int64), np.zeros((2, 4), np.int64), "float32 or float64"),
    (np.zeros(4), np.zeros(4), r"\(rows, n\)"),
])
def test_bad_operands_are_refused(real, imag, message):
    with pytest.raises((TypeError, ValueError), match=message):
        ops.dft(real, imag, sign=-1)
