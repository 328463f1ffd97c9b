"""The target: JITFLOW_CPU's levels, the vector width LLVM prefers, and the codegen tests
run again for the other x86-64 levels this machine can execute, so that an AVX-512
machine also checks the code an AVX2-only one gets (and the other way round), and the
plain x86-64 code any x86-64 runs."""
import os
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import pytest

from jitflow.codegen.jit import engine, target

TESTS = Path(__file__).resolve().parents[1]  # tests/codegen, every folder of it
# The levels the codegen tests run again under, where the host can run them: plain
# x86-64 (SSE2 only: float16 there calls conversions jitflow compiles itself), AVX2 and
# AVX-512; JITFLOW_TEST_TARGETS="x86-64,x86-64-v2,x86-64-v3,x86-64-v4" adds SSE4.2's.
OTHER_TARGETS = os.environ.get("JITFLOW_TEST_TARGETS",
                               "x86-64,x86-64-v3,x86-64-v4").split(",")


def _in_a_fresh_process(code, level):
    environment = dict(os.environ, JITFLOW_CPU=level)
    return subprocess.run([sys.executable, "-c", code], env=environment, text=True,
                          capture_output=True, timeout=120)


def _host_runs(level):
    host = target.features(llvm.get_host_cpu_features().flatten())
    return set(target.level_features(level)) <= host


def test_each_level_adds_to_the_one_below():
    for lower, higher in zip(target.LEVELS, target.LEVELS[1:]):
        assert set(target.level_features(lower)) < set(target.level_features(higher))
    assert "avx2" in target.level_features("x86-64-v3")
    assert "avx512f" not in target.level_features("x86-64-v3")


def test_an_unknown_cpu_is_refused(monkeypatch):
    monkeypatch.setenv("JITFLOW_CPU", "pentium")
    with pytest.raises(ValueError, match="JITFLOW_CPU must be 'native' or one of x86-64"):
        target.requested()


def test_a_level_the_host_cannot_run_is_refused(monkeypatch):
    monkeypatch.setenv("JITFLOW_CPU", "x86-64-v4")
    monkeypatch.setattr(llvm, "get_host_cpu_features", lambda: _Features("+sse2,+avx2"))
    with pytest.raises(RuntimeError, match=r"x86-64-v4 needs .*avx512f.*which this CPU"):
        target.selected.__wrapped__()


class _Features:
    def __init__(self, text):
        self.text = text

    def flatten(self):
        return self.text


def test_native_code_targets_the_host_with_its_features():
    if target.requested() != "native":
        pytest.skip("JITFLOW_CPU names a level")
    triple, cpu, features = engine.host()
    assert cpu == llvm.get_host_cpu_name()
    assert features == llvm.get_host_cpu_features().flatten()


def test_the_preferred_width_is_one_the_target_has():
    bits = target.preferred_vector_bits()
    widest = 512 if "avx512f" in target.features() else 256 if "avx" in target.features() \
        else 128
    assert bits in (128, 256, 512) and bits <= widest


@pytest.mark.parametrize("level, bits", [("x86-64", 128), ("x86-64-v3", 256)])
def test_a_level_generates_its_own_width(level, bits):
    if not _host_runs(level):
        pytest.skip(f"this CPU cannot run {level}")
    code = ("from jitflow.codegen.jit import engine, target\n"
            "print(engine.host()[1], target.preferred_vector_bits())")
    result = _in_a_fresh_process(code, level)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [level, str(bits)]


def _preferred_bits(level):
    code = "from jitflow.codegen.jit import target\nprint(target.preferred_vector_bits())"
    result = _in_a_fresh_process(code, level)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


def _same_code_as_the_host(level):
    """True when `level` is the highest this host runs and LLVM prefers the host's own
    vector width for it: its code differs from native code only in LLVM's tuning, which
    the run under the host's own target already tests."""
    above = LEVELS_ABOVE.get(level)
    return (above is None or not _host_runs(above)) and \
        _preferred_bits(level) == target.preferred_vector_bits()


LEVELS_ABOVE = dict(zip(target.LEVELS, target.LEVELS[1:]))


@pytest.mark.parametrize("level", OTHER_TARGETS)
def test_codegen_tests_pass_under_the_other_levels(level, pytestconfig):
    """The whole of tests/codegen (but this file) in a process generating for `level`,
    with fewer examples per property than the host's own run, unless it is thorough."""
    if os.environ.get("JITFLOW_CPU") or not _host_runs(level):
        pytest.skip(f"JITFLOW_CPU is set, or this CPU cannot run {level}")
    if _same_code_as_the_host(level):
        pytest.skip(f"{level} generates the host's own vector code")
    profile = pytestconfig.getoption("hypothesis_profile", None) or "ci"
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
               f"--hypothesis-profile={'thorough' if profile == 'thorough' else 'levels'}",
               str(TESTS), "--ignore", __file__]
    result = subprocess.run(command, env=dict(os.environ, JITFLOW_CPU=level), text=True,
                            capture_output=True, cwd=TESTS.parent.parent, timeout=1200)
    assert result.returncode == 0, f"under JITFLOW_CPU={level}:\n{result.stdout[-6000:]}"
