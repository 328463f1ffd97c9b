"""jitflow.function(fn, dynamic_axes=...): one compile serves every size of the leading
axis where the function's graph allows (dynamic_axes.py), with NumPy's results at each
size; elsewhere each size is compiled for itself, as without dynamic_axes."""
import re
import threading
import warnings

import numpy as np
import pytest

import jitflow

SIZES = (32, 17, 64, 5, 2, 300)


@pytest.fixture(autouse=True)
def quiet_retraces():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jitflow.RetraceWarning)
        yield


def ran(fn):
    """How each size ran after the first: 'all' (the code for all sizes) or 'own'."""
    return ["all" if "runs the code for all sizes" in line else "own"
            for line in fn.cache_info().dynamic[1:]]


def loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.maximum(x @ w1 + b1, 0)
    logits = h @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -(log_p * y).sum(axis=1).mean()


def reference_step(params, x, y):
    """The step in float64 NumPy, for the tolerance's sake."""
    w1, b1, w2, b2 = (p.astype(np.float64) for p in params)
    x, y = x.astype(np.float64), y.astype(np.float64)
    pre = x @ w1 + b1
    h = np.maximum(pre, 0)
    logits = h @ w2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    d_logits = (p - y) / len(x)
    d_h = d_logits @ w2.T * (pre > 0)
    grads = [x.T @ d_h, d_h.sum(axis=0), h.T @ d_logits, d_logits.sum(axis=0)]
    return [w - 0.1 * g for w, g in zip((w1, b1, w2, b2), grads)]


def test_a_training_step_compiles_once_for_every_batch_size():
    @jitflow.function(dynamic_axes={"x": 0, "y": 0})
    def step(params, x, y):
        value, grads = jitflow.value_and_grad(loss)(params, x, y)
        return value, [p - 0.1 * g for p, g in zip(params, grads)]
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s).astype(np.float32) * 0.3
              for s in [(20, 16), (16,), (16, 10), (10,)]]
    for n in SIZES:
        x = rng.standard_normal((n, 20)).astype(np.float32)
        y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]
        value, updated = step(params, x, y)
        assert value.dtype == np.float32 and value.shape == ()
        np.testing.assert_allclose(value, loss(params, x, y), rtol=1e-5)
        for got, want in zip(updated, reference_step(params, x, y)):
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    # The first size is compiled for itself; the others share one compile (a size
    # whose graph the optimizer makes differently gets its own).
    assert ran(step).count("all") >= 4


def test_inference_at_any_batch_size():
    def predict(w, x):
        logits = x @ w  # (small integers: exact, so argmax sees NumPy's ties)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), logits.argmax(axis=1)
    compiled = jitflow.function(predict, dynamic_axes={"x": 0})
    rng = np.random.default_rng(1)
    w = rng.integers(-3, 4, (12, 7)).astype(np.float32)
    for n in SIZES + (1000,):
        x = rng.integers(-3, 4, (n, 12)).astype(np.float32)
        (probabilities, labels), (want_p, want_labels) = compiled(w, x), predict(w, x)
        np.testing.assert_allclose(probabilities, want_p, rtol=2e-6, atol=1e-7)
        np.testing.assert_array_equal(labels, want_labels)
        assert labels.dtype == want_labels.dtype
    assert ran(compiled) == ["all"] * len(SIZES)
    assert compiled.cache_info().dynamic[1] == "n=17: runs the code for all sizes " \
                                               "(compiled now)"


@pytest.mark.parametrize("fn", [
    lambda x: x[-1] + x[0],
    lambda x: x[::-1] - x,
    lambda x: np.concatenate([x, 2 * x], axis=0),
    lambda x: np.cumsum(x, axis=0),
    lambda x: x.T @ x,
    lambda x: x.mean() + x.max(axis=0),
    lambda x: x.reshape(-1) * x.shape[0],
    lambda x: np.pad(x, ((1, 2), (0, 1))),
    lambda x: np.sort(x, axis=1)[:, :2],
], ids=["ends", "reversed", "concatenate", "cumsum", "gram", "reductions", "flat",
        "pad", "sort"])
