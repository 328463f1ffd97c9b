"""A model's weights as NumPy arrays, in memory (get_weights, set_weights) and in .npz
files keyed by each Variable's name, "layer/variable" (save_weights, load_weights)."""
import numpy as np

from ..errors import at_user_line


def get_weights(model):
    return [weight.numpy() for weight in model.weights]


def set_weights(model, arrays):
    weights = model.weights
    arrays = list(arrays)
    if len(arrays) != len(weights):
        raise ValueError(at_user_line(
            f"{model.name}.set_weights: got {len(arrays)} arrays for {len(weights)} "
            f"weights {[w.name for w in weights]}"))
    _assign_all(model, list(zip(weights, arrays)), "set_weights")


def save_weights(model, path):
    weights = model.weights
    names = [w.name for w in weights]
    if len(set(names)) != len(names):
        raise ValueError(at_user_line(
            f"{model.name}.save_weights: two weights share a name in {names}; give the "
            f"layers distinct names"))
    with open(path, "wb") as file:  # np.savez would add .npz to any other suffix
        np.savez(file, **{w.name: w.numpy() for w in weights})


def load_weights(model, path):
    """Each weight takes the array saved under its name; a missing or extra name, or a
    shape that differs, is an error before any weight changes."""
    with np.load(path, allow_pickle=False) as saved:
        arrays = {name: saved[name] for name in saved.files}
    weights = model.weights
    names = {w.name for w in weights}
    missing = sorted(names - set(arrays))
    extra = sorted(set(arrays) - names)
    if missing or extra:
        raise ValueError(at_user_line(
            f"{model.name}.load_weights: {path} does not fit the model: weights missing "
            f"from the file {missing}, arrays in the file the model does not have "
            f"{extra}"))
    _assign_all(model, [(w, arrays[w.name]) for w in weights], "load_weights")


def _assign_all(model, pairs, what):
    for weight, array in pairs:  # check all before assigning any
        array = np.asarray(array)
        if array.shape != weight.shape:
            raise ValueError(at_user_line(
                f"{model.name}.{what}: weight {weight.name!r} has shape {weight.shape}, "
                f"got an array of shape {array.shape}"))
    for weight, array in pairs:
        weight.assign(np.asarray(array, dtype=weight.dtype))
