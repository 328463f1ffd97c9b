"""Running a script as an MPI job from pytest: `mpiexec -n N python script`, with a
timeout, in a process of its own (jitflow.distributed is never imported by pytest's own
process, whose primitive registry the other tests walk)."""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"


def _missing():
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install 'jitflow[distributed]')"
    if shutil.which("mpiexec") is None:
        return "no mpiexec on PATH (pip install mpich)"
    return None


needs_mpi = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def run(script, *args, processes=2, timeout=120, env=None):
    """The finished job (a CompletedProcess, text output); processes=None runs the
    script plainly, without mpiexec; `env` adds environment variables."""
    path = script if os.path.isabs(str(script)) else SCRIPTS / script
    command = [sys.executable, str(path), *map(str, args)]
    if processes is not None:
        command = ["mpiexec", "-n", str(processes)] + command
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    environment.update(env or {})
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=environment)


def assert_succeeded(job, processes=2):
    """Every rank ran to its end: each printed its 'done' line."""
    assert job.returncode == 0, f"job failed ({job.returncode}):\n{job.stdout}\n{job.stderr}"
    for rank in range(processes):
        assert f"rank {rank} done" in job.stdout, job.stdout + job.stderr
