"""A stable, readable text form of a Graph; tests compare it exactly.

    graph(%0: f32[3], %1: f32[3]) {
      %2: f32[3] = mul %0, %1
      %3: f32[] = sum %2, axes=(0,), keepdims=False
      return %3
    }

Vars are numbered in order of definition, so the text depends only on structure. Small
constants print inline (`2.0:f32`), larger ones by type (`const f32[64,64]`).
"""
import numpy as np

from .graph import Lit

INLINE_CONSTANT_SIZE = 8


def format_graph(graph, name="graph"):
    names = {}
    lines = []
    _format_body(graph, names, lines, indent="", header=name)
    return "\n".join(lines)


def _format_body(graph, names, lines, indent, header):
    params = ", ".join(f"{_define(v, names)}: {v.type}" for v in graph.inputs)
    lines.append(f"{indent}{header}({params}) {{")
    for node in graph.nodes:
        outs = ", ".join(f"{_define(v, names)}: {v.type}" for v in node.outputs)
        args = [_operand(v, names) for v in node.inputs]
        args += [f"{k}={_param(v)}" for k, v in sorted(node.params.items())]
        defines = f"{outs} = " if outs else ""  # a node run for its effect defines nothing
        lines.append(f"{indent}  {defines}{node.op} {', '.join(args)}".rstrip())
        for i, sub in enumerate(node.subgraphs):
            _format_body(sub, names, lines, indent + "    ", header=f"subgraph{i}")
    outputs = ", ".join(_operand(v, names) for v in graph.outputs)
    lines.append(f"{indent}  return {outputs}".rstrip())
    lines.append(f"{indent}}}")


def _define(var, names):
    names[var] = f"%{len(names)}"
    return names[var]


def _operand(value, names):
    if isinstance(value, Lit):
        return format_constant(value)
    return names.get(value, f"%?{value.id}")


def format_constant(lit):
    if lit.value.size > INLINE_CONSTANT_SIZE:
        return f"const {lit.type}"
    text = np.array2string(lit.value, separator=", ", threshold=INLINE_CONSTANT_SIZE)
    if lit.value.ndim == 0:
        text = repr(lit.value.item())
    return f"{text}:{lit.type}"


def _param(value):
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, tuple):
        inner = ", ".join(_param(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)
