"""The import's objects frozen out of the collector's way (jitflow/import_objects.py):
after an import whose libraries came from the disk cache, not while they are built, and
not when turned off. Each case is a fresh interpreter."""
import gc
import os
import pathlib
import subprocess
import sys

from jitflow import import_objects

ROOT = pathlib.Path(__file__).resolve().parents[1]
FROZEN_AFTER_IMPORT = ("import gc, jitflow\n"
                       "from jitflow.codegen.runtime import libraries\n"
                       "libraries.wait()\n"
                       "print(gc.get_freeze_count())\n")


def frozen_after_import(cache, **environment):
    """How many objects a fresh `import jitflow` froze, with the disk cache in `cache`."""
    return run(FROZEN_AFTER_IMPORT, cache, **environment)


def run(script, cache, **environment):
    """The number `script` prints last, run by a fresh interpreter with the disk cache in
    `cache`."""
    environment = {**{k: v for k, v in os.environ.items()
                      if k not in ("JITFLOW_CACHE", import_objects.FREEZE_VARIABLE)},
                   "JITFLOW_CACHE_DIR": str(cache), **environment}
    done = subprocess.run([sys.executable, "-c", script], env=environment,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_the_import_freezes_its_objects_when_the_libraries_are_cached(tmp_path):
    frozen_after_import(tmp_path)  # builds the libraries into the cache
    frozen = frozen_after_import(tmp_path)
    assert frozen > 10_000  # jitflow's modules and functions, NumPy's too


def test_no_freeze_while_the_libraries_are_built(tmp_path):
    """An empty cache: the build thread makes cyclic IR, before or after the import's
    end."""
    assert frozen_after_import(tmp_path) == 0


def test_freeze_without_the_build_thread(tmp_path):
    """JITFLOW_PREBUILD=0: the libraries are built at the first compile, after the
    freeze, and their IR is collected as any garbage is."""
    assert frozen_after_import(tmp_path, JITFLOW_PREBUILD="0") > 10_000


def test_no_freeze_when_turned_off(tmp_path):
    frozen_after_import(tmp_path)
    assert frozen_after_import(tmp_path, JITFLOW_GC_FREEZE="0") == 0


def test_freeze_declines_without_freezing(monkeypatch):
    before = gc.get_freeze_count()
    assert not import_objects.freeze(libraries_settled=False)
    monkeypatch.setenv(import_objects.FREEZE_VARIABLE, "no")
    assert not import_objects.freeze(libraries_settled=True)
    assert gc.get_freeze_count() == before
