"""Whole graphs in the disk cache (runtime/graph_cache.py): a graph compiled before is
linked from its object code without being lowered, computes the same, and is found only
under exactly the same graph, options, settings and symbols."""
import numpy as np
import pytest

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.runtime import graph_cache, native


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("JITFLOW_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("JITFLOW_CACHE", raising=False)
    monkeypatch.setenv(graph_cache.SWITCH, "1")  # off in the rest of the suite
    return tmp_path


def layer(x, w, b):
    return np.tanh(x @ w + b).sum(axis=1) * 0.5


def arguments():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32)
            for shape in ((64, 48), (48, 40), (40,))]


def optimized(fn, *args):
    return jitflow.optimize(jitflow.function(fn).trace(*args))


def test_a_graph_compiled_before_is_linked_without_lowering(cache_dir, monkeypatch):
    graph = optimized(layer, *arguments())
    first = NativeGraph(graph, "layer")
    assert not first.compiled.from_cache

    def refuse(*args, **kwargs):
        raise AssertionError("lowered again")
    with monkeypatch.context() as patched:
        patched.setattr(native, "Lowering", refuse)
        second = NativeGraph(graph, "layer")
    assert second.compiled.from_cache
    x, w, b = arguments()
    np.testing.assert_array_equal(second([x, w, b])[0], first([x, w, b])[0])
    np.testing.assert_allclose(second.python_entry(x, w, b), layer(x, w, b), rtol=1e-5,
                               atol=1e-5)
    # What it did not lower is lowered when asked for, to the same text.
    assert second.llvm_ir == first.llvm_ir


def test_the_key_is_the_exact_graph_and_how_it_is_compiled(cache_dir, monkeypatch):
    x = np.ones(16, np.float32)
    options = {"threads": 1}

    def key(fn, **changed):
        return graph_cache.key(optimized(fn, x), {**options, **changed})
    base = key(lambda v: v * 2.0 + 1.0)
    assert base == key(lambda v: v * 2.0 + 1.0)
    assert base != key(lambda v: v * 2.0 + 1.5)  # another constant
    assert key(lambda v: np.maximum(v, 0.0)) != key(lambda v: np.maximum(v, -0.0))
    assert base != key(lambda v: v * 2.0 + 1.0, threads=2)
    monkeypatch.setenv("JITFLOW_MATH", "inline")  # a setting lowering reads
    assert base != key(lambda v: v * 2.0 + 1.0)
    monkeypatch.setenv(graph_cache.SWITCH, "0")
    assert key(lambda v: v * 2.0 + 1.0) is None
    monkeypatch.setenv(graph_cache.SWITCH, "1")
    monkeypatch.setenv("JITFLOW_CACHE", "0")
    assert key(lambda v: v * 2.0 + 1.0) is None


def test_a_parameter_its_text_would_not_capture_gives_no_key(cache_dir):
    graph = optimized(lambda v: v + 1, np.ones(4, np.float32))
    node = graph.nodes[0]
    original = dict(node.params)
    node.params["callback"] = object()
    try:
        assert graph_cache.key(graph, {}) is None
    finally:
        node.params.clear()
        node.params.update(original)


def test_an_entry_needing_an_unknown_symbol_is_not_linked(cache_dir):
    entry_key = graph_cache.key(optimized(lambda v: v + 1, np.ones(4, np.float32)), {})
    module = graph_cache.ir.Module("m")
    graph_cache.ir.Function(module, graph_cache.ir.FunctionType(
        graph_cache.ir.VoidType(), []), "jitflow_no_such_symbol")
    graph_cache.store(entry_key, [b"not linked"], [module], [3], 64, [])
    assert graph_cache.load(entry_key) is None


def test_code_calling_other_compiled_code_is_not_kept(cache_dir, monkeypatch):
    stored = []
    monkeypatch.setattr(graph_cache, "store", lambda *args: stored.append(args))

    def branchy(p, v):
        return jitflow.cond(p, lambda u: u * 2, lambda u: u - 1, v)
    compiled = NativeGraph(optimized(branchy, np.bool_(True), np.ones(8, np.float32)), "b")
    # The branches, graphs of their own, are kept; the graph calling them is not.
    assert len(compiled.callees) == 2 and len(stored) == 2
    NativeGraph(optimized(lambda v: v + 1, np.ones(8, np.float32)), "plain")
    assert len(stored) == 3


def test_code_for_all_sizes_is_kept_with_its_sizes(cache_dir, monkeypatch,
                                                   made_dynamic_natives):
    """dynamic_axes' code for all sizes (dynamic_native.py): a second process's
    compile of the same template links it without lowering, with the sizes it serves
    (the first try, n from 2, is not lowered again); its key holds the template's
    Sizes and the typical size."""
    from jitflow.codegen.runtime import dynamic_native
    made = made_dynamic_natives

    def fn(x):
        return np.tanh(x[1:] - x[:-1]).sum(axis=0) / x.shape[0]
    rng = np.random.default_rng(2)
    inputs = [rng.standard_normal((n, 5)).astype(np.float32) for n in (6, 9, 31)]

    def run():
        compiled = jitflow.function(fn, dynamic_axes={"x": 0})
        for x in inputs:
            np.testing.assert_allclose(compiled(x), fn(x), rtol=1e-5, atol=1e-6)
        assert "runs the code for all sizes" in compiled.cache_info().dynamic[-1]
    run()
    assert not made[0].compiled.from_cache
    with monkeypatch.context() as patched:
        def refuse(*args, **kwargs):
            raise AssertionError("lowered again")
        patched.setattr(dynamic_native, "Lowering", refuse)
        run()
    assert made[1].compiled.from_cache
    assert made[1].workspace_size == made[0].workspace_size
    assert made[1].llvm_irs == made[0].llvm_irs  # lowered again when asked for

    assert made[1].sizes == made[0].sizes == (3, 2 ** 31 - 1)  # (x[1:] at n = 2)

    template = made[0].template
    keys = {graph_cache.key(template.graph, {"typical": typical}) for typical in (9, 10)}
    assert len(keys) == 2
    text = graph_cache._graph_text(template.graph)
    assert "n-1" in text and "size(" in text  # (x[1:]'s shape; a slice bound)


def test_a_first_call_runs_native_code_the_cache_holds(cache_dir, monkeypatch):
    """With background compile on, a first call interprets while the code compiles, but
    runs the native code where the disk cache holds all of it (linked in milliseconds)."""
    from jitflow import executable
    from jitflow.codegen.runtime import libraries
    monkeypatch.setattr(jitflow.config, "background_compile", True)
    libraries.ensure_built()
    interpreted = []
    real = executable.eval_graph

    def watched(*args, **kwargs):
        interpreted.append(True)
        return real(*args, **kwargs)
    monkeypatch.setattr(executable, "eval_graph", watched)
    args = arguments()
    for cached in (False, True):
        interpreted.clear()
        compiled = jitflow.function(layer)
        np.testing.assert_allclose(compiled(*args), layer(*args), rtol=1e-5, atol=1e-5)
        assert interpreted == ([] if cached else [True])
        compiled.wait()
