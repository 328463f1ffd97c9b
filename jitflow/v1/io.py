"""jitflow.v1.io: GraphDefs to files and back, as tf.io.write_graph and its reader."""
import os

from .graph import Graph
from .graph_def import GraphDef, read_graph_def, write_graph_def


def write_graph(graph_or_graph_def, logdir, name, as_text=False):
    """Write a Graph's (or a GraphDef's) operations to `logdir`/`name` in jitflow's
    format (a zip archive, or JSON text with as_text=True); returns the path."""
    graph_def = graph_or_graph_def.as_graph_def() \
        if isinstance(graph_or_graph_def, Graph) else graph_or_graph_def
    if not isinstance(graph_def, GraphDef):
        raise TypeError(f"write_graph: {graph_or_graph_def!r} is neither a Graph nor a "
                        f"GraphDef")
    os.makedirs(logdir, exist_ok=True)
    return write_graph_def(graph_def, os.path.join(logdir, name), as_text)


__all__ = ["write_graph", "read_graph_def"]
