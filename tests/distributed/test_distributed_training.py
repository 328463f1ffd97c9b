"""Data-parallel training in 2-process MPI jobs: the weights after K steps equal one
process's on the global batches; a rank that dies or raises ends the job with an error
in seconds instead of leaving the other waiting forever."""
import time

import pytest

from mpi_run import assert_succeeded, needs_mpi, run

pytestmark = needs_mpi


def test_two_processes_on_half_batches_train_as_one_on_the_whole():
    assert_succeeded(run("training.py"))


@pytest.mark.parametrize("how", ["exit", "kill", "raise"])
def test_a_rank_that_dies_ends_the_job_instead_of_a_hang(how):
    started = time.monotonic()
    job = run("dies.py", how, timeout=60)
    assert job.returncode != 0
    assert time.monotonic() - started < 30
    assert "should not get here" not in job.stdout
    for rank in range(2):  # both ranks were running when one went
        assert f"rank {rank} first step" in job.stdout
    if how == "raise":
        # the failing rank's report begins; the abort may end the job before it is
        # all written (seen with the machine busy), or before mpiexec forwards any of
        # it (seen once: stderr empty, the job ended with an error in time)
        if job.stderr:
            assert "Traceback" in job.stderr or \
                "this rank fails mid-training" in job.stderr


def test_fit_distributed_trains_as_one_process_on_the_whole_batches(tmp_path):
    job = run("fit.py", tmp_path)
    assert_succeeded(job)
    assert job.stdout.count("Epoch 1/3") == 1  # rank 0 alone prints
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log-rank0.csv"]
