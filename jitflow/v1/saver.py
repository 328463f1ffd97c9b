"""train.Saver: a session's Variable values to a checkpoint file and back.

A checkpoint is a file of jitflow's one format (docs/FORMAT.md, kind "checkpoint"):
each Variable's value under its name. save(sess, prefix) writes `prefix.jitflow` (with
`-<global_step>` after the prefix when given) and records it in the directory's
`checkpoint` file (JSON: the latest prefix and those kept), which latest_checkpoint
reads; the oldest beyond max_to_keep are deleted. It also writes `prefix.meta`, the
graph's GraphDef and the names of the Variables saved, from which import_meta_graph
makes the graph and its Saver again in a program that does not have the code that
built them.
"""
import json
import os
import warnings

import numpy as np

from ..errors import at_user_line
from ..saving import archive
from ..saving.errors import FormatError, NotSerializableError
from .graph import get_default_graph
from .graph_def import KIND as GRAPH_DEF, GraphDef, as_graph_def
from .graph_import import import_graph_def
from .state import Variable, global_variables

KIND = "checkpoint"
SUFFIX = ".jitflow"
META = ".meta"
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

    def save(self, sess, save_path, global_step=None, write_meta_graph=True, **ignored):
        """Write the Variables' values in `sess` (and the graph, to `prefix.meta`);
        returns the checkpoint's prefix."""
        prefix = str(save_path) if global_step is None else \
            f"{save_path}-{int(_step_value(sess, global_step))}"
        names = list(self._named)
        arrays = [np.asarray(a) for a in sess.variable_values(list(self._named.values()))]
        document = {"variables": [{"name": n, "array": i} for i, n in enumerate(names)]}
        archive.write(prefix + SUFFIX, KIND, document, arrays)
        if write_meta_graph:
            self._write_meta_graph(sess.graph, prefix + META)
        self._remember(prefix)
        return prefix

    def export_meta_graph(self, filename, graph=None):
        """Write the graph and the names of this Saver's Variables to `filename`."""
        graph_def = as_graph_def(graph or get_default_graph())
        archive.write(filename, GRAPH_DEF, {**graph_def.document, "saver": list(self._named)},
                      graph_def.arrays)
        return filename

    def _write_meta_graph(self, graph, path):
        try:
            self.export_meta_graph(path, graph)
        except NotSerializableError as error:  # the values are saved all the same
            warnings.warn(f"Saver.save: the graph was not written to {path}: {error}",
                          stacklevel=3)

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

    def _remember(self, prefix):  # (and forget the oldest beyond max_to_keep)
        if prefix in self._kept:
            self._kept.remove(prefix)
        self._kept.append(prefix)
        while self.max_to_keep and len(self._kept) > self.max_to_keep:
            old = self._kept.pop(0)
            for path in (old + SUFFIX, old + META):
                if os.path.exists(path):
                    os.remove(path)
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


def import_meta_graph(meta_graph_or_file, import_scope=None, **ignored):
    """Add the graph saved at `meta_graph_or_file` (Saver.save's `prefix.meta`) to the
    default graph; returns a Saver of the Variables it saved (None if it names none),
    which restore() fills from the checkpoint."""
    document, arrays = archive.read(meta_graph_or_file, GRAPH_DEF)
    names = document.get("saver", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise FormatError(f"{meta_graph_or_file}: its list of saved Variables is not valid")
    scope = import_scope or ""
    import_graph_def(GraphDef(document, arrays), name=scope)
    graph = get_default_graph()
    prefix = f"{scope}/" if scope else ""
    variables = {name: graph.get_operation_by_name(prefix + name).outputs[0]
                 for name in names}
    return Saver(variables) if variables else None
