"""A reader of the DOT language's statements that drawings use (digraph, nested subgraph
clusters, node and edge statements with attribute lists, attribute assignments), for
tests: it checks the text is well formed and gives back what it declares."""
import re
from dataclasses import dataclass, field

TOKEN = re.compile(r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<arrow>->)|'
                   r'(?P<id>[A-Za-z_0-9.\-]+)|(?P<punct>[{}\[\];=,]))')


@dataclass
class DotGraph:
    name: str
    nodes: dict = field(default_factory=dict)      # name -> attributes
    node_cluster: dict = field(default_factory=dict)  # name -> innermost cluster or None
    clusters: dict = field(default_factory=dict)   # cluster -> (parent or None, attributes)
    edges: list = field(default_factory=list)      # (source, target, attributes)


def tokens(text):
    position, found = 0, []
    text = text.rstrip()
    while position < len(text):
        match = TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"DOT: cannot read {text[position:position + 30]!r}")
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "string":
            value = re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1),
                           value[1:-1])
        found.append((kind, value))
        position = match.end()
    return found


def read_dot(text):
    stream = tokens(text)
    _expect(stream, 0, "id", "digraph")
    graph = DotGraph(stream[1][1])
    end = _statements(stream, 3 if stream[2][1] == "{" else _fail(stream, 2), graph, None)
    if end != len(stream):
        raise ValueError("DOT: text after the graph's closing brace")
    return graph


def _statements(stream, i, graph, cluster):
    while True:
        kind, value = stream[i]
        if value == "}":
            return i + 1
        if value == "subgraph":
            name = stream[i + 1][1]
            graph.clusters[name] = (cluster, {})
            _expect(stream, i + 2, "punct", "{")
            i = _statements(stream, i + 3, graph, name)
            continue
        if value in ("graph", "node", "edge") and stream[i + 1][1] == "[":
            i, _ = _attributes(stream, i + 1)
        elif stream[i + 1][1] == "=":  # a cluster's attribute: label="..."
            target = graph.clusters[cluster][1] if cluster else {}
            target[value] = stream[i + 2][1]
            i += 3
        elif stream[i + 1][0] == "arrow":
            target = stream[i + 2][1]
            i, attributes = _attributes(stream, i + 3)
            graph.edges.append((value, target, attributes))
        else:
            i, attributes = _attributes(stream, i + 1)
            if value in graph.nodes:
                raise ValueError(f"DOT: node {value!r} declared twice")
            graph.nodes[value] = attributes
            graph.node_cluster[value] = cluster
        _expect(stream, i, "punct", ";")
        i += 1


def _attributes(stream, i):
    """An optional [key=value, ...] list starting at i; returns (next index, dict)."""
    attributes = {}
    if stream[i][1] != "[":
        return i, attributes
    i += 1
    while stream[i][1] != "]":
        key = stream[i][1]
        _expect(stream, i + 1, "punct", "=")
        attributes[key] = stream[i + 2][1]
        i += 3
        if stream[i][1] == ",":
            i += 1
    return i + 1, attributes


def _expect(stream, i, kind, value):
    if i >= len(stream) or stream[i] != (kind, value):
        _fail(stream, i, value)


def _fail(stream, i, wanted="'{'"):
    got = stream[i][1] if i < len(stream) else "the end"
    raise ValueError(f"DOT: expected {wanted}, got {got!r} (token {i})")
