"""jitflow.nn.initializers: shapes, dtypes, reproducibility, Keras' fans, and the
statistics of large draws against the formulas. Every draw has a fixed seed, and every
tolerance is at least 5 standard errors of the statistic it bounds."""
import math
import subprocess
import sys

import numpy as np
import pytest

from jitflow.nn import initializers

NAMES = ["glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "lecun_normal",
         "lecun_uniform", "ones", "random_normal", "random_uniform", "truncated_normal",
         "zeros"]
RANDOM = [name for name in NAMES if name not in ("zeros", "ones")]
# A normal truncated to +-2 standard deviations keeps this share within +-1 of them.
TRUNCATED_WITHIN_ONE = math.erf(1 / math.sqrt(2)) / math.erf(2 / math.sqrt(2))


def rng(seed=0):
    return np.random.default_rng(seed)


# --- shapes, dtypes, reproducibility -----------------------------------------------------

@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (3, 3, 2, 4), (0, 3)])
@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_dtypes(name, shape):
    init = initializers.get(name)
    for dtype in (np.float32, np.float64):
        values = init(shape, dtype, rng())
        assert isinstance(values, np.ndarray)
        assert values.shape == shape and values.dtype == dtype
        assert np.all(np.isfinite(values))
    assert init(shape).dtype == np.float32


def test_constants():
    assert np.all(initializers.zeros((2, 3)) == 0)
    assert np.all(initializers.ones(4, np.float64) == 1)
    values = initializers.constant(0.25)([2, 2], np.float64)
    assert values.dtype == np.float64 and np.all(values == 0.25)
    assert initializers.zeros((3,), np.int32).dtype == np.int32


@pytest.mark.parametrize("name", RANDOM)
def test_a_seeded_generator_reproduces_the_values(name):
    init = initializers.get(name)
    first = init((40, 30), np.float64, rng(7))
    assert np.array_equal(init((40, 30), np.float64, rng(7)), first)
    assert not np.array_equal(init((40, 30), np.float64, rng(8)), first)
    # Drawn in float64 and rounded: float32 weights are the float64 ones, rounded.
    assert np.array_equal(init((40, 30), np.float32, rng(7)), first.astype(np.float32))


def test_the_default_generator_advances():
    first = initializers.he_normal((100,))
    assert not np.array_equal(initializers.he_normal((100,)), first)


def test_the_default_generator_is_seeded_the_same_on_every_run():
    program = ("import numpy as np, jitflow.nn as nn; "
               "print(nn.initializers.he_normal((4,), np.float64).tolist())")
    runs = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    expected = initializers.he_normal((4,), np.float64, rng(initializers.DEFAULT_SEED))
    assert runs[0] == runs[1] == f"{expected.tolist()}\n"


# --- fans and statistics -----------------------------------------------------------------

@pytest.mark.parametrize("shape, fans", [
    ((), (1, 1)), ((7,), (7, 7)), ((3, 4), (3, 4)), ((5, 2, 3), (10, 15)),
    ((3, 3, 16, 32), (144, 288)), ((2, 3, 3, 4, 5), (72, 90))])
def test_fans_as_keras_computes_them(shape, fans):
    assert initializers.compute_fans(shape) == fans


# A Dense kernel and a convolution kernel, 200,000 values each.
DENSE, CONV = (400, 500), (5, 5, 40, 200)


def variance_scaling_cases():
    """(name, shape, the variance Keras' formula gives, distribution)."""
    cases = []
    for shape in (DENSE, CONV):
        fan_in, fan_out = initializers.compute_fans(shape)
        for name, variance, distribution in [
                ("glorot_uniform", 2 / (fan_in + fan_out), "uniform"),
                ("glorot_normal", 2 / (fan_in + fan_out), "truncated"),
                ("he_normal", 2 / fan_in, "truncated"),
                ("he_uniform", 2 / fan_in, "uniform"),
                ("lecun_normal", 1 / fan_in, "truncated"),
                ("lecun_uniform", 1 / fan_in, "uniform")]:
            cases.append((name, shape, variance, distribution))
    return cases


@pytest.mark.parametrize("name, shape, variance, distribution", variance_scaling_cases())
def test_variance_scaling_statistics(name, shape, variance, distribution):
    values = initializers.get(name)(shape, np.float64, rng(1))
    std = math.sqrt(variance)
    if distribution == "uniform":
        check_uniform(values, -math.sqrt(3) * std, math.sqrt(3) * std)
    else:
        # Keras widens the underlying normal so that the truncated one has `std`.
        check_truncated_normal(values, 0.0, std / initializers.TRUNCATED_STDDEV)
        assert abs(np.std(values) / std - 1) < 0.01


def test_truncated_normal_statistics():
    values = initializers.truncated_normal(mean=1.0, stddev=0.5)((200_000,), np.float64,
                                                                 rng(2))
    check_truncated_normal(values, 1.0, 0.5)


