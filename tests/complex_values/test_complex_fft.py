"""numpy.fft's transforms traced and compiled against numpy.fft: every transform, length
(powers of two, composites, small and large primes), axis, n / s, norm and dtype, within
the rounding of a transform (a few eps times log n times the input's norm), and
NumPy's errors."""
import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
from complex_checks import assert_complex_same
from fidelity import given_per_backend

pytestmark = pytest.mark.usefixtures("backend")

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_INPUT = {"rfft", "ihfft"}
LENGTHS = [1, 2, 3, 8, 12, 17, 64, 96, 101, 128, 210, 263, 1000]


def signal(rng, shape, dtype, real):
    x = rng.standard_normal(shape)
    if not real:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def check(fn, x):
    got, expected = jitflow.function(fn)(x), fn(x)
    dtype = np.asarray(expected).dtype
    n = max(2, np.asarray(x).size)
    eps = 16 * np.finfo(dtype).eps * np.log2(n)
    scale = np.sqrt(np.sum(np.abs(np.asarray(x, np.complex128)) ** 2))
    scale = scale * max(1, np.max(np.abs(expected)) / max(scale, 1e-300))
    assert_complex_same(got, expected, scale=scale, eps=eps)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("length", LENGTHS)
def test_one_dimensional_transforms(name, length):
    if name in ("irfft", "hfft") and length == 1:
        pytest.skip("(a one-term half spectrum has no default output length)")
    real = name in REAL_INPUT
    x = signal(np.random.default_rng(length), (2, length),
               np.float64 if real else np.complex128, real)
    check(lambda x: getattr(np.fft, name)(x), x)


@given_per_backend(st.sampled_from(ONE_D), st.sampled_from([None, "backward", "ortho", "forward"]),
                   st.integers(1, 40), st.one_of(st.none(), st.integers(1, 40)),
                   st.sampled_from([0, 1, -1]), st.sampled_from(["single", "double", "int"]))
def test_lengths_axes_norms_and_dtypes(name, norm, length, n, axis, precision):
    real = name in REAL_INPUT
    dtype = {"single": np.float32 if real else np.complex64,
             "double": np.float64 if real else np.complex128, "int": np.int32}[precision]
    rng = np.random.default_rng(length)
    x = (signal(rng, (3, length), np.float64, True) * 4).astype(dtype) \
        if precision == "int" else signal(rng, (3, length), dtype, real)
    if name in ("irfft", "hfft") and n is None and x.shape[axis] == 1:
        n = 2
    check(lambda x: getattr(np.fft, name)(x, n, axis, norm), x)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2",
                                  "rfftn", "irfftn"])
@pytest.mark.parametrize("s, axes", [(None, None), ((4, 6), (0, 1)), ((5, 3), (0, 2)),
                                     (None, (-1, 0))])
def test_multidimensional_transforms(name, s, axes):
    real = name.startswith("rfft")
    x = signal(np.random.default_rng(3), (4, 3, 6), np.float64 if real else np.complex128,
               real)
    if name.endswith("2") and axes is None:
        axes = (-2, -1)
    check(lambda x: getattr(np.fft, name)(x, s, axes), x)


def test_round_trips_in_single_precision():
    x = signal(np.random.default_rng(0), (5, 48), np.float32, True)
    got = jitflow.function(lambda x: np.fft.irfft(np.fft.rfft(x), 48))(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, x, atol=1e-5)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "irfftn"])
def test_float16_inputs_give_numpys_dtypes(name):
    """float16 is computed in single precision; irfft and hfft of a real float16 array
    give float16, as NumPy's do."""
    x = (np.arange(12) * 0.37).astype(np.float16).reshape(2, 6)
    check(getattr(np.fft, name), x)


@pytest.mark.parametrize("fn, error", [
    (lambda x: np.fft.fft(x, 0), ValueError), (lambda x: np.fft.rfft(x * 1j), TypeError),
    (lambda x: np.fft.fft(x, norm="sideways"), ValueError),
    (lambda x: np.fft.fft(x, axis=2), IndexError)])
def test_errors_as_numpy_raises_them(fn, error):
    x = np.ones((2, 4))
    with pytest.raises(error):
        fn(x)
    with pytest.raises(error):
        jitflow.function(fn)(x)
