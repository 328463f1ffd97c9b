"""Control flow as ONNX's: switch (and cond) as If, while and scan as Loop.

The bodies of If and Loop are graphs that read the values around them by name, so a
branch or a loop body is written by an inner GraphWriter whose inputs are bound to the
ONNX names of the node's operands (constants included).
"""
import numpy as np
from onnx import TensorProto, helper

from ..ir.types import TensorType, bool_
from .dtypes import onnx_type


def _value_info(name, type):
    return helper.make_tensor_value_info(name, onnx_type(type.dtype), list(type.shape))


def _written(w, graph, names):
    """`graph`'s nodes written by an inner writer, its inputs bound to `names`: the
    writer and the names of the graph's outputs."""
    inner = w.inner()
    for var, name in zip(graph.inputs, names, strict=True):
        inner.env[var] = name
    inner.write(graph.nodes)
    return inner, [inner.read(v) for v in graph.outputs]


def _inline(w, graph, names):
    """`graph` written where it runs unconditionally: its outputs' names."""
    inner, outputs = _written(w, graph, names)
    w.nodes.extend(inner.nodes)
    return outputs


def _as_graph(inner, outputs, types, name, inputs=()):
    """An ONNX graph of the inner writer's nodes, giving `outputs` (each through an
    Identity: a body's outputs are its own values)."""
    finals = [inner.parts.fresh(f"{name}_out") for _ in outputs]
    nodes = inner.nodes + [helper.make_node("Identity", [source], [final])
                           for source, final in zip(outputs, finals)]
    return helper.make_graph(nodes, name, list(inputs),
                             [_value_info(f, t) for f, t in zip(finals, types)])


def _listed(names):
    return names if isinstance(names, list) else [names]


def switch(w, node):
    """branches[index], the index clamped into range: a boolean one is an If; an
    integer one nested Ifs, `index <= k` choosing branch k."""
    index, operands = node.inputs[0], [w.read(v) for v in node.inputs[1:]]
    branches, types = node.subgraphs, [v.type for v in node.outputs]
    if index.type.dtype == bool_ and len(branches) == 2:
        return _listed(w.add(
            "If", [w.read(index)], len(types),
            then_branch=_as_graph(*_written(w, branches[1], operands), types, "then"),
            else_branch=_as_graph(*_written(w, branches[0], operands), types, "else")))
    return _choose(w, w.operand(index, np.int64), branches, operands, types, 0)


def _choose(w, index, branches, operands, types, k):
    """The outputs of branch k where index <= k, of a later one elsewhere."""
    if k == len(branches) - 1:
        return _inline(w, branches[k], operands)
    later = w.inner()
    rest = _choose(later, index, branches, operands, types, k + 1)
    test = w.add("LessOrEqual", [index, w.constant(np.int64(k))])
    return _listed(w.add(
        "If", [test], len(types),
        then_branch=_as_graph(*_written(w, branches[k], operands), types, f"branch_{k}"),
        else_branch=_as_graph(later, rest, types, f"after_branch_{k}")))


def while_(w, node):
    """carry = init; while cond(carry, consts): carry = body(carry, consts), as a Loop
    without a trip count whose body computes the next carry, then the condition."""
    cond, body = node.subgraphs
    count = len(body.outputs)
    carry = [w.read(v) for v in node.inputs[:count]]
    consts = [w.read(v) for v in node.inputs[count:]]
    (first,) = _inline(w, cond, carry + consts)
    iteration, cond_in = w.parts.fresh("iteration"), w.parts.fresh("cond_in")
    carried = [w.parts.fresh("carry") for _ in range(count)]
    inner, updated = _written(w, body, carried + consts)
    (going_on,) = _inline(inner, cond, updated + consts)
    inputs = [helper.make_tensor_value_info(iteration, TensorProto.INT64, []),
              helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])] + \
        [_value_info(n, v.type) for n, v in zip(carried, body.inputs)]
    loop_body = _as_graph(inner, [going_on] + updated,
                          [TensorType((), bool_)] + list(body.out_types), "while_body",
                          inputs)
    return _listed(w.add("Loop", ["", first, *carry], count, body=loop_body))


def scan(w, node):
    """A Loop of `length` iterations: each takes row i of the xs (i counted from the
    end when reverse), and the ys are its scan outputs (turned around when reverse)."""
    (body,), params = node.subgraphs, node.params
    carries, xs, length = params["carries"], params["xs"], params["length"]
    names = [w.read(v) for v in node.inputs]
    iteration, cond_in = w.parts.fresh("iteration"), w.parts.fresh("cond_in")
    carried = [w.parts.fresh("carry") for _ in range(carries)]
    inner = w.inner()
    row = iteration if not params["reverse"] else \
        inner.add("Sub", [inner.constant(np.int64(length - 1)), iteration])
    rows = [inner.add("Gather", [x, row], axis=0) for x in names[carries:carries + xs]]
    outputs = _inline(inner, body, carried + rows + names[carries + xs:])
    inputs = [helper.make_tensor_value_info(iteration, TensorProto.INT64, []),
              helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])] + \
        [_value_info(n, v.type) for n, v in zip(carried, body.inputs)]
    loop_body = _as_graph(inner, [cond_in] + outputs,
                          [TensorType((), bool_)] + list(body.out_types), "scan_body", inputs)
    results = _listed(w.add("Loop", [w.constant(np.int64(length)), "", *names[:carries]],
                            len(body.outputs), body=loop_body))
    if params["reverse"]:
        results[carries:] = [_reversed(w, y) for y in results[carries:]]
    return results


def _reversed(w, name):
    return w.add("Slice", [name, w.ints([-1]), w.ints([np.iinfo(np.int64).min]),
                           w.ints([0]), w.ints([-1])])


CONTROL_RULES = {"switch": switch, "while": while_, "scan": scan}
