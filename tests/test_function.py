"""@jitflow.function: signatures, caching, retrace reasons, the eager switch, pytrees."""
import os
import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def counting(fn):
    """fn wrapped as a jitflow.function, with a count of how often its body runs."""
    runs = []

    def body(*args, **kwargs):
        runs.append(1)
        return fn(*args, **kwargs)
    return jitflow.function(body), runs


def test_same_signature_does_not_rerun_the_body():
    f, runs = counting(lambda x, y: np.exp(x) @ y)
    x, y = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    first = f(x, y)
    second = f(x * 2, y)
    assert len(runs) == 1
    np.testing.assert_allclose(second, np.exp(x * 2) @ y, rtol=1e-6)
    assert first.dtype == np.float32
    assert f.cache_info().traces == 1 and f.cache_info().hits == 1


def test_new_shape_or_dtype_retraces_with_a_reason():
    runs = []

    @jitflow.function
    def f(x):
        runs.append(1)
        return x * 2
    f(np.ones(3))
    f(np.ones(4))
    f(np.ones(4, np.float32))
    assert len(runs) == 3
    reasons = f.cache_info().reasons
    assert "argument 'x' changed from f64[3] to f64[4]" in reasons[0]
    assert "argument 'x' changed from f64[4] to f32[4]" in reasons[1]
    assert "test_function.py" in reasons[0]  # the caller's file:line


def test_python_scalars_are_dynamic_weak_inputs():
    f, runs = counting(lambda x, s: x * s)
    x = np.ones(3, np.float32)
    assert f(x, 2.0).dtype == np.float32           # weak: x's dtype wins, as in NumPy
    np.testing.assert_array_equal(f(x, 3.0), x * 3.0)
    assert len(runs) == 1                          # a new value is not a new signature
    assert f(np.ones(3, np.int32), 1.5).dtype == np.float64
    f(x, 2)                                        # int instead of float retraces
    assert "from ~f64[] to ~i64[]" in f.cache_info().reasons[-1]


def test_static_arguments_are_part_of_the_signature():
    @jitflow.function
    def power(x, n):
        return x ** n
    static = jitflow.function(lambda x, n, flip=False: x[::-1] ** n if flip else x ** n,
                              static_argnames=("n", "flip"))
    x = np.arange(4.0)
    np.testing.assert_array_equal(static(x, 3), x ** 3)
    np.testing.assert_array_equal(static(x, 3, flip=True), x[::-1] ** 3)
    static(x, 2)
    assert static.cache_info().traces == 3
    assert "static argument 'n' changed from 3 to 2" in static.cache_info().reasons[-1]
    np.testing.assert_array_equal(power(x, 2), x ** 2)
    by_number = jitflow.function(lambda x, k: x[:k], static_argnums=1)
    np.testing.assert_array_equal(by_number(x, 2), x[:2])


def test_unhashable_static_argument_is_a_clear_error():
    f = jitflow.function(lambda x, cfg: x, static_argnames="cfg")
    with pytest.raises(TypeError, match="static argument 'cfg' must be hashable"):
        f(np.ones(2), [1, 2])


def test_many_retraces_warn_with_reasons_and_a_fix():
    f = jitflow.function(lambda x: x + 1)
    with pytest.warns(jitflow.RetraceWarning) as record:
        for n in range(jitflow.config.retrace_warning_after):
            f(np.ones(n + 1))
    message = str(record[0].message)
    assert f"traced {jitflow.config.retrace_warning_after} times" in message
    assert "argument 'x' changed from f64[1] to f64[2]" in message
    assert "pad inputs" in message
    assert record[0].filename == __file__


def test_pytree_arguments_and_results():
    Pair = namedtuple("Pair", "a b")

    @jitflow.function
    def f(params, xs, pair):
        return {"y": xs[0] @ params["w"] + params["b"], "n": [xs[1].sum(), pair.a * pair.b]}
    params = {"w": np.ones((3, 2)), "b": np.zeros(2)}
    xs = [np.ones((4, 3)), np.arange(3.0)]
    out = f(params, xs, Pair(np.float64(2.0), 3.0))
    np.testing.assert_array_equal(out["y"], xs[0] @ params["w"])
    assert out["n"][0] == 3.0 and out["n"][1] == 6.0
    graph = f.trace(params, xs, Pair(np.float64(2.0), 3.0))
    assert [str(v.type) for v in graph.inputs] == ["f64[3,2]", "f64[2]", "f64[4,3]",
                                                   "f64[3]", "f64[]", "~f64[]"]


def test_results_are_what_numpy_returns_and_never_alias_inputs():
    f = jitflow.function(lambda x, s: (x, x.sum(), s * 2, x.T))
    x = np.arange(6.0).reshape(2, 3)
    same, total, weak, transposed = f(x, 1.5)
    assert same is not x and not np.shares_memory(same, x)
    assert isinstance(total, np.float64) and total == 15.0
    assert type(weak) is float and weak == 3.0
    assert transposed.flags.writeable and not np.shares_memory(transposed, x)


