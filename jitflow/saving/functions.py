"""jitflow.save(fn, path, *example_args) and jitflow.load(path).

save traces `fn` at the example arguments' signature (as a call would) and writes its
graph before optimization, the structures of its arguments and results, and the
Variables it reads with their values now. load gives a LoadedFunction: a callable for
that signature which replays the graph's nodes through bind inside a jitflow.function,
so it is compiled to native code on its first call and differentiates like any
function (grad, vjp, jvp, vmap), with no need of the source that made it. The Variables
are new ones, holding the saved values; the function reads and assigns them as the
original did its own.
"""
import inspect

import numpy as np

from .. import ops, pytree
from ..autodiff.transform import run_nodes
from ..function import Function, _readable
from ..ir.graph import Lit
from ..ir.types import type_of_value
from ..trace import Tracer
from ..variable_scope import closed_as_constants
from ..variables import Variable
from . import archive
from .errors import FormatError, NotSerializableError
from .graphs import graph_from_data, graph_to_data
from .values import decode_structure, encode_structure

KIND = "function"


# --- saving ---------------------------------------------------------------------------------

def save(fn, path, *example_args, **example_kwargs):
    """Write `fn` (a jitflow.function, or a function to trace as one) traced at the
    signature of the example arguments to `path`. Returns `path`."""
    fn = fn if isinstance(fn, Function) else Function(fn)
    name = fn.__qualname__
    bound = fn._bind(example_args, example_kwargs)
    leaves, paths, structure, _ = fn._split(bound)  # (static arguments: in the trace)
    types = fn._leaf_types(leaves, paths)
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        raise TypeError(f"jitflow.save({name}): the example arguments must be arrays or "
                        f"numbers, not traced values")
    graph, out_structure, state, _ = fn._trace(bound, structure, types, paths, leaves)
    _check_state(name, state)
    graph = closed_as_constants(graph, state)
    variables = [slot.variable for slot in state.slots] if state is not None else []
    document, arrays = graph_to_data(graph)
    document = {"name": name, "graph": document,
                "parameters": list(structure[1]) if structure[0] is dict else [],
                "structure": encode_structure(structure, "arguments"),
                "out_structure": encode_structure(out_structure, "results"),
                "assigned": list(state.assigned) if state is not None else [],
                "variables": [_variable_entry(v, arrays) for v in variables]}
    archive.write(path, KIND, document, arrays)
    return path


def _check_state(name, state):
    """Only Variables the function closes over persist in the file; say what else
    cannot."""
    if state is None:
        return
    for slot in state.slots:
        if slot.argument is not None:
            raise NotSerializableError(
                f"jitflow.save({name}): argument {slot.argument} is a Variable; save a "
                f"function that closes over its Variables instead")
        if not isinstance(slot.variable, Variable):
            raise NotSerializableError(
                f"jitflow.save({name}): the function carries a "
                f"{type(slot.variable).__name__} as state (a random generator?), which "
                f"cannot be saved; only Variables can")
    if state.written or state.closed_written:
        raise NotSerializableError(
            f"jitflow.save({name}): the function writes into an array argument or an "
            f"array it closes over; a saved function may change only Variables")


def _variable_entry(variable, arrays):
    """A Variable's entry; a complex one's array is kept as its parts interleaved (the
    file holds real arrays only) and its entry names its dtype."""
    held = variable.held()
    entry = {"name": variable.name, "trainable": variable.trainable}
    if held.dtype.kind == "c":
        entry["complex"] = held.dtype.name
        held = pytree.as_interleaved(held)
    arrays.append(np.array(held))
    return dict(entry, array=len(arrays) - 1)


def _variable_value(entry, arrays):
    array = arrays[entry["array"]]
    if "complex" not in entry:
        return array
    dtype = {"complex64": np.complex64, "complex128": np.complex128}[entry["complex"]]
    if array.dtype != np.dtype(dtype).type(0).real.dtype or array.shape[-1:] != (2,):
        raise FormatError(f"Variable {entry['name']!r}: a {entry['complex']} Variable's "
                          f"parts must be a real array with a last axis of 2, got "
                          f"{array.dtype}{list(array.shape)}")
    return pytree.from_interleaved(array, dtype)


# --- loading --------------------------------------------------------------------------------

def load(path):
    """The function saved at `path` (a LoadedFunction)."""
    document, arrays = archive.read(path, KIND)
    try:
        return LoadedFunction(document, arrays)
    except FormatError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise FormatError(f"{path}: not a valid saved function ({type(error).__name__}: "
                          f"{error})") from None


