"""config.background_compile: the first call of a new signature runs on the interpreter
while native code is built on another thread (unless the disk cache holds it:
tests/codegen/runtime/test_graph_cache.py); later calls run the native code."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitflow
from jitflow import executable
from jitflow import CompileWarning


@pytest.fixture
def background():
    saved = jitflow.config.background_compile
    jitflow.config.background_compile = True
    yield
    jitflow.config.background_compile = saved


def step(x, y):
    return {"z": np.tanh(x) * y + 1, "total": np.sum(x * y)}


def only_executable(function):
    (compiled,) = function._cache.values()
    return compiled


def assert_matches_numpy(result, x, y):
    """Equal to NumPy to rounding: math functions may be a few ulp off, and sums add in
    another order."""
    expected = step(x, y)
    eps = np.finfo(x.dtype).eps
    np.testing.assert_allclose(result["z"], expected["z"], rtol=16 * eps, atol=16 * eps)
    np.testing.assert_allclose(result["total"], expected["total"], rtol=x.size * eps,
                               atol=x.size * eps)


@given(st.integers(1, 300), st.sampled_from([np.float32, np.float64]))
def test_first_call_interpreted_later_calls_native(size, dtype):
    jitflow.config.background_compile = True
    try:
        rng = np.random.default_rng(size)
        x, y = (rng.standard_normal(size).astype(dtype) for _ in range(2))
        compiled = jitflow.function(step)
        first = compiled(x, y)
        assert only_executable(compiled).native is None  # always exactly the first call
        assert_matches_numpy(first, x, y)
        second = compiled(x, y)
        assert only_executable(compiled).native is not None
        assert_matches_numpy(second, x, y)
        assert first["z"].dtype == second["z"].dtype == np.dtype(dtype)
    finally:
        jitflow.config.background_compile = False


def test_a_build_that_compiled_leaves_the_first_call_to_the_interpreter(background,
                                                                      monkeypatch):
    """Even where the build is done before the first call asks (here made sure of):
    what runs must depend on the disk cache, never on timing."""
    asked_late = executable._NativeBuild.done_from_cache

    def after_the_build(build):
        build.thread.join()
        return asked_late(build)
    monkeypatch.setattr(executable._NativeBuild, "done_from_cache", after_the_build)
    compiled = jitflow.function(step)  # (the graph cache is off in the tests: it compiles)
    x = np.linspace(-1, 1, 7)
    assert_matches_numpy(compiled(x, x), x, x)
    assert only_executable(compiled).native is None
    compiled(x, x)
    assert only_executable(compiled).native is not None


def test_fast_path_runs_native_code(background):
    compiled = jitflow.function(lambda a: a * 2 + 1)
    a = np.arange(8, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(compiled(a), a * 2 + 1)
    assert only_executable(compiled).native is not None


def test_wait_builds_native_code(background):
    compiled = jitflow.function(step)
    x = np.ones(4, np.float32)
    compiled(x, x)
    compiled.wait()
    assert only_executable(compiled).native is not None


def test_off_builds_before_the_first_call_returns():
    assert not jitflow.config.background_compile  # the test suite's setting
    compiled = jitflow.function(step)
    x = np.ones(4, np.float32)
    compiled(x, x)
    assert only_executable(compiled).native is not None


def test_failed_build_warns_and_keeps_interpreting(background, monkeypatch):
    def broken(graph, name):
        raise NotImplementedError("no lowering for primitive 'mystery'")
    monkeypatch.setattr(executable, "_native_graph", broken)
    compiled = jitflow.function(step)
    x = np.linspace(-1, 1, 5)
    # The build fails before it looks for cached code: the first call waits for it.
    with pytest.warns(CompileWarning, match="step: native code could not be built .*mystery"):
        assert_matches_numpy(compiled(x, x), x, x)
    assert_matches_numpy(compiled(x, x), x, x)  # warned once; still interpreted
    with pytest.raises(NotImplementedError, match="mystery"):
        compiled.wait()


def test_runtime_errors_raise_on_both_paths(background):
    compiled = jitflow.function(lambda a, i: a[i])
    a = np.arange(5.0)
    for _ in range(2):  # interpreted, then native
        with pytest.raises(IndexError):
            compiled(a, np.array([7]))


def test_variables_update_the_same_whichever_backend_runs_the_call(background):
    """The first call runs on the interpreter, the rest on native code: each writes the
    Variables back the same way."""
    counter = jitflow.Variable(np.int64(0), name="counter")
    total = jitflow.Variable(np.zeros(3, np.float32), name="total")

    @jitflow.function
    def accumulate(x):
        counter.assign_add(1)
        total.assign(total + x)
        return total.value * 2
    x = np.arange(3, dtype=np.float32)
    for calls in range(1, 5):
        np.testing.assert_array_equal(accumulate(x), 2 * calls * x)
        accumulate.wait()
    assert int(counter.value) == 4
    np.testing.assert_array_equal(total.value, 4 * x)
    assert only_executable(accumulate).native is not None
