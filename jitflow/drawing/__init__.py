"""Pictures of graphs: Graphviz DOT text and SVG.

    jitflow.to_dot(step, x, y)        # a function at example arguments: the fused graph
    jitflow.to_dot(graph)             # an IR Graph, or a jitflow.v1 Graph
    jitflow.drawing.to_svg(step, x, y, path="step.svg")   # needs Graphviz's `dot`

Name scopes (jitflow.v1's), fused regions and control-flow bodies are clusters. The
same Picture (picture.py) gives TensorBoard its graph (jitflow.summary).
"""
from .dot import dot_text
from .picture import OutputType, Picture, PictureNode
from .pictures import picture, picture_of_function, picture_of_ir
from .svg import GraphvizNotFoundError, render_svg


def to_dot(graph_or_function, *example_args, **example_kwargs):
    """Graphviz DOT text of an IR Graph, a jitflow.v1 Graph, or a function at example
    arguments (its graph as compiled: optimized, with fused regions as clusters)."""
    return dot_text(picture(graph_or_function, *example_args, **example_kwargs))


def to_svg(graph_or_function, *example_args, path=None, **example_kwargs):
    """SVG text of to_dot's drawing (written to `path` too when given); raises
    GraphvizNotFoundError when Graphviz's `dot` is not installed."""
    svg = render_svg(to_dot(graph_or_function, *example_args, **example_kwargs))
    if path is not None:
        with open(path, "w", encoding="utf-8") as file:
            file.write(svg)
    return svg


__all__ = ["to_dot", "to_svg", "picture", "picture_of_function", "picture_of_ir",
           "Picture", "PictureNode", "OutputType", "GraphvizNotFoundError"]
