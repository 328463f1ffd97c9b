"""Pictures as Graphviz DOT text: one cluster per scope, nested as the scopes are.

A node sits in the cluster of its scope; a node named like a scope (a while loop whose
bodies are drawn in the scope of its name) sits in that scope's own cluster. Edges are
labelled with the type of the value they carry; control dependencies are dashed.
"""
from .picture import split_reference

STYLE = {  # how the clusters of each kind of scope look
    "name scope": 'style="rounded"; color="gray40"',
    "fused region": 'style="rounded,filled"; color="steelblue"; fillcolor="aliceblue"',
    "subgraph": 'style="dashed"; color="darkorange"',
}
SOURCES = {"Input": "invhouse", "Placeholder": "invhouse", "Arg": "invhouse",
           "Const": "ellipse", "Output": "house", "Return": "house"}


def dot_text(picture):
    scopes = set(picture.scopes())
    members = {scope: [] for scope in scopes | {""}}
    for node in picture.nodes:
        members[node.name if node.name in scopes else node.scope].append(node)
    lines = [f"digraph {quote(picture.name)} {{",
             '  graph [compound=true, fontname="Helvetica"];',
             '  node [shape=box, style="rounded", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=8];']
    _cluster("", picture, scopes, members, lines, "  ")
    lines += [f"  {edge}" for edge in _edges(picture)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _cluster(scope, picture, scopes, members, lines, indent):
    inner = indent
    if scope:
        kind = picture.scope_kinds.get(scope, "name scope")
        label = scope.rpartition("/")[2] + ("" if kind == "name scope" else f" ({kind})")
        lines.append(f"{indent}subgraph {quote('cluster_' + scope)} {{")
        inner = indent + "  "
        lines.append(f"{inner}label={quote(label)}; {STYLE[kind]};")
    for node in members[scope]:
        lines.append(f"{inner}{quote(node.name)} [{_node_attributes(node)}];")
    for child in sorted(s for s in scopes if s.rpartition("/")[0] == scope and s):
        _cluster(child, picture, scopes, members, lines, inner)
    if scope:
        lines.append(f"{indent}}}")


def _node_attributes(node):
    label = node.op if node.name.rpartition("/")[2] == node.op else \
        f"{node.name.rpartition('/')[2]}\n{node.op}"
    label += "".join(f"\n{key}={value}" for key, value in node.attrs.items()
                     if len(value) <= 40)
    shape = SOURCES.get(node.op)
    # `class` (the SVG element's class) names the operation for tools that read the text
    text = f"label={quote(label)}, class={quote(node.op)}"
    return text + (f", shape={shape}" if shape else "")


def _edges(picture):
    for node in picture.nodes:
        for ref in node.inputs:
            source, _ = split_reference(ref)
            label = str(picture.output_type(ref))
            yield f"{quote(source)} -> {quote(node.name)} [label={quote(label)}];"
        for source in node.control_inputs:
            yield f"{quote(source)} -> {quote(node.name)} [style=dashed];"


def quote(text):
    """A DOT string: quoted, with quotes and backslashes escaped and newlines as \\n."""
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
