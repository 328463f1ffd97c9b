"""The TensorBoard callback: fit's curves, weight histograms and the model's graph in
TensorBoard's event files, as Keras writes them.

    model.fit(x, y, epochs=10, callbacks=[nn.callbacks.TensorBoard("logs/run1")])
    # tensorboard --logdir logs

Training summaries go to `log_dir/train`, validation ones (the logs' "val_" values) to
`log_dir/validation`, under Keras' tags: "epoch_loss" (and "epoch_learning_rate") at
each epoch, "batch_loss" every `update_freq` steps (the optimizer's step count, so a
resumed run continues its curves).
Written through jitflow.summary (the tensorboard package's writer), loaded when training
begins: tensorboard is an optional dependency.
"""
import os

import numpy as np

from ..errors import at_user_line
from .callback_base import Callback
from .learning_rate import AdjustableRate
from .model_picture import can_draw, model_picture


class TensorBoard(Callback):
    """log_dir: where the event files go; histogram_freq: every how many epochs to write
    histograms of the weights (0: never); write_graph: write the model's graph, each
    layer a scope; update_freq: "epoch" (summaries once an epoch), "batch" or an int N
    (also the batch values every N steps)."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True,
                 update_freq="epoch"):
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = _non_negative_int(histogram_freq, "histogram_freq")
        self.write_graph = write_graph
        self.update_freq = _update_freq(update_freq)
        self._writers = {}
        self._graph_pending = False
        self._steps = 0  # steps run when the model has no optimizer step count

    # --- writers ----------------------------------------------------------------------
    def _writer(self, run):
        if run not in self._writers:
            from ..summary import create_file_writer  # loads tensorboard when used
            self._writers[run] = create_file_writer(os.path.join(self.log_dir, run))
        return self._writers[run]

    def _close(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    # --- hooks ------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        self._close()
        self._graph_pending = self.write_graph
        self._write_graph_when_drawable()

    def _write_graph_when_drawable(self):
        """The graph, once: a subclassed model can be drawn after its first step only
        (it is built by its first call)."""
        if self._graph_pending and can_draw(self.model):
            self._writer("train").graph(model_picture(self.model))
            self._graph_pending = False

    def on_train_batch_end(self, batch, logs=None):
        self._write_graph_when_drawable()
        self._steps += 1
        step = self._global_step()
        if self.update_freq != "epoch" and step % self.update_freq == 0:
            writer = self._writer("train")
            for name, value in _scalars(logs):
                writer.scalar(f"batch_{name}", value, step)

    def on_epoch_end(self, epoch, logs=None):
        train, validation = self._writer("train"), None
        for name, value in _scalars(logs):
            if name.startswith("val_"):
                validation = validation or self._writer("validation")
                validation.scalar(f"epoch_{name[4:]}", value, epoch)
            else:
                train.scalar(f"epoch_{name}", value, epoch)
        rate = self._learning_rate()
        if rate is not None:
            train.scalar("epoch_learning_rate", rate, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._write_histograms(train, epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs=None):
        self._close()

    def _write_histograms(self, writer, epoch):
        for layer in self.model.layers:
            for weight in layer.weights:
                writer.histogram(weight.name, np.asarray(weight.numpy()), epoch)

    def _learning_rate(self):
        """The optimizer's learning rate now, when it is a number (compile makes it one
        that callbacks can change); None for a schedule."""
        rate = getattr(getattr(self.model, "optimizer", None), "learning_rate", None)
        if isinstance(rate, (AdjustableRate, int, float)):
            return float(rate)
        return None

    def _global_step(self):
        """The optimizer's step count after this step (it counts across fit calls and
        resumed runs), else the steps this callback saw."""
        iterations = getattr(getattr(self.model, "optimizer", None), "iterations", None)
        if iterations is None:
            return self._steps
        return int(np.asarray(iterations.numpy()))


def _scalars(logs):
    """The real-number entries of `logs`, as (name, value)."""
    for name, value in (logs or {}).items():
        array = np.asarray(value)
        if array.size == 1 and array.dtype.kind in "biuf":
            yield name, array.reshape(()).item()


def _update_freq(value):
    if value == "epoch":
        return value
    if value == "batch":
        return 1
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0:
        return int(value)
    raise ValueError(at_user_line(f"TensorBoard: update_freq must be 'epoch', 'batch' or a "
                                  f"positive number of steps, got {value!r}"))


def _non_negative_int(value, name):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    raise ValueError(at_user_line(f"TensorBoard: {name} must be a whole number >= 0, got "
                                  f"{value!r}"))
