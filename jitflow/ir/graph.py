"""The SSA graph: values (Var, Lit), nodes, graphs, and verify().

Graphs are immutable: passes build new ones. A Var is an SSA value identified by the
object itself, so a rewritten graph may keep the Vars of the graph it came from.
"""
import itertools
import math

import numpy as np

from .types import type_of_value

_var_ids = itertools.count()


class Var:
    """An SSA value: defined once, by a graph input or a node output."""
    __slots__ = ("type", "id")

    def __init__(self, type):
        self.type = type
        self.id = next(_var_ids)

    def __repr__(self):
        return f"Var#{self.id}:{self.type}"


class Lit:
    """A constant operand, held inline in the graph."""
    __slots__ = ("value", "type", "_key")

    def __init__(self, value, type=None):
        self.type = type or type_of_value(value)
        array = np.asarray(value, dtype=self.type.dtype)
        if array.flags.writeable:  # a read-only view: the owner's array keeps its flags
            array = array.view()
            array.flags.writeable = False
        self.value = array
        self._key = None

    def key(self):
        """Hashable identity of the constant's content (type and bytes)."""
        if self._key is None:
            self._key = (self.type, self.value.tobytes())
        return self._key

    def __repr__(self):
        return f"Lit({self.value!r}:{self.type})"


def uniform_element(array):
    """The 0-d array of the one value every element of `array` holds, bit for bit (so
    0.0 and -0.0 differ, and NaNs are alike only in the same bits), or None."""
    if array.size == 0:
        return None
    if not any(array.strides):  # a broadcast of one element (folded constants often are)
        return array.reshape(-1)[:1].copy().reshape(())
    flat = np.ascontiguousarray(array).reshape(-1)
    bits = flat.view(np.uint8).reshape(flat.size, -1)
    if (bits[-1] != bits[0]).any() or (bits != bits[0]).any():
        return None
    return flat[:1].copy().reshape(())


class Node:
    """One primitive application: prim(*inputs, **params) -> outputs.

    params are static and hashable; subgraphs are the graphs the node owns (bodies of
    control flow, fused regions), kept apart from params so passes can walk into them.
    """
    __slots__ = ("prim", "inputs", "params", "outputs", "subgraphs")

    def __init__(self, prim, inputs, params, outputs, subgraphs=()):
        self.prim = prim
        self.inputs = tuple(inputs)
        self.params = dict(params)
        self.outputs = tuple(outputs)
        self.subgraphs = tuple(subgraphs)

    @property
    def op(self):
        return self.prim.name

    def params_key(self):
        """Params as a hashable key that tells -0.0 from 0.0 (they compare equal)."""
        return tuple(sorted((k, _exact(v)) for k, v in self.params.items()))

    def replace(self, *, inputs=None, outputs=None, subgraphs=None):
        return Node(self.prim, self.inputs if inputs is None else inputs, self.params,
                    self.outputs if outputs is None else outputs,
                    self.subgraphs if subgraphs is None else subgraphs)

    def __repr__(self):
        return f"Node({self.op})"


def _exact(value):
    if isinstance(value, float):
        return (float, value, math.copysign(1.0, value))
    if isinstance(value, tuple):
        return tuple(_exact(v) for v in value)
    return value


class Graph:
    """inputs (Vars), nodes in topological order, outputs (Vars or Lits)."""
    __slots__ = ("inputs", "nodes", "outputs")

    def __init__(self, inputs, nodes, outputs):
        self.inputs = tuple(inputs)
        self.nodes = tuple(nodes)
        self.outputs = tuple(outputs)

    @property
    def in_types(self):
        return tuple(v.type for v in self.inputs)

    @property
    def out_types(self):
        return tuple(v.type for v in self.outputs)

    def __repr__(self):
        return f"<Graph: {len(self.inputs)} inputs, {len(self.nodes)} nodes>"


def has_effects(node):
    """Whether running `node` does more than compute its outputs: its primitive is not
    pure, or a subgraph it runs holds such a node (a print in a loop body). Passes
    neither drop, merge nor evaluate it at compile time."""
    return not node.prim.pure or any(has_effects(member) for graph in node.subgraphs
                                     for member in graph.nodes)


def without_effects(graph):
    """`graph` without the nodes run only for their effects (no results), here and in
    its subgraphs: the copy of a body that a derivative runs again beside the original,
    which prints once. The graph itself when it has none (sharing passes compare
    subgraphs by identity)."""
    if not any(has_effects(node) for node in graph.nodes):
        return graph
    nodes = [node.replace(subgraphs=tuple(without_effects(g) for g in node.subgraphs))
             for node in graph.nodes if node.prim.pure or node.outputs]
    return Graph(graph.inputs, nodes, graph.outputs)


class VerifyError(AssertionError):
    """A graph broke an IR invariant: a bug in whatever produced it."""


def verify(graph):
    """Check SSA form and re-run every node's type rule, recursing into subgraphs."""
    defined = set()
    for var in graph.inputs:
        _define(var, defined, "graph input")
    for node in graph.nodes:
        for value in node.inputs:
            if isinstance(value, Var) and value not in defined:
                raise VerifyError(f"{node.op}: input {value} is used before it is defined")
        for sub in node.subgraphs:
            verify(sub)
        expected = node.prim.infer_types(*(v.type for v in node.inputs),
                                         subgraphs=node.subgraphs, **node.params)
        actual = tuple(v.type for v in node.outputs)
        if expected != actual:
            raise VerifyError(f"{node.op}: type rule gives {types_text(expected)}, "
                              f"node declares {types_text(actual)}")
        for var in node.outputs:
            _define(var, defined, node.op)
    for value in graph.outputs:
        if isinstance(value, Var) and value not in defined:
            raise VerifyError(f"graph output {value} is never defined")
    return graph


def _define(var, defined, where):
    if not isinstance(var, Var):
        raise VerifyError(f"{where}: {var!r} is not a Var")
    if var in defined:
        raise VerifyError(f"{where}: {var} is defined twice")
    defined.add(var)


def types_text(types):
    """(f32[2], i64[]) for error messages."""
    return "(" + ", ".join(str(t) for t in types) + ")"
