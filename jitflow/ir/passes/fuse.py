"""Fusion: elementwise nodes and the reductions they feed become `fused` nodes.

A group has a domain, the shape its elementwise members compute, and, once a reduction
joins, the axes every reduction of the group reduces. The native backend lowers a
fused node as one loop nest over the domain (codegen/loops/regions.py), so intermediates
never reach memory:

- elementwise nodes of one shape join the groups of their producers of that shape, as
  before; broadcast operands of other shapes are read where they are;
- a reduction joins the group that produces its operand: its elements are accumulated
  as they are computed, never stored;
- when the innermost axis is reduced (`rowwise`), each row is finished before the next
  starts, so the group can go on using the row's reduction results: an elementwise node
  of the domain's shape joins when it reads them broadcast along the reduced axes
  (softmax's `x - max` and `e / sum`), and an elementwise node of the reduced shape joins
  as a per-row scalar (`log(sum) + max`). Later passes over a row read it from cache.
  Reductions over outer axes accumulate into their whole output while the domain is
  walked once, so their results are final only at the end: nothing reads them inside.

A float product is the exception to "a reduction joins the group of its operand": it
must fold its elements one after the other in memory order, NumPy's order, since a
product reordered can overflow to inf where NumPy's reaches 0 first (and inf * 0 is
NaN). Its group walks the domain in memory order (codegen/loops/reductions.py), so it holds
no other reduction, which would lose its pairwise accuracy there, and nothing in it
reads the product.

Groups are convex (no path between two members leaves the group, else the group could
not run as one step) and every node joins at most one group, so expensive work (exp,
tanh, ...) is never duplicated: a value that the group needs again after a reduction is
kept in a row buffer or recomputed by the backend, whichever is cheaper (regions.py).
Values used outside a group, or returned by the graph, become outputs of its fused node,
except those that the groups reading them recompute from a few cheap operations on
arrays in memory anyway (rematerialize.py): cheap work may be done twice, never exp.

A node with effects (a debug callback, a loop that runs one) is a barrier: no node after
it joins a group begun before it, so whatever follows it in the program, an error its
code flags included, still happens after it.
"""
from ..graph import Graph, Lit, Node, Var, has_effects
from ..interpret import eval_graph
from ..primitive import Primitive
from .rematerialize import rematerialize

REDUCTIONS = frozenset({"reduce_sum", "reduce_prod", "reduce_max", "reduce_min"})


def in_memory_order(node):
    """Whether a reduction must fold its elements one by one in memory order."""
    return node.op == "reduce_prod" and node.outputs[0].type.dtype.kind == "f"


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


def rowwise(shape, axes):
    """Whether a reduction of `shape` over `axes` runs row by row: when the innermost
    axis that is not 1 is reduced, a row (the reduced axes at one index of the others)
    is finished before the next, in cache. Otherwise the domain is walked in C order and
    every element is folded into its output slot, vectorized over the kept inner axis."""
    long_axes = [i for i, size in enumerate(shape) if size != 1]
    return not long_axes or long_axes[-1] in axes


def reduced_shapes(shape, axes):
    """The shapes of a reduction's result: with keepdims, and without."""
    kept = tuple(1 if i in axes else size for i, size in enumerate(shape))
    return kept, tuple(size for i, size in enumerate(shape) if i not in axes)


def fuse(graph):
    grouping = _group(graph)
    groups = {gid: members for gid, members in grouping.groups.items() if members}
    if all(len(members) < 2 for members in groups.values()):
        return graph
    groups, originals = rematerialize(graph, groups, grouping.domain)
    return _rebuild(graph, groups, originals)


def _elementwise(node):
    return node.prim.elementwise and not node.subgraphs


def _group(graph):
    """The Grouping of every node, in order (group id -> member nodes)."""
    grouping = Grouping(graph)
    for node in graph.nodes:
        grouping.place(node)
    return grouping


