"""Callbacks in fit: the hooks' order, EarlyStopping, the learning rate callbacks (no
new compile), CSVLogger and ModelCheckpoint; and the weights' own copies and files."""
import csv

import numpy as np
import pytest

from jitflow import nn
from jitflow.nn import callbacks
from jitflow.optim import SGD

RNG = np.random.default_rng(0)
X = RNG.standard_normal((20, 3))
Y = X @ np.array([[1.0], [-2.0], [0.5]])


def make_model(learning_rate=0.05, seed=1):
    inputs = nn.Input((3,), "float64")
    model = nn.Model(inputs, nn.Dense(1, rng=np.random.default_rng(seed), name="out")(inputs))
    model.compile(SGD(learning_rate), "mse")
    return model


class Recorder(callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        if name.startswith("on_"):
            return lambda *args, **kwargs: self.calls.append((name, *args[:1]))
        return super().__getattribute__(name)


def test_fit_calls_the_hooks_in_keras_order():
    recorder = Recorder()
    model = make_model()
    model.fit(X, Y, batch_size=8, epochs=2, verbose=0, callbacks=[recorder],
              validation_data=(X, Y))
    batches = [("on_train_batch_begin", 0), ("on_train_batch_end", 0),
               ("on_train_batch_begin", 1), ("on_train_batch_end", 1),
               ("on_train_batch_begin", 2), ("on_train_batch_end", 2)]
    tests = [("on_test_begin",), ("on_test_batch_begin", 0), ("on_test_batch_end", 0),
             ("on_test_batch_begin", 1), ("on_test_batch_end", 1),
             ("on_test_batch_begin", 2), ("on_test_batch_end", 2), ("on_test_end",)]
    assert recorder.calls == [("on_train_begin",),
                              ("on_epoch_begin", 0), *batches, *tests, ("on_epoch_end", 0),
                              ("on_epoch_begin", 1), *batches, *tests, ("on_epoch_end", 1),
                              ("on_train_end",)]
    assert recorder.model is model and recorder.params == {"epochs": 2, "steps": 3,
                                                           "verbose": 0}


def test_early_stopping_stops_after_patience_and_restores_the_best_weights():
    model = make_model(learning_rate=1.5)  # diverges: the loss grows after a while
    stopper = callbacks.EarlyStopping(monitor="loss", patience=2,
                                      restore_best_weights=True)
    history = model.fit(X, Y, batch_size=20, epochs=50, verbose=0, callbacks=[stopper],
                        shuffle=False)
    losses = history.history["loss"]
    best = int(np.argmin(losses))
    assert len(losses) == best + 3 < 50  # two epochs without improvement, then stop
    assert stopper.best_epoch == best and stopper.stopped_epoch == best + 2
    assert model.evaluate(X, Y, verbose=0) == pytest.approx(
        replay(1.5, best + 1), rel=1e-12)


def replay(learning_rate, epochs):
    """The loss after `epochs` full-batch steps of a fresh model."""
    model = make_model(learning_rate)
    model.fit(X, Y, batch_size=20, epochs=epochs, verbose=0, shuffle=False)
    return model.evaluate(X, Y, verbose=0)


def test_learning_rate_scheduler_changes_the_rate_without_compiling_again():
    model = make_model(0.1)
    scheduler = callbacks.LearningRateScheduler(lambda epoch, rate: rate * 0.5)
    history = model.fit(X, Y, batch_size=20, epochs=3, verbose=0, callbacks=[scheduler],
                        shuffle=False)
    assert history.history["learning_rate"] == [0.05, 0.025, 0.0125]
    assert model._train_function.cache_info().traces == 1
    reference = make_model(0.1)
    for rate in (0.05, 0.025, 0.0125):  # the same steps, each with its own rate
        reference.optimizer.learning_rate.variable.assign(rate)
        reference.train_on_batch(X, Y)
    for got, want in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_array_equal(got, want)


def test_reduce_lr_on_plateau_cuts_the_rate_when_the_loss_stalls():
    model = make_model(1e-30)  # steps below the weights' rounding: the loss stays flat
    reducer = callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=2)
    history = model.fit(X, Y, batch_size=20, epochs=6, verbose=0, callbacks=[reducer],
                        shuffle=False)
    assert len(set(history.history["loss"])) == 1
    assert history.history["learning_rate"] == [1e-30, 1e-30, 5e-31, 5e-31, 2.5e-31,
                                                2.5e-31]


def test_a_schedule_given_by_the_user_is_not_changed_silently():
    model = make_model()
    model.compile(SGD(lambda step: 0.1), "mse")
    with pytest.raises(TypeError, match="LearningRateScheduler: the optimizer's learning "
                                        "rate is the schedule"):
        model.fit(X, Y, verbose=0,
                  callbacks=[callbacks.LearningRateScheduler(lambda e, r: r)])


def test_csv_logger_writes_one_row_per_epoch(tmp_path):
    path = tmp_path / "log.csv"
    history = make_model().fit(X, Y, epochs=3, verbose=0, validation_split=0.25,
                               callbacks=[callbacks.CSVLogger(path)])
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["epoch", "loss", "val_loss"]
    assert [int(row[0]) for row in rows[1:]] == [0, 1, 2]
    assert [float(row[1]) for row in rows[1:]] == history.history["loss"]
    assert [float(row[2]) for row in rows[1:]] == history.history["val_loss"]


def test_model_checkpoint_saves_the_best_weights_only(tmp_path):
    model = make_model(learning_rate=1.5)
    path = tmp_path / "best.npz"
    saved = []

    class Snapshot(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            saved.append((logs["loss"], model.get_weights()))
    history = model.fit(X, Y, batch_size=20, epochs=12, verbose=0, shuffle=False,
                        callbacks=[callbacks.ModelCheckpoint(path, monitor="loss",
                                                             save_best_only=True),
                                   Snapshot()])
    best = int(np.argmin(history.history["loss"]))
    fresh = make_model(seed=9)
    fresh.load_weights(path)
    for got, want in zip(fresh.get_weights(), saved[best][1]):
        np.testing.assert_array_equal(got, want)
    every = tmp_path / "w-{epoch:02d}.npz"
    make_model().fit(X, Y, epochs=2, verbose=0,
                     callbacks=[callbacks.ModelCheckpoint(every, save_best_only=False)])
    assert sorted(p.name for p in tmp_path.glob("w-*")) == ["w-01.npz", "w-02.npz"]


def test_monitoring_a_value_that_is_not_logged_names_the_logged_ones():
    with pytest.raises(KeyError, match=r"monitor 'val_loss' is not among the logged "
                                       r"values \['loss'\]"):
        make_model().fit(X, Y, verbose=0, callbacks=[callbacks.EarlyStopping()])


def test_weights_round_trip_and_mismatches_are_errors(tmp_path):
    model, other = make_model(seed=1), make_model(seed=2)
    other.set_weights(model.get_weights())
    for a, b in zip(model.get_weights(), other.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"weight 'out/kernel' has shape \(3, 1\), got an "
                                         r"array of shape \(2, 1\)"):
        model.set_weights([np.ones((2, 1)), np.ones(1)])
    path = tmp_path / "weights.npz"
    model.save_weights(path)
    inputs = nn.Input((3,), "float64")
    renamed = nn.Model(inputs, nn.Dense(1, name="other")(inputs))
    with pytest.raises(ValueError, match=r"weights missing from the file \['other/bias', "
                                         r"'other/kernel'\], arrays in the file the model "
                                         r"does not have \['out/bias', 'out/kernel'\]"):
        renamed.load_weights(path)
