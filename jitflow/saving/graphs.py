"""IR graphs as JSON data plus a list of arrays (the constants).

    {"inputs": [[id, type], ...],
     "nodes": [{"op": name, "inputs": [ref, ...], "params": {name: value},
                "outputs": [[id, type], ...], "subgraphs": [graph, ...]}, ...],
     "outputs": [ref, ...]}

A ref is {"var": id} (a value defined before, by an input or a node, here or in an
enclosing graph) or {"lit": index, "type": type} (constant number `index` of the
array list). Types and parameters are values.py's. A custom derivative's call is stored
with its body and the graph of its rule, traced as it is written (custom_rules.py): the
user's code itself is never stored. Reading checks every reference and re-runs every
node's type rule (ir.graph.verify), so a file that does not describe a valid graph is
refused.
"""
import numpy as np

from ..autodiff.custom import custom_jvp_call_p
from ..control_flow.scan import scan_p
from ..control_flow.switch import switch_p
from ..control_flow.while_grad import while_grad_p
from ..control_flow.while_loop import while_p
from ..ir.graph import Graph, Lit, Node, Var, VerifyError, verify
from ..ir.passes.fuse import fused_p
from ..ir.primitive import REGISTRY
from .custom_rules import CALLS, saved_call, traced_rule
from .errors import FormatError, NotSerializableError
from .values import decode, decode_type, encode, encode_type


def primitives():
    """Every primitive a file may name: the registry's and the structured ones."""
    return {**REGISTRY, **CALLS, **{p.name: p for p in (switch_p, scan_p, while_p,
                                                        while_grad_p, fused_p)}}


# --- writing --------------------------------------------------------------------------------

class GraphWriter:
    """Writes graphs, numbering their values and gathering their constants."""

    def __init__(self):
        self.arrays = []  # the constants, in the order refs name them
        self._ids = {}  # Var -> its number
        self._graphs = {}  # id(Graph) -> (its number, the Graph)
        self._known = primitives()

    def graph(self, graph):
        """A graph several nodes share (a loop's body in the loop and in its
        derivative) is written once, then named by its number."""
        if id(graph) in self._graphs:
            return {"same_as": self._graphs[id(graph)][0]}
        self._graphs[id(graph)] = (len(self._graphs), graph)
        return {"id": self._graphs[id(graph)][0],
                "inputs": [self._define(v) for v in graph.inputs],
                "nodes": [self._node(node) for node in graph.nodes],
                "outputs": [self.ref(v) for v in graph.outputs]}

    def ref(self, value):
        if isinstance(value, Lit):
            self.arrays.append(np.array(value.value, order="C"))
            return {"lit": len(self.arrays) - 1, "type": encode_type(value.type)}
        return {"var": self._ids[value]}

    def _define(self, var):
        """[number, type]; a Var graphs share (a body and its copy without effects)
        keeps one number."""
        self._ids.setdefault(var, len(self._ids))
        return [self._ids[var], encode_type(var.type)]

    def _node(self, node):
        if self._known.get(node.op) is not node.prim:
            raise NotSerializableError(f"primitive '{node.op}' is not one the format knows")
        where = f"primitive '{node.op}'"
        params = {} if node.op in CALLS else node.params  # (the user's function)
        data = {"op": node.op, "inputs": [self.ref(v) for v in node.inputs],
                "params": {k: encode(v, f"{where}, parameter '{k}'")
                           for k, v in sorted(params.items())}}
        if node.subgraphs:
            data["subgraphs"] = [self.graph(g) for g in node.subgraphs]
        if node.op in CALLS:
            rule, results = traced_rule(node)
            data.update(name=str(node.params["call"]), rule=self.graph(rule),
                        rule_results=results)
        data["outputs"] = [self._define(v) for v in node.outputs]
        return data


def graph_to_data(graph):
    """(JSON data, arrays) for `graph`."""
    writer = GraphWriter()
    return writer.graph(graph), writer.arrays


# --- reading --------------------------------------------------------------------------------