class Grouping:
    """Groups under construction. A node joins the groups of its producers when it can
    (see the module docstring), merging them, as long as every group stays convex.
    downstream[g] holds every group that depends on g, directly or not; a merge or join
    is refused when a group depending on one side would sit between the two.

    domain[g] is the shape g's elementwise members compute (None: g cannot be joined),
    axes[g] what its reductions reduce (None: it has none yet); row_values maps the
    values of the reduced shape that a group computes (reduction results and per-row
    scalars) to their group; `ordered` holds the groups of float products."""

    def __init__(self, graph):
        self.position = {id(n): i for i, n in enumerate(graph.nodes)}
        self.group_of, self.groups, self.downstream = {}, {}, {}
        self.domain, self.axes, self.row_values = {}, {}, {}
        self.ordered = set()
        self.closed = set()  # groups begun before a node with effects: joined no more

    def place(self, node):
        if has_effects(node):
            self.closed.update(self.groups)
        chosen = self._join(node)
        if chosen is None:
            chosen = self._new_group(node)
        self.groups[chosen].append(node)
        if node.op in REDUCTIONS:
            self.axes[chosen] = node.params["axes"]
        if in_memory_order(node):
            self.ordered.add(chosen)
        if node.op in REDUCTIONS or (node.outputs and self._is_row_scalar(node, chosen)):
            self.row_values[node.outputs[0]] = chosen
        for p in self._producers(node) - {chosen}:
            self._add_edge(p, chosen)
        for member in self.groups[chosen]:
            self.group_of.update((v, chosen) for v in member.outputs)

    def _new_group(self, node):
        gid = len(self.groups)
        self.groups[gid], self.downstream[gid] = [], set()
        self.axes[gid] = None
        if node.op in REDUCTIONS and isinstance(node.inputs[0], Var):
            self.domain[gid] = node.inputs[0].type.shape
        elif _elementwise(node):
            self.domain[gid] = node.outputs[0].type.shape
        else:
            self.domain[gid] = None
        return gid

    def _producers(self, node):
        return {self.group_of[v] for v in node.inputs if isinstance(v, Var) and v in self.group_of}

    def _open_producers(self, node):
        """The groups of node's producers that it may still join, in order."""
        return sorted(self._producers(node) - self.closed)

    def _is_row_scalar(self, node, gid):
        return _elementwise(node) and self.domain[gid] != node.outputs[0].type.shape

    # --- where a node may go -----------------------------------------------------------
    def _join(self, node):
        if node.op in REDUCTIONS:
            return self._join_reduction(node)
        if not _elementwise(node):
            return None
        shape = node.outputs[0].type.shape
        candidates = [g for g in self._open_producers(node) if self._stays_convex(node, g)
                      and self.domain[g] == shape and self._reads_fit(node, g)]
        if candidates:
            chosen = candidates[0]
            for candidate in candidates[1:]:
                if self._can_merge(chosen, candidate):
                    self._merge(chosen, candidate)
        else:
            hosts = [g for g in self._open_producers(node)
                     if self._stays_convex(node, g) and self._takes_row_scalar(node, g)]
            if not hosts:
                return None
            chosen = hosts[0]
        return chosen if self._stays_convex(node, chosen) else None

    def _stays_convex(self, node, gid):
        """Whether node may join g: not if another of its producers depends on g (the
        path g -> producer -> node would leave the group and come back). Checked for
        each producer's group, so that a node whose earliest producer is upstream of
        the others still joins a later one (a relu's backward pass reads the forward
        region's mask and a matmul of its output)."""
        return not any(p in self.downstream[gid] for p in self._producers(node) - {gid})

    def _join_reduction(self, node):
        (operand,) = node.inputs
        gid = self.group_of.get(operand) if isinstance(operand, Var) else None
        if gid is None or gid in self.closed or operand in self.row_values or \
                gid in self.ordered:
            return None
        if in_memory_order(node) and self.axes[gid] is not None:
            return None
        if self.domain[gid] != operand.type.shape or \
                self.axes[gid] not in (None, node.params["axes"]):
            return None
        return gid

    def _reads_fit(self, node, gid):
        """node, of g's domain shape, may read g's row values: after their reduction,
        on a rowwise group, broadcast along the reduced axes only."""
        rows = [v for v in node.inputs if isinstance(v, Var) and self.row_values.get(v) == gid]
        if not rows:
            return True
        if gid in self.ordered:
            return False
        shape, axes = self.domain[gid], self.axes[gid]
        if not rowwise(shape, axes):
            return False
        kept, _ = reduced_shapes(shape, axes)
        trivial = all(shape[i] == 1 for i in range(len(shape)) if i not in axes)
        return all(v.type.shape == kept or trivial for v in rows)

    def _takes_row_scalar(self, node, gid):
        """node computes one value per row of g from g's row values (and outside ones)."""
        if self.axes[gid] is None or gid in self.ordered or not rowwise(self.domain[gid], self.axes[gid]):
            return False
        if node.outputs[0].type.shape not in reduced_shapes(self.domain[gid], self.axes[gid]):
            return False
        inside = [v for v in node.inputs if isinstance(v, Var) and self.group_of.get(v) == gid]
        return all(self.row_values.get(v) == gid for v in inside)

    # --- merging and convexity ---------------------------------------------------------
    def _can_merge(self, a, b):
        if None not in (self.axes[a], self.axes[b]) and (
                self.axes[a] != self.axes[b] or {a, b} & self.ordered):
            return False
        if b in self.downstream[a] or a in self.downstream[b]:
            return False
        return not any((a in self.downstream[g] or b in self.downstream[g])
                       and (g in self.downstream[a] or g in self.downstream[b])
                       for g in self.downstream if g not in (a, b))

    def _merge(self, into, other):
        members = self.groups[into] + self.groups[other]
        self.groups[into] = sorted(members, key=lambda n: self.position[id(n)])
        self.groups[other] = []
        if self.axes[into] is None:
            self.axes[into] = self.axes[other]
        if other in self.ordered:
            self.ordered.add(into)
        for member in members:
            self.group_of.update((v, into) for v in member.outputs)
        for value, gid in self.row_values.items():
            if gid == other:
                self.row_values[value] = into
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


