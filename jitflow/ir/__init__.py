"""The IR: types, graphs of primitives, the printer, the interpreter and the passes.

It is the bottom layer: everything else builds or reads these graphs, and nothing here
imports from outside it. The printer reads graphs without the graph knowing of it; this
package gives Graph its text form from the printer once, at import.
"""
from .graph import Graph
from .printer import format_graph

Graph.__str__ = format_graph
