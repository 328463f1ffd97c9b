"""picture(obj, *example_args): the Picture of whatever can be drawn.

- an IR Graph, as it is;
- a jitflow.function (or a plain Python function, made one) at example arguments: its
  graph as native code runs it, traced, optimized and fused (the passes and the fusion
  the compiler runs), its inputs named by the arguments and Variables they are;
- a graph of the graph API (jitflow.v1.Graph), with its name scopes.
"""
from ..function import Function, function
from ..ir.graph import Graph
from ..ir.passes import optimize
from ..ir.passes.fuse import fuse
from .from_graph_api import is_graph_api_graph, picture_of_operations
from .from_ir import add_graph, add_outputs
from .picture import Picture


def picture(obj, *example_args, **example_kwargs):
    if isinstance(obj, Picture):
        return obj
    if isinstance(obj, Graph):
        return picture_of_ir(obj)
    if is_graph_api_graph(obj):
        _no_arguments(obj, example_args, example_kwargs)
        return picture_of_operations(obj)
    if callable(obj):
        return picture_of_function(obj, *example_args, **example_kwargs)
    raise TypeError(f"cannot draw a {type(obj).__name__}: give an IR Graph, a function "
                    f"(with example arguments) or a jitflow.v1 Graph")


def picture_of_ir(graph, name="graph", input_names=None):
    drawn = Picture(name)
    add_outputs(drawn, add_graph(drawn, graph, input_names=input_names))
    return drawn


def picture_of_function(fn, *args, **kwargs):
    """The graph native code runs for these arguments (traced, optimized, fused)."""
    fn = fn if isinstance(fn, Function) else function(fn)
    graph, names = fn.trace_with_input_names(*args, **kwargs)
    return picture_of_ir(fuse(optimize(graph)), fn.__qualname__, names)


def _no_arguments(graph, args, kwargs):
    if args or kwargs:
        raise TypeError(f"a graph API Graph is drawn as it is: example arguments are for "
                        f"functions, got {len(args) + len(kwargs)} with {graph!r}")
