"""A function traced at some arguments, ready to be differentiated.

Eagerly (no trace active) the function runs on Tracers that also carry values, so it can
print them, branch on them and call NumPy's functions on them (np.asarray alone refuses
one: a plain array would lose its derivative); its graph is recorded on the way and its
values kept for the backward pass. Inside a trace (jitflow.function, or an outer
derivative) the function is traced into a graph of its own, then its nodes are replayed
into the enclosing trace, so the derivative lands in the enclosing graph and is
optimized and compiled with it.
"""
import numpy as np

from .. import pytree
from ..errors import at_user_line
from ..ir.types import TensorType, type_of_value
from ..trace import (GraphBuilder, RecordingBuilder, Tracer, innermost_builder,
                     is_tracing, read_stateful, tape_recording)
from ..trace.aliases import mark_readonly
from .transform import backward_pass, read, run_nodes, tangent_pass, zeros


def leaf_type(leaf, what):
    if isinstance(leaf, Tracer):
        return leaf.type
    try:
        return type_of_value(leaf)
    except (TypeError, ValueError):
        raise TypeError(at_user_line(
            f"{what} is a {type(leaf).__name__}, not an array or a Python number")) from None


class Linearized:
    """`fn(*args)` traced: `graph` maps the leaves of `args` (then any captured values)
    to the leaves of its result, and `env` holds every value of the forward pass, in the
    calling context (NumPy values eagerly, Tracers of the enclosing trace otherwise).

    With has_aux, fn returns (output, aux): only `output` is differentiated.
    """

    def __init__(self, fn, args, *, name, has_aux=False):
        self.name = name
        leaves, paths, self.arg_structure = pytree.flatten(args)
        leaves = [read_stateful(leaf) for leaf in leaves]  # a Variable: its value
        self.arg_types = [leaf_type(leaf, f"{name}(): argument {path[1:-1]}")
                          for leaf, path in zip(leaves, paths)]
        self.arg_paths = paths
        # Eagerly the function runs on values as it is recorded, unless a GradientTape
        # records: then it is traced and replayed, so the tape records its derivative.
        records = (innermost_builder() is None and not tape_recording()) or \
            (innermost_builder() is not None and innermost_builder().records_values)
        builder = (RecordingBuilder if records else GraphBuilder)(name)
        builder.runs_once = True  # its nodes are replayed once into the enclosing trace
        with builder:
            tracers = [builder.new_input(t, p, leaf) if records else builder.new_input(t, p)
                       for t, p, leaf in zip(self.arg_types, paths, leaves)]
            for tracer, path in zip(tracers, paths):
                mark_readonly(tracer, f"argument {path[1:-1]} of {name}, whose writes "
                                      f"would not reach the caller's array; write into "
                                      f"a copy (x = x.copy())")
            result = fn(*pytree.unflatten(self.arg_structure, tracers))
            out, aux = self._split_aux(result, has_aux)
            out_leaves, self.out_paths, self.out_structure = pytree.flatten(out)
            aux_leaves, _, self.aux_structure = pytree.flatten(aux)
            self.graph = builder.build(out_leaves + aux_leaves)
        self.out_count = len(out_leaves)
        if records and not is_tracing():
            self.env = builder.values  # computed while recording
        else:
            inputs = leaves + builder.outer_values()
            self.env = run_nodes(self.graph, dict(zip(self.graph.inputs, inputs)))

    def _split_aux(self, result, has_aux):
        if not has_aux:
            return result, None
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(at_user_line(
                f"{self.name}: with has_aux=True the function must return a pair "
                f"(output, aux), got {type(result).__name__}"))
        return result[0], result[1]

    # --- results ---------------------------------------------------------------------
    @property
    def out_types(self):
        return [v.type for v in self.graph.outputs[:self.out_count]]

    def outputs(self):
        values = [read(self.env, v) for v in self.graph.outputs[:self.out_count]]
        return pytree.unflatten(self.out_structure, [result(v) for v in values])

    def aux(self):
        values = [read(self.env, v) for v in self.graph.outputs[self.out_count:]]
        return pytree.unflatten(self.aux_structure, [result(v) for v in values])

    # --- derivatives -----------------------------------------------------------------
    def pullback(self, out_cts):
        """Cotangents of the argument leaves (None for zero) from those of the outputs."""
        out_cts = list(out_cts) + [None] * (len(self.graph.outputs) - self.out_count)
        in_cts = backward_pass(self.graph, self.env, out_cts,
                               self.graph.inputs[:len(self.arg_types)])
        return in_cts[:len(self.arg_types)]

    def pushforward(self, arg_tangents):
        """Tangents of the output leaves (None for zero) from those of the arguments."""
        tangents = list(arg_tangents) + [None] * (len(self.graph.inputs) -
                                                  len(arg_tangents))
        return tangent_pass(self.graph, self.env, tangents)[:self.out_count]


def result(value):
    """A value handed back to the user: Tracers as they are; NumPy values as arrays the
    user owns (a derivative can be a read-only broadcast view)."""
    if isinstance(value, Tracer):
        return value
    array = np.asarray(value)
    return array if array.flags.writeable else array.copy()


def zeros_of(type: TensorType):
    """A zero derivative, materialized only where the user asks for it."""
    return result(zeros(type.strong()))
