"""Training: compile, fit, evaluate, predict, train_on_batch and test_on_batch, as
Keras' Model has them.

Each training step is one jitflow.function: forward, losses, gradients, the optimizer's
update and the metrics' batch totals, traced and compiled once. Batches have one size:
the last, smaller batch of an epoch is padded up to it by repeating its own examples, and
a row mask (1 on the real rows, 0 on the repeats) multiplies every example's loss and metric
weight, while the loss divides by the number of real rows. The repeats thus add exact
zeros to every sum (they are real examples, so their values are finite), and the step
computes the smaller batch's loss and gradients without a second compile. (The losses
are those of the unpadded batch; a native sum over the longer batch may group its terms
differently, so a gradient can differ from the unpadded one in its last bit.) Layers
whose training output depends on the whole batch (BatchNormalization's statistics) would
see the repeats, so a model with one trains its last batch unpadded, at the cost of one
more compile.

An output that carries a mask (nn/masks.py: a sequence after Embedding(mask_zero=True)
or Masking) weighs its loss and metrics step by step, as Keras: each step's weight is its
example's sample weight times the mask, the loss is divided by the number of kept steps,
and the metrics count the kept steps only (nn/weighting.py). The mask is computed in the
same compiled step as the outputs.
"""
import numpy as np

from .. import pytree
from ..errors import at_user_line
from ..function import function
from ..tape import GradientTape
from .callbacks import CallbackList, History
from .data import (ArrayData, BatchStream, batch_starts, by_rows, class_weights,
                   is_batch_stream, padded)
from .data import validation_data as validation_data_of
from .learning_rate import make_adjustable
from .progress import ProgressBar, _logs_text
from .training_config import TrainingConfig


