"""examples/distributed_training.py, shortened, as a 2-process job and plainly: it
learns, the two processes' losses are the one process's, and each reports its rate."""
import re

from mpi_run import ROOT, needs_mpi, run

pytestmark = needs_mpi
EXAMPLE = ROOT / "examples" / "distributed_training.py"


def losses_and_accuracy(job):
    assert job.returncode == 0, job.stdout + job.stderr
    losses = re.findall(r"epoch \d+/\d+: loss (\S+)", job.stdout)
    return losses, float(re.search(r"test accuracy (\S+)", job.stdout).group(1))


def test_the_example_learns_the_same_on_two_processes_as_on_one():
    two = run(EXAMPLE, "--epochs", 2, timeout=180)
    losses, test_accuracy = losses_and_accuracy(two)
    assert test_accuracy >= 0.8
    assert re.search(r"rank 0: +\d+ examples/s", two.stdout)
    assert re.search(r"rank 1: +\d+ examples/s", two.stdout)
    one_losses, _ = losses_and_accuracy(run(EXAMPLE, "--epochs", 2, processes=None,
                                            timeout=180))
    # Printed to 4 digits: the same global batches give the same training.
    assert losses == one_losses and len(losses) == 2
