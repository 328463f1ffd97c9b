"""Picture: a graph as it is drawn, whatever it came from.

Every drawing of jitflow (Graphviz DOT, TensorBoard's graph) is made from one Picture:
nodes with names scoped like TensorFlow's ("dense/MatMul_1": node MatMul_1 in scope
dense), their operation, the values they read, and the types of the values they give.
A scope is a group drawn around its nodes; some scopes are of a kind of their own (a
fused region, a control-flow body), which the drawings show apart.
"""
from dataclasses import dataclass, field


@dataclass
class OutputType:
    """The dtype (a NumPy dtype or None) and shape (a tuple whose unknown dimensions are
    None, or None for an unknown rank) of one value a node gives."""
    dtype: object
    shape: tuple

    def __str__(self):
        dtype = "?" if self.dtype is None else str(self.dtype)
        if self.shape is None:
            return f"{dtype}[...]"
        return f"{dtype}[{','.join('?' if d is None else str(d) for d in self.shape)}]"


@dataclass
class PictureNode:
    """One operation. `inputs` name the values it reads ("x" is output 0 of node x,
    "x:1" its output 1); `control_inputs` the nodes that must run before it."""
    name: str
    op: str
    inputs: list
    outputs: list  # OutputTypes
    control_inputs: list = field(default_factory=list)
    attrs: dict = field(default_factory=dict)  # shown as text: parameters, a source line

    @property
    def scope(self):
        """The scope the node sits in ('' at the top)."""
        return self.name.rpartition("/")[0]


class Picture:
    """Nodes in an order that puts each after those it reads; `scope_kinds` maps a scope
    to what it is when it is more than a name scope ('fused region', 'subgraph')."""

    def __init__(self, name="graph"):
        self.name = name
        self.nodes = []
        self.scope_kinds = {}
        self._by_name = {}
        self._used = set()

    def unique_name(self, scope, base):
        """`scope/base`, or `scope/base_1`, `_2`... when that is taken (as TensorFlow
        names a second MatMul in a scope)."""
        full = f"{scope}/{base}" if scope else base
        unique, count = full, 0
        while unique in self._used:
            count += 1
            unique = f"{full}_{count}"
        self._used.add(unique)
        return unique

    def add(self, node):
        """Add `node` (its name made unique by unique_name); returns it."""
        if node.name in self._by_name:
            raise ValueError(f"Picture {self.name!r}: two nodes are named {node.name!r}")
        self._used.add(node.name)
        self._by_name[node.name] = node
        self.nodes.append(node)
        return node

    def node(self, name):
        return self._by_name[name]

    def output_type(self, reference):
        """The OutputType of the value an input names ('x' or 'x:1')."""
        name, index = split_reference(reference)
        return self._by_name[name].outputs[index]

    def scopes(self):
        """Every scope that holds a node, directly or not, outermost first."""
        found = set()
        for node in self.nodes:
            parts = node.name.split("/")[:-1]
            found.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        return sorted(found, key=lambda s: (s.count("/"), s))

    def __repr__(self):
        return f"<Picture {self.name!r}: {len(self.nodes)} nodes>"


def reference(name, index):
    """How an input names output `index` of node `name`."""
    return name if index == 0 else f"{name}:{index}"


def split_reference(text):
    name, sep, index = text.rpartition(":")
    if sep and index.isdigit():
        return name, int(index)
    return text, 0
