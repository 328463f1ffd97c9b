"""NumPy's random calls inside @jitflow.function: traced into draws that are fresh at
every call, replayed by the NumPy seed, of NumPy's shapes, dtypes and distributions;
what cannot be traced is a clear error."""
import math
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import strategies as st

import jitflow
from fidelity import assert_same, error_kinds, given_per_backend, numpy_outcome
from strategies import shapes

THIS_FILE = "test_numpy_rng.py"


def compiled_draws(make_rng, draw, calls=2):
    """`calls` results of a compiled function drawing from a generator made by
    make_rng()."""
    rng = make_rng()
    step = jitflow.function(lambda: draw(rng))
    return [step() for _ in range(calls)]


GENERATOR_CALLS = {
    "random()": lambda r: r.random(),
    "random(3)": lambda r: r.random(3),
    "random(size=())": lambda r: r.random(size=()),
    "random((2, 3), float32)": lambda r: r.random((2, 3), dtype=np.float32),
    "standard_normal()": lambda r: r.standard_normal(),
    "standard_normal(4, float32)": lambda r: r.standard_normal(4, dtype=np.float32),
    "normal()": lambda r: r.normal(),
    "normal(1, 2, (3,))": lambda r: r.normal(1.0, 2.0, (3,)),
    "normal(zeros(3))": lambda r: r.normal(np.zeros(3)),
    "normal(zeros((2, 1)), ones(3))": lambda r: r.normal(np.zeros((2, 1)), np.ones(3)),
    "normal(0-d array)": lambda r: r.normal(np.zeros(())),
    "uniform()": lambda r: r.uniform(),
    "uniform(-1, 1, 5)": lambda r: r.uniform(-1, 1, 5),
    "uniform(float32 low)": lambda r: r.uniform(np.float32(1), 2.0, 2),
    "integers(5)": lambda r: r.integers(5),
    "integers(0, 10, (2, 2))": lambda r: r.integers(0, 10, (2, 2)),
    "integers(3, int32)": lambda r: r.integers(3, dtype=np.int32),
    "integers(endpoint)": lambda r: r.integers(0, 5, size=3, endpoint=True),
    "integers(array bounds)": lambda r: r.integers(np.array([0, 10]), np.array([5, 20])),
    "exponential()": lambda r: r.exponential(),
    "exponential(2, 4)": lambda r: r.exponential(2.0, 4),
    "standard_exponential(3)": lambda r: r.standard_exponential(3),
    "binomial(1, 0.3, 5)": lambda r: r.binomial(1, 0.3, 5),
    "binomial(3, 0.5)": lambda r: r.binomial(3, 0.5),
    "binomial(counts, 0.5)": lambda r: r.binomial(np.array([0, 2, 5]), 0.5),
    "integers(0, 0, size=0)": lambda r: r.integers(0, 0, size=0),
    "choice(2-d, axis=1)": lambda r: r.choice(np.ones((2, 3)), 4, axis=1),
    "choice(list)": lambda r: r.choice([1.5, 2.5], 3),
    "choice(5)": lambda r: r.choice(5),
    "choice(5, 3)": lambda r: r.choice(5, 3),
    "choice(floats, (2, 2))": lambda r: r.choice(np.arange(4.0), (2, 2)),
    "choice(3, 4, p)": lambda r: r.choice(3, 4, p=[0.2, 0.3, 0.5]),
    "choice(floats)": lambda r: r.choice(np.arange(4.0)),
    "choice(5, replace=False)": lambda r: r.choice(5, replace=False),
    "choice(5, (2, 2), replace=False)": lambda r: r.choice(5, (2, 2), replace=False),
    "permutation(5)": lambda r: r.permutation(5),
    "permutation(floats, axis=1)": lambda r: r.permutation(np.ones((2, 3)), axis=1),
}

