"""The on-disk cache: reused across compilations, atomic, and never loads a bad entry."""
import os

import numpy as np
import pytest

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.jit import disk_cache
from jitflow.codegen.runtime import graph_cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The cache of modules alone: whole graphs, which would be found before their
    modules are looked up, are tested in tests/codegen/runtime/test_graph_cache.py."""
    monkeypatch.setenv("JITFLOW_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("JITFLOW_CACHE", raising=False)
    monkeypatch.setenv(graph_cache.SWITCH, "0")
    return tmp_path


def compile_graph():
    graph = jitflow.optimize(jitflow.function(lambda x: np.tanh(x) * 3 + x).trace(
        np.ones(64, np.float32)))
    return NativeGraph(graph, "f")


def entries(folder):
    return sorted(p for p in os.listdir(folder) if p.endswith(".o"))


def test_second_compilation_loads_the_object_code(cache_dir):
    # The shared libraries (the thread pool's, jitflow's sgemm), when this process has
    # not built them yet, go into the same folder: build them first.
    NativeGraph(jitflow.optimize(jitflow.function(lambda v: v + 1).trace(
        np.ones(64, np.float32))), "f")
    libraries = set(entries(cache_dir))
    first = compile_graph()
    assert not first.compiled.from_cache and len(set(entries(cache_dir)) - libraries) == 1
    second = compile_graph()
    assert second.compiled.from_cache
    assert "<" in second.compiled.optimized_ir  # still there, recomputed on demand
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    np.testing.assert_array_equal(second([x])[0], first([x])[0])


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_a_damaged_entry_is_detected_removed_and_rebuilt(cache_dir, damage):
    compile_graph()
    (name,) = entries(cache_dir)
    path = cache_dir / name
    blob = path.read_bytes()
    path.write_bytes({"truncate": blob[:len(blob) // 2],
                      "flip": blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:],
                      "empty": b"",
                      "garbage": b"not an object file at all"}[damage])
    rejected = disk_cache.stats.rejected
    with pytest.warns(jitflow.errors.CacheWarning, match="damaged"):
        rebuilt = compile_graph()
    assert not rebuilt.compiled.from_cache
    assert disk_cache.stats.rejected == rejected + 1
    assert path.read_bytes() == blob  # written again, whole
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    np.testing.assert_allclose(rebuilt([x])[0], np.tanh(x) * 3 + x, rtol=1e-6)


def test_the_cache_can_be_turned_off(cache_dir, monkeypatch):
    monkeypatch.setenv("JITFLOW_CACHE", "0")
    compile_graph()
    assert entries(cache_dir) == []


def test_keys_depend_on_the_code_and_the_host():
    assert disk_cache.key("a", "host") != disk_cache.key("b", "host")
    assert disk_cache.key("a", "host") != disk_cache.key("a", "other host")
    assert disk_cache.key("a", "host") == disk_cache.key("a", "host")


def test_misses_are_reported_to_the_thread_that_asked_but_not_a_library_s(cache_dir):
    """reporting_misses: a module compiled because the cache lacks it is a miss of the
    compile under way; a library it builds is not (which thread builds a library is
    a matter of timing), nor is a module found in the cache."""
    from jitflow.codegen.jit.engine import CompiledModule
    text = 'define i32 @answer() {\n  ret i32 42\n}\n'
    misses = []
    with disk_cache.reporting_misses(lambda: misses.append("miss")):
        CompiledModule.library("answer", lambda: text)
        assert misses == []
        CompiledModule(text)
        assert misses == ["miss"]
        CompiledModule(text)  # cached now
    assert misses == ["miss"]
    CompiledModule(text.replace("42", "43"))  # outside the block: nobody to tell
    assert misses == ["miss"]
