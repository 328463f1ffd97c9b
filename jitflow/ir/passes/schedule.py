"""Scheduling: the order native code runs a graph's nodes in, around nonblocking work.

A primitive marked schedule="early" starts work that goes on apart (the start of a
nonblocking collective), one marked "late" waits for it; whatever runs between them
runs while that work is in flight. So the nodes are listed again, a ready node at a
time (Kahn's algorithm), the ready node chosen by, in turn:

1. the first early node it leads to (it or a node after it needs it): what the
   earliest start needs runs first, then the start itself, then what the next one
   needs, ...;
2. late nodes last: a wait runs only when nothing else is ready, which is just before
   the first node that needs its result (or at the end);
3. the original order.

Nodes with effects keep their order among themselves (a start does not pass an earlier
print or collective), except late ones, which may be delayed past later effects, as
their purpose is. The order depends on the graph alone, so every process of a job
starts its collectives in the same order.
"""
import heapq
import math

from ..graph import Graph, Var, has_effects


def schedule(graph):
    nodes = graph.nodes
    if not any(node.prim.schedule for node in nodes):
        return graph
    needs = _needs(nodes)
    priority = _priorities(nodes, needs)
    order = _list_schedule(needs, priority)
    if order == list(range(len(nodes))):
        return graph
    return Graph(graph.inputs, [nodes[i] for i in order], graph.outputs)


def _needs(nodes):
    """For each node, the nodes that must run before it: its operands' producers and,
    for a node with effects that is not late, the previous such node."""
    producer = {var: i for i, node in enumerate(nodes) for var in node.outputs}
    needs, last_effect = [], None
    for i, node in enumerate(nodes):
        before = {producer[v] for v in node.inputs if isinstance(v, Var) and v in producer}
        if node.prim.schedule != "late" and has_effects(node):
            if last_effect is not None:
                before.add(last_effect)
            last_effect = i
        needs.append(before)
    return needs


def _priorities(nodes, needs):
    """(the rank of the first early node that needs it, late or not, its index)."""
    early_rank = [math.inf] * len(nodes)
    rank = 0
    for i, node in enumerate(nodes):
        if node.prim.schedule == "early":
            early_rank[i], rank = rank, rank + 1
    for i in reversed(range(len(nodes))):  # needs point back: a node's users come later
        for j in needs[i]:
            early_rank[j] = min(early_rank[j], early_rank[i])
    return [(early_rank[i], node.prim.schedule == "late", i)
            for i, node in enumerate(nodes)]


def _list_schedule(needs, priority):
    waiting = [len(before) for before in needs]
    users = [[] for _ in needs]
    for i, before in enumerate(needs):
        for j in before:
            users[j].append(i)
    ready = [priority[i] for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        *_, i = heapq.heappop(ready)
        order.append(i)
        for user in users[i]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, priority[user])
    return order
