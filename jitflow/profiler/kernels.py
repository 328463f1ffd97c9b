"""What each kernel of a compiled graph is: its kind, a name to show, the bytes it
reads and writes, and the floating-point operations it does.

Its source lines are the user's lines that made its results (known when the function
was traced inside a profile: finding them costs a walk of the stack per operation).

A kernel is one node of the graph as native code runs it (after fusion): a fused
region (one loop nest), a matrix product, a control-flow node (with the bodies it
runs), or another structural primitive. Bytes moved are what it reads and writes at
least: its operands and results, once each (a fused region's intermediates never
reach memory). Its rate is in GFLOP/s for a matrix product, whose arithmetic is the
bound, and in GB/s for the rest, which memory bounds.
"""
import os
from dataclasses import dataclass

from ..ir.graph import Var
from ..ir.passes.fuse import REDUCTIONS

MATRIX_PRODUCTS = frozenset({"matmul"})
MEMBERS_SHOWN = 6


@dataclass(frozen=True)
class Kernel:
    kind: str  # "fused region", "matmul", "control flow" or "op"
    name: str
    bytes: int
    flops: int
    lines: tuple = ()  # (file, line) of the user's code that made its results
    body: str = ""  # the control-flow body it is in ("body", "cond", "branch0"...)

    def where(self):
        """'step.py:12,14' (lines in one file) or 'a.py:3, b.py:9'; '' when unknown."""
        files = {}
        for filename, line in self.lines:
            files.setdefault(os.path.basename(filename), []).append(str(line))
        return ", ".join(f"{name}:{','.join(lines)}" for name, lines in files.items())

    @property
    def compute_bound(self):
        return self.kind == "matmul"

    def rate(self, seconds):
        """'12.3 GFLOP/s' or '4.5 GB/s' at `seconds` per run ('' when unknown, or for
        a control-flow node, whose work is its bodies')."""
        if seconds <= 0 or self.kind == "control flow":
            return ""
        if self.compute_bound:
            return f"{self.flops / seconds / 1e9:.1f} GFLOP/s"
        return f"{self.bytes / seconds / 1e9:.2f} GB/s"


def describe(node, locations=None):
    """The Kernel of a node of a graph that native code runs; `locations` maps Vars to
    the user's (file, line) (Executable.locations)."""
    lines = _lines(node, locations or {})
    moved = sum(_bytes(v.type) for v in node.inputs if isinstance(v, Var)) + \
        sum(_bytes(v.type) for v in node.outputs)
    if node.op == "fused":
        members = node.subgraphs[0].nodes
        return Kernel("fused region", _fused_name(node, members), moved,
                      sum(_flops(member) for member in members), lines)
    if node.op in MATRIX_PRODUCTS:
        return Kernel("matmul", f"{node.op} {_shapes(node)}", moved, _flops(node), lines)
    kind = "control flow" if node.subgraphs else "op"
    return Kernel(kind, f"{node.op} {_shapes(node)}", moved, _flops(node), lines)


def _lines(node, locations):
    """The distinct known lines of the node's results, in order (a fused region's
    results are the values it hands on: its members' own Vars are renamed)."""
    found = []
    for var in node.outputs:
        where = locations.get(var)
        if where is not None and where not in found:
            found.append(where)
    return tuple(sorted(found))


def _fused_name(node, members):
    ops = [member.op for member in members]
    shown = ", ".join(ops[:MEMBERS_SHOWN]) + (f", ... ({len(ops)} ops)"
                                               if len(ops) > MEMBERS_SHOWN else "")
    return f"fused({shown}) {node.outputs[0].type}" if node.outputs else f"fused({shown})"


def _shapes(node):
    operands = "x".join(str(v.type) for v in node.inputs if isinstance(v, Var))
    return f"{operands} -> {', '.join(str(v.type) for v in node.outputs)}"


def _flops(node):
    """Arithmetic a node does: 2 M N K for a product, one per element computed or
    reduced for elementwise work and reductions, none for moving data."""
    if node.op in MATRIX_PRODUCTS:
        out, x = node.outputs[0].type, node.inputs[0].type
        return 2 * out.size * x.shape[-1]
    if node.op in REDUCTIONS:
        return node.inputs[0].type.size
    if node.prim.elementwise:
        return node.outputs[0].type.size
    return 0


def _bytes(tensor_type):
    return tensor_type.size * tensor_type.dtype.itemsize
