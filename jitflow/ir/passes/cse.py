"""Common-subexpression elimination: one node per (op, inputs, params, subgraphs)."""
from ..graph import Lit, has_effects
from .rewrite import rewrite

# Constants up to this size are compared by content, larger ones by identity.
CONTENT_KEY_LIMIT = 64


def cse(graph):
    seen = {}

    def visit(node, producers):
        if has_effects(node):  # two prints are two prints
            return None
        key = (node.op, tuple(_operand_key(v) for v in node.inputs), node.params_key(),
               tuple(id(g) for g in node.subgraphs))
        if key in seen:
            return seen[key].outputs
        seen[key] = node
        return None
    return rewrite(graph, visit, cse)


def _operand_key(value):
    if isinstance(value, Lit) and value.type.size <= CONTENT_KEY_LIMIT:
        return value.key()
    return id(value)
