"""Batching as a transform of traced graphs: vmap maps a function over an axis of its
arguments by running each primitive once on the whole batch."""
from .vmap import batch_graph, vmap

__all__ = ["vmap", "batch_graph"]
