"""Reverse and forward mode as passes over a Graph's nodes.

Every pass here walks a graph the way the interpreter does, but each step calls bind()
through the primitives' public ops. So the same code computes derivatives eagerly (on
NumPy values, when no trace is active) and records them as new nodes (inside a trace,
where they are then optimized and compiled with the rest). Zero cotangents and tangents
are symbolic: None, never an array of zeros.
"""
import numpy as np

from .. import ops
from ..errors import at_user_line
from ..ir.graph import Lit, Var
from ..ir.interpret import as_operand
from ..ir.types import is_floating
from ..trace import bind, constant_type, make_graph


def differentiable(type):
    """Only floating-point values carry derivatives; integers and booleans get none."""
    return is_floating(type.dtype)


def read(env, value):
    if isinstance(value, Lit):
        return as_operand(value.value, value.type)
    return env[value]


def run_nodes(graph, env):
    """Evaluate `graph`'s nodes through bind, from `env` holding its inputs; fills `env`
    with every value and returns it."""
    for node in graph.nodes:
        outs = bind(node.prim, *(read(env, v) for v in node.inputs),
                    subgraphs=node.subgraphs, **node.params)
        env.update(zip(node.outputs, outs if node.prim.multiple_results else (outs,)))
    return env


# --- reverse mode -------------------------------------------------------------------------

class NoCotangent:
    """What a rule returns for an input it cannot give a cotangent for: an error if that
    input depends on what is being differentiated, nothing otherwise."""

    def __init__(self, message):
        self.message = message


def backward_pass(graph, env, out_cts, differentiated=None):
    """The cotangent of each graph input (None for zero), given the outputs' cotangents
    and `env` holding every value of the forward pass. `differentiated`: the inputs
    taken as variables (default: all); the others are constants."""
    cts = {}
    depends = _Dependence(graph, graph.inputs if differentiated is None else differentiated)

    def accumulate(var, ct):
        if ct is None or not isinstance(var, Var) or not differentiable(var.type):
            return
        if isinstance(ct, NoCotangent):
            if depends(var):
                raise ValueError(at_user_line(ct.message))
            return
        ct = fit_cotangent(ct, var.type)
        cts[var] = ct if var not in cts else ops.add(cts[var], ct)

    for var, ct in zip(graph.outputs, out_cts, strict=True):
        accumulate(var, ct)
    for node in reversed(graph.nodes):
        node_cts = [cts.pop(var, None) for var in node.outputs]
        if all(ct is None for ct in node_cts) or not _takes_cotangents(node):
            continue
        params = _params(node)
        if node.prim.vjp_takes_needs:
            params = dict(params, needs=tuple(
                isinstance(v, Var) and differentiable(v.type) and depends(v)
                for v in node.inputs))
        in_cts = node.prim.rule("vjp")(
            node_cts if node.prim.multiple_results else node_cts[0],
            *(read(env, v) for v in node.inputs), out=_outputs(node, env), **params)
        for var, ct in zip(node.inputs, in_cts, strict=True):
            accumulate(var, ct)
    return [cts.get(var) for var in graph.inputs]


class _Dependence:
    """Whether a value depends on given inputs of a graph (worked out on first use)."""

    def __init__(self, graph, inputs):
        self.graph, self.inputs, self.reached = graph, inputs, None

    def __call__(self, var):
        if self.reached is None:
            self.reached = set(self.inputs)
            for node in self.graph.nodes:
                if any(isinstance(v, Var) and v in self.reached for v in node.inputs):
                    self.reached.update(node.outputs)
        return var in self.reached


def _takes_cotangents(node):
    return any(isinstance(v, Var) and differentiable(v.type) for v in node.inputs)


def _outputs(node, env):
    outs = [env[v] for v in node.outputs]
    return outs if node.prim.multiple_results else outs[0]


def _params(node):
    if node.prim.has_subgraphs:
        return dict(node.params, subgraphs=node.subgraphs)
    return node.params


