"""What compile sets: the optimizer, each output's loss and loss weight, the metrics,
and the computation of a batch's losses and metric totals that the compiled steps share."""
import copy

from .. import numpy as jnp
from .. import optim, pytree
from ..errors import at_user_line
from . import loss_classes
from . import metrics as metrics_module
from .masks import mask_leaves
from .weighting import masked_weights, values_at_weights

_OPTIMIZERS = {"sgd": optim.SGD, "adam": optim.Adam, "adamw": optim.AdamW,
               "rmsprop": optim.RMSprop}


class TrainingConfig:
    def __init__(self, model, optimizer, loss, metrics, loss_weights):
        if loss is None:
            raise ValueError(at_user_line(f"Model {model.name!r}.compile: give a loss"))
        self.model = model
        self.optimizer = _optimizer(optimizer)
        self.loss, self.metrics, self.loss_weights = loss, metrics or [], loss_weights
        self.output_names = _output_names(model)
        self.shuffle_seed = 0
        self.batch_dependent = any(layer.uses_batch_statistics
                                   for layer in _all_layers(model))
        self._resolved = None
        # Unknown names are errors now, not at the first step (a subclassed model's
        # outputs are counted at its first step).
        per_output = (list, tuple, dict)
        if self.output_names or not (isinstance(loss, per_output) or
                                     isinstance(loss_weights, per_output)):
            self.resolved(len(self.output_names) if self.output_names else 1)

    # --- per output -----------------------------------------------------------------------
    def resolved(self, count):
        """[(output name, Loss, loss weight, [Metric])] for `count` outputs."""
        if self._resolved is None or len(self._resolved) != count:
            names = self.output_names
            if names is None or len(names) != count:
                names = ["output"] if count == 1 else [f"output_{i}" for i in range(count)]
            losses = _per_output(self.loss, names, "loss")
            weights = _per_output(1.0 if self.loss_weights is None else self.loss_weights,
                                  names, "loss_weights")
            resolved = []
            for name, loss, weight in zip(names, losses, weights):
                loss = loss_classes.get(loss)
                metrics = [metrics_module.get(m, loss) for m in self.metrics]
                if count > 1:
                    metrics = [_renamed(copy.deepcopy(m), f"{name}_{m.name}")
                               for m in metrics]
                resolved.append((name, loss, float(weight), metrics))
            self._resolved = resolved
        return self._resolved

    def losses_and_totals(self, y, predictions, sample_weight, rows, output_masks=None):
        """(the weighted total loss, each output's loss, [(metric total, weight total)]).
        `rows` is 1 on the batch's real rows (0 on the repeats that pad it) and
        `sample_weight` is already 0 on the repeats (one weight per example, or per
        step). An output without a mask has the loss sum(loss * sample_weight) / the
        number of weights of the real rows; one with a mask (such as a sequence after
        Embedding(mask_zero=True)) weighs each step by its weight times the mask:
        sum(loss * sample_weight * mask) / the number of kept steps, as Keras; its
        metrics count the kept steps only."""
        outputs, _, structure = pytree.flatten(predictions)
        targets = self._targets(y, len(outputs))
        out_masks = mask_leaves(structure, output_masks, "the model's output masks")
        total, parts, totals = None, [], []
        for (name, loss, weight, metrics), target, output, mask in zip(
                self.resolved(len(outputs)), targets, outputs, out_masks):
            weights, count = masked_weights(sample_weight, rows, mask)
            losses = self._losses(loss, target, output, weights, mask)
            dtype = jnp.result_type(losses)
            value = jnp.sum(losses * jnp.asarray(weights, dtype=dtype)) / \
                jnp.asarray(count, dtype=dtype)
            parts.append(value)
            weighted = value if weight == 1.0 else value * weight
            total = weighted if total is None else total + weighted
            totals += [metric.totals(target, output, weights) for metric in metrics]
        return total, parts, totals

    @staticmethod
    def _losses(loss, target, output, weights, mask):
        """The loss's values, one per weight (per example, or per step)."""
        if len(jnp.shape(weights)) == 1:
            losses = loss.per_example(target, output)
            _check_per_example(loss, losses, output)
            return losses
        given = "sample weights" if mask is None else "a mask"
        return values_at_weights(loss.per_position(target, output), weights,
                                 f"loss {loss.name} of an output with {given} of shape "
                                 f"{tuple(jnp.shape(weights))}")

    def _targets(self, y, count):
        if isinstance(y, dict) and self.output_names and set(y) == set(self.output_names):
            return [y[name] for name in self.output_names]
        targets = pytree.flatten(y)[0]
        if len(targets) != count:
            raise ValueError(at_user_line(
                f"Model {self.model.name!r}: y has {len(targets)} array(s) for "
                f"{count} output(s)"))
        return targets

    # --- running means --------------------------------------------------------------------
    def trackers(self):
        return Trackers(self)