class GraphReader:
    """Reads graphs written by GraphWriter, given their arrays."""

    def __init__(self, arrays):
        self.arrays = arrays
        self._vars = {}  # number -> Var
        self._graphs = {}  # number -> Graph
        self._known = primitives()

    def graph(self, data, where="graph"):
        _expect(data, dict, where)
        if "same_as" in data:
            graph = self._graphs.get(data["same_as"]) \
                if isinstance(data["same_as"], int) else None
            if graph is None:
                raise FormatError(f"{where}: {data['same_as']!r} names no graph before it")
            return graph
        number = data.get("id")
        if not isinstance(number, int) or number in self._graphs:
            raise FormatError(f"{where}: graph number {number!r} is not a new number")
        inputs = [self._define(d, f"{where}, input {i}")
                  for i, d in enumerate(_list(data, "inputs", where))]
        nodes = [self._node(d, f"{where}, node {i}")
                 for i, d in enumerate(_list(data, "nodes", where))]
        outputs = [self.ref(d, f"{where}, output {i}")
                   for i, d in enumerate(_list(data, "outputs", where))]
        graph = self._graphs[number] = Graph(inputs, nodes, outputs)
        return graph

    def ref(self, data, where):
        _expect(data, dict, where)
        if "var" in data:
            var = self._vars.get(data["var"]) if isinstance(data["var"], int) else None
            if var is None:
                raise FormatError(f"{where}: value {data['var']!r} is used before it is "
                                  f"defined")
            return var
        index = data.get("lit")
        if not isinstance(index, int) or not 0 <= index < len(self.arrays):
            raise FormatError(f"{where}: {data!r:.80} names no constant of the file")
        type = decode_type(data.get("type"), where)
        array = self.arrays[index]
        if array.shape != type.shape or array.dtype != type.dtype:
            raise FormatError(f"{where}: constant {index} is {array.dtype}{list(array.shape)}"
                              f", its type says {type}")
        return Lit(array, type)

    def _define(self, data, where):
        if not (isinstance(data, list) and len(data) == 2 and isinstance(data[0], int)):
            raise FormatError(f"{where}: {data!r:.80} is not a definition [id, type]")
        type = decode_type(data[1], where)
        var = self._vars.get(data[0])
        if var is None:
            var = self._vars[data[0]] = Var(type)
        elif var.type != type:  # (defined twice in one graph: verify() says so)
            raise FormatError(f"{where}: value {data[0]} is {var.type}, here {type}")
        return var

    def _node(self, data, where):
        _expect(data, dict, where)
        prim = self._known.get(data.get("op")) if isinstance(data.get("op"), str) else None
        if prim is None:
            raise FormatError(f"{where}: {data.get('op')!r} is not a primitive of this "
                              f"jitflow")
        where = f"{where} ('{prim.name}')"
        inputs = [self.ref(d, f"{where}, input {i}")
                  for i, d in enumerate(_list(data, "inputs", where))]
        params = data.get("params", {})
        _expect(params, dict, f"{where}, params")
        params = {k: decode(v, f"{where}, parameter '{k}'") for k, v in params.items()}
        subgraphs = [self.graph(d, f"{where}, subgraph {i}")
                     for i, d in enumerate(data.get("subgraphs", []))]
        if prim.name in CALLS:
            params = {"call": self._saved_call(prim, data, subgraphs, where)}
        outputs = [self._define(d, f"{where}, output {i}")
                   for i, d in enumerate(_list(data, "outputs", where))]
        return Node(prim, inputs, params, outputs, subgraphs)

    def _saved_call(self, prim, data, subgraphs, where):
        """A custom-derivative call's stand-in for the user's function (custom_rules)."""
        results = data.get("rule_results")
        body = subgraphs[0] if len(subgraphs) == 1 else None
        if body is None or not isinstance(data.get("name"), str) or not (
                isinstance(results, int) if prim is custom_jvp_call_p else
                isinstance(results, list) and len(results) == len(body.inputs) and all(
                    r is None or r == "ct" or isinstance(r, dict) and
                    isinstance(r.get("error"), str) for r in results)):
            raise FormatError(f"{where}: not a valid custom-derivative call")
        rule = checked(self.graph(data.get("rule"), f"{where}, rule"))
        if prim is custom_jvp_call_p:
            sizes = (len(body.inputs) + results, len(body.outputs))
        else:
            sizes = (len(body.inputs) + len(body.outputs), results.count("ct"))
        if (len(rule.inputs), len(rule.outputs)) != sizes:
            raise FormatError(f"{where}: its rule takes {len(rule.inputs)} values and "
                              f"gives {len(rule.outputs)}, the call needs {sizes}")
        return saved_call(data["name"], body, rule, results)


def graph_from_data(data, arrays):
    """The Graph `data` describes, checked (FormatError when it is not valid)."""
    graph = GraphReader(arrays).graph(data)
    checked(graph)
    return graph


def checked(graph):
    """`graph`, verified: every type rule holds (FormatError otherwise)."""
    try:
        return verify(graph)
    except VerifyError as error:
        raise FormatError(f"the file's graph is not valid: {error}") from None
    except (TypeError, ValueError, KeyError, IndexError) as error:
        raise FormatError(f"the file's graph is not valid: {type(error).__name__}: "
                          f"{error}") from None


def _expect(data, kind, where):
    if not isinstance(data, kind):
        raise FormatError(f"{where}: expected a JSON {kind.__name__}, got {data!r:.80}")


def _list(data, key, where):
    value = data.get(key)
    if not isinstance(value, list):
        raise FormatError(f"{where}: '{key}' must be a list, got {value!r:.80}")
    return value
