"""What every control-flow function does with the functions it is given: trace each
once into a graph of its own, type its results, and make graphs that take the same
inputs (their captured outer values shared).
"""
import numpy as np

from .. import ops, pytree
from ..autodiff.transform import read, run_nodes
from ..errors import at_user_line
from ..ir.graph import Graph, Var
from ..trace import GraphBuilder, Tracer, constant_type


class Traced:
    """A function traced: its graph (declared inputs, then captured values), the outer
    values it captured, and its result's structure and leaf paths."""

    def __init__(self, graph, captured, out_structure, out_paths):
        self.graph, self.captured = graph, captured
        self.out_structure, self.out_paths = out_structure, out_paths

    @property
    def declared(self):
        """How many of the graph's inputs are its own arguments (not captures)."""
        return len(self.graph.inputs) - len(self.captured)


class Argument:
    """One positional argument of a traced function: a pytree structure, its leaves'
    types and the name its leaves' paths start with ("carry", "x", "operands")."""

    def __init__(self, structure, types, name):
        self.structure, self.types, self.name = structure, list(types), name

    def paths(self):
        return pytree.paths_of(self.structure, self.name)


def trace(fn, name, arguments, result_types=()):
    """fn traced on Tracers of `arguments`' types. Results that are weakly typed (Python
    numbers) take a strong type: the dtype of the matching `result_types` entry if it has
    their shape, else their own."""
    with GraphBuilder(name) as builder:
        args = []
        for argument in arguments:
            tracers = [builder.new_input(t, path)
                       for t, path in zip(argument.types, argument.paths())]
            args.append(pytree.unflatten(argument.structure, tracers))
        leaves, paths, structure = pytree.flatten(fn(*args))
        hints = list(result_types) + [None] * max(0, len(leaves) - len(result_types))
        graph = builder.build([strong(leaf, hint) for leaf, hint in zip(leaves, hints)])
    return Traced(graph, builder.outer_values(), structure, paths)


def strong(value, hint=None):
    """`value` strongly typed: a Python number (or weak Tracer) returned where an array
    is carried would otherwise differ in type for no visible reason."""
    type = constant_type(value)
    if not type.weak:
        return value
    dtype = hint.dtype if hint is not None and hint.shape == type.shape else \
        type.strong().dtype
    return ops.cast(value, dtype) if isinstance(value, Tracer) else np.asarray(value, dtype)


def strong_leaves(tree):
    """The leaves of `tree`, each strongly typed (init values of loop carries)."""
    leaves, paths, structure = pytree.flatten(tree)
    return [strong(leaf) for leaf in leaves], paths, structure


def sharing_captures(traced):
    """The graphs of `traced` each taking every one's captured values, in order, after
    its own arguments; and those captured values."""
    captured = [value for t in traced for value in t.captured]
    graphs = []
    for k, t in enumerate(traced):
        own = list(t.graph.inputs[t.declared:])
        before = [Var(constant_type(v)) for u in traced[:k] for v in u.captured]
        after = [Var(constant_type(v)) for u in traced[k + 1:] for v in u.captured]
        inputs = list(t.graph.inputs[:t.declared]) + before + own + after
        graphs.append(Graph(inputs, t.graph.nodes, t.graph.outputs))
    return tuple(graphs), captured


def regrouped(graph, input_groups, output_groups=None):
    """`graph` with its inputs (and outputs) reordered: each group a list of positions."""
    inputs = [graph.inputs[i] for group in input_groups for i in group]
    outputs = graph.outputs if output_groups is None else \
        [graph.outputs[i] for group in output_groups for i in group]
    return Graph(inputs, graph.nodes, outputs)


def with_unused_inputs(graph, types, at):
    """`graph` taking extra inputs of `types` it does not read, inserted at position
    `at` of its inputs."""
    extra = [Var(t) for t in types]
    inputs = list(graph.inputs)
    return Graph(inputs[:at] + extra + inputs[at:], graph.nodes, graph.outputs)


def check_types(what, paths, got, expected, expected_what):
    """A clear error for the first leaf whose type differs."""
    for path, mine, theirs in zip(paths, got, expected, strict=True):
        if mine != theirs:
            raise TypeError(at_user_line(
                f"{what}: {path} is {mine}, but {expected_what} {theirs}"))


def described(paths):
    return f"({', '.join(paths) or 'nothing'})"


def run_graph(graph, args):
    """graph's outputs for `args`, through bind: recorded as nodes when tracing."""
    env = run_nodes(graph, dict(zip(graph.inputs, args, strict=True)))
    return [read(env, v) for v in graph.outputs]
