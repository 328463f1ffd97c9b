"""A model's weights as NumPy arrays, in memory (get_weights, set_weights) and in files
keyed by each Variable's name, "layer/variable" (save_weights, load_weights): a
.safetensors file (the safetensors format) when the path ends so, an .npz file
otherwise."""
import importlib

import numpy as np

from ..errors import at_user_line


def safetensors_numpy(what):
    """safetensors.numpy, an optional dependency, loaded when a file needs it."""
    try:
        return importlib.import_module("safetensors.numpy")
    except ImportError:
        raise ImportError(at_user_line(
            f"{what} writes and reads the safetensors format, which needs the safetensors "
            f"package: pip install 'jitflow[safetensors]' (or save weights to a .npz "
            f"path)")) from None


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


def named_arrays(model, what):
    """{weight name: its value, C-contiguous (safetensors writes the buffer as it
    lies)}; two weights of one name are an error."""
    weights = model.weights
    names = [w.name for w in weights]
    if len(set(names)) != len(names):
        raise ValueError(at_user_line(
            f"{model.name}.{what}: two weights share a name in {names}; give the "
            f"layers distinct names"))
    return {w.name: np.array(w.numpy(), order="C") for w in weights}


def save_weights(model, path):
    arrays = named_arrays(model, "save_weights")
    if _is_safetensors(path):
        safetensors_numpy("save_weights").save_file(arrays, str(path))
        return
    with open(path, "wb") as file:  # np.savez would add .npz to any other suffix
        np.savez(file, **arrays)


def load_weights(model, path):
    """Each weight takes the array saved under its name; a missing or extra name, or a
    shape that differs, is an error before any weight changes."""
    if _is_safetensors(path):
        arrays = safetensors_numpy("load_weights").load_file(str(path))
    else:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in saved.files}
    assign_by_name(model, arrays, "load_weights", path)


def assign_by_name(model, arrays, what, path):
    weights = model.weights
    names = {w.name for w in weights}
    missing = sorted(names - set(arrays))
    extra = sorted(set(arrays) - names)
    if missing or extra:
        raise ValueError(at_user_line(
            f"{model.name}.{what}: {path} does not fit the model: weights missing "
            f"from the file {missing}, arrays in the file the model does not have "
            f"{extra}"))
    _assign_all(model, [(w, arrays[w.name]) for w in weights], what)


def _is_safetensors(path):
    return str(path).endswith(".safetensors")


def _assign_all(model, pairs, what):
    for weight, array in pairs:  # check all before assigning any
        array = np.asarray(array)
        if array.shape != weight.shape:
            raise ValueError(at_user_line(
                f"{model.name}.{what}: weight {weight.name!r} has shape {weight.shape}, "
                f"got an array of shape {array.shape}"))
    for weight, array in pairs:
        weight.assign(np.asarray(array, dtype=weight.dtype))
