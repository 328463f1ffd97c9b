"""Rematerialization: values that one fused group writes for another to read are
recomputed by the reader, when that takes a few cheap operations on what is in memory
anyway.

A training step's forward pass keeps, for its backward pass, whatever the derivatives
read: for GELU's 0.5 x (1 + tanh(u)), the values 0.5 x, 1 + t, 1 - t^2 and 3 x^2 beside
the result, each an array as large as the activation, written by the forward loop and
read back by the backward one. Recomputed from x's operands and t = tanh(u), only t is
written (tanh is not cheap), and the backward loop does a few more multiplications
where it read three more arrays.

For each group of two or more nodes, the outputs it writes only for other fusible
groups of their shape are candidates. Each is traced back through the group's cheap
elementwise nodes (CHEAP, small integer powers) of its shape, to values in memory
anyway: the group's inputs, its other outputs, and the values at which the trace stops
(an expensive node's result, a value of another shape), which the group then writes
instead. It is done when it writes fewer bytes that way, and each reading group gets
its own copy of the nodes it needs, computing the same operations on the same operands,
so the same bits.
"""
from collections import defaultdict

from ..graph import Lit, Var

# Float arithmetic that costs an instruction or two per element and flags no error.
# Integer work is left where it is: NumPy raises on some of it (a negative power, a
# Python int out of range), and a copy would raise it later, after a debug callback.
CHEAP = frozenset({"add", "sub", "mul", "neg", "abs", "max", "min", "where"})
MAX_POWER = 4  # x ** n for a literal integer |n| <= MAX_POWER is a few multiplications
# The most nodes a value is recomputed from: beyond, the reading loop would do more
# arithmetic than the memory traffic saved is worth.
MAX_NODES = 8
ENABLED = True  # tests compare with the graphs fused without it


def rematerialize(graph, groups, domain):
    """groups: group id -> member nodes in graph order, as fuse.py's Grouping made them;
    domain: group id -> the shape its elementwise members compute (None: not fusible).
    Returns (groups, originals): the groups with copies added to readers (members may be
    new nodes), and id(new node) -> the graph node it replaces."""
    if not ENABLED:
        return groups, {}
    state = _State(graph, groups, domain)
    for gid in list(groups):
        if len(groups[gid]) > 1:
            state.rematerialize_outputs_of(gid)
    return state.groups, state.originals


class _State:
    def __init__(self, graph, groups, domain):
        self.groups = {gid: list(members) for gid, members in groups.items()}
        self.domain = domain
        self.originals = {}
        self.graph_outputs = {v for v in graph.outputs if isinstance(v, Var)}
        self.owner, self.producer = {}, {}
        for gid, members in self.groups.items():
            for node in members:
                for value in node.outputs:
                    self.owner[value], self.producer[value] = gid, node
        self.reading = defaultdict(set)  # value -> the groups, other than its own, reading it
        for gid, members in self.groups.items():
            for node in members:
                self._note_reads(node, gid)

    def _note_reads(self, node, gid):
        for value in node.inputs:
            if isinstance(value, Var) and self.owner.get(value) != gid:
                self.reading[value].add(gid)

    def _readers(self, gid):
        """value of group gid -> the groups outside gid whose members read it."""
        made = (v for node in self.groups[gid] for v in node.outputs)
        return {v: set(self.reading[v]) for v in made if self.reading.get(v)}

    def rematerialize_outputs_of(self, gid):
        readers = self._readers(gid)
        written = set(readers) | {v for v in self.graph_outputs if self.owner.get(v) == gid}
        candidates = [v for v in readers if v not in self.graph_outputs and
                      all(self._may_recompute(v, reader) for reader in readers[v])]
        kept = written - set(candidates)
        plans, anchors = {}, set()
        for value in sorted(candidates, key=lambda v: v.id):
            nodes, leaves = self._trace(gid, value, kept)
            if nodes is not None:
                plans[value] = nodes
                anchors |= {leaf for leaf in leaves if self.owner.get(leaf) == gid
                            and leaf not in written}
        dropped = list(plans)
        if _bytes(dropped) <= _bytes(anchors):
            return
        for reader in sorted({r for v in dropped for r in readers[v]}):
            self._copy_into(reader, {v: plans[v] for v in dropped if reader in readers[v]})

    def _may_recompute(self, value, reader):
        """The reading group computes elementwise over value's shape."""
        return self.domain.get(reader) == value.type.shape

    def _trace(self, gid, value, kept):
        """(nodes, leaves): the group's nodes that compute `value` from leaves in memory,
        in the group's order, or (None, None) if that takes more than MAX_NODES."""
        if not _cheap(self.producer.get(value)):
            return None, None
        nodes, leaves, seen = [], set(), set()
        pending = [value]
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            node = self.producer.get(current)
            if (self.owner.get(current) != gid or (current in kept and current is not value)
                    or not _cheap(node) or current.type.shape != value.type.shape):
                leaves.add(current)
                continue
            nodes.append(node)
            if len(nodes) > MAX_NODES:
                return None, None
            pending.extend(v for v in node.inputs if isinstance(v, Var))
        order = {id(n): i for i, n in enumerate(self.groups[gid])}
        return sorted(nodes, key=lambda n: order[id(n)]), leaves

    def _copy_into(self, reader, plans):
        """Give group `reader` its own copies of the nodes computing the values of
        `plans` (value -> nodes), and make its members read those copies."""
        copied, copies, needed = {}, [], {}
        for nodes in plans.values():
            needed.update((id(node), node) for node in nodes)
        for node in _in_dependency_order(list(needed.values())):
            inputs = [copied.get(v, v) if isinstance(v, Var) else v for v in node.inputs]
            outputs = [Var(v.type) for v in node.outputs]
            copied.update(zip(node.outputs, outputs))
            copies.append(node.replace(inputs=inputs, outputs=outputs))
        members = []
        for node in self.groups[reader]:
            if any(isinstance(v, Var) and v in plans for v in node.inputs):
                new = node.replace(inputs=[copied[v] if isinstance(v, Var) and v in plans
                                           else v for v in node.inputs])
                self.originals[id(new)] = self.originals.pop(id(node), node)
                node = new
            members.append(node)
        self.groups[reader] = copies + members
        for node in copies + members:
            for value in node.outputs:
                self.owner[value], self.producer[value] = reader, node
        for value in plans:
            self.reading[value].discard(reader)
        for node in copies:
            self._note_reads(node, reader)


def _in_dependency_order(nodes):
    """`nodes` (each once) ordered so that each comes after the nodes making its inputs."""
    made_by = {v: n for n in nodes for v in n.outputs}
    ordered, done = [], set()

    def visit(node):
        if id(node) in done:
            return
        done.add(id(node))
        for value in node.inputs:
            if isinstance(value, Var) and value in made_by:
                visit(made_by[value])
        ordered.append(node)
    for node in nodes:
        visit(node)
    return ordered


def _cheap(node):
    if node is None or not node.prim.elementwise or node.subgraphs or len(node.outputs) != 1:
        return False
    if node.outputs[0].type.dtype.kind != "f":
        return False
    if node.op == "pow":
        exponent = node.inputs[1]
        return (isinstance(exponent, Lit) and float(exponent.value) == int(exponent.value)
                and abs(int(exponent.value)) <= MAX_POWER)
    return node.op in CHEAP


def _bytes(values):
    return sum(v.type.size * v.type.dtype.itemsize for v in values)
