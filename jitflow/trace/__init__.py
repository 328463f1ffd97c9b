"""Tracing: Tracer values, the graph builder, and bind().

bind(prim, *arrays, **params) is the single entry of every operation. Outside a trace it
runs the primitive's NumPy impl (eager mode). Inside one it appends a Node to the active
GraphBuilder and returns Tracers standing for the node's outputs.

One module per piece: the Tracer itself (tracer.py), what it knows of its memory
(aliases.py), the builders and the stack of active ones (builders.py), stateful values
(stateful.py), and bind with what it reads its arguments as (binding.py). The layers built
on this one give the Tracer its operators and methods (jitflow/array_methods.py).
"""
# The layers above import these from jitflow.trace itself.
from ..ir.types import TensorType
from .binding import bind, constant_type, standing_in  # noqa: F401
from .builders import (MANY_RUNS_CONTEXTS, GraphBuilder, RecordingBuilder,  # noqa: F401
                       Settled, TapeBuilder, builders_within, fixed_while_traced,
                       innermost_builder, is_tracing, make_graph, standing_for_many_runs,
                       tape_recording)
from .stateful import Stateful, read_stateful  # noqa: F401
from .tracer import NO_VALUE, Tracer  # noqa: F401

__all__ = ["Tracer", "GraphBuilder", "bind", "make_graph", "is_tracing", "TensorType"]