def test_random_normal_statistics():
    values = initializers.random_normal(mean=-1.0, stddev=2.0)((200_000,), np.float64,
                                                               rng(3))
    assert abs(np.mean(values) + 1.0) < 5 * 2.0 / math.sqrt(values.size)
    assert abs(np.std(values) / 2.0 - 1) < 0.01
    within_one = np.mean(np.abs(values + 1.0) < 2.0)
    assert abs(within_one - math.erf(1 / math.sqrt(2))) < 0.005
    assert np.max(np.abs(values + 1.0)) > 8.0  # not truncated


def test_random_uniform_statistics():
    check_uniform(initializers.random_uniform(-0.2, 0.3)((200_000,), np.float64, rng(4)),
                  -0.2, 0.3)


def check_uniform(values, low, high):
    """In [low, high), reaching both ends, with a uniform's mean and spread."""
    width = high - low
    assert values.min() >= low and values.max() < high
    assert values.min() < low + 1e-3 * width and values.max() > high - 1e-3 * width
    assert abs(np.mean(values) - (low + high) / 2) < 5 * width / math.sqrt(12 * values.size)
    assert abs(np.std(values) / (width / math.sqrt(12)) - 1) < 0.005
    quarter = np.mean(values < low + width / 4)
    assert abs(quarter - 0.25) < 0.005


def check_truncated_normal(values, mean, stddev):
    """Within 2 stddev of the mean, reaching that bound, with a normal's shape inside."""
    spread = np.abs(values - mean)
    assert spread.max() <= 2 * stddev and spread.max() > 1.99 * stddev
    truncated_std = stddev * initializers.TRUNCATED_STDDEV
    assert abs(np.mean(values) - mean) < 5 * truncated_std / math.sqrt(values.size)
    assert abs(np.std(values) / truncated_std - 1) < 0.01
    assert abs(np.mean(spread < stddev) - TRUNCATED_WITHIN_ONE) < 0.005


def test_keras_truncation_constant():
    """The standard deviation of a standard normal truncated to [-2, 2]."""
    density = math.exp(-2) / math.sqrt(2 * math.pi)
    mass = math.erf(2 / math.sqrt(2))
    assert initializers.TRUNCATED_STDDEV == pytest.approx(
        math.sqrt(1 - 4 * density / mass), rel=1e-15)


# --- get and errors ----------------------------------------------------------------------

KERAS_NAMES = {
    "zeros": "Constant(value=0.0)", "ones": "Constant(value=1.0)",
    "glorot_uniform": "VarianceScaling(scale=1.0, mode='fan_avg', distribution='uniform')",
    "glorot_normal":
        "VarianceScaling(scale=1.0, mode='fan_avg', distribution='truncated_normal')",
    "he_normal":
        "VarianceScaling(scale=2.0, mode='fan_in', distribution='truncated_normal')",
    "he_uniform": "VarianceScaling(scale=2.0, mode='fan_in', distribution='uniform')",
    "lecun_normal":
        "VarianceScaling(scale=1.0, mode='fan_in', distribution='truncated_normal')",
    "lecun_uniform": "VarianceScaling(scale=1.0, mode='fan_in', distribution='uniform')",
    "random_normal": "RandomNormal(mean=0.0, stddev=0.05)",
    "random_uniform": "RandomUniform(minval=-0.05, maxval=0.05)",
    "truncated_normal": "TruncatedNormal(mean=0.0, stddev=0.05)",
}


def test_get_knows_keras_names_and_defaults():
    assert sorted(KERAS_NAMES) == NAMES
    for name, expected in KERAS_NAMES.items():
        assert repr(initializers.get(name)) == expected, name
        if not name.startswith(("random", "truncated")):
            assert initializers.get(name) is getattr(initializers, name)


def test_get():
    assert initializers.get("he_normal") is initializers.he_normal
    assert initializers.get("xavier_uniform") is initializers.glorot_uniform
    assert initializers.get("xavier_normal") is initializers.glorot_normal
    assert initializers.get(initializers.zeros) is initializers.zeros

    def custom(shape, dtype=np.float32, rng=None):
        return np.full(shape, 3, dtype)
    assert initializers.get(custom) is custom
    made = initializers.get(initializers.truncated_normal)
    assert isinstance(made, initializers.TruncatedNormal) and made.stddev == 0.05
    for bad in ("he_nromal", None):
        with pytest.raises(ValueError, match=r"unknown initializer .*glorot_uniform.*"
                                             r"he_normal.*zeros"):
            initializers.get(bad)


def test_errors():
    with pytest.raises(TypeError, match=r"TruncatedNormal: parameters are numbers, not "
                                        r"\(3, 4\).*called with the shape"):
        initializers.truncated_normal((3, 4))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        initializers.he_normal((3, 4), rng=np.random.RandomState(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        initializers.he_normal((3, 4), rng=0)
    with pytest.raises(TypeError, match="random values need a float dtype, not int32"):
        initializers.glorot_uniform((3, 4), np.int32)
    with pytest.raises(ValueError, match="shape must be non-negative integers"):
        initializers.zeros((3, -1))
    with pytest.raises(ValueError, match="mode 'fan_sum' is not one of fan_in, fan_out"):
        initializers.VarianceScaling(2.0, mode="fan_sum")
    with pytest.raises(ValueError, match="distribution 'normal' is not one of"):
        initializers.VarianceScaling(2.0, distribution="normal")
