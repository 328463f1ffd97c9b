"""Branches that stay in the graph: switch and cond.

    jitflow.switch(index, [branch_0, branch_1, ...], *operands)
    jitflow.cond(pred, true_fn, false_fn, *operands)

Eagerly (no trace active) the chosen branch is simply called, so it can be stepped
through. Traced, each branch is traced once, on the operands' types, into a graph of its
own; the graphs become the subgraphs of one `switch` node, whose index picks the branch
that runs (clamped into range, as JAX does). Operands and results are pytrees; every
branch must return the same structure, shapes and dtypes.

Values a branch closes over become inputs of the node, after the operands: a branch's
graph takes the operands, then the captured values of every branch in turn (the other
branches' as inputs it does not use), so all branches take the same inputs.
"""
import numpy as np

from .. import pytree
from ..autodiff.transform import differentiable, jvp_graph, vjp_graph, zeros
from ..errors import at_user_line
from ..ir.graph import types_text, without_effects
from ..ir.interpret import eval_graph
from ..ir.primitive import Primitive
from ..ir.types import ShapeError
from ..trace import bind, constant_type, innermost_builder
from .subgraphs import Argument, described, sharing_captures, trace


# --- the primitive ------------------------------------------------------------------------

def _switch_type(index, *operands, subgraphs):
    if index.shape != () or index.dtype.kind not in "bi":
        raise TypeError(f"the index must be an integer or boolean scalar, got "
                        f"{index}")
    for k, branch in enumerate(subgraphs):
        if tuple(t.strong() for t in branch.in_types) != tuple(t.strong() for t in operands):
            raise ShapeError(f"branch {k} takes {types_text(branch.in_types)}, the "
                             f"operands are {types_text(operands)}")
        if branch.out_types != subgraphs[0].out_types:
            raise ShapeError(f"branch {k} returns {types_text(branch.out_types)}, "
                             f"branch 0 {types_text(subgraphs[0].out_types)}")
    return subgraphs[0].out_types


def _switch_impl(index, *operands, subgraphs):
    return eval_graph(subgraphs[_clamped(index, len(subgraphs))], list(operands))


def _switch_jvp(tangents, index, *operands, out, subgraphs):
    """The chosen branch's jvp: every branch differentiated forward, the same index."""
    seeds = [t if t is not None else zeros(constant_type(x).strong())
             for t, x in zip(tangents[1:], operands) if differentiable(constant_type(x))]
    results = bind(switch_p, index, *operands, *seeds,
                   subgraphs=tuple(jvp_graph(without_effects(g)) for g in subgraphs))
    derivatives = iter(results[len(out):])
    return [next(derivatives) if differentiable(v.type) else None
            for v in subgraphs[0].outputs]


def _switch_vjp(cts, index, *operands, out, subgraphs):
    """The chosen branch's vjp: every branch differentiated backward (recomputing its
    forward pass), the same index. The index gets no cotangent."""
    seeds = [ct if ct is not None else zeros(v.type.strong())
             for ct, v in zip(cts, subgraphs[0].outputs) if differentiable(v.type)]
    results = bind(switch_p, index, *operands, *seeds,
                   subgraphs=tuple(vjp_graph(without_effects(g)) for g in subgraphs))
    derivatives = iter(results[len(out):])
    return [None] + [next(derivatives) if differentiable(constant_type(x)) else None
                     for x in operands]


# Not in the registry of ops (test_ops draws arrays for those): its operands are graphs.
switch_p = Primitive(
    "switch", _switch_type, _switch_impl, multiple_results=True, has_subgraphs=True,
    vjp=_switch_vjp, jvp=_switch_jvp)


def _clamped(index, count):
    return min(max(int(np.asarray(index)), 0), count - 1)



# --- the functions ------------------------------------------------------------------------

def switch(index, branches, *operands):
    """branches[index](*operands), with index clamped into range."""
    branches = list(branches)
    if not branches or not all(callable(b) for b in branches):
        raise TypeError(at_user_line("switch: branches must be a non-empty sequence of "
                                     "functions"))
    if innermost_builder() is None:
        return branches[_clamped(_eager_index(index), len(branches))](*operands)
    leaves, _, structure = pytree.flatten(operands)
    operand_types = Argument(structure, [constant_type(leaf) for leaf in leaves], "operands")
    traced = [trace(lambda tree, b=b: b(*tree), f"branch {k}", [operand_types])
              for k, b in enumerate(branches)]
    _check_results(traced)
    graphs, captured = sharing_captures(traced)
    outs = bind(switch_p, index, *leaves, *captured, subgraphs=graphs)  # checks the index
    return pytree.unflatten(traced[0].out_structure, list(outs))


def cond(pred, true_fn, false_fn, *operands):
    """true_fn(*operands) if pred else false_fn(*operands); pred a boolean scalar."""
    if innermost_builder() is None:
        return (true_fn if _eager_index(pred) else false_fn)(*operands)
    return switch(pred, [false_fn, true_fn], *operands)


def _eager_index(index):
    value = np.asarray(index)
    if value.ndim != 0 or value.dtype.kind not in "bi":
        raise TypeError(at_user_line(f"switch/cond: the index must be an integer or "
                                     f"boolean scalar, got {value.dtype}{list(value.shape)}"))
    return int(value)


def _check_results(traced):
    first = traced[0]
    for k, branch in enumerate(traced[1:], start=1):
        if branch.out_structure != first.out_structure:
            raise TypeError(at_user_line(
                f"switch/cond: branch {k} returns {_described(branch)}, but branch 0 "
                f"returns {_described(first)}"))
        for path, mine, theirs in zip(first.out_paths, branch.graph.out_types,
                                      first.graph.out_types):
            if mine != theirs:
                raise TypeError(at_user_line(
                    f"switch/cond: result{path} is {mine} in branch {k} but {theirs} in "
                    f"branch 0; every branch must return the same shapes and dtypes"))


def _described(branch):
    return described([f"result{p}" for p in branch.out_paths])


__all__ = ["switch", "cond"]