def _rebuild(graph, groups, originals):
    """The graph with each group of two or more members as one fused node, at the
    place of its first member that the graph had. originals: id(member) -> the graph
    node it stands for (rematerialize.py changed its operands); copies stand for none."""
    uses_outside = _values_used_outside(graph, groups)
    group_of = {}
    for gid, members in groups.items():
        if len(members) > 1:
            group_of.update((id(originals.get(id(n), n)), gid) for n in members)
    nodes, placed = [], set()
    for node in graph.nodes:
        gid = group_of.get(id(node))
        if gid is None:
            nodes.append(node)
        elif gid not in placed:
            placed.add(gid)
            fused = _fused_node(groups[gid], uses_outside)
            if fused is not None:  # None: its readers recompute everything it made
                nodes.append(fused)
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


def _live(members, uses_outside):
    """The members whose results are used outside or by a live member: a value that a
    reader recomputes (rematerialize.py) may leave its own node with no use."""
    needed, live = set(uses_outside), []
    for node in reversed(members):
        if any(v in needed for v in node.outputs) or has_effects(node):
            live.append(node)
            needed.update(v for v in node.inputs if isinstance(v, Var))
    return live[::-1]


def _values_used_outside(graph, groups):
    owner = {v: gid for gid, members in groups.items() for n in members for v in n.outputs}
    used = {v for v in graph.outputs if isinstance(v, Var)}
    for gid, members in groups.items():
        for node in members:
            used.update(v for v in node.inputs if isinstance(v, Var) and owner.get(v) != gid)
    return used


def _fused_node(members, uses_outside):
    """One fused node: the members, renamed into a body graph with its own inputs; None
    when none of them is needed any more."""
    members = _live(members, uses_outside)
    if not members:
        return None
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