def test_calls_inside_a_trace_are_inlined():
    inner, runs = counting(lambda x: jnp.exp(x))
    outer = jitflow.function(lambda x: inner(x) + inner(x * 2))
    graph = outer.trace(np.ones(2))
    assert [n.op for n in graph.nodes] == ["exp", "mul", "exp", "add"]
    assert inner.cache_info().traces == 0


def test_run_eagerly_calls_the_python_function(monkeypatch):
    seen = []

    @jitflow.function
    def f(x):
        seen.append(type(x))
        return x * 2
    monkeypatch.setattr(jitflow.config, "run_eagerly", True)
    np.testing.assert_array_equal(f(np.ones(2)), np.full(2, 2.0))
    assert seen == [np.ndarray]
    assert f.cache_info().traces == 0


def run_script(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": ROOT, **env}, timeout=120)


def test_environment_switches():
    code = ("import numpy as np, jitflow\n"
            "f = jitflow.function(lambda x: type(x).__name__ if False else x * 1 + 0.0)\n"
            "print(jitflow.config.run_eagerly, f(np.ones(2)).tolist())\n")
    eager = run_script(code, JITFLOW_EAGER="1")
    assert eager.stdout.startswith("True [1.0, 1.0]"), eager.stderr
    dumped = run_script(code, JITFLOW_DUMP="1", JITFLOW_CHECK="1")
    assert "--- after simplify ---" in dumped.stdout and "--- after dce ---" in dumped.stdout


def test_graph_inspection_api():
    f = jitflow.function(lambda x: jnp.sin(x) * 1)
    graph = f.trace(np.ones(3))
    assert [node.op for node in graph.nodes] == ["sin", "mul"]
    assert [node.op for node in jitflow.optimize(graph).nodes] == ["sin"]
    assert str(graph).startswith("graph(%0: f64[3]) {")


class Subclass(np.ndarray):
    pass


def test_fast_path_serves_repeat_calls_and_never_trusts_a_layout_it_did_not_check(
        monkeypatch):
    monkeypatch.setattr(jitflow.config, "backend", "native")
    f = jitflow.function(lambda x, y: (x * y + 1, (x * y).sum()))
    x, y = np.arange(6.0).reshape(2, 3), np.full(3, 2.0)
    f(x, y)
    assert len(f._fast) == 1  # remembered for plain C-contiguous arrays
    out, total = f(x, y)
    np.testing.assert_array_equal(out, x * y + 1)
    assert total == 30.0 and f.cache_info().hits == 1
    strided = np.arange(12.0).reshape(2, 6)[:, ::2]
    np.testing.assert_array_equal(f(strided, y)[0], strided * y + 1)
    raw = np.zeros(6 * 8 + 1, np.uint8)
    misaligned = np.frombuffer(raw.data, np.float64, count=6, offset=1).reshape(2, 3)
    misaligned[...] = x
    assert not misaligned.flags.aligned and misaligned.flags.c_contiguous
    np.testing.assert_array_equal(f(misaligned, y)[0], x * y + 1)
    np.testing.assert_array_equal(f(x.view(Subclass), y)[0], x * y + 1)
    assert f.cache_info().traces == 1


def test_fast_path_is_not_used_for_numpy_scalars_or_keywords(monkeypatch):
    monkeypatch.setattr(jitflow.config, "backend", "native")
    g = jitflow.function(lambda x: x + 1)
    assert g(np.float64(1.0)) == 2.0 and g(np.float64(2.0)) == 3.0
    assert g(np.array(2.0)) == 3.0 and g(x=np.array(5.0)) == 6.0
    assert isinstance(g(np.array(2.0)), np.float64)
    assert not g._fast or all(key[1][0][0] is np.ndarray for key in g._fast)


def test_defaults_left_out_are_constants_of_the_trace():
    gelu = jitflow.function(jitflow.nn.gelu)  # gelu(x, approximate=False)
    x = np.linspace(-3, 3, 7)
    np.testing.assert_allclose(gelu(x), jitflow.nn.gelu(x), rtol=1e-12)
    assert gelu.cache_info().traces == 1


def test_string_arguments_are_static():
    reduce = jitflow.function(lambda x, how="sum": x.sum() if how == "sum" else x.max())
    x = np.arange(4.0)
    assert reduce(x) == 6.0 and reduce(x, how="sum") == 6.0 and reduce(x, how="max") == 3.0
    reduce(x, how="max")
    assert reduce.cache_info().traces == 3
    assert "static argument 'how' changed from 'sum' to 'max'" in \
        reduce.cache_info().reasons[-1]
    loss = jitflow.function(jitflow.nn.losses.mean_squared_error)
    assert loss(x, x + 1.0, reduction="sum") == 4.0


class Affine:
    def __init__(self, scale):
        self.scale = np.float32(scale)
        self.offset = np.full(3, scale, np.float32)

    @jitflow.function
    def apply(self, x):
        return x * self.offset + self.scale

    @jitflow.function(static_argnames="power")
    def raised(self, x, power):
        return x ** power * self.offset


def test_a_decorated_method_is_compiled_per_instance(backend):
    a, b, x = Affine(2.0), Affine(3.0), np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(a.apply(x), x * 2 + 2)
    np.testing.assert_array_equal(b.apply(x), x * 3 + 3)
    assert a.apply.function is a.apply.function and a.apply.function is not b.apply.function
    a.apply(x)
    assert a.apply.cache_info().traces == 1 and a.apply.cache_info().hits >= 1

    class Shifted(Affine):
        def apply(self, x):
            return super().apply(x) + 1  # the parent's compiled method, bound to self

    np.testing.assert_array_equal(Shifted(2.0).apply(x), x * 2 + 3)


def test_a_decorated_method_keeps_its_static_arguments(backend):
    a, x = Affine(2.0), np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(a.raised(x, power=2), x ** 2 * 2)
    np.testing.assert_array_equal(a.raised(x, 3), x ** 3 * 2)
    assert a.raised.cache_info().traces == 2


def test_a_decorated_method_does_not_keep_its_instance_alive():
    import gc
    import weakref
    a = Affine(2.0)
    a.apply(np.ones(3, np.float32))
    alive = weakref.ref(a)
    del a
    gc.collect()
    assert alive() is None


def test_an_instance_with_a_compiled_method_pickles():
    import pickle
    a = Affine(2.0)
    x = np.ones(3, np.float32)
    a.apply(x)
    copy = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(copy.apply(x), a.apply(x))
    method = pickle.loads(pickle.dumps(a.apply))
    np.testing.assert_array_equal(method(x), a.apply(x))


@pytest.fixture
def cache_size():
    """Set jitflow.config.cache_size for one test."""
    before = jitflow.config.cache_size
    yield lambda size: setattr(jitflow.config, "cache_size", size)
    jitflow.config.cache_size = before


def test_the_least_recently_used_signatures_are_forgotten_beyond_cache_size(
        backend, cache_size):
    cache_size(3)
    double = jitflow.function(lambda x: x * 2)
    for n in (1, 2, 3, 1, 4):  # 2 is the least recently used when 4 comes
        np.testing.assert_array_equal(double(np.ones(n)), np.full(n, 2.0))
    assert [sig.types[0].shape for sig in double._cache] == [(3,), (1,), (4,)]
    assert double.cache_info().traces == 4
    with pytest.warns(jitflow.errors.RetraceWarning):  # traced again: a fifth time
        np.testing.assert_array_equal(double(np.ones(2)), np.full(2, 2.0))
    assert double.cache_info().traces == 5 and len(double._cache) == 3


def test_an_interrupt_while_tracing_leaves_the_function_usable(backend):
    interrupt = [True]

    @jitflow.function
    def f(x):
        if interrupt[0]:
            raise KeyboardInterrupt
        return x + 1

    with pytest.raises(KeyboardInterrupt):
        f(np.ones(2))
    interrupt[0] = False
    np.testing.assert_array_equal(f(np.ones(2)), np.full(2, 2.0))
    assert not jitflow.trace.is_tracing()


def test_a_million_calls_leave_memory_flat():
    f = jitflow.function(lambda x: x * 2 + 1)
    x = np.ones(8, np.float32)
    for _ in range(100_000):  # warm: every cache and free list filled
        f(x)
    before = _resident_bytes()
    for _ in range(1_000_000):
        f(x)
    assert _resident_bytes() - before < 4 * 2**20


def _resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_calls_straight_to_native_code_still_honour_the_config(monkeypatch):
    ran_python = []

    def f(x):
        ran_python.append(1)
        return np.log(x) * 2
    compiled = jitflow.function(f)
    x = np.ones(8, np.float32)
    for _ in range(3):  # the last ones go straight to the native entry
        np.testing.assert_array_equal(compiled(x), np.zeros(8, np.float32))
    assert compiled.cache_info().hits == 2 and len(ran_python) == 1
    monkeypatch.setattr(jitflow.config, "debug_infs", True)
    with pytest.raises(FloatingPointError, match="log"):
        compiled(np.zeros(8, np.float32))
    monkeypatch.setattr(jitflow.config, "debug_infs", False)
    monkeypatch.setattr(jitflow.config, "run_eagerly", True)
    before = len(ran_python)
    compiled(x)
    assert len(ran_python) == before + 1  # eager: the Python function ran
    monkeypatch.setattr(jitflow.config, "run_eagerly", False)
    assert np.isneginf(compiled(np.zeros(8, np.float32))).all()
    assert len(ran_python) == before + 1 and compiled.cache_info().hits >= 3