class Training:
    _config = None
    stop_training = False

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None):
        """Set what fit trains with: an optimizer (or its name: 'sgd', 'adam', 'adamw',
        'rmsprop'), a loss (a nn.losses.Loss, a name such as 'mse' or
        'sparse_categorical_crossentropy', or a function giving one loss per example;
        a list or dict of them for several outputs), metrics ('accuracy', ...) and the
        weights of each output's loss."""
        self._config = TrainingConfig(self, optimizer, loss, metrics, loss_weights)
        self.optimizer = self._config.optimizer
        make_adjustable(self.optimizer)  # for callbacks that change it
        self._make_step_functions()

    def _make_step_functions(self):
        self._train_function = function(lambda x, y, w, r: self._train_step(x, y, w, r))
        self._test_function = function(lambda x, y, w, r: self._test_step(x, y, w, r))
        self._predict_function = function(lambda x: self(x, training=False))

    # --- the compiled steps -------------------------------------------------------------
    # `rows` is 1 on a batch's real rows, 0 on the repeats that pad it. The outputs'
    # masks (of a sequence model, say) weigh the losses and metrics step by step.
    def _train_step(self, x, y, sample_weight, rows):
        with GradientTape() as tape:
            predictions, masks = self.call_with_mask(x, None, training=True)
            loss, parts, totals = self._config.losses_and_totals(
                y, predictions, sample_weight, rows, masks)
            loss = self._with_penalties(loss)
        variables = self.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        for weight, constraint in self.weight_constraints():
            weight.assign(constraint(weight.value))
        return loss, parts, totals

    def _test_step(self, x, y, sample_weight, rows):
        predictions, masks = self.call_with_mask(x, None, training=False)
        loss, parts, totals = self._config.losses_and_totals(y, predictions, sample_weight,
                                                             rows, masks)
        return self._with_penalties(loss), parts, totals

    def _with_penalties(self, loss):
        """The loss plus the weights' regularization penalties, as Keras reports it."""
        for penalty in self.losses:
            loss = loss + penalty
        return loss

    # --- fit ------------------------------------------------------------------------------
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, distributed=False):
        """Train for `epochs` epochs (counted from `initial_epoch`) on batches of
        `batch_size` (32) examples, shuffled each epoch; return the History. Each
        example's loss is weighted by its sample_weight times its class_weight; a
        sample_weight of shape (examples, steps) weighs each step of a sequence output.
        distributed=True trains data-parallel over the processes of an MPI job
        (nn/distributed_fit.py)."""
        self._check_compiled("fit")
        if distributed:
            from .distributed_fit import distributed_fit
            return distributed_fit(self, x, y, sample_weight, verbose, callbacks, dict(
                batch_size=batch_size, epochs=epochs, validation_split=validation_split,
                validation_data=validation_data, shuffle=shuffle,
                class_weight=class_weight, initial_epoch=initial_epoch))
        data = self._data(x, y, sample_weight, "fit", epochs - initial_epoch)
        if isinstance(data, BatchStream) and (class_weight is not None or validation_split):
            raise ValueError(at_user_line(
                "fit: class_weight and validation_split need x and y as arrays; with "
                "batches, weight them in the batches and give validation_data"))
        if class_weight is not None:
            data.sample_weight = by_rows(data.sample_weight,
                                         class_weights(class_weight, data.y))
        validation = None
        if validation_data is not None:
            validation = validation_data_of(validation_data)
        elif validation_split:
            data, validation = data.split(validation_split)
        batch_size = _batch_size(batch_size, "fit", data.size)
        steps = data.steps(batch_size)
        history = History()
        callback_list = self._callbacks(callbacks, history, verbose, epochs=epochs,
                                        steps=steps)
        self.stop_training = False
        callback_list.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            callback_list.on_epoch_begin(epoch)
            logs = self._train_epoch(data, batch_size, shuffle, epoch, callback_list)
            if validation is not None:
                logs.update({f"val_{name}": value for name, value in
                             self._evaluate_data(validation, batch_size,
                                                 callback_list).items()})
            callback_list.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        callback_list.on_train_end(logs=history.history)
        return history

    def _train_epoch(self, data, batch_size, shuffle, epoch, callback_list):
        order = None
        if shuffle and data.size is not None:
            order = np.random.default_rng([self._config.shuffle_seed, epoch]).permutation(
                data.size)
        trackers = self._config.trackers()
        batches = data.batches(batch_size, order, pad=not self._config.batch_dependent)
        # The batch hooks are called (and their logs made) only if a callback has them.
        begin = callback_list.listens("on_train_batch_begin")
        end = callback_list.listens("on_train_batch_end")
        for step, batch in enumerate(batches):
            if begin:
                callback_list.on_train_batch_begin(step)
            self._run_batch(self._train_function, batch, trackers)
            if end:
                callback_list.on_train_batch_end(step, trackers.results())
        return trackers.results()

    def _run_batch(self, step, batch, trackers):
        """Run `step` on a batch of data.batches and add its results to `trackers`."""
        x, y, weights, rows, examples = batch
        loss, parts, totals = step(x, y, weights, rows)
        trackers.add(examples, loss, parts, totals)

    def _data(self, x, y, sample_weight, what, epochs=1):
        if not is_batch_stream(x):
            return ArrayData(x, y, sample_weight, what)
        if y is not None or sample_weight is not None:
            raise ValueError(at_user_line(
                f"{what}: x gives batches (x, y[, sample_weight]); y and sample_weight "
                f"must then be None"))
        if iter(x) is x and epochs > 1:
            raise ValueError(at_user_line(
                f"{what}: x is an iterator, which runs out after one epoch; for "
                f"{epochs} epochs give an iterable that starts again when iterated "
                f"(an object with __iter__)"))
        return BatchStream(x, what)

    # --- evaluate, predict --------------------------------------------------------------
    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 return_dict=False, callbacks=None):
        """The loss and metrics over the examples, in inference mode: the loss alone
        when there are no metrics, [loss, *metrics] otherwise, or a dict by name."""
        self._check_compiled("evaluate")
        data = self._data(x, y, sample_weight, "evaluate")
        batch_size = _batch_size(batch_size, "evaluate", data.size)
        callback_list = CallbackList(callbacks or [], self, {"verbose": _verbosity(verbose)})
        results = self._evaluate_data(data, batch_size, callback_list)
        if _verbosity(verbose):
            print(f"evaluate [{'=' * 30}]{_logs_text(results)}")
        return results if return_dict else _as_keras_result(results)

    def _evaluate_data(self, data, batch_size, callback_list):
        trackers = self._config.trackers()
        callback_list.on_test_begin()
        begin = callback_list.listens("on_test_batch_begin")
        end = callback_list.listens("on_test_batch_end")
        for step, batch in enumerate(data.batches(batch_size)):
            if begin:
                callback_list.on_test_batch_begin(step)
            self._run_batch(self._test_function, batch, trackers)
            if end:
                callback_list.on_test_batch_end(step, trackers.results())
        results = trackers.results()
        callback_list.on_test_end(logs=results)
        return results

    def predict(self, x, batch_size=None, verbose="auto"):
        """The model's outputs for x as NumPy arrays, computed by one compiled function
        in batches of `batch_size` (32) rows, in inference mode (the last batch padded)."""
        data = ArrayData(x, what="predict")
        batch_size = _batch_size(batch_size, "predict", data.size)
        predict = self._predictor()
        pieces, structure = [], None
        for start in batch_starts(data.size, batch_size):
            indices = np.arange(start, min(start + batch_size, data.size))
            rows, _ = padded(indices, batch_size)
            leaves, _, structure = pytree.flatten(predict(data.take(rows)[0]))
            pieces.append([np.asarray(leaf)[:len(indices)] for leaf in leaves])
        if _verbosity(verbose):
            print(f"{len(pieces)}/{len(pieces)} [{'=' * 30}]")
        return pytree.unflatten(structure, [np.concatenate(parts) for parts in zip(*pieces)])

    def _predictor(self):
        """The compiled forward pass, made once (compile makes it too)."""
        if getattr(self, "_predict_function", None) is None:
            self._predict_function = function(lambda x: self(x, training=False))
        return self._predict_function

    # --- one batch ------------------------------------------------------------------------
    def train_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """One training step on exactly this batch; its loss (and metrics)."""
        return self._on_batch(self._train_function, "train_on_batch", x, y, sample_weight,
                              return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """The loss (and metrics) of this batch, in inference mode."""
        return self._on_batch(self._test_function, "test_on_batch", x, y, sample_weight,
                              return_dict)

    def _on_batch(self, step, what, x, y, sample_weight, return_dict):
        self._check_compiled(what)
        data = ArrayData(x, y, sample_weight, what)
        trackers = self._config.trackers()
        self._run_batch(step, next(data.batches(data.size)), trackers)
        results = trackers.results()
        return results if return_dict else _as_keras_result(results)

    # --- copies ----------------------------------------------------------------------------
    def __getstate__(self):
        """Pickled and copied without the compiled steps; the copy compiles its own."""
        state = dict(self.__dict__)
        for name in ("_train_function", "_test_function", "_predict_function"):
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if self._config is not None:
            self._make_step_functions()

    # --- helpers ----------------------------------------------------------------------------
    def _check_compiled(self, what):
        if self._config is None:
            raise RuntimeError(at_user_line(
                f"Model {self.name!r}: call compile(optimizer, loss, metrics) before "
                f"{what}"))

    def _callbacks(self, callbacks, history, verbose, **params):
        verbose = _verbosity(verbose)
        params = dict(params, verbose=verbose)
        extra = [ProgressBar(verbose)] if verbose else []
        # History and the progress line come last, to see what callbacks add to the logs.
        return CallbackList([*(callbacks or []), history, *extra], self, params)


def _batch_size(batch_size, what, examples):
    """The batch size: 32 by default, never more than the examples (when known)."""
    if batch_size is None:
        batch_size = 32
    elif not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(at_user_line(
            f"{what}: batch_size must be a positive int, got {batch_size!r}"))
    return int(batch_size) if examples is None else min(int(batch_size), examples)


def _verbosity(verbose):
    return 1 if verbose == "auto" else int(verbose)


def _as_keras_result(results):
    values = list(results.values())
    return values[0] if len(values) == 1 else values


__all__ = ["Training"]