def test_operations_along_the_dynamic_axis(fn):
    compiled = jitflow.function(fn, dynamic_axes={"x": 0})
    rng = np.random.default_rng(2)
    for n in (6, 9, 2, 33, 4):
        x = rng.standard_normal((n, 5))
        got, want = compiled(x), fn(x)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert ran(compiled) == ["all"] * 4


def test_sizes_0_and_1_and_graphs_that_differ_get_their_own_code():
    def fn(x):
        return np.exp(x) if x.shape[0] > 5 else np.sin(x)
    compiled = jitflow.function(fn, dynamic_axes={"x": 0})
    for n in (2, 3, 0, 1, 8, 4):
        x = np.linspace(-1, 1, n * 3).reshape(n, 3)
        np.testing.assert_allclose(compiled(x), fn(x), rtol=1e-15)
    assert ran(compiled) == ["all", "own", "all"]  # 0 and 1 are not listed
    assert "its graph differs (sin where the other size has exp)" in \
        compiled.cache_info().dynamic[2]


def test_code_whose_decisions_differ_at_the_smallest_sizes_serves_the_others():
    compiled = jitflow.function(lambda x: x[1:] - x[:-1], dynamic_axes={"x": 0})
    for n in (5, 9, 2, 3, 40):
        x = np.arange(n * 2.0).reshape(n, 2) ** 2
        np.testing.assert_array_equal(compiled(x), x[1:] - x[:-1])
    assert ran(compiled) == ["all", "own", "all", "all"]
    # (x[1:] has n - 1 rows: 1 at n = 2, a size that code decides apart)
    assert compiled.cache_info().dynamic[2] == "n=2: compiled for this size: the code " \
        "for all sizes could not be made (==: n-2 is 0 for n = 2 only)"


def test_an_index_past_the_end_raises_at_the_sizes_it_is_past():
    compiled = jitflow.function(lambda x, i: x[i] * 2, dynamic_axes={"x": 0})
    index = np.array([0, 3, 5])
    for n in (6, 8, 9, 12):
        x = np.arange(n * 2.0).reshape(n, 2)
        np.testing.assert_array_equal(compiled(x, index), x[index] * 2)
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(np.ones((4, 2)), index)
    assert ran(compiled) == ["all"] * 4


def test_state_out_and_donation():
    rng = np.random.default_rng(3)
    w = jitflow.Variable(np.ones((3, 2), np.float32))

    @jitflow.function(dynamic_axes={"x": 0})
    def train(x):
        w.assign(w.value - 0.01 * (x.T @ (x @ w.value)) / x.shape[0])
        return (x @ w.value).sum()
    expected = np.ones((3, 2), np.float32)
    for n in (4, 7, 9, 3):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        train(x)
        expected = expected - np.float32(0.01) * (x.T @ (x @ expected)) / n
        np.testing.assert_allclose(np.asarray(w.value), expected, rtol=1e-5)
    assert ran(train) == ["all"] * 3

    plus_one = jitflow.function(lambda x: np.exp(x) + 1, dynamic_axes={"x": 0})
    for n in (4, 7, 9):
        x = rng.standard_normal((n, 5)).astype(np.float32)
        out = np.empty_like(x)
        assert plus_one(x, out=out) is out
        np.testing.assert_allclose(out, np.exp(x) + 1, rtol=1e-6)

    descend = jitflow.function(lambda p, x: p - 0.1 * x.sum(axis=0),
                               dynamic_axes={"x": 0}, donate_argnames=("p",))
    p = np.ones(5, np.float32)
    for n in (4, 7, 9):
        x = rng.standard_normal((n, 5)).astype(np.float32)
        expected = p - np.float32(0.1) * x.sum(axis=0)
        p = descend(p, x)
        np.testing.assert_allclose(p, expected, rtol=1e-6)
    assert ran(plus_one) == ran(descend) == ["all"] * 2


