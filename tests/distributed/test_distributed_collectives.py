"""The collectives in 2-process MPI jobs (scripts/): values against NumPy eagerly,
interpreted, compiled and under vmap; derivatives against finite differences of the
job's loss; and run as a job of one, without mpiexec."""
import subprocess
import sys

from mpi_run import ROOT, assert_succeeded, needs_mpi, run

pytestmark = needs_mpi


def test_collectives_match_numpy_eager_interpreted_native_and_vmapped():
    assert_succeeded(run("collectives.py"))


def test_derivatives_match_finite_differences_across_ranks():
    assert_succeeded(run("gradients.py"))


def test_without_mpiexec_the_process_is_a_job_of_one():
    job = run("collectives.py", processes=None)
    assert_succeeded(job, processes=1)


def test_init_is_idempotent_the_job_is_described_and_mismatches_raise():
    job = run("describe.py")
    assert_succeeded(job)
    for rank in range(2):
        assert f"rank {rank} of 2, local rank {rank} of 2" in job.stdout
    assert job.stdout.count("rank 1 mismatch raised") == 2
    assert "RuntimeError: broadcast: an MPI collective called from compiled code " \
        "returned an error" in job.stdout


def test_a_missing_mpi4py_is_named_with_the_install_command():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "try:\n    import jitflow.distributed\n"
            "except ImportError as error:\n    print(error)\n")
    job = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert "pip install 'jitflow[distributed]'" in job.stdout, job.stdout + job.stderr
