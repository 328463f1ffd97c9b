"""Compiling LLVM modules: several at once on separate threads, linked into one engine
that resolves their calls to each other, each cached on disk on its own."""
import ctypes
import os

import numpy as np
import pytest

import jitflow
from jitflow.codegen import NativeGraph
from jitflow.codegen.jit import disk_cache
from jitflow.codegen.jit.engine import Compilation, CompiledModule
from jitflow.codegen.lowering import lower

CALLER = """
declare i64 @"triple_plus"(i64)
define i64 @"caller"(i64 %x) {
  %y = call i64 @"triple_plus"(i64 %x)
  %z = mul i64 %y, 2
  ret i64 %z
}
"""


def callee(constant):
    return f"""
define i64 @"triple_plus"(i64 %x) {{
  %y = mul i64 %x, 3
  %z = add i64 %y, {constant}
  ret i64 %z
}}
"""


def loop_module(index):
    """A module with a loop worth optimizing, different for each index."""
    return f"""
define void @"scale{index}"(ptr noalias %out, ptr noalias %in, i64 %n) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %src = getelementptr inbounds float, ptr %in, i64 %i
  %v = load float, ptr %src
  %w = fmul float %v, {float(index + 2)}
  %dst = getelementptr inbounds float, ptr %out, i64 %i
  store float %w, ptr %dst
  %next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


@pytest.fixture
def no_cache(monkeypatch):
    monkeypatch.setenv("JITFLOW_CACHE", "0")


def compile_objects(texts, speed_level=3):
    compilation = Compilation(speed_level)
    for text in texts:
        compilation.add(text)  # each started on a helper thread at once
    return compilation.finish()


def test_modules_call_each_others_functions():
    compiled = CompiledModule([CALLER, callee(5)])
    caller = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(compiled.address("caller"))
    assert caller(7) == (3 * 7 + 5) * 2


def test_modules_compiled_together_are_those_compiled_alone(no_cache):
    texts = [loop_module(i) for i in range(6)]
    together = compile_objects(texts)
    assert together == [compile_objects([text])[0] for text in texts]


def test_an_error_in_any_module_is_raised(no_cache):
    texts = [loop_module(0), "define i64 @broken( {", loop_module(1)]
    with pytest.raises(RuntimeError):
        compile_objects(texts)


def test_modules_compile_while_more_are_added(no_cache):
    """Helpers take modules as they come; finish() waits for the last."""
    compilation = Compilation(3)
    compilation.add(loop_module(0))
    compilation.add(loop_module(1))
    objects = compilation.finish()
    assert objects == compile_objects([loop_module(0), loop_module(1)])
    assert not compilation.from_cache


def test_an_abandoned_compilation_stops_its_helpers(no_cache, monkeypatch):
    monkeypatch.setenv("JITFLOW_THREADS", "3")
    compilation = Compilation(3)
    compilation.add(loop_module(0))
    compilation.abandon()
    for helper in compilation._helpers:
        helper.join(timeout=10)
        assert not helper.is_alive()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("JITFLOW_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("JITFLOW_CACHE", raising=False)
    return tmp_path


def test_each_module_has_its_own_cache_entry(cache_dir, monkeypatch):
    monkeypatch.setattr(lower, "SEGMENT_INSTRUCTIONS", 1)
    x = np.linspace(-2, 2, 300, dtype=np.float32)

    def build(fn):
        return NativeGraph(jitflow.optimize(jitflow.function(fn).trace(x)), "f")

    def objects():
        return {p for p in os.listdir(cache_dir) if p.endswith(".o")}
    build(lambda v: v + 1)  # the shared libraries, when this process has not built them
    libraries = objects()
    first = build(lambda v: (np.tanh(v).sum(), np.exp(v) * 2))
    modules = len(first.llvm_irs)
    assert modules > 1 and not first.compiled.from_cache
    assert len(objects() - libraries) == modules
    hits = disk_cache.stats.hits
    second = build(lambda v: (np.tanh(v).sum(), np.exp(v) * 2))
    assert second.compiled.from_cache and disk_cache.stats.hits == hits + modules
    for a, b in zip(second([x]), first([x])):
        np.testing.assert_array_equal(a, b)


def test_without_threads_to_spare_the_caller_compiles_every_module(no_cache, monkeypatch):
    def refuse(thread):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr("threading.Thread.start", refuse)
    monkeypatch.setenv("JITFLOW_THREADS", "4")
    texts = [loop_module(i) for i in range(3)]
    assert compile_objects(texts) == [compile_objects([text])[0] for text in texts]


def test_a_library_found_in_the_cache_is_not_built_again(cache_dir):
    builds = []

    def build():
        builds.append(len(builds))
        return callee(11)
    first = CompiledModule.library("test library", build, speed_level=1)
    second = CompiledModule.library("test library", build, speed_level=1)
    assert builds == [0] and not first.from_cache and second.from_cache
    function = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(second.address("triple_plus"))
    assert function(4) == 23
    assert "triple_plus" in second.optimized_ir  # built when asked for
