"""The graph a function computes at example arguments, ready to be written out: traced
as jitflow.function traces it, optimized by the same pipeline, with the Variables and
arrays it closes over taken as named constants (an ONNX model's initializers)."""
import inspect
import re
from dataclasses import dataclass

from .. import pytree
from ..config import config
from ..ir.passes import optimize
from ..ir.types import type_of_value
from ..trace import Stateful
from ..variable_scope import VariableArgument, trace_with_variables
from .complex_io import note


@dataclass
class TracedGraph:
    graph: object  # the optimized jitflow Graph
    input_names: list  # one per array argument: the graph's first inputs
    constants: list  # (name, array) for each of the graph's other inputs
    input_notes: list  # one per array argument: what it holds of a complex value (or "")
    output_notes: list  # the same for each of the graph's outputs


def trace_for_export(fn, args, what="jitflow.onnx.export"):
    """The optimized graph of fn(*args), its inputs' names and its constants."""
    signature = inspect.signature(fn)
    try:
        bound = signature.bind(*args)
    except TypeError as error:
        raise TypeError(f"{what}: {error}") from None
    leaves, paths, structure = pytree.flatten(dict(bound.arguments))
    types = [_leaf_type(leaf, path, what) for leaf, path in zip(leaves, paths)]
    result_paths = []

    def flat_fn(arguments):
        call = inspect.BoundArguments(signature, pytree.unflatten(structure, arguments))
        results, out_paths, _ = pytree.flatten(fn(*call.args, **call.kwargs))
        result_paths[:] = out_paths
        return results

    name = getattr(fn, "__qualname__", type(fn).__name__)
    graph, state = trace_with_variables(flat_fn, leaves, types, paths, name)
    if state is not None and state.outputs:
        raise ValueError(f"{what}: {name} assigns Variables or writes into arrays; an "
                         f"ONNX model keeps no state, so export a function that only "
                         f"reads them")
    arguments = [(path, type) for leaf, path, type in zip(leaves, paths, types)
                 if not isinstance(leaf, Stateful)]
    names = [_readable(path) for path, _ in arguments]
    input_notes = [note(path, type.dtype) for path, type in arguments]
    output_notes = [note(path, var.type.dtype)
                    for path, var in zip(result_paths, graph.outputs, strict=True)]
    constants = [] if state is None else \
        [(v.name, v.held()) for v in state.variables(leaves)] + \
        [(f"constant_{i}", array) for i, array in enumerate(state.closed)]
    return TracedGraph(optimize(graph, dump=config.dump_ir, check=config.check_ir),
                       names, constants, input_notes, output_notes)


def _leaf_type(leaf, path, what):
    if isinstance(leaf, Stateful):
        return VariableArgument(leaf.type, id(leaf), leaf.name)
    try:
        return type_of_value(leaf)
    except TypeError as error:
        raise TypeError(f"{what}: argument {_readable(path)}: {error}") from None


def _readable(path):
    """"['p']['w']" -> "p.w", "['xs'][0]" -> "xs.0": an argument's leaf as a name."""
    parts = re.findall(r"\[(?:'([^']*)'|(\d+))\]", path)
    name = ".".join(key or index for key, index in parts)
    return name + path[path.rindex("]") + 1:] if path.endswith((".real", ".imag")) \
        else name