class LoadedFunction:
    """A saved function: call it with arguments of the saved signature. `variables`
    are its Variables (new ones, holding the saved values); `graph` is the traced
    graph it replays."""

    def __init__(self, document, arrays):
        self.__name__ = self.__qualname__ = str(document["name"])
        self.graph = graph_from_data(document["graph"], arrays)
        self.parameters = [str(p) for p in document["parameters"]]
        self._structure = decode_structure(document["structure"], "arguments")
        self._encoded_structure = encode_structure(self._structure, "arguments")
        self._out_structure = decode_structure(document["out_structure"], "results")
        self.variables = [Variable(_variable_value(entry, arrays), name=entry["name"],
                                   trainable=bool(entry["trainable"]))
                          for entry in document["variables"]]
        self._assigned = [self.variables[i] for i in document["assigned"]]
        self._arity = pytree.leaf_count(self._structure)
        self._check_counts()
        self._compiled = Function(_with_arity(self._replay, self._arity))
        self.__signature__ = inspect.Signature(  # (so it can be saved again, or wrapped)
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
             for p in self.parameters])

    def _check_counts(self):
        inputs = self._arity + len(self.variables)
        outputs = pytree.leaf_count(self._out_structure) + len(self._assigned)
        if len(self.graph.inputs) != inputs or len(self.graph.outputs) != outputs:
            raise FormatError(
                f"saved function {self.__name__}: its graph takes {len(self.graph.inputs)} "
                f"inputs and gives {len(self.graph.outputs)} outputs, its arguments and "
                f"Variables need {inputs} and {outputs}")

    @property
    def in_types(self):
        return self.graph.in_types[:self._arity]

    def __call__(self, *args, **kwargs):
        return self._compiled(*self._leaves(args, kwargs))

    def _leaves(self, args, kwargs):
        if len(args) > len(self.parameters):
            raise TypeError(f"{self.__name__}() takes {len(self.parameters)} arguments "
                            f"({', '.join(self.parameters)}), got {len(args)}")
        named = dict(zip(self.parameters, args))
        for key, value in kwargs.items():
            if key not in self.parameters or key in named:
                raise TypeError(f"{self.__name__}() got an unexpected or repeated "
                                f"argument {key!r}")
            named[key] = value
        missing = [p for p in self.parameters if p not in named]
        if missing:
            raise TypeError(f"{self.__name__}() is missing arguments {missing}")
        leaves, paths, structure = pytree.flatten({p: named[p] for p in self.parameters})
        if encode_structure(structure, "arguments") != self._encoded_structure:
            raise TypeError(f"{self.__name__}(): the arguments' structure differs from the "
                            f"saved one")
        return [_fitted(leaf, type, _readable(path), self.__name__)
                for leaf, type, path in zip(leaves, self.in_types, paths)]

    def _replay(self, *leaves):
        # (the graph reads and gives a complex Variable's parts interleaved)
        env = dict(zip(self.graph.inputs,
                       list(leaves) + [_as_leaf(v.read()) for v in self.variables]))
        env = run_nodes(self.graph, env)
        outputs = [_value(env, v) for v in self.graph.outputs]
        count = pytree.leaf_count(self._out_structure)
        for variable, value in zip(self._assigned, outputs[count:]):
            if variable.dtype.kind == "c":
                value = pytree.from_interleaved(value, variable.dtype)
            variable.assign(value)
        return pytree.unflatten(self._out_structure, outputs[:count])

    def __repr__(self):
        types = ", ".join(str(t) for t in self.in_types)
        return f"<jitflow saved function {self.__name__}({types})>"


def _as_leaf(value):
    """A Variable's value as the graph reads it: a complex one's parts interleaved."""
    complex_value = getattr(value, "_complex_parts", None) is not None or \
        (isinstance(value, np.ndarray) and value.dtype.kind == "c")
    return pytree.as_interleaved(value) if complex_value else value


def _value(env, value):
    if isinstance(value, Lit):
        return value.value.item() if value.type.weak else np.array(value.value)
    return env[value]


def _with_arity(replay, count):
    """replay(*leaves) as a function of `count` named parameters (calls of a function
    with *args never take the fast entry of native code)."""
    def run(*leaves):
        return replay(*leaves)
    run.__signature__ = inspect.Signature([
        inspect.Parameter(f"x{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for i in range(count)])
    run.__name__ = run.__qualname__ = getattr(replay, "__name__", "loaded")
    return run


def _fitted(leaf, type, path, name):
    """`leaf` as the saved input of `type`: same shape and dtype (a Python number may
    stand for a 0-d array of its kind, and the other way round)."""
    got = leaf.type if isinstance(leaf, Tracer) else type_of_value(leaf)
    if got.shape != type.shape or got.dtype != type.dtype:
        raise TypeError(f"{name}(): argument '{path}' is {got}, the function was saved for "
                        f"{type}")
    if got.weak == type.weak:
        return leaf
    if isinstance(leaf, Tracer):  # the saved weakness, so that dtypes promote as saved
        return ops.cast(leaf, type.dtype, weak=type.weak)
    return np.asarray(leaf).item() if type.weak else np.asarray(leaf, type.dtype)