def test_arguments_of_different_sizes_are_compiled_for_themselves():
    compiled = jitflow.function(lambda x, y: x.sum(axis=0) + y.sum(axis=0),
                                dynamic_axes={"x": 0, "y": 0})
    for n, m in ((3, 4), (5, 6), (7, 7), (8, 8)):
        x, y = np.ones((n, 2)), np.ones((m, 2))
        np.testing.assert_array_equal(compiled(x, y), x.sum(axis=0) + y.sum(axis=0))
    assert ran(compiled) == ["all"]  # only 7 and 8 share one size


def test_bad_dynamic_axes_are_refused():
    with pytest.raises(ValueError, match="names 'z', which is not a parameter"):
        jitflow.function(lambda x: x, dynamic_axes={"z": 0})
    for axis in (-1, "0", True):
        with pytest.raises(ValueError, match=rf"dynamic_axes\['x'\] = {axis!r}; give "):
            jitflow.function(lambda x: x, dynamic_axes={"x": axis})


def test_an_inner_axis_a_sequence_length():
    w = np.linspace(-1, 1, 16).reshape(4, 4)

    def attend(x):  # x: (batch, time, features); a score per step, softmax over time
        h = np.tanh(x @ w)
        scores = h.sum(axis=2)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        return (weights[:, :, None] * h).sum(axis=1), np.cumsum(h, axis=1)[:, ::-1]
    compiled = jitflow.function(attend, dynamic_axes={"x": 1})
    rng = np.random.default_rng(4)
    for t in (5, 9, 2, 13, 3):
        x = rng.standard_normal((3, t, 4))
        for got, want in zip(compiled(x), attend(x)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert ran(compiled) == ["all"] * 4


def scaled_rows(x):
    return x * 2 + 1


def test_copies_and_methods_keep_their_dynamic_axes():
    import copy
    compiled = copy.deepcopy(jitflow.function(scaled_rows, dynamic_axes={"x": 0}))
    assert compiled.dynamic_axes == {"x": 0}

    class Scaler:
        factor = 3.0

        @jitflow.function(dynamic_axes={"x": 0})
        def scale(self, x):
            return x * self.factor
    scaler = Scaler()
    for n in (3, 4, 6):
        np.testing.assert_array_equal(compiled(np.ones((n, 2))), np.full((n, 2), 3.0))
        np.testing.assert_array_equal(scaler.scale(np.ones((n, 2))), np.full((n, 2), 3.0))
    assert ran(compiled) == ["all"] * 2


def test_a_size_called_again_goes_straight_to_its_native_code():
    compiled = jitflow.function(lambda x: x * 2 + 1, dynamic_axes={"x": 0})
    for n in (3, 4, 5, 5, 5):
        x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
        np.testing.assert_array_equal(compiled(x), x * 2 + 1)
    # From the size's second call, the entry Python calls directly (made for it).
    assert compiled._direct is not None
    np.testing.assert_array_equal(compiled._direct.call(x), x * 2 + 1)
    out = np.empty_like(x)
    assert compiled(x, out=out) is out
    np.testing.assert_array_equal(out, x * 2 + 1)
    transposed = np.arange(10, dtype=np.float32).reshape(2, 5).T  # declined: checked
    np.testing.assert_array_equal(compiled(transposed), transposed * 2 + 1)
    assert ran(compiled) == ["all"] * 2


def test_a_long_float_sum_along_the_dynamic_axis_is_as_accurate_as_numpys():
    # 0.1 two million times: summed in order in float32 the total would be off by
    # about 1%, pairwise (NumPy, and jitflow's chunks of 1024 combined pairwise) by
    # about 1e-7.
    compiled = jitflow.function(lambda x: (x.sum(), x.mean()), dynamic_axes={"x": 0})
    for n in (1000, 1001, 129, 2_000_001):
        x = np.full(n, 0.1, np.float32)
        exact = n * np.float64(np.float32(0.1))
        total, mean = compiled(x)
        assert abs(total / exact - 1) < 1e-6 and abs(mean * n / exact - 1) < 1e-6
        assert abs(x.sum() / exact - 1) < 1e-6  # (NumPy's, for scale)
    assert ran(compiled) == ["all"] * 3


@pytest.fixture
def auto_dynamic_axes():
    def set_to(value):
        jitflow.config.auto_dynamic_axes = value
    before = jitflow.config.auto_dynamic_axes
    yield set_to
    jitflow.config.auto_dynamic_axes = before


def test_a_retrace_that_differs_in_one_axis_only_makes_it_dynamic(auto_dynamic_axes):
    auto_dynamic_axes(True)
    fn = jitflow.function(lambda x, w: np.tanh(x @ w).sum(axis=1))
    w = np.linspace(-1, 1, 6).reshape(3, 2)
    for n in (4, 5, 9, 2, 30):
        x = np.arange(n * 3.0).reshape(n, 3) / 10
        np.testing.assert_allclose(fn(x, w), np.tanh(x @ w).sum(axis=1), atol=1e-14)
    assert fn.cache_info().dynamic[0] == "n=4: compiled for this size (the first)"
    assert ran(fn) == ["all"] * 4
    assert fn.dynamic_axes is None  # (inferred, not asked for)


def test_retraces_that_differ_otherwise_keep_code_per_signature(auto_dynamic_axes):
    auto_dynamic_axes(True)
    both = jitflow.function(lambda x, y: x.sum() + y.sum())
    both(np.ones((2, 3)), np.ones((4, 5)))
    both(np.ones((3, 3)), np.ones((4, 6)))  # two axes changed
    both(np.ones((3, 3), np.float32), np.ones((4, 6)))  # a dtype changed
    assert both.cache_info().dynamic == []
    auto_dynamic_axes(False)
    off = jitflow.function(lambda x: x * 2)
    for n in (2, 3, 4):
        off(np.ones(n))
    assert off.cache_info().dynamic == []


def test_inferred_axes_still_warn_of_many_retraces(auto_dynamic_axes):
    auto_dynamic_axes(True)
    fn = jitflow.function(lambda x: x + 1)
    with pytest.warns(jitflow.RetraceWarning):
        for n in range(2, 3 + jitflow.config.retrace_warning_after):
            fn(np.ones(n))
    assert ran(fn).count("all") == jitflow.config.retrace_warning_after


def test_a_sum_of_computed_values_counts_only_the_row_s_elements():
    # (x * 2 + 1) is 1 where a partial vector's missing lanes read 0: they must not count
    compiled = jitflow.function(lambda x: (x * 2 + 1).sum(), dynamic_axes={"x": 0})
    for n in (100, 101, 7, 1025, 33):
        x = np.linspace(-1, 1, n * 3).reshape(n, 3).astype(np.float32)
        want = (x.astype(np.float64) * 2 + 1).sum()
        assert abs(compiled(x) - want) <= 1e-5 * max(1.0, abs(want))
    assert ran(compiled) == ["all"] * 4


def test_with_background_compile_new_sizes_run_on_the_interpreter_meanwhile(monkeypatch):
    """The template's code compiles on a thread of its own: the second size's first
    call, and a third size's that comes meanwhile (which waits for the same code), run
    on the interpreter; their second calls run the code for all sizes. The code is the
    second size's template's, whichever thread compiles it."""
    from jitflow import dynamic_axes
    compile_may_end, compiled_for = threading.Event(), []

    class HeldDynamicNative(dynamic_axes.DynamicNative):
        def __init__(self, *args, **kwargs):
            assert compile_may_end.wait(60)
            compiled_for.append((kwargs["n"], kwargs["typical"]))
            super().__init__(*args, **kwargs)
    monkeypatch.setattr(dynamic_axes, "DynamicNative", HeldDynamicNative)
    monkeypatch.setattr(jitflow.config, "background_compile", True)

    def fn(x):
        return np.tanh(x).sum(axis=0) + x.shape[0] * x[0]
    compiled = jitflow.function(fn, dynamic_axes={"x": 0})
    rng = np.random.default_rng(3)
    inputs = {n: rng.standard_normal((n, 6)).astype(np.float32) for n in (8, 11, 20)}
    for n, x in inputs.items():  # (each first call on the interpreter)
        np.testing.assert_allclose(compiled(x), fn(x), rtol=1e-5, atol=1e-6)
    assert compiled.cache_info().dynamic == ["n=8: compiled for this size (the first)"]
    compile_may_end.set()
    for n, x in inputs.items():
        np.testing.assert_allclose(compiled(x), fn(x), rtol=1e-5, atol=1e-6)
    assert sorted(compiled.cache_info().dynamic[1:]) == [
        "n=11: runs the code for all sizes (compiled now)",
        "n=20: runs the code for all sizes"]
    assert compiled_for == [(11, 11)]


def test_a_donated_step_is_written_in_place_at_every_size(monkeypatch):
    """From a size's second call, the update `p - 0.1 * g` goes through the size's
    entry straight over the donated array (the checked path, which would copy it, is
    taken away), as for code compiled for one size; a donated argument with the
    dynamic axis too."""
    def descend(p, x):
        return p - 0.1 * (x * x).sum(axis=0), x * 0.5
    compiled = jitflow.function(descend, dynamic_axes={"x": 0},
                                donate_argnames=("p", "x"))
    rng = np.random.default_rng(5)
    p = np.ones(5, np.float32)
    for n in (4, 7, 9, 12):
        for call in range(2):
            x = rng.standard_normal((n, 5)).astype(np.float32)
            want_p, want_x = descend(p.copy(), x.copy())
            with monkeypatch.context() as patched:
                if call:
                    patched.setattr(jitflow.executable.Executable, "__call__", None)
                new_p, new_x = compiled(p, x)
            assert new_p is p and new_x is x
            np.testing.assert_allclose(p, want_p, rtol=1e-5)
            np.testing.assert_array_equal(x, want_x)
    assert ran(compiled) == ["all"] * 3


REDUCTIONS = {
    "sum": lambda x: x.sum(),
    "mean of exp": lambda x: np.exp(x * 0.1).mean(),
    "sum along the axis": lambda x: x.sum(axis=0) if x.ndim > 1 else x.sum(),
    "max and min": lambda x: (x.max(), np.minimum(x, 0.5).min()),
    "prod": lambda x: (1 + x * 1e-3).prod(),
    "int sum": lambda x: (x > 0).astype(np.int32).sum(),
    "sum of squares": lambda x: (x * x).sum(),
    "two reductions": lambda x: (x.sum(), (x - x.mean()).sum()),
}


@pytest.mark.parametrize("columns", [(), (3,), (16,), (2000,)])
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions_give_the_bits_of_code_compiled_for_the_size(name, columns):
    """A reduction along a run-time size is cut into the chunks code compiled for that
    size cuts (row_loops._reduce_at_run_time), and gets its bits exactly: around the
    chunk's 1024 elements, a row of 16 columns 64 rows to a chunk, a row of 2000
    columns a chunk per half row; float32 with -0.0 and a NaN among the values. Rows
    shorter than half a vector fold in order instead (reductions._by_rows), in code
    of their own."""
    fn = REDUCTIONS[name]
    dynamic = jitflow.function(fn, dynamic_axes={"x": 0})
    rng = np.random.default_rng(4)
    sizes = (5, 9, 63, 64, 65, 1023, 1024, 1025, 2049, 3000, 3, 2)
    for n in sizes:
        x = rng.standard_normal((n,) + columns).astype(np.float32)
        x.flat[n // 2] = -0.0
        if name == "max and min" and n == 1025:
            x.flat[1000] = np.nan
        got, want = dynamic(x), jitflow.function(fn)(x)
        for g, w in zip(*(np.atleast_1d(v) if not isinstance(v, tuple) else v
                          for v in (got, want))):
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (n, g, w)
    assert ran(dynamic) == ["all"] * (len(sizes) - 1)


def test_sizes_that_decide_apart_get_code_of_their_own_range():
    """max over fewer than 8 float32 folds in order (a tie of 0.0 and -0.0 takes the
    later), over more through vector accumulators (the earlier in its lane), as code
    for each size does: sizes on either side of 8 get code for their side."""
    fn = jitflow.function(lambda x: x.max(), dynamic_axes={"x": 0})
    for n in (2, 3, 17, 5, 100, 7, 8):
        x = np.zeros(n, np.float32)
        x[0] = -0.0
        assert np.signbit(fn(x)) == np.signbit(jitflow.function(lambda x: x.max())(x))
    assert ran(fn) == ["all"] * 6
    assert [line.endswith("(compiled now)") for line in fn.cache_info().dynamic[1:]] == \
        [True, True, False, False, False, False]


@pytest.mark.parametrize("fn", [lambda x: x.sum(), lambda x: (x * x).mean(),
                                lambda x: (np.abs(x).max(), x.min())],
                         ids=["sum", "mean of squares", "max and min"])
def test_a_large_reduction_split_between_threads_gets_the_bits_of_code_for_the_size(fn):
    """Over everything, the chunks are cut into a run per thread, each a power of two
    of chunks from a multiple of it (row_loops._reduce_in_groups): combine_tree's own
    tree, whatever the count of chunks."""
    dynamic = jitflow.function(fn, dynamic_axes={"x": 0})
    rng = np.random.default_rng(6)
    for n in (300_001, 2_000_000, 1_048_576, 3_000_037):
        x = rng.standard_normal(n).astype(np.float32)
        x[::1000] = -0.0
        got, want = dynamic(x), jitflow.function(fn)(x)
        for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (n, g, w)
    assert ran(dynamic) == ["all"] * 3


def test_a_reduction_whose_run_time_size_lies_outside_its_chunks():
    """Rows of 2050 strided elements: chunks of 1024 along each row (known), a
    run-time number of rows (row_loops._static_chunks in a loop over them)."""
    def fn(x):
        return (x[:, ::2] * 1.5).sum()
    dynamic = jitflow.function(fn, dynamic_axes={"x": 0})
    rng = np.random.default_rng(7)
    for n in (3, 5, 7, 64, 9):
        x = rng.standard_normal((n, 4100)).astype(np.float32)
        assert dynamic(x).tobytes() == jitflow.function(fn)(x).tobytes()
    assert ran(dynamic) == ["all"] * 4


def test_column_sums_along_a_run_time_length_fold_unroll_rows_per_pass(made_dynamic_natives):
    """Rows wider than a vector of output slots, a run-time number of them: whole
    blocks of column_loops.UNROLL rows per pass over the slots, then the rows left
    (count % UNROLL, at run time) one per pass; the same bits as code for the size,
    with an axis kept outside the reduced one too."""
    from jitflow.codegen.loops.column_loops import UNROLL
    made = made_dynamic_natives

    def fn(x):
        return x.sum(axis=1), np.maximum(x, 0).max(axis=1)
    dynamic = jitflow.function(fn, dynamic_axes={"x": 1})
    rng = np.random.default_rng(8)
    sizes = (9, 2, 3, 4, 5, 6, 7, 8, 33, 402)
    for n in sizes:
        x = rng.standard_normal((3, n, 40)).astype(np.float32)
        for got, want in zip(dynamic(x), jitflow.function(fn)(x)):
            assert got.tobytes() == want.tobytes(), n
    assert ran(dynamic) == ["all"] * (len(sizes) - 1)
    text = "\n".join(made[0].llvm_irs)
    assert re.search(rf"udiv i64 %\S+, {UNROLL}\n", text)
    assert re.search(rf"urem i64 %\S+, {UNROLL}\n", text)