RANDOM_STATE_CALLS = {
    "rand()": lambda r: r.rand(),
    "rand(2, 3)": lambda r: r.rand(2, 3),
    "randn()": lambda r: r.randn(),
    "randn(3)": lambda r: r.randn(3),
    "random_sample(4)": lambda r: r.random_sample(4),
    "random()": lambda r: r.random(),
    "standard_normal(2)": lambda r: r.standard_normal(2),
    "normal(0, 1, 3)": lambda r: r.normal(0, 1, 3),
    "uniform(0, 2, 3)": lambda r: r.uniform(0, 2, 3),
    "randint(5)": lambda r: r.randint(5),
    "randint(0, 5, 3)": lambda r: r.randint(0, 5, 3),
    "randint(5, int32)": lambda r: r.randint(5, dtype=np.int32),
    "randint(5, int64)": lambda r: r.randint(5, dtype=np.int64),
    "exponential(1, 2)": lambda r: r.exponential(1.0, 2),
    "standard_exponential()": lambda r: r.standard_exponential(),
    "choice(4)": lambda r: r.choice(4),
    "choice(4, 3)": lambda r: r.choice(4, 3),
    "binomial(1, 0.5, 3)": lambda r: r.binomial(1, 0.5, 3),
    "permutation(ints)": lambda r: r.permutation(np.arange(4, dtype=np.int32)),
    "choice(4, 3, replace=False)": lambda r: r.choice(4, 3, replace=False),
}


def assert_numpy_kind(actual, expected):
    """The same kind of result as NumPy's: a Python number where NumPy gives one
    (weakly typed in promotion), else an array or NumPy scalar of its dtype and shape."""
    if isinstance(expected, (bool, int, float)):
        assert type(actual) is type(expected)
    else:
        assert np.asarray(actual).dtype == np.asarray(expected).dtype
        assert np.shape(actual) == np.shape(expected)


@pytest.mark.parametrize("make, draw", [
    pytest.param(np.random.default_rng, draw, id=f"Generator-{name}")
    for name, draw in GENERATOR_CALLS.items()] + [
    pytest.param(np.random.RandomState, draw, id=f"RandomState-{name}")
    for name, draw in RANDOM_STATE_CALLS.items()])
def test_results_have_numpy_types(make, draw, backend):
    expected = draw(make(0))
    first, second = compiled_draws(lambda: make(0), draw)
    assert_numpy_kind(first, expected)
    assert_numpy_kind(second, expected)


TWO_PARAMETERS = {"normal": (0.0, 1.0), "uniform": (0.0, 1.0), "integers": (0, 5),
                  "binomial": (2, 0.5)}


@given_per_backend(st.sampled_from(sorted(TWO_PARAMETERS)), shapes(max_dims=2),
                   shapes(max_dims=2), st.none() | shapes(max_dims=3), st.booleans())
def test_size_and_parameter_shapes_follow_numpy(method, first, second, size, traced):
    """NumPy's size= rules: the parameters' broadcast shape, or `size`, to which they
    must broadcast; the same errors where they do not. Parameters NumPy takes as arrays
    may be traced (the bounds of integers and binomial's n must be constants)."""
    values = [np.full(shape, value) for shape, value in zip((first, second),
                                                            TWO_PARAMETERS[method])]
    expected, error = numpy_outcome(
        lambda: getattr(np.random.default_rng(0), method)(*values, size=size))
    rng = np.random.default_rng(0)
    if traced and method in ("normal", "uniform"):
        step = jitflow.function(lambda a, b: getattr(rng, method)(a, b, size=size))
    else:
        step = jitflow.function(lambda a, b: getattr(rng, method)(*values, size=size))
    if error is None and method == "integers" and not fits(size, first, second):
        error = ValueError()  # NumPy's integers ignores that the bounds do not fit size
    if error is not None:
        with pytest.raises(error_kinds(error)):
            step(*values)
    else:
        assert_numpy_kind(step(*values), expected)


def fits(size, *shapes):
    try:
        return size is None or np.broadcast_shapes(size, *shapes) == size
    except ValueError:
        return False


def test_a_python_float_draw_promotes_weakly(backend):
    rng = np.random.default_rng(1)
    scaled = jitflow.function(lambda x: x * rng.random() + np.random.rand())
    x = np.ones(3, np.float32)
    assert scaled(x).dtype == (x * np.random.default_rng(1).random()).dtype == np.float32


