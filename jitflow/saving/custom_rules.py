"""Custom derivatives in a file: the user's rule, traced to a graph when it is written,
and a stand-in for the user's function when it is read.

A custom_vjp call is stored with the graph of its rule: (the call's inputs, a cotangent
per output) -> a cotangent per input. A custom_jvp call with the graph of its rule:
(the call's inputs, a tangent per argument) -> a tangent per output. Read back, the call
node carries a SavedRule in place of the user's function: its fwd, bwd and jvp_rule
replay those graphs, so derivatives of a loaded graph use the saved rule, as the
original's used the user's code (and a derivative of that, the rule's own graph).
"""
import numpy as np

from .. import pytree
from ..autodiff.custom import _Call, _argument_count, custom_jvp_call_p, custom_vjp_call_p
from ..autodiff.transform import NoCotangent, run_nodes
from ..ir.graph import Lit
from ..ir.passes.dce import dce
from ..trace import make_graph
from .errors import NotSerializableError

CALLS = {custom_vjp_call_p.name: custom_vjp_call_p, custom_jvp_call_p.name: custom_jvp_call_p}


# --- writing: the rule as a graph ---------------------------------------------------------

def traced_rule(node):
    """(the rule's graph, what each of its results is): for a custom_vjp call, one entry
    per input, "ct" (the next output of the graph), None (no cotangent) or the message
    of the error differentiating that input gives; for a custom_jvp call, the count of
    arguments whose tangents the graph takes."""
    body, call = node.subgraphs[0], node.params["call"]
    primal_types = list(body.in_types)
    if node.prim is custom_vjp_call_p:
        seed_types = [t.strong() for t in body.out_types]
    else:
        seed_types = [t.strong() for t in body.in_types[:_argument_count(call)]]
    kinds = {}

    def rule(*values):
        primals, seeds = values[:len(primal_types)], list(values[len(primal_types):])
        results = node.prim.rule("vjp" if node.prim is custom_vjp_call_p else "jvp")(
            seeds, *primals, out=None, subgraphs=node.subgraphs, call=call)
        if node.prim is custom_jvp_call_p:
            kinds["results"] = len(seeds)
            return list(results)
        kinds["results"] = [_kind(r) for r in results]
        return [r for r in results if _kind(r) == "ct"]
    try:
        graph = make_graph(rule, primal_types + seed_types,
                           [f"input {i}" for i in range(len(primal_types + seed_types))],
                           name=f"rule of {call}")
    except Exception as error:  # the user's rule, run where it was not traced before
        raise NotSerializableError(f"the derivative rule of {node.op} '{call}' could not be "
                                   f"traced to be saved: {type(error).__name__}: "
                                   f"{error}") from error
    if len(graph.inputs) != len(primal_types + seed_types):
        raise NotSerializableError(f"the derivative rule of {node.op} '{call}' reads traced "
                                   f"values from outside the function; it cannot be saved")
    return dce(graph), kinds["results"]


def _kind(result):
    if result is None:
        return None
    if isinstance(result, NoCotangent):
        return {"error": result.message}
    return "ct"


# --- reading: a stand-in for the user's function -------------------------------------------

class SavedRule:
    """What a read custom-derivative call carries for the user's function: a name, and
    fwd and bwd (custom_vjp) or jvp_rule (custom_jvp) replaying the saved rule."""

    def __init__(self, name, rule, results):
        self.__name__ = name
        self.rule, self.results = rule, results

    def fwd(self, *arguments):
        return None, arguments  # (the outputs are not used), the inputs as residuals

    def bwd(self, residuals, cotangents):
        outputs = iter(replay(self.rule, list(residuals) + list(cotangents)))
        return tuple(next(outputs) if kind == "ct" else
                     NoCotangent(kind["error"]) if isinstance(kind, dict) else None
                     for kind in self.results)

    def jvp_rule(self, primals, tangents):
        return None, tuple(replay(self.rule, list(primals) + list(tangents[:self.results])))


def saved_call(name, body, rule, results):
    """The `call` parameter of a custom-derivative node read from a file: every input of
    the body is an argument (a captured value's derivative is the saved rule's)."""
    arguments = pytree.flatten(tuple(range(len(body.inputs))))[2]
    outputs = pytree.flatten(tuple(range(len(body.outputs))))[2]
    return _Call(SavedRule(name, rule, results), arguments, outputs, {})


def replay(graph, values):
    """`graph`'s outputs on `values`, each node bound (traced inside a trace)."""
    env = run_nodes(graph, dict(zip(graph.inputs, values)))
    return [(v.value.item() if v.type.weak else np.array(v.value)) if isinstance(v, Lit)
            else env[v] for v in graph.outputs]
