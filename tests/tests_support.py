"""Shared test helpers: golden IR text, tracing a function to a graph, and a primitive
that owns a subgraph (call(x) evaluates its one subgraph on its inputs), for testing what
the IR does with sub-graphs before control flow uses them."""
import textwrap

import jitflow
from jitflow.ir.interpret import eval_graph


def golden(text):
    """Expected IR text written indented inside a test."""
    return textwrap.dedent(text).strip()


def trace(fn, *args):
    """The unoptimized graph of fn traced on args."""
    return jitflow.function(fn).trace(*args)
from jitflow.ir.primitive import Primitive


def _call_type(*in_types, subgraphs):
    (body,) = subgraphs
    assert tuple(in_types) == body.in_types
    return body.out_types


def _call_impl(*args, subgraphs):
    (body,) = subgraphs
    return eval_graph(body, args)


call_p = Primitive("call", _call_type, _call_impl, multiple_results=True,
                   has_subgraphs=True)
