"""train.Saver: a session's Variable values to a checkpoint file and back.

A checkpoint is a file of jitflow's one format (docs/FORMAT.md, kind "checkpoint"):
each Variable's value under its name. save(sess, prefix) writes `prefix.jitflow` (with
`-<global_step>` after the prefix when given) and records it in the directory's
`checkpoint` file (JSON: the latest prefix and those kept), which latest_checkpoint
reads; the oldest beyond max_to_keep are deleted.
"""
import json
import os

import numpy as np

from ..errors import at_user_line
from ..saving import archive
from ..saving.errors import FormatError
from .state import Variable, global_variables

KIND = "checkpoint"
SUFFIX = ".jitflow"
STATE_FILE = "checkpoint"


class Saver:
    """Saver(var_list=None, max_to_keep=5): saves and restores `var_list` (a list of
    Variables, or a dict of name -> Variable; default: the graph's global Variables)."""

    def __init__(self, var_list=None, max_to_keep=5, **ignored):
        variables = global_variables() if var_list is None else var_list
        if isinstance(variables, dict):
            self._named = dict(variables)
        else:
            self._named = {v.op.name: v for v in variables}
        for name, variable in self._named.items():
            if not isinstance(variable, Variable):
                raise TypeError(at_user_line(f"Saver: {name!r} is not a Variable"))
        if not self._named:
            raise ValueError(at_user_line("Saver: there are no Variables to save"))
        self.max_to_keep = max_to_keep
        self._kept = []

    def save(self, sess, save_path, global_step=None, **ignored):
        """Write the Variables' values in `sess`; returns the checkpoint's prefix."""
        prefix = str(save_path) if global_step is None else \
            f"{save_path}-{int(_step_value(sess, global_step))}"
        names = list(self._named)
        arrays = [np.asarray(a) for a in sess.variable_values(list(self._named.values()))]
        document = {"variables": [{"name": n, "array": i} for i, n in enumerate(names)]}
        archive.write(prefix + SUFFIX, KIND, document, arrays)
        self._remember(prefix)
        return prefix

    def restore(self, sess, save_path):
        """Set the Variables in `sess` to the values saved at prefix `save_path`."""
        if save_path is None:
            raise ValueError(at_user_line("Saver.restore: save_path is None (no "
                                          "checkpoint found?)"))
        values = read_checkpoint(save_path)
        for name, variable in self._named.items():
            if name not in values:
                raise KeyError(at_user_line(
                    f"Saver.restore: the checkpoint {save_path!r} holds no Variable "
                    f"{name!r} (it holds {sorted(values)})"))
            value = values[name]
            if value.dtype != variable.dtype or \
                    not variable.shape.is_compatible_with(value.shape):
                raise ValueError(at_user_line(
                    f"Saver.restore: Variable {name!r} is {variable.dtype}"
                    f"{variable.shape}, the checkpoint holds {value.dtype}"
                    f"{list(value.shape)}"))
            sess.load_variable(variable, value)

    def _remember(self, prefix):
        if prefix in self._kept:
            self._kept.remove(prefix)
        self._kept.append(prefix)
        while self.max_to_keep and len(self._kept) > self.max_to_keep:
            old = self._kept.pop(0)
            if os.path.exists(old + SUFFIX):
                os.remove(old + SUFFIX)
        directory = os.path.dirname(os.path.abspath(prefix))
        state = {"latest": os.path.basename(prefix),
                 "all": [os.path.basename(p) for p in self._kept]}
        with open(os.path.join(directory, STATE_FILE), "w", encoding="utf-8") as file:
            json.dump(state, file)

    @property
    def last_checkpoints(self):
        return list(self._kept)


def _step_value(sess, global_step):
    if isinstance(global_step, Variable):
        return sess.variable_values([global_step])[0]
    return global_step


def read_checkpoint(prefix):
    """{Variable name: array} of the checkpoint at `prefix`."""
    path = str(prefix) + SUFFIX
    if not os.path.exists(path):
        raise FileNotFoundError(f"no checkpoint at {prefix!r} ({path} does not exist)")
    document, arrays = archive.read(path, KIND)
    entries = document.get("variables")
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str)
            and isinstance(e.get("array"), int) and 0 <= e["array"] < len(arrays)
            for e in entries):
        raise FormatError(f"{path}: its list of Variables is not valid")
    return {e["name"]: arrays[e["array"]] for e in entries}


def latest_checkpoint(checkpoint_dir):
    """The prefix of the checkpoint saved last in `checkpoint_dir`, or None."""
    path = os.path.join(checkpoint_dir, STATE_FILE)
    try:
        with open(path, encoding="utf-8") as file:
            latest = json.load(file).get("latest")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(latest, str):
        return None
    prefix = os.path.join(checkpoint_dir, latest)
    return prefix if os.path.exists(prefix + SUFFIX) else None
