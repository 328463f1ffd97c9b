"""Saving and loading without the source: one versioned, documented format for jitflow's
IR graphs (docs/FORMAT.md), with no pickle; loading runs no code from the file.

    jitflow.save(fn, "model.jitflow", x)     # fn traced at x's signature
    f = jitflow.load("model.jitflow")        # anywhere: compiled, differentiable

write_graph / read_graph store a bare IR Graph; jitflow.v1's GraphDefs and checkpoints
are files of the same format.
"""
from . import archive
from .archive import VERSION
from .errors import FormatError, NotSerializableError
from .functions import LoadedFunction, load, save
from .graphs import graph_from_data, graph_to_data

GRAPH = "graph"


def write_graph(graph, path, as_text=False):
    """Write the IR `graph` to `path` (a zip archive, or JSON text); returns `path`."""
    document, arrays = graph_to_data(graph)
    archive.write(path, GRAPH, {"graph": document}, arrays, as_text=as_text)
    return path


def read_graph(path):
    """The IR Graph written at `path`, verified."""
    document, arrays = archive.read(path, GRAPH)
    return graph_from_data(document.get("graph"), arrays)


__all__ = ["save", "load", "LoadedFunction", "write_graph", "read_graph", "FormatError",
           "NotSerializableError", "VERSION"]