def test_each_call_draws_fresh_numbers_replayed_by_the_seed(backend):
    def draw(r):
        return r.standard_normal(4), r.integers(0, 1000, 4), r.random()
    first = compiled_draws(lambda: np.random.default_rng(7), draw, calls=3)
    again = compiled_draws(lambda: np.random.default_rng(7), draw, calls=3)
    other = compiled_draws(lambda: np.random.default_rng(8), draw, calls=1)
    for a, b in zip(first, again, strict=True):
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    assert not np.array_equal(first[0][0], first[1][0])
    assert not np.array_equal(first[1][0], first[2][0])
    assert not np.array_equal(first[0][0], other[0][0])


def test_the_global_state_is_replayed_by_np_random_seed(backend):
    step = jitflow.function(lambda x: x + np.random.randn(3))
    np.random.seed(3)
    first, second = step(np.zeros(3)), step(np.zeros(3))
    np.random.seed(3)
    assert_same(step(np.zeros(3)), first)
    assert_same(step(np.zeros(3)), second)
    assert not np.array_equal(first, second)


def test_the_backends_draw_the_same_numbers():
    def draws(backend):
        saved, jitflow.config.backend = jitflow.config.backend, backend
        try:
            return compiled_draws(lambda: np.random.default_rng(5), lambda r: (
                r.random(6), r.standard_normal(6), r.integers(0, 9, 6),
                r.exponential(size=6), r.choice(4, 6, p=[0.1, 0.2, 0.3, 0.4])))
        finally:
            jitflow.config.backend = saved
    for native, interpreted in zip(draws("native"), draws("interpreter"), strict=True):
        for a, b in zip(native, interpreted, strict=True):
            assert_same(a, b, ulps=8)  # log, cos and sqrt may round differently


def test_a_call_takes_one_raw_value_from_the_bit_generator(backend):
    rng = np.random.default_rng(11)
    step = jitflow.function(lambda: (rng.random(2), rng.standard_normal(2)))
    step(), step()
    expected = np.random.default_rng(11)
    expected.bit_generator.random_raw(2)
    assert rng.bit_generator.state == expected.bit_generator.state
    assert rng.random() == expected.random()  # eager draws go on from there


def test_the_raw_value_is_marked_used_only_after_the_call_succeeded():
    from jitflow.random.numpy_rng import CallSeed
    rng = np.random.default_rng(2)
    seed = CallSeed(rng)
    first = seed.held()
    assert seed.held() == first  # a call that failed: the same value again
    seed.adopt(first)
    assert seed.held() != first
    expected = np.random.default_rng(2).bit_generator.random_raw(2)
    assert [int(seed.held().view(np.uint64)), int(first.view(np.uint64))] == \
        [expected[1], expected[0]]


