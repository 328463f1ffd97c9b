"""model.save(path) and nn.load_model(path): a model in one zip file, no code in it.

    config.json            the architecture (each layer's registered type and config,
                           the layer calls), the compile arguments and the optimizer's
                           type and arguments, as JSON
    weights.safetensors    each weight under its name ("layer/variable")
    state.safetensors      the optimizer's step count, learning rate and slots (by the
                           weight's name and the slot's), and each random generator's
                           draw count (Dropout's masks go on where they stopped)

Loaded, the model computes what it computed and, compiled again with the saved
arguments and optimizer state, fit continues as if training had never stopped.
"""
import json
import zipfile

import numpy as np

from .. import optim
from ..errors import at_user_line
from ..optim import schedules
from ..random import Generator
from ..variables import Variable
from . import layer_registry, loss_classes, metrics, weights_io
from .constructor_config import classes_of, decoded, encoded
from .learning_rate import AdjustableRate

FORMAT, VERSION = "jitflow.nn model", 1
_OPTIMIZERS = classes_of(optim, optim.Optimizer)
_SCHEDULES = {name: cls for name, cls in vars(schedules).items()
              if isinstance(cls, type) and cls.__module__ == schedules.__name__}
_LOSSES = classes_of(loss_classes, loss_classes.Loss)
_METRICS = classes_of(metrics, metrics.Metric)


def save_model(model, path):
    config = {"format": FORMAT, "version": VERSION,
              "model": layer_registry.serialize(model),
              "build_input": _build_input(model),
              "compile": _compile_config(model),
              "order": _names_in_order(model)}
    try:
        text = json.dumps(config, indent=1)
    except (TypeError, ValueError) as error:
        raise ValueError(at_user_line(
            f"Model {model.name!r}.save: a layer's config holds a value JSON cannot hold "
            f"({error}); give initializers and activations by name")) from None
    weights = weights_io.named_arrays(model, "save")
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("config.json", text)
        tensors = weights_io.safetensors_numpy("model.save")
        archive.writestr("weights.safetensors", tensors.save(weights))
        archive.writestr("state.safetensors", tensors.save(_state_arrays(model)))


def load_model(path, compile=True):
    """The model model.save wrote, with its weights; compiled as it was (with the
    optimizer's state) unless compile=False."""
    with zipfile.ZipFile(path) as archive:
        config = json.loads(archive.read("config.json"))
        if config.get("format") != FORMAT or config.get("version") != VERSION:
            raise ValueError(at_user_line(
                f"load_model: {path} is not a jitflow.nn model file of version {VERSION}"))
        tensors = weights_io.safetensors_numpy("load_model")
        weights = _copied(tensors.load(archive.read("weights.safetensors")))
        state = _copied(tensors.load(archive.read("state.safetensors")))
    model = layer_registry.deserialize(config["model"])
    if config["build_input"] is not None:  # a subclassed model builds on its first call
        spec = config["build_input"]
        model(np.zeros([1, *spec["shape"][1:]], spec["dtype"]))
        weights, state = _renamed(config["order"], _names_in_order(model), weights, state,
                                  path)
    weights_io.assign_by_name(model, weights, "load_model", path)
    _restore_generators(model, state)
    if compile and config["compile"] is not None:
        _compile_from(model, config["compile"])
        _restore_optimizer(model.optimizer, model, state)
    return model


# --- compile's arguments -----------------------------------------------------------------

def _compile_config(model):
    training = model._config
    if training is None:
        return None
    what = f"Model {model.name!r}.save"
    optimizer = training.optimizer
    optimizer_config = encoded(_with_rate_argument(optimizer, what), what)
    return {"optimizer": optimizer_config,
            "loss": _encoded_tree(training.loss, what),
            "metrics": [_encoded_tree(m, what) for m in training.metrics],
            "loss_weights": training.loss_weights}


def _with_rate_argument(optimizer, what):
    """A stand-in whose learning_rate attribute is the saveable form of the rate."""
    rate = optimizer.learning_rate
    if isinstance(rate, AdjustableRate):
        rate = float(rate)
    elif callable(rate):
        if type(rate).__name__ not in _SCHEDULES:
            raise ValueError(at_user_line(
                f"{what}: the learning rate schedule {rate!r} is not one of "
                f"jitflow.optim's ({', '.join(sorted(_SCHEDULES))}), so it cannot be "
                f"saved"))
        rate = encoded(rate, what)
    stand_in = object.__new__(type(optimizer))
    stand_in.__dict__.update(vars(optimizer), learning_rate=rate)
    return stand_in


def _encoded_tree(value, what):
    """compile's loss or metric argument: names stay; Loss and Metric objects become
    {class_name, config}; lists and dicts (per output) keep their shape."""
    if isinstance(value, (str, int, float)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_encoded_tree(item, what) for item in value]
    if isinstance(value, dict):
        return {"per_output": {k: _encoded_tree(v, what) for k, v in value.items()}}
    if isinstance(value, (loss_classes.Loss, metrics.Metric)) and \
            type(value).__name__ in {**_LOSSES, **_METRICS}:
        return encoded(value, what)
    raise ValueError(at_user_line(
        f"{what}: compile was given {value!r}, which a saved model cannot hold (no code "
        f"is saved); give losses and metrics by name or as jitflow.nn's own objects"))


