"""jitflow's IR graphs as Pictures.

Each node is drawn as its primitive, named after it in its scope ("mul", "mul_1").
A fused node (codegen's fusion, ir/passes/fuse.py) is drawn as what it is made of: its
body's nodes inside a scope of its own, marked as a fused region, reading the values
the fused node reads. A node owning other subgraphs (the bodies of while, switch,
scan) is drawn as one node, and each subgraph as a scope beside it, named after the
node and numbered as the IR printer numbers them ("while/subgraph1"), holding its
arguments, its nodes and what it returns. Constants are Const nodes.
"""
import re

from ..ir.graph import Lit
from .picture import OutputType, PictureNode, reference

FUSED_REGION = "fused region"
SUBGRAPH = "subgraph"
SMALL_CONSTANT = 8  # values written in a Const node's attributes up to this size


def add_graph(picture, graph, scope="", inputs=None, input_names=None):
    """Add `graph`'s nodes under `scope`; its inputs read the values `inputs` names (one
    reference per graph input), or are drawn as Input nodes named by `input_names`.
    Returns the references of its outputs."""
    values = {}
    if inputs is None:
        names = input_names or [f"input{i}" for i in range(len(graph.inputs))]
        inputs = [input_node(picture, scope, name, output_type(var.type), "Input")
                  for name, var in zip(names, graph.inputs, strict=True)]
    values.update(zip(graph.inputs, inputs, strict=True))
    for node in graph.nodes:
        operands = [_operand(picture, scope, value, values) for value in node.inputs]
        if node.op == "fused":
            outputs = _fused(picture, scope, node, operands)
        else:
            outputs = _node(picture, scope, node, operands)
        values.update(zip(node.outputs, outputs, strict=True))
    return [_operand(picture, scope, value, values) for value in graph.outputs]


def add_outputs(picture, references, scope="", names=None):
    """An Output node reading each reference: where a drawn graph's results go."""
    names = names or [f"output{i}" for i in range(len(references))]
    for name, ref in zip(names, references, strict=True):
        picture.add(PictureNode(picture.unique_name(scope, clean_name(name)), "Output",
                                [ref], [picture.output_type(ref)]))


def clean_name(text):
    """A name a scope path can hold: letters, digits and _ . - only."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", str(text)).strip("_") or "value"


def input_node(picture, scope, name, value_type, op):
    """A node giving a graph's input (op Input, Arg, Variable...) of OutputType
    `value_type`; returns its name."""
    node = PictureNode(picture.unique_name(scope, clean_name(name)), op, [], [value_type])
    return picture.add(node).name


def _operand(picture, scope, value, values):
    if not isinstance(value, Lit):
        return values[value]
    small = value.value.size <= SMALL_CONSTANT
    attrs = {"value": str(value.value.tolist())} if small else {}
    node = PictureNode(picture.unique_name(scope, "Const"), "Const", [],
                       [output_type(value.type)], attrs=attrs)
    return picture.add(node).name


def _node(picture, scope, node, operands):
    name = picture.unique_name(scope, node.op)
    attrs = {key: str(value) for key, value in sorted(node.params.items())}
    types = [output_type(v.type) for v in node.outputs]
    picture.add(PictureNode(name, node.op, operands, types, attrs=attrs))
    for index, sub in enumerate(node.subgraphs):
        _subgraph(picture, f"{name}/subgraph{index}", sub)
    return [reference(name, i) for i in range(len(node.outputs))]


def _fused(picture, scope, node, operands):
    region = picture.unique_name(scope, "fused")
    picture.scope_kinds[region] = FUSED_REGION
    return add_graph(picture, node.subgraphs[0], region, inputs=operands)


def _subgraph(picture, scope, graph):
    """A body that its node runs: Arg nodes in, a Return node out."""
    picture.scope_kinds[scope] = SUBGRAPH
    args = [input_node(picture, scope, f"arg{i}", output_type(var.type), "Arg")
            for i, var in enumerate(graph.inputs)]
    results = add_graph(picture, graph, scope, inputs=args)
    picture.add(PictureNode(picture.unique_name(scope, "Return"), "Return", results,
                            [picture.output_type(r) for r in results]))


def output_type(tensor_type):
    """The OutputType of an IR TensorType."""
    return OutputType(tensor_type.dtype, tuple(tensor_type.shape))