def test_draws_are_reproducible_in_a_fresh_process():
    program = ("import numpy as np, jitflow\n"
               "rng = np.random.default_rng(42)\n"
               "f = jitflow.function(lambda: rng.standard_normal(3))\n"
               "print(repr((f(), f())))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    runs = [subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                           check=True, cwd=root).stdout for _ in range(2)]
    assert runs[0] == runs[1] and "array" in runs[0]


def test_eager_code_is_plain_numpy():
    rng, reference = np.random.default_rng(4), np.random.default_rng(4)
    step = jitflow.function(lambda: rng.standard_normal(3))
    jitflow.config.run_eagerly = True
    try:
        assert_same(step(), reference.standard_normal(3))
    finally:
        jitflow.config.run_eagerly = False


def test_a_draw_inside_a_derivative_is_one_draw(backend):
    rng = np.random.default_rng(6)

    @jitflow.function
    def step(x):
        return jitflow.value_and_grad(lambda x: (x * rng.standard_normal(3)).sum())(x)
    x = np.array([1.0, 2.0, 3.0])
    value, gradient = step(x)
    assert abs(value - float(gradient @ x)) < 1e-12  # the noise is the gradient
    assert not np.array_equal(gradient, step(x)[1])


def test_noise_drawn_under_a_gradient_tape_in_a_compiled_step(backend):
    rng, weights = np.random.default_rng(13), jitflow.Variable(np.ones(3))

    @jitflow.function
    def step():
        with jitflow.GradientTape() as tape:
            noise = rng.standard_normal(3)
            loss = (weights * noise).sum()
        return tape.gradient(loss, [weights])[0], noise
    (gradient, noise), (_, later) = step(), step()
    assert_same(gradient, noise)
    assert not np.array_equal(noise, later)


def test_normal_differentiates_by_reparameterization(backend):
    rng = np.random.default_rng(14)
    sample = jitflow.function(jitflow.value_and_grad(
        lambda loc, scale: rng.normal(loc, scale, 3).sum(), argnums=(0, 1)))
    loc, scale = np.zeros(3), np.full(3, 2.0)
    value, (d_loc, d_scale) = sample(loc, scale)
    assert_same(d_loc, np.ones(3))
    standard = d_scale  # d(loc + scale * z) / d scale = z
    assert abs(value - (2.0 * standard).sum()) < 1e-12
    assert not np.array_equal(standard, sample(loc, scale)[1][1])


def numpy_methods_are_numpy_own():
    return all(type(vars(cls)["normal"]).__name__ != "function"
               for cls in (np.random.Generator, np.random.RandomState)) and \
        type(np.random.rand).__name__ == "method"


def test_a_generator_passed_as_a_static_argument():
    step = jitflow.function(lambda x, rng: x + rng.random(2), static_argnames="rng")
    rng = np.random.default_rng(12)
    first, second = step(np.zeros(2), rng), step(np.zeros(2), rng)
    again = np.random.default_rng(12)
    assert_same(step(np.zeros(2), again), first)
    assert not np.array_equal(first, second)


def test_other_threads_draw_numpy_numbers_while_a_trace_runs():
    inside, release = threading.Event(), threading.Event()
    rng = np.random.default_rng(0)

    def traced(x):
        inside.set()
        release.wait(10)
        return x + rng.random()
    tracing = threading.Thread(target=jitflow.function(traced), args=(1.0,))
    tracing.start()
    try:
        assert inside.wait(10)
        assert not numpy_methods_are_numpy_own()  # swapped while the trace runs
        eager, reference = np.random.default_rng(3), np.random.default_rng(3)
        assert_same(eager.standard_normal(4), reference.standard_normal(4))
    finally:
        release.set()
        tracing.join()
    assert numpy_methods_are_numpy_own()


def test_numpy_gets_its_methods_back_after_a_trace_that_raised():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError):
        jitflow.function(lambda: rng.gamma(1.0))()
    assert numpy_methods_are_numpy_own()


# --- distributions: fixed seeds, so these cannot flake ----------------------------
SAMPLES = 100_000
KS_BOUND = 0.008  # the 0.995 quantile of the KS statistic at this n is 0.0052


def ks_statistic(values, cdf):
    values = np.sort(np.asarray(values, dtype=np.float64))
    model = cdf(values)
    n = len(values)
    return max((np.arange(1, n + 1) / n - model).max(), (model - np.arange(n) / n).max())


