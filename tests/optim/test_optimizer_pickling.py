"""Optimizers pickle and copy with their state: training stopped, pickled and continued
in a fresh process gives the numbers of training straight through."""
import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import jitflow
from fidelity import assert_same
from jitflow import optim

import resumable_training as run  # noqa: E402 (tests/optim is on the path: rootdir-relative)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STOP_AT, STEPS = 3, 6


def continue_in_a_fresh_process(saved, tmp_path):
    state, out = tmp_path / "state.pkl", tmp_path / "values.npz"
    state.write_bytes(pickle.dumps(saved))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, HERE])}
    done = subprocess.run([sys.executable, os.path.join(HERE, "resumable_training.py"),
                           str(state), str(STOP_AT), str(STEPS), str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return np.load(out)


def test_training_continues_exactly_in_a_fresh_process(tmp_path):
    """Each trainer is pickled halfway: whole (model, optimizer and compiled step
    together), and as its model and optimizer pickled apart; both continue in a new
    process, and give every Variable bit for bit the value it has here after training
    straight through."""
    trainers = run.cases()
    saved = {}
    for name, trainer in trainers.items():
        trainer.train(0, STOP_AT)
        saved[f"{name}/whole"] = trainer
        saved[f"{name}/apart"] = {"model": pickle.dumps(trainer.model),
                                  "optimizer": pickle.dumps(trainer.optimizer),
                                  "compiled": name.endswith("compiled")}
    pickled = pickle.loads(pickle.dumps(saved))
    values = continue_in_a_fresh_process(saved, tmp_path)
    for name, trainer in trainers.items():
        trainer.train(STOP_AT, STEPS)
        expected = trainer.values()
        assert len(expected) > len(trainer.model.weights) + 1  # the slots are compared
        for how in ("whole", "apart"):
            for index, value in enumerate(expected):
                np.testing.assert_array_equal(values[f"{name}/{how}/{index}"], value,
                                              err_msg=f"{name} pickled {how}, #{index}")
    assert len(pickled) == 2 * len(trainers)


@pytest.mark.parametrize("name, compiled", run.CASES)
def test_a_deep_copy_trains_as_the_original_does(name, compiled):
    original = run.Trainer(run.make_model(), run.OPTIMIZERS[name](), compiled)
    original.train(0, 2)
    twin = copy.deepcopy(original)
    assert twin.model.weights[0] is not original.model.weights[0]
    twin.train(2, 4)
    original.train(2, 4)
    for a, b in zip(twin.values(), original.values(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_an_optimizer_copied_alone_continues_the_original_models_training():
    """deepcopy(optimizer) alone copies its slots; the copy's slots go to the Variables
    of the same names it updates next: the original model's."""
    w = jitflow.Variable(np.array([1.0, -2.0]), name="copied-alone/w")
    optimizer = optim.Adam(0.1)
    optimizer.apply_gradients([(np.array([0.5, 0.25]), w)])
    copied = copy.deepcopy(optimizer)
    expected_slots = [slot.numpy() for slot in optimizer.variables()]
    assert_same(copied.variables()[1].value, expected_slots[1])
    copied.apply_gradients([(np.array([0.5, 0.25]), w)])
    assert len(copied.variables()) == len(expected_slots)  # no new slots were made
    assert copied.variables()[1].value[0] != expected_slots[1][0]


def test_slots_left_behind_must_fit_the_variable_that_takes_them():
    w = jitflow.Variable(np.ones(2), name="misfit/w")
    optimizer = optim.Adam(0.1)
    optimizer.apply_gradients([(np.ones(2), w)])
    alone = pickle.loads(pickle.dumps(optimizer))
    other = jitflow.Variable(np.ones(3), name="misfit/w")
    with pytest.raises(ValueError, match=r"misfit/w.*shape \(2,\).*\(3,\)"):
        alone.apply_gradients([(np.ones(3), other)])


def test_two_sets_of_slots_left_behind_under_one_name_are_refused():
    first, second = (jitflow.Variable(np.ones(2), name="twice/w") for _ in range(2))
    optimizer = optim.SGD(0.1, momentum=0.5)
    optimizer.apply_gradients([(np.ones(2), first), (np.ones(2), second)])
    alone = pickle.loads(pickle.dumps(optimizer))
    with pytest.raises(ValueError, match="distinct names"):
        alone.apply_gradients([(np.ones(2), jitflow.Variable(np.ones(2), name="twice/w"))])


def test_a_variable_gone_in_this_process_keeps_its_slots_apart():
    """In memory the optimizer holds the Variables it updates: a new Variable of the same
    name gets new slots."""
    optimizer = optim.SGD(0.1, momentum=0.5)
    optimizer.apply_gradients([(np.ones(2), jitflow.Variable(np.ones(2), name="again/w"))])
    fresh = jitflow.Variable(np.ones(2), name="again/w")
    optimizer.apply_gradients([(np.ones(2), fresh)])
    assert len(optimizer.variables()) == 3
    assert_same(optimizer.variables()[2].value, np.full(2, -0.1))


def test_the_step_count_and_schedule_survive():
    optimizer = optim.SGD(optim.schedules.PiecewiseConstant([1], [0.5, 0.1]))
    w = jitflow.Variable(np.zeros(1), name="scheduled/w")
    optimizer.apply_gradients([(np.ones(1), w)])
    optimizer.apply_gradients([(np.ones(1), w)])
    copied = pickle.loads(pickle.dumps((optimizer, w)))
    assert_same(copied[0].iterations.value, np.int64(2))
    copied[0].apply_gradients([(np.ones(1), copied[1])])
    assert_same(copied[1].value, np.array([-1.1]))  # rate 0.1 after step 1
