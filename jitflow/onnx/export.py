"""jitflow.onnx.export: a function, traced at example arguments, as an ONNX model.

The graph is the one jitflow.function compiles (traced, then optimized); each of its
primitives becomes one or a few ONNX nodes (export_elementwise, export_composed,
export_arrays, export_control); Variables and closed-over arrays become initializers.
The model is checked with onnx.checker (and its shapes inferred) before it is written.
"""
import numpy as np
import onnx
from onnx import helper

from .._version import __version__
from .dtypes import onnx_type
from .errors import unsupported
from .export_arrays import ARRAY_RULES
from .export_composed import COMPOSED_RULES
from .export_control import CONTROL_RULES
from .export_elementwise import ELEMENTWISE_RULES
from .tracing import trace_for_export
from .writer import GraphWriter, ModelParts

OPSET = 21  # ONNX Runtime 1.18 and later run it
IR_VERSION = 10  # the IR version of opset 21
RULES = {**ELEMENTWISE_RULES, **COMPOSED_RULES, **ARRAY_RULES, **CONTROL_RULES}


def export(fn, path, *example_args):
    """Write fn (a jitflow.function or a plain function of arrays) traced at
    `example_args` as an ONNX model at `path`; returns the ModelProto. The model's
    inputs are the array arguments (named after the parameters), its outputs the
    leaves of fn's result (output_0, output_1, ...)."""
    model = to_model(fn, *example_args)
    onnx.save(model, path)
    return model


def to_model(fn, *example_args):
    """The checked ModelProto export writes."""
    traced = trace_for_export(fn, example_args)
    unsupported("jitflow.onnx.export: no ONNX form for the primitives",
                primitives_in(traced.graph), RULES)
    name = getattr(fn, "__name__", "jitflow_function")
    model = helper.make_model(_graph_proto(traced, name),
                              opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="jitflow", producer_version=__version__,
                              ir_version=IR_VERSION)
    onnx.checker.check_model(model, full_check=True)
    return model


def primitives_in(graph):
    """The names of the primitives a graph and its subgraphs apply."""
    names = set()
    for node in graph.nodes:
        names.add(node.op)
        for sub in node.subgraphs:
            names |= primitives_in(sub)
    return names


def _graph_proto(traced, name):
    graph, parts = traced.graph, ModelParts()
    writer = GraphWriter(parts, RULES)
    arguments = graph.inputs[:len(traced.input_names)]
    for var, hint in zip(arguments, traced.input_names):
        writer.env[var] = parts.fresh(hint)
    for var, (hint, array) in zip(graph.inputs[len(arguments):], traced.constants,
                                  strict=True):
        writer.env[var] = parts.constant(np.asarray(array, var.type.dtype), hint)
    writer.write(graph.nodes)
    outputs = []
    for i, value in enumerate(graph.outputs):
        outputs.append(parts.fresh(f"output_{i}"))
        writer.nodes.append(helper.make_node("Identity", [writer.read(value)],
                                             [outputs[-1]]))
    return helper.make_graph(
        writer.nodes, name,
        [_value_info(writer.env[v], v.type, note)
         for v, note in zip(arguments, traced.input_notes)],
        [_value_info(n, v.type, note)
         for n, v, note in zip(outputs, graph.outputs, traced.output_notes)],
        initializer=parts.initializers)


def _value_info(name, type, note=""):
    return helper.make_tensor_value_info(name, onnx_type(type.dtype), list(type.shape),
                                         doc_string=note)
