"""The native libraries built at import on a thread (runtime/libraries.py): into the disk
cache, whole for a first compile racing them, and safe across exit and fork. Each test
is a fresh interpreter with an empty cache, where the build really is under way."""
import os
import pathlib
import subprocess
import sys

from jitflow.codegen.jit import target

ROOT = pathlib.Path(__file__).resolve().parents[3]
MATMUL = (
    "import numpy as np\n"
    "a = np.arange(96 * 80, dtype=np.float32).reshape(96, 80) / 1000\n"
    "b = np.arange(80 * 72, dtype=np.float32).reshape(80, 72) / 1000\n"
    "jitflow.config.background_compile = False\n"
    "got = jitflow.function(lambda a, b: np.tanh(a @ b))(a, b)\n"
    "ok = np.allclose(got, np.tanh(a @ b), rtol=1e-5, atol=1e-6)\n")


def run_python(script, cache, **environment):
    """The words `script` prints, run by a new interpreter with the disk cache in
    `cache`; fails on a non-zero exit or on anything written to stderr."""
    environment = {**{k: v for k, v in os.environ.items() if k != "JITFLOW_CACHE"},
                   "JITFLOW_CACHE_DIR": str(cache), **environment}
    # (Python 3.12 warns about forking a process that has threads.)
    done = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", script],
                          env=environment, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout.split()


def entries(folder):
    return sorted(p.name for p in pathlib.Path(folder).glob("*.o"))


def test_a_process_exiting_during_the_build_waits_for_it_and_keeps_it(tmp_path):
    started = run_python("import jitflow\n"
                         "from jitflow.codegen.runtime import libraries\n"
                         "print(libraries._builder is not None)\n", tmp_path)
    assert started == ["True"]
    # the pool, the Python entry's code, sgemm (and, without F16C, the half conversions)
    libraries = 3 if "f16c" in target.features() else 4
    assert len(entries(tmp_path)) == libraries
    # The next process loads them: a compile adds only its own module.
    assert run_python("import jitflow\n" + MATMUL + "print(ok)\n", tmp_path) == ["True"]
    assert len(entries(tmp_path)) == libraries + 1


def test_a_fork_during_the_build_gives_parent_and_child_whole_libraries(tmp_path):
    """Both compile at once with the build, the parent racing it, the child forked
    while it ran."""
    script = ("import os, jitflow\n"
              "pid = os.fork()\n"
              "if pid == 0:\n"
              "    import signal; signal.alarm(60)\n"
              + "".join("    " + line + "\n" for line in MATMUL.splitlines()) +
              "    os._exit(0 if ok else 1)\n"
              + MATMUL +
              "print(ok, os.waitpid(pid, 0)[1])\n")
    assert run_python(script, tmp_path) == ["True", "0"]


def test_nothing_is_built_at_import_with_the_cache_off_or_when_asked_not_to(tmp_path):
    script = ("import jitflow\n"
              "from jitflow.codegen.runtime import libraries\n"
              "print(libraries._builder is None)\n")
    assert run_python(script, tmp_path, JITFLOW_PREBUILD="0") == ["True"]
    assert run_python(script, tmp_path, JITFLOW_CACHE="0") == ["True"]
    assert entries(tmp_path) == []


def test_a_library_is_built_only_when_a_module_calling_it_links(tmp_path):
    """Lowering declares the libraries' functions without building them (a first
    compile lowers while they are still being built); the link of a module calling one
    builds it, and a function that calls none builds none."""
    script = ("import numpy as np, jitflow\n"
              "from llvmlite import ir\n"
              "from jitflow.codegen.gemm import sgemm\n"
              "from jitflow.codegen.jit import pool\n"
              "from jitflow.codegen.jit.engine import CompiledModule\n"
              "def built():\n"
              "    print(sgemm._load.cache_info().currsize, pool._runtime.cache_info().currsize)\n"
              "jitflow.config.background_compile = False\n"
              "x = np.arange(12, dtype=np.float32)\n"
              "print(np.array_equal(jitflow.function(lambda x: x * 2 + 1)(x), x * 2 + 1))\n"
              "built()\n"
              "module = ir.Module('caller')\n"
              "routine = sgemm.declare_shares(module)\n"
              "caller = ir.Function(module, routine.function_type, 'caller')\n"
              "b = ir.IRBuilder(caller.append_basic_block())\n"
              "b.call(routine, caller.args)\n"
              "b.ret_void()\n"
              "built()\n"
              "CompiledModule(str(module)).address('caller')\n"
              "built()\n" + MATMUL + "print(ok)\n")
    assert run_python(script, tmp_path, JITFLOW_PREBUILD="0") == [
        "True", "0", "0", "0", "0", "1", "1", "True"]