class Trackers:
    """The running loss (weighted by each batch's number of examples, as Keras' loss
    tracker) and metrics of an epoch, in float64."""

    def __init__(self, config):
        self.config = config
        self.loss = metrics_module.Mean("loss")
        self.parts = None
        self.metrics = None

    def add(self, examples, loss, parts, totals):
        resolved = self.config.resolved(len(parts))
        if self.metrics is None:
            # Copies: an evaluation inside fit keeps its own sums.
            self.metrics = [copy.deepcopy(m) for *_, metrics in resolved for m in metrics]
            for metric in self.metrics:
                metric.reset_state()
            self.parts = [metrics_module.Mean(f"{name}_loss") for name, *_ in resolved] \
                if len(parts) > 1 else []
        # The batch's mean loss weighs as its number of examples: add_totals directly,
        # the sums Mean.update_state would make of one value.
        self.loss.add_totals(float(loss) * examples, examples)
        for tracker, part in zip(self.parts, parts):
            tracker.add_totals(float(part) * examples, examples)
        for metric, sums in zip(self.metrics, totals):
            metric.add_totals(*sums)

    def results(self):
        results = {"loss": self.loss.result()}
        for tracker in (self.parts or []) + (self.metrics or []):
            results[tracker.name] = tracker.result()
        return results


# --- helpers ------------------------------------------------------------------------------

def _optimizer(optimizer):
    if isinstance(optimizer, str):
        if optimizer.lower() not in _OPTIMIZERS:
            raise ValueError(at_user_line(
                f"unknown optimizer {optimizer!r}; give a jitflow.optim optimizer or one "
                f"of {', '.join(sorted(_OPTIMIZERS))}"))
        return _OPTIMIZERS[optimizer.lower()]()
    if not isinstance(optimizer, optim.Optimizer):
        raise TypeError(at_user_line(
            f"optimizer must be a jitflow.optim.Optimizer or a name, not "
            f"{type(optimizer).__name__}"))
    return optimizer


def _output_names(model):
    graph = model._functional_or_none()
    if graph is None:
        return None
    return [tensor.layer.name for tensor in graph.output_tensors]


def _per_output(value, names, what):
    """One `value` for every output, or a list or dict of one per output."""
    if isinstance(value, dict):
        missing = [name for name in names if name not in value]
        if missing:
            raise ValueError(at_user_line(
                f"compile: {what} has no entry for output(s) {missing}; the outputs are "
                f"{names}"))
        return [value[name] for name in names]
    if isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise ValueError(at_user_line(
                f"compile: {what} has {len(value)} entries for {len(names)} outputs "
                f"{names}"))
        return list(value)
    return [value] * len(names)


def _check_per_example(loss, per_example, output):
    batch = jnp.shape(output)[:1]
    if tuple(jnp.shape(per_example)) != tuple(batch):
        raise ValueError(at_user_line(
            f"loss {loss.name}: gave values of shape {jnp.shape(per_example)} for "
            f"predictions of shape {jnp.shape(output)}; a loss gives one value per "
            f"example, shape {tuple(batch)}"))


def _renamed(metric, name):
    metric.name = name
    return metric


def _all_layers(layer):
    """`layer` and every layer inside it, through nested models."""
    found = [layer]
    for inner in getattr(layer, "layers", []):
        found += _all_layers(inner)
    return found


__all__ = ["TrainingConfig", "Trackers"]