def _decoded_tree(value, classes):
    if isinstance(value, list):
        return [_decoded_tree(item, classes) for item in value]
    if isinstance(value, dict) and "per_output" in value:
        return {k: _decoded_tree(v, classes) for k, v in value["per_output"].items()}
    if isinstance(value, dict):
        return decoded(value, classes, "load_model")
    return value


def _compile_from(model, config):
    optimizer_entry = dict(config["optimizer"])
    arguments = dict(optimizer_entry["config"])
    if isinstance(arguments["learning_rate"], dict):
        arguments["learning_rate"] = decoded(arguments["learning_rate"], _SCHEDULES,
                                             "load_model")
    optimizer = decoded({**optimizer_entry, "config": arguments}, _OPTIMIZERS,
                        "load_model")
    model.compile(optimizer, loss=_decoded_tree(config["loss"], _LOSSES),
                  metrics=_decoded_tree(config["metrics"], _METRICS),
                  loss_weights=config["loss_weights"])


# --- state: the optimizer's and the generators' ------------------------------------------

def _state_arrays(model):
    arrays = {f"generator:{g.draws.name}": g.draws.numpy() for g in _generators(model)}
    training = model._config
    if training is None:
        return arrays
    optimizer = training.optimizer
    arrays["optimizer:iterations"] = optimizer.iterations.numpy()
    if isinstance(optimizer.learning_rate, AdjustableRate):
        arrays["optimizer:learning_rate"] = optimizer.learning_rate.variable.numpy()
    for variable in model.trainable_variables:
        for slot_name, slot in _existing_slots(optimizer, variable).items():
            arrays[f"slot:{variable.name}:{slot_name}"] = slot.numpy()
    # safetensors writes each buffer as it lies: C order, as it reads them back.
    return {name: np.array(array, order="C") for name, array in arrays.items()}


def _existing_slots(optimizer, variable):
    """The variable's slots if a step made them (an untrained model has none)."""
    return optimizer._slots.existing(variable)


def _restore_optimizer(optimizer, model, state):
    optimizer.iterations.assign(state["optimizer:iterations"])
    if "optimizer:learning_rate" in state:
        optimizer.learning_rate.variable.assign(state["optimizer:learning_rate"])
    # Left for the first step to claim, the slots are made at the same point of the
    # trace as in the run that saved them: the same compiled step, the same bits.
    for variable in model.trainable_variables:
        prefix = f"slot:{variable.name}:"
        saved = {key[len(prefix):]: value for key, value in state.items()
                 if key.startswith(prefix)}
        if saved:
            optimizer._slots.leave(variable.name, {
                name: Variable(saved[name], name=f"{optimizer.name}/{variable.name}/{name}",
                               trainable=False) for name in optimizer.slot_names})


def _names_in_order(model):
    return {"weights": [w.name for w in model.weights],
            "generators": [g.draws.name for g in _generators(model)]}


def _renamed(saved, now, weights, state, path):
    """A subclassed model's inner layers take new default names when it is made again:
    its weights and generators are matched by their order instead (the order its
    attributes were set in), and the arrays renamed."""
    for kind in ("weights", "generators"):
        if len(saved[kind]) != len(now[kind]):
            raise ValueError(at_user_line(
                f"load_model: {path} holds {len(saved[kind])} {kind}, the model made "
                f"from its config has {len(now[kind])}"))
    names = dict(zip(saved["weights"], now["weights"]))
    names.update(zip(saved["generators"], now["generators"]))
    weights = {names[name]: array for name, array in weights.items()}
    return weights, {_renamed_key(key, names): array for key, array in state.items()}


def _renamed_key(key, names):
    """'slot:<weight>:<slot>' and 'generator:<draws>' under the new names."""
    kind, _, rest = key.partition(":")
    if kind == "slot":
        weight, _, slot = rest.rpartition(":")
        return f"slot:{names[weight]}:{slot}"
    if kind == "generator":
        return f"generator:{names[rest]}"
    return key


def _restore_generators(model, state):
    for generator in _generators(model):
        key = f"generator:{generator.draws.name}"
        if key in state:
            generator.draws.assign(state[key])


def _generators(model):
    """The random Generators of the model's layers (Dropout's, attention's), nested
    layers included, each once."""
    found, seen = [], set()
    for layer in _all_layers(model):
        for value in vars(layer).values():
            if isinstance(value, Generator) and id(value) not in seen:
                seen.add(id(value))
                found.append(value)
    return found


def _all_layers(layer):
    layers = [layer]
    for inner in getattr(layer, "layers", []):
        layers += _all_layers(inner)
    return layers


def _build_input(model):
    """For a subclassed model, the shape and dtype of its first input (it builds its
    layers on a call); None for functional and Sequential models."""
    if model._functional_or_none() is not None or type(model).__name__ == "Sequential":
        return None
    if model.input_shape is None:
        return None
    return {"shape": list(model.input_shape), "dtype": _input_dtype(model)}


def _input_dtype(model):
    return next((w.dtype.name for w in model.weights), "float32")


__all__ = ["save_model", "load_model"]


def _copied(arrays):
    return {name: np.array(array) for name, array in arrays.items()}
