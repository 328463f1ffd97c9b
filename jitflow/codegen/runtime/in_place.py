"""Which outputs native code may write over one of its own inputs.

Compiled code is built on the promise that its outputs and inputs are apart (the alias
scopes tell LLVM so: lowering/aliasing.py). An output may still take the very buffer of
input `i` (the same bytes, the same type) when no write can reach a byte before its last
read:

- the output is made by one elementwise node (fused or not, no reduction inside), which
  reads input `i` itself, once, at the index it writes (same shape: no broadcast), and
  whose value written there depends on the value read: so within each element the load
  comes before the store, however LLVM orders the rest (vector loops, threads, each
  over elements of their own);
- every other node reading the input, or a view of it, comes before that node (nodes
  run in graph order), and neither the input nor a view of it is an output (outputs
  are copied at the end).

A call whose outputs are written over its inputs cannot be undone, so this is offered
only for graphs whose code can never fail (flag an error status after it started
writing): float and bool arithmetic, reductions, matmul, views and copies; no indexing
with run-time indices, integer arithmetic (NumPy's errors for Python ints, negative
powers), LAPACK, callbacks or control flow.
"""
from ...ir.graph import Lit, Var
from ...ir.passes.fuse import REDUCTIONS
from ...ir.primitive import VIEW_OPS

# Structural primitives whose code flags no error.
_NEVER_FAILING = REDUCTIONS | VIEW_OPS | {"argmax", "argmin", "matmul", "concatenate",
                                         "pad", "iota", "cumsum", "cumprod"}


def in_place_outputs(graph):
    """{output index: input indices}: the outputs that may be written over one of
    those inputs' buffers (the graph: fused, as NativeGraph lowers it)."""
    if not _never_fails(graph.nodes):
        return {}
    producers = {out: (index, node) for index, node in enumerate(graph.nodes)
                 for out in node.outputs}
    pairs = {}
    for position, output in enumerate(graph.outputs):
        if not isinstance(output, Var) or output not in producers or \
                list(graph.outputs).count(output) != 1:
            continue
        index, node = producers[output]
        over = frozenset(list(graph.inputs).index(value)
                         for slot, value in enumerate(node.inputs)
                         if isinstance(value, Var) and value in graph.inputs and
                         value.type == output.type and
                         _writable_over(graph, index, node, slot, output))
        if over:
            pairs[position] = over
    return pairs


def _writable_over(graph, index, node, slot, output):
    source = node.inputs[slot]
    if not _elementwise(node) or list(node.inputs).count(source) != 1 or \
            not _depends(node, slot, node.outputs.index(output)):
        return False
    aliases = _views_of(graph, source)
    if any(value in aliases for value in graph.outputs):
        return False
    return all(i < index or (i == index and n is node and
                             sum(v in aliases for v in n.inputs) == 1)
               for i, n in enumerate(graph.nodes)
               if n.op not in VIEW_OPS and any(v in aliases for v in n.inputs))


def _views_of(graph, source):
    """`source` and every value viewing its memory (without code of its own)."""
    aliases = {source}
    for node in graph.nodes:
        if node.op in VIEW_OPS and node.inputs[0] in aliases:
            aliases.add(node.outputs[0])
    return aliases


def _elementwise(node):
    if node.op == "fused":
        return all(member.prim.elementwise for member in node.subgraphs[0].nodes)
    return node.prim.elementwise


def _depends(node, slot, position):
    """Whether output `position` of `node` is computed from its input `slot`."""
    if node.op != "fused":
        return True
    body = node.subgraphs[0]
    reached = {body.inputs[slot]}
    for member in body.nodes:
        if any(v in reached for v in member.inputs):
            reached.update(member.outputs)
    return body.outputs[position] in reached


def _never_fails(nodes):
    for node in nodes:
        if node.op == "fused":
            if not _never_fails(node.subgraphs[0].nodes):
                return False
        elif node.prim.elementwise:
            if not _float_or_bool(node):
                return False
        elif node.op not in _NEVER_FAILING:
            return False
    return True


def _float_or_bool(node):
    """Arithmetic and comparisons of floats and bools: integer loops flag NumPy's
    errors. A Python int operand is no integer loop where it meets a float array or
    makes a float result (it is converted to a float when traced): ReLU's mask x > 0."""
    result = {v.type.dtype.kind for v in node.outputs}
    arrays = {v.type.dtype.kind for v in node.inputs if not isinstance(v, Lit)}
    becomes_float = result == {"f"} or "f" in arrays
    return result <= set("fb") and all(
        v.type.dtype.kind in "fb" or (isinstance(v, Lit) and becomes_float)
        for v in node.inputs)