def normal_cdf(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def one_draw(draw, seed=0):
    return compiled_draws(lambda: np.random.default_rng(seed), draw, calls=1)[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_is_uniform(dtype):
    values = one_draw(lambda r: r.random(SAMPLES, dtype=dtype))
    assert values.min() >= 0.0 and values.max() < 1.0
    assert ks_statistic(values, lambda x: x) < KS_BOUND


def test_standard_normal_is_normal():
    values = one_draw(lambda r: r.standard_normal(SAMPLES))
    assert ks_statistic(values, normal_cdf) < KS_BOUND
    assert abs(values.mean()) < 0.02 and abs(values.std() - 1.0) < 0.02


def test_normal_uses_loc_and_scale_even_traced():
    rng = np.random.default_rng(3)
    draw = jitflow.function(lambda loc, scale: rng.normal(loc, scale, SAMPLES))
    values = draw(2.0, np.float32(3.0))
    assert values.dtype == np.float64
    assert abs(values.mean() - 2.0) < 0.05 and abs(values.std() - 3.0) < 0.05
    assert ks_statistic((values - 2.0) / 3.0, normal_cdf) < KS_BOUND


def test_traced_parameters_numpy_would_refuse_give_impossible_values():
    rng = np.random.default_rng(3)
    assert np.isnan(jitflow.function(lambda s: rng.normal(0.0, s, 2))(-1.0)).all()
    counts = jitflow.function(lambda p: rng.binomial(3, p))(np.array([-0.5, 0.5, 1.5]))
    assert counts[0] == counts[2] == -1 and 0 <= counts[1] <= 3


def test_exponential_is_exponential():
    values = one_draw(lambda r: r.exponential(2.0, SAMPLES))
    assert values.min() >= 0.0 and np.isfinite(values).all()
    assert ks_statistic(values, lambda x: 1.0 - np.exp(-x / 2.0)) < KS_BOUND


def test_uniform_spans_low_to_high():
    values = one_draw(lambda r: r.uniform(-1.0, 3.0, SAMPLES))
    assert values.min() >= -1.0 and values.max() < 3.0
    assert ks_statistic(values, lambda x: (x + 1.0) / 4.0) < KS_BOUND


def chi_square(counts, probabilities):
    expected = np.asarray(probabilities) * counts.sum()
    return ((counts - expected) ** 2 / expected).sum()


def test_integers_are_uniform_over_their_range():
    values = one_draw(lambda r: r.integers(-3, 7, SAMPLES))
    assert values.min() == -3 and values.max() == 6
    counts = np.bincount(values + 3, minlength=10)
    assert chi_square(counts, np.full(10, 0.1)) < 27.9  # chi-square(9)'s 0.999 quantile


def test_choice_along_an_axis_picks_from_that_axis():
    columns = one_draw(lambda r: r.choice(np.arange(6).reshape(2, 3), SAMPLES // 10, axis=1))
    assert (columns[1] - columns[0] == 3).all()
    counts = np.bincount(columns[0], minlength=3)
    assert chi_square(counts, np.full(3, 1 / 3)) < 13.8  # chi-square(2)'s 0.999


def test_binomial_counts_of_several_n():
    values = one_draw(lambda r: r.binomial(np.array([0, 1, 3]), 0.25, (SAMPLES // 10, 3)))
    assert (values[:, 0] == 0).all() and values[:, 1].max() == 1 and values[:, 2].max() == 3
    assert abs(values[:, 2].mean() - 0.75) < 0.03 and abs(values[:, 1].mean() - 0.25) < 0.02


def test_choice_follows_p():
    p = [0.1, 0.0, 0.6, 0.3]
    values = one_draw(lambda r: r.choice(4, SAMPLES, p=p))
    counts = np.bincount(values, minlength=4)
    assert counts[1] == 0
    assert chi_square(counts[[0, 2, 3]], [0.1, 0.6, 0.3]) < 13.8  # chi-square(2), 0.999


def test_binomial_counts_successes():
    values = one_draw(lambda r: r.binomial(5, 0.3, SAMPLES))
    counts = np.bincount(values, minlength=6)
    p = [math.comb(5, k) * 0.3 ** k * 0.7 ** (5 - k) for k in range(6)]
    assert chi_square(counts, p) < 20.5  # chi-square(5)'s 0.999 quantile


def test_permutations_are_uniformly_random():
    rng = np.random.default_rng(9)
    shuffled = jitflow.function(lambda: rng.permutation(4))
    orders = [tuple(shuffled()) for _ in range(2400)]
    assert all(sorted(order) == [0, 1, 2, 3] for order in orders)
    counts = np.array([orders.count(order) for order in set(orders)])
    assert len(counts) == 24
    assert chi_square(counts, np.full(24, 1 / 24)) < 49.8  # chi-square(23)'s 0.999


def test_choice_without_replacement_and_permutation_of_rows(backend):
    rng = np.random.default_rng(10)
    rows = np.arange(40.0).reshape(20, 2)
    picked, permuted = jitflow.function(
        lambda x: (rng.choice(20, 15, replace=False), rng.permutation(x)))(rows)
    assert len(set(picked.tolist())) == 15 and picked.min() >= 0 and picked.max() < 20
    assert_same(np.sort(permuted, axis=0), rows)
    assert not np.array_equal(permuted, rows)
    assert (permuted[:, 1] - permuted[:, 0] == 1).all()  # whole rows moved


def test_draws_of_one_call_are_independent():
    a, b = one_draw(lambda r: (r.standard_normal(SAMPLES), r.standard_normal(SAMPLES)))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.015


# --- what cannot be traced ------------------------------------------------------------
def raises_naming(error, match, call):
    with pytest.raises(error, match=match) as caught:
        call()
    assert THIS_FILE in str(caught.value)
    return str(caught.value)


def test_an_untraceable_method_names_itself_and_jitflow_random():
    rng = np.random.default_rng(0)
    message = raises_naming(TypeError, r"numpy\.random\.Generator\.gamma",
                            lambda: jitflow.function(lambda: rng.gamma(2.0))())
    assert "jitflow.random" in message
    message = raises_naming(TypeError, r"shuffle", lambda: jitflow.function(
        lambda x: np.random.shuffle(x))(np.ones(3)))
    assert "rng.permutation(x)" in message
    raises_naming(TypeError, r"numpy\.random\.Generator\.permuted",
                  lambda: jitflow.function(lambda x: rng.permuted(x))(np.ones(3)))
    raises_naming(TypeError, r"numpy\.random\.RandomState\.poisson",
                  lambda: jitflow.function(lambda: np.random.poisson(2.0, 3))())
    raises_naming(TypeError, r"RandomState\.seed",
                  lambda: jitflow.function(lambda: np.random.seed(0))())
    raises_naming(TypeError, r"BitGenerator\.random_raw", lambda: jitflow.function(
        lambda: rng.bit_generator.random_raw(2))())


def test_a_traced_variable_initial_value_points_to_eager_numpy():
    rng = np.random.default_rng(0)
    raises_naming(TypeError, "eager_numpy", lambda: jitflow.function(
        lambda: jitflow.Variable(rng.random(2)).value)())


def test_unsupported_arguments_are_clear_errors():
    rng = np.random.default_rng(0)
    cases = [(lambda: rng.random(out=np.zeros(2)), TypeError, "out="),
             (lambda: rng.random(3, dtype=np.int32), TypeError, "dtype int32"),
             (lambda: rng.integers(5, 2), ValueError, "low >= high"),
             (lambda: rng.integers(2 ** 40), TypeError, "2\\*\\*32"),
             (lambda: rng.integers(5, dtype=np.int8), TypeError, "int8"),
             (lambda: rng.choice(3, 2, False, [0.2, 0.3, 0.5]), TypeError,
              "replace=False and p="),
             (lambda: rng.choice(3, 4, replace=False), ValueError, "larger sample"),
             (lambda: rng.permutation(5000), TypeError, "up to 4096"),
             (lambda: rng.choice(3, p=[0.5, 0.6, 0.1]), ValueError, "sum to 1"),
             (lambda: rng.normal(0.0, -1.0), ValueError, "scale < 0"),
             (lambda: rng.normal(np.zeros(2), size=3), ValueError, "broadcast")]
    for draw, error, match in cases:
        raises_naming(error, match, jitflow.function(draw))
    raises_naming(TypeError, "bounds must be constants",
                  lambda: jitflow.function(lambda n: rng.integers(n))(5))


def test_a_generator_made_inside_the_function_is_an_error():
    raises_naming(TypeError, "made inside the compiled function", lambda: jitflow.function(
        lambda: np.random.default_rng(0).random(2))())


def test_a_generator_kept_from_inside_the_function_carries_on():
    kept = {}

    @jitflow.function
    def step():
        if "rng" not in kept:
            kept["rng"] = np.random.default_rng(0)
        return kept["rng"].random(2)
    assert not np.array_equal(step(), step())


def test_global_draws_jitflow_does_not_see_are_an_error():
    draw_aside = np.random.random_sample  # taken before the trace, so never swapped

    def helper():  # the function names only the helper, not the method it calls
        return draw_aside(2)
    raises_naming(TypeError, "global random state", lambda: jitflow.function(
        lambda x: x + helper())(np.zeros(2)))


def test_draws_from_a_generator_jitflow_does_not_see_are_an_error():
    rng = np.random.default_rng(0)
    draw_aside = rng.standard_normal  # taken before the trace, so never swapped

    def helper():
        return draw_aside(2)
    raises_naming(TypeError, "numpy.random.Generator was drawn from", lambda: jitflow.function(
        lambda x: x + rng.random(2) + helper())(np.zeros(2)))


@pytest.mark.parametrize("make", [lambda: np.random.default_rng(0).standard_normal,
                                  lambda: np.random.RandomState(0).uniform],
                         ids=["Generator", "RandomState"])
def test_methods_taken_before_the_trace_draw_fresh_numbers_at_every_call(make):
    draw_aside = make()  # named by the function: called by name on its generator

    class Sampler:
        def __init__(self):
            self.draw = draw_aside
    sampler = Sampler()
    for step in (jitflow.function(lambda x: x + draw_aside(2)),
                 jitflow.function(lambda x: x + sampler.draw(2))):
        first, second = step(np.zeros(2)), step(np.zeros(2))
        assert not np.array_equal(first, second)
    assert sampler.draw is draw_aside  # put back after the trace


def test_a_method_taken_before_the_trace_and_hidden_in_a_tuple_is_an_error():
    rng = np.random.default_rng(0)
    hidden = (rng.standard_normal,)  # no way to put a traced call in its place
    with pytest.raises(TypeError, match="'hidden\\[0\\]', a method of a NumPy random "
                       "generator taken before the trace"):
        jitflow.function(lambda x: x + hidden[0](2))(np.zeros(2))


def test_draws_in_loop_bodies_and_vmap_are_errors():
    rng = np.random.default_rng(0)
    raises_naming(TypeError, "loop body", lambda: jitflow.function(
        lambda x: jitflow.fori_loop(0, 3, lambda i, c: c + rng.random(), x))(0.0))
    raises_naming(TypeError, "loop body", lambda: jitflow.function(
        lambda x: jitflow.vmap(lambda row: row + rng.random())(x))(np.zeros((2, 3))))


def test_draws_in_an_eager_vmap_are_errors():
    # NumPy running the function row by row would draw for every row; one trace cannot
    rng = np.random.default_rng(0)
    for draw in (lambda: rng.random(), lambda: np.random.rand()):
        raises_naming(TypeError, "would give every element the same numbers",
                      lambda: jitflow.vmap(lambda row: row + draw())(np.zeros((2, 3))))
    state = rng.bit_generator.state
    assert_same(jitflow.vmap(lambda row: row * 2)(np.ones((2, 3))), np.full((2, 3), 2.0))
    assert rng.bit_generator.state == state
    assert rng.random() == np.random.default_rng(0).random()  # NumPy's own again


def test_eager_numpy_keeps_draws_as_constants():
    rng = np.random.default_rng(0)
    expected = np.random.default_rng(0).random(2)

    @jitflow.function
    def step():
        traced = rng.random(2) + np.random.rand(2)
        with jitflow.random.eager_numpy():
            return rng.random(2) + 0 * np.random.rand(2), traced
    (first, traced), (second, later) = step(), step()
    assert_same(first, expected)
    assert_same(second, expected)
    assert not np.array_equal(traced, later)


def test_a_layer_built_while_traced_gets_numpy_initial_weights():
    layer = jitflow.nn.Dense(3, rng=np.random.default_rng(0))
    eager = jitflow.nn.Dense(3, rng=np.random.default_rng(0))
    x = np.ones((2, 4), np.float32)
    assert_same(jitflow.function(layer)(x), eager(x), ulps=4)


def test_initializers_give_numpy_values_while_traced():
    init = jitflow.nn.initializers.truncated_normal(0.0, 1.0)
    expected = init((3, 2), np.float64, rng=np.random.default_rng(0))
    rng = np.random.default_rng(0)
    step = jitflow.function(lambda x: x + init((3, 2), np.float64, rng=rng))
    assert_same(step(np.zeros((3, 2))), expected)
