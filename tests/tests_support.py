"""A primitive that owns a subgraph, for testing what the IR does with sub-graphs before
control flow uses them: call(x) evaluates its one subgraph on its inputs."""
from jitflow.ir.interpret import eval_graph
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
