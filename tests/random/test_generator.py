"""jitflow.random.Generator: reproducible draws, the same compiled and eager, with the
distributions they claim."""
import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow.random import Generator, _mix_seed

THIS_FILE = "test_generator.py"


def draws(generator):
    return (generator.uniform((5, 3)), generator.normal(7, np.float64),
            generator.bernoulli(0.3, (4,)), generator.uniform(2, low=-1.0, high=3.0))


def test_compiled_draws_are_the_eager_draws(backend):
    eager, compiled_generator = Generator(11), Generator(11)
    compiled = jitflow.function(lambda: draws(compiled_generator))
    for _ in range(3):
        for actual, expected in zip(compiled(), draws(eager), strict=True):
            assert_same(actual, expected, ulps=4)  # log and cos may round differently
    assert compiled.cache_info().traces == 1
    assert int(compiled_generator.draws.value) == int(eager.draws.value) == 15


def test_draws_repeat_by_seed_and_differ_between_draws_and_seeds():
    first, again, other = Generator(3), Generator(3), Generator(4)
    a, b = first.uniform(100), first.uniform(100)
    assert_same(a, again.uniform(100))
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, other.uniform(100))


def test_the_python_seed_mix_is_splitmix64():
    # SplitMix64's first output for seed 0 is its finalizer applied to the increment
    assert _mix_seed(1) % 2 ** 64 == 0xE220A8397B1DCDAF


def python_mix(z):
    """SplitMix64's finalizer on Python ints modulo 2**64."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2 ** 64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2 ** 64
    return z ^ (z >> 31)


def test_bits_are_splitmix64_in_wrapping_int64_arithmetic(backend):
    generator = Generator(123)
    bits = jitflow.function(lambda: (generator.bits(6), generator.bits(6)))()
    for draw, values in enumerate(bits):
        stream = python_mix((draw * 0x9E3779B97F4A7C15 + _mix_seed(123)) % 2 ** 64)
        expected = [python_mix((stream + (i + 1) * 0x9E3779B97F4A7C15) % 2 ** 64)
                    for i in range(6)]
        assert [int(v) % 2 ** 64 for v in values] == expected


def test_uniform_values_are_uniform():
    for dtype in (np.float32, np.float64):
        values = Generator(5).uniform(200_000, dtype)
        assert values.dtype == dtype and values.min() >= 0.0 and values.max() < 1.0
        counts = np.histogram(values, bins=20, range=(0, 1))[0]
        chi_square = ((counts - 10_000) ** 2 / 10_000).sum()
        assert chi_square < 45  # the 0.999 quantile of chi-square with 19 degrees


def test_normal_values_have_the_moments_asked_for():
    values = Generator(6).normal(200_000, np.float64, mean=2.0, stddev=3.0)
    assert abs(values.mean() - 2.0) < 0.03 and abs(values.std() - 3.0) < 0.03
    standard = (values - 2.0) / 3.0
    assert abs((standard ** 4).mean() - 3.0) < 0.1  # a normal's kurtosis
    assert np.isfinite(values).all()


def test_bad_shapes_and_dtypes_are_clear_errors():
    with pytest.raises(ValueError, match="non-negative ints") as error:
        Generator().uniform((2, -1))
    assert THIS_FILE in str(error.value)
    with pytest.raises(TypeError, match="float32 or float64, got int32"):
        Generator().normal(3, np.int32)


def test_exponential_values_have_mean_one():
    values = Generator(7).exponential(200_000, np.float64)
    assert values.min() >= 0.0 and np.isfinite(values).all()
    assert abs(values.mean() - 1.0) < 0.01 and abs(values.std() - 1.0) < 0.02
