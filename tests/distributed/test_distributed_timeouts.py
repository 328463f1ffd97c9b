"""A rank that stalls makes the others raise CollectiveTimeout within the timeout, in
eager and compiled collectives, and the job ends instead of hanging; a timeout of None
waits forever (MPI_Wait); bad timeouts are refused."""
import time

import pytest

from mpi_run import assert_succeeded, needs_mpi, run

pytestmark = needs_mpi
ENVIRONMENT = {"JITFLOW_DISTRIBUTED_TIMEOUT": "30"}


def stalled_job(how, tmp_path):
    """The job and what rank 0 reported (its errors' messages)."""
    started = time.monotonic()
    report = tmp_path / "report.txt"
    job = run("stalls.py", how, report, timeout=90, env=ENVIRONMENT)  # rank 1 sleeps 120 s
    elapsed = time.monotonic() - started
    assert job.returncode != 0, job.stdout + job.stderr
    assert elapsed < 45, (elapsed, job.stdout, job.stderr)
    assert "should not get here" not in job.stdout
    for rank in range(2):
        assert f"rank {rank} timeout 30.0" in job.stdout, job.stdout + job.stderr
        assert f"rank {rank} first step" in job.stdout, job.stdout + job.stderr
    return job, report.read_text()


def timed_out(text, collective, line):
    """The error names the rank, the collective and its operand, the time waited and
    the user's line."""
    assert "rank 0 of 2 waited 0.5" in text, text
    assert f"in {collective} for the other processes, past the timeout of 0.5 s" \
        in text, text
    assert "stalls.py:" in text and f": {line}\n" in text, text


@pytest.mark.parametrize("how, collective, line", [
    ("eager", "all_reduce(max) of a float32 array of shape (2, 2)",
     'dist.all_reduce(x.reshape(2, 2), "max")'),
    ("compiled", "all_reduce(sum) of a float32 array of shape (4,)", "step(x)"),
    ("overlapped", "all_reduce(sum) of a float32 array of shape (4,)", "overlapped(x)")])
def test_a_stalled_rank_makes_the_other_raise_and_the_job_end(how, collective, line,
                                                             tmp_path):
    _, reported = stalled_job(how, tmp_path)
    assert reported.startswith("CollectiveTimeout: jitflow.distributed: rank 0"), reported
    timed_out(reported, collective, line)


def test_a_timeout_of_none_waits_forever_and_bad_timeouts_are_refused():
    job = run("timeout_settings.py", env={"JITFLOW_DISTRIBUTED_TIMEOUT": "none"})
    assert_succeeded(job)


def test_a_bad_timeout_in_the_environment_is_named():
    job = run("timeout_settings.py", processes=None,
              env={"JITFLOW_DISTRIBUTED_TIMEOUT": "soon"})
    assert job.returncode != 0
    assert "JITFLOW_DISTRIBUTED_TIMEOUT: expected a number of seconds or 'none', got " \
        "'soon'" in job.stderr, job.stderr


def test_after_a_caught_timeout_collectives_are_refused_and_exit_aborts_the_job(tmp_path):
    # (the job ends: rank 0's exit aborts it, rank 1 still sleeping)
    _, reported = stalled_job("caught", tmp_path)
    caught, then = reported.split("then: ")
    timed_out(caught, "all_gather of a float32 array of shape (4,)", "dist.all_gather(x)")
    assert then.startswith("jitflow.distributed: all_reduce(sum) of a float32 array of "
                           "shape (4,) refused: an earlier collective, all_gather"), then