def fit_cotangent(ct, type):
    """A cotangent computed in a broadcast shape, summed back to `type`'s shape, in its
    dtype: this is where broadcasting is undone."""
    ct_type = constant_type(ct)
    if ct_type.shape != type.shape:
        lead = len(ct_type.shape) - len(type.shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(type.shape)
            if d == 1 and ct_type.shape[lead + i] != 1)
        ct = ops.reshape(ops.reduce_sum(ct, axes=axes), type.shape)
    if constant_type(ct).dtype != type.dtype:
        ct = ops.cast(ct, type.dtype)
    return ct


# --- forward mode -------------------------------------------------------------------------

def tangent_pass(graph, env, in_tangents):
    """The tangent of each graph output (None for zero), given the inputs' tangents and
    `env` holding every value of the forward pass."""
    tangents = {var: fit_tangent(t, var.type)
                for var, t in zip(graph.inputs, in_tangents, strict=True)
                if t is not None and differentiable(var.type)}
    for node in graph.nodes:
        node_tangents = [tangents.get(v) if isinstance(v, Var) else None
                         for v in node.inputs]
        if all(t is None for t in node_tangents) or \
                not any(differentiable(v.type) for v in node.outputs):
            continue
        outs = node.prim.rule("jvp")(node_tangents, *(read(env, v) for v in node.inputs),
                                     out=_outputs(node, env), **_params(node))
        outs = outs if node.prim.multiple_results else [outs]
        for var, tangent in zip(node.outputs, outs, strict=True):
            if tangent is not None and differentiable(var.type):
                tangents[var] = fit_tangent(tangent, var.type)
    return [tangents.get(v) if isinstance(v, Var) else None for v in graph.outputs]


def fit_tangent(tangent, type):
    """A tangent in `type`'s dtype, broadcast to its shape (an elementwise rule may
    return the tangent of an operand that was broadcast)."""
    tangent_type = constant_type(tangent)
    if tangent_type.dtype != type.dtype:
        tangent = ops.cast(tangent, type.dtype)
    if tangent_type.shape != type.shape:
        tangent = ops.broadcast_to(tangent, type.shape)
    return tangent


def zeros(type):
    # A NumPy scalar, not a writable 0-d array: traced, a writable array is one the
    # compiled function closes over, an input read at each call (in a branch being
    # differentiated, an input the other branches and the switch do not have).
    return ops.broadcast_to(type.dtype.type(0), type.shape)


# --- whole graphs ---------------------------------------------------------------------------

def vjp_graph(graph):
    """Graph (inputs...) -> (outputs...) to graph (inputs..., output cotangents...) ->
    (outputs..., input cotangents...). Outputs that are not floats take no cotangent;
    inputs that are not floats get none."""
    def backward(env, cotangents):
        return graph.inputs, backward_pass(graph, env, cotangents)
    return _derivative_graph(graph, graph.outputs, backward, "ct", "vjp")


def jvp_graph(graph):
    """Graph (inputs...) -> (outputs...) to graph (inputs..., input tangents...) ->
    (outputs..., output tangents...), for the float inputs and outputs."""
    def forward(env, tangents):
        return graph.outputs, tangent_pass(graph, env, tangents)
    return _derivative_graph(graph, graph.inputs, forward, "t", "jvp")


def _derivative_graph(graph, seeded, derivative_pass, prefix, name):
    """A graph taking graph's inputs and one seed per float value of `seeded`, returning
    graph's outputs and the derivatives derivative_pass(env, seeds) gives (zeros where
    it gives None), for the float values it names."""
    seed_types = [v.type.strong() for v in seeded if differentiable(v.type)]

    def both(*args):
        env = run_nodes(graph, dict(zip(graph.inputs, args)))
        given = iter(args[len(graph.inputs):])
        seeds = [next(given) if differentiable(v.type) else None for v in seeded]
        values, derivatives = derivative_pass(env, seeds)
        return [read(env, v) for v in graph.outputs] + [
            zeros(v.type.strong()) if d is None else d
            for v, d in zip(values, derivatives) if differentiable(v.type)]
    names = [f"x{i}" for i in range(len(graph.inputs))] + \
        [f"{prefix}{i}" for i in range(len(seed_types))]
    return make_graph(both, [v.type for v in graph.inputs] + seed_types, names, name=name)
