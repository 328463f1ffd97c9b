"""Callbacks: code that fit, evaluate and predict call at the start and end of training,
of each epoch and of each batch, with Keras' hooks and names."""
import csv
import os

import numpy as np

from ..errors import at_user_line
from .callback_base import Callback
from .learning_rate import get_learning_rate, set_learning_rate
from .tensorboard_callback import TensorBoard


class CallbackList:
    """Several callbacks called as one, in order."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks)
        for callback in self.callbacks:
            callback.set_model(model)
            callback.set_params(params)

    def listens(self, hook):
        """Whether any of the callbacks has its own `hook` (so that fit need not make
        the logs of a hook no callback reads)."""
        inherited = getattr(Callback, hook)
        return any(getattr(getattr(callback, hook), "__func__", None) is not inherited
                   for callback in self.callbacks)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        def call_all(*args, **kwargs):
            for callback in self.callbacks:
                getattr(callback, hook)(*args, **kwargs)
        return call_all


class History(Callback):
    """What fit returns: `history` maps each logged name ('loss', 'val_loss', metrics) to
    its value at the end of each epoch; `epoch` lists the epochs run."""

    def __init__(self):
        super().__init__()
        self.history, self.epoch = {}, []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(value)


class _Monitor(Callback):
    """A callback that follows one logged value, `monitor`, and knows when it improved:
    mode 'min', 'max', or 'auto' (max for accuracies, min otherwise)."""

    def __init__(self, monitor, mode, min_delta=0.0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(at_user_line(
                f"{type(self).__name__}: mode must be 'auto', 'min' or 'max', got {mode!r}"))
        self.monitor = monitor
        self.mode = mode if mode != "auto" else ("max" if "acc" in monitor else "min")
        self.min_delta = abs(float(min_delta))
        self.best = np.inf if self.mode == "min" else -np.inf

    def improved(self, value):
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def monitored(self, logs):
        """The monitored value in `logs`; an error naming the values there are."""
        if self.monitor not in (logs or {}):
            raise KeyError(at_user_line(
                f"{type(self).__name__}: monitor {self.monitor!r} is not among the logged "
                f"values {sorted(logs or {})} (validation values need validation_data or "
                f"validation_split)"))
        return float(logs[self.monitor])


class EarlyStopping(_Monitor):
    """Stop training when `monitor` has not improved by more than `min_delta` for
    `patience` epochs (counted from `start_from_epoch`); optionally put back the weights
    of the best epoch."""

    def __init__(self, monitor="val_loss", min_delta=0.0, patience=0, verbose=0,
                 mode="auto", baseline=None, restore_best_weights=False,
                 start_from_epoch=0):
        super().__init__(monitor, mode, min_delta)
        self.patience, self.verbose = int(patience), verbose
        self.baseline, self.restore_best_weights = baseline, restore_best_weights
        self.start_from_epoch = int(start_from_epoch)

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_weights, self.best_epoch = 0, 0, None, 0
        self.best = np.inf if self.mode == "min" else -np.inf
        if self.baseline is not None:
            self.best = float(self.baseline)

    def on_epoch_end(self, epoch, logs=None):
        if epoch < self.start_from_epoch:
            return
        value = self.monitored(logs)
        self.wait += 1
        if self.improved(value):
            self.best, self.best_epoch, self.wait = value, epoch, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")


class LearningRateScheduler(Callback):
    """Set the optimizer's learning rate to schedule(epoch, learning_rate) at the start
    of each epoch; the compiled step reads the new rate without compiling again."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        rate = float(self.schedule(epoch, get_learning_rate(optimizer, "LearningRateScheduler")))
        set_learning_rate(optimizer, rate, "LearningRateScheduler")
        if self.verbose:
            print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {rate}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = get_learning_rate(self.model.optimizer,
                                                      "LearningRateScheduler")


class ReduceLROnPlateau(_Monitor):
    """Multiply the learning rate by `factor` when `monitor` has not improved for
    `patience` epochs, then wait `cooldown` epochs; never below `min_lr`."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0):
        super().__init__(monitor, mode, min_delta)
        if not 0.0 < factor < 1.0:
            raise ValueError(at_user_line(
                f"ReduceLROnPlateau: factor must be in (0, 1), got {factor}"))
        self.factor, self.patience, self.verbose = float(factor), int(patience), verbose
        self.cooldown, self.min_lr = int(cooldown), float(min_lr)
        self.wait = self.cooldown_left = 0

    def on_epoch_end(self, epoch, logs=None):
        value = self.monitored(logs)
        optimizer = self.model.optimizer
        if self.cooldown_left > 0:
            self.cooldown_left -= 1
            self.wait = 0
        if self.improved(value):
            self.best, self.wait = value, 0
        elif self.cooldown_left == 0:
            self.wait += 1
            if self.wait >= self.patience:
                rate = get_learning_rate(optimizer, "ReduceLROnPlateau")
                new = max(rate * self.factor, self.min_lr)
                if new < rate:
                    set_learning_rate(optimizer, new, "ReduceLROnPlateau")
                    if self.verbose:
                        print(f"Epoch {epoch + 1}: ReduceLROnPlateau reducing learning "
                              f"rate to {new}.")
                self.cooldown_left, self.wait = self.cooldown, 0
        if logs is not None:
            logs["learning_rate"] = get_learning_rate(optimizer, "ReduceLROnPlateau")


class CSVLogger(Callback):
    """Write each epoch's logs as a row of a CSV file: epoch, then the logged names in
    sorted order."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.separator, self.append = os.fspath(filename), separator, append
        self.keys = None

    def on_train_begin(self, logs=None):
        exists = self.append and os.path.exists(self.filename) and \
            os.path.getsize(self.filename) > 0
        self.file = open(self.filename, "a" if self.append else "w", newline="")
        self.writer = None
        self.keys = None
        self.header_written = exists

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            self.writer = csv.writer(self.file, delimiter=self.separator)
            if not self.header_written:
                self.writer.writerow(["epoch", *self.keys])
        self.writer.writerow([epoch, *(logs.get(key, "NA") for key in self.keys)])
        self.file.flush()

    def on_train_end(self, logs=None):
        self.file.close()


class ModelCheckpoint(_Monitor):
    """Save the model's weights (save_weights: .npz, or .safetensors by the suffix) or,
    with save_weights_only=False, the whole model (model.save, read back by
    nn.load_model) at the end of each epoch to `filepath`, which may name the epoch and
    logged values ("w-{epoch:02d}.npz"); with save_best_only, only when `monitor`
    improved."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=True, mode="auto"):
        super().__init__(monitor, mode)
        self.filepath, self.verbose = os.fspath(filepath), verbose
        self.save_weights_only = save_weights_only
        self.save_best_only = save_best_only

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if self.save_best_only:
            value = self.monitored(logs)
            if not self.improved(value):
                return
            if self.verbose:
                print(f"Epoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} "
                      f"to {value:.5f}, saving model to {path}")
            self.best = value
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)


__all__ = ["Callback", "CallbackList", "History", "EarlyStopping", "LearningRateScheduler",
           "ReduceLROnPlateau", "CSVLogger", "ModelCheckpoint", "TensorBoard"]
