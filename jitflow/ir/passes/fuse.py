"""Fusion: elementwise nodes of one output shape become a `fused` node owning them.

The native backend lowers a fused node as a single loop nest, so its intermediates never
reach memory. Groups are convex (no path between two members leaves the group, else
the group could not run as one step) and every node joins at most one group, so
expensive work (exp, tanh, ...) is never duplicated. Values used outside a group, or
returned by the graph, become outputs of its fused node.
"""
from ..graph import Graph, Lit, Node, Var
from ..interpret import eval_graph
from ..primitive import Primitive


def _fused_type(*in_types, subgraphs):
    (body,) = subgraphs
    if tuple(in_types) != body.in_types:
        raise TypeError(f"fused: inputs {in_types} do not match the body's {body.in_types}")
    return body.out_types


def _fused_impl(*args, subgraphs):
    (body,) = subgraphs
    return eval_graph(body, args)


# Not in the registry: it is made by this pass, never by users.
fused_p = Primitive("fused", _fused_type, _fused_impl, multiple_results=True,
                    has_subgraphs=True)


def fuse(graph):
    groups = _group(graph)
    if all(len(members) < 2 for members in groups.values()):
        return graph
    return _rebuild(graph, groups)


def _fusible(node):
    return node.prim.elementwise and not node.subgraphs


def _group(graph):
    """Every node's group, in order: group id -> member nodes (see Grouping)."""
    grouping = Grouping(graph)
    for node in graph.nodes:
        grouping.place(node)
    return {gid: members for gid, members in grouping.groups.items() if members}


class Grouping:
    """Groups under construction. A fusible node joins the groups of its fusible
    producers of the same shape, merging them, as long as every group stays convex.
    downstream[g] holds every group that depends on g, directly or not; a merge or join
    is refused when a group depending on one side would sit between the two."""

    def __init__(self, graph):
        self.position = {id(n): i for i, n in enumerate(graph.nodes)}
        self.group_of, self.groups, self.downstream = {}, {}, {}

    def place(self, node):
        producers = {self.group_of[v] for v in node.inputs
                     if isinstance(v, Var) and v in self.group_of}
        chosen = self._join(node, producers)
        if chosen is None:
            chosen = len(self.groups)
            self.groups[chosen], self.downstream[chosen] = [], set()
        self.groups[chosen].append(node)
        producers = {self.group_of[v] for v in node.inputs
                     if isinstance(v, Var) and v in self.group_of}
        for p in producers - {chosen}:
            self._add_edge(p, chosen)
        for member in self.groups[chosen]:
            self.group_of.update((v, chosen) for v in member.outputs)

    def _join(self, node, producers):
        if not _fusible(node):
            return None
        shape = node.outputs[0].type.shape
        candidates = [g for g in sorted(producers) if self.groups[g]
                      and _fusible(self.groups[g][0])
                      and self.groups[g][0].outputs[0].type.shape == shape]
        if not candidates:
            return None
        chosen = candidates[0]
        for candidate in candidates[1:]:
            if self._can_merge(chosen, candidate):
                self._merge(chosen, candidate)
        # chosen -> other producer -> node would leave the group and come back
        others = {self.group_of[v] for v in node.inputs
                  if isinstance(v, Var) and v in self.group_of} - {chosen}
        if any(p in self.downstream[chosen] for p in others):
            return None
        return chosen

    def _can_merge(self, a, b):
        if b in self.downstream[a] or a in self.downstream[b]:
            return False
        return not any((a in self.downstream[g] or b in self.downstream[g])
                       and (g in self.downstream[a] or g in self.downstream[b])
                       for g in self.downstream if g not in (a, b))

    def _merge(self, into, other):
        members = self.groups[into] + self.groups[other]
        self.groups[into] = sorted(members, key=lambda n: self.position[id(n)])
        self.groups[other] = []
        for member in members:
            self.group_of.update((v, into) for v in member.outputs)
        self.downstream[into] |= self.downstream.pop(other)
        for reached in self.downstream.values():
            if other in reached:
                reached.discard(other)
                reached.add(into)

    def _add_edge(self, source, target):
        """target depends on source now, and so on everything source depends on."""
        reach = {target} | self.downstream[target]
        for g, reached in self.downstream.items():
            if g == source or source in reached:
                reached |= reach


def _rebuild(graph, groups):
    uses_outside = _values_used_outside(graph, groups)
    first_member = {id(members[0]): members for members in groups.values()}
    member_ids = {id(n) for members in groups.values() if len(members) > 1 for n in members}
    nodes = []
    for node in graph.nodes:
        members = first_member.get(id(node))
        if members is not None and len(members) > 1:
            nodes.append(_fused_node(members, uses_outside))
        elif id(node) not in member_ids:
            nodes.append(node)
    return Graph(graph.inputs, _topological(nodes), graph.outputs)


def _topological(nodes):
    """`nodes` reordered so that every value is defined before its uses, otherwise
    keeping their order (a fused node may need values defined after its first member)."""
    defined_by = {v: i for i, n in enumerate(nodes) for v in n.outputs}
    ordered, done = [], set()

    def visit(i):
        if i in done:
            return
        done.add(i)
        for value in nodes[i].inputs:
            if isinstance(value, Var) and value in defined_by:
                visit(defined_by[value])
        ordered.append(nodes[i])
    for i in range(len(nodes)):
        visit(i)
    return ordered


def _values_used_outside(graph, groups):
    owner = {v: gid for gid, members in groups.items() for n in members for v in n.outputs}
    used = {v for v in graph.outputs if isinstance(v, Var)}
    for gid, members in groups.items():
        for node in members:
            used.update(v for v in node.inputs if isinstance(v, Var) and owner.get(v) != gid)
    return used


def _fused_node(members, uses_outside):
    """One fused node: the members, renamed into a body graph with its own inputs."""
    defined = {v for n in members for v in n.outputs}
    outer_inputs, body_inputs, renamed = [], [], {}
    for node in members:
        for value in node.inputs:
            if isinstance(value, Var) and value not in defined and value not in renamed:
                inner = Var(value.type)
                renamed[value] = inner
                outer_inputs.append(value)
                body_inputs.append(inner)
    body_nodes = []
    for node in members:  # the body gets Vars of its own: a value is defined once
        inputs = [v if isinstance(v, Lit) else renamed[v] for v in node.inputs]
        outputs = [renamed.setdefault(v, Var(v.type)) for v in node.outputs]
        body_nodes.append(node.replace(inputs=inputs, outputs=outputs))
    results = [v for n in members for v in n.outputs if v in uses_outside]
    body = Graph(body_inputs, body_nodes, [renamed[v] for v in results])
    return Node(fused_p, outer_inputs, {}, results, [body])
