"""GraphDef: a Graph's operations as data, written in jitflow's one file format
(docs/FORMAT.md, kind "graph_def"); graph_import.py adds them to a graph again.

Each operation is stored by what made it, not by code: a constant's array, a
placeholder's dtype and shape, a Variable's initial value and flags, an assignment,
a group, cond and while_loop bodies, gradients, a seeded random draw, or the function
an op function applies (named in functions_table.py) with its arguments (input tensors
by position, arrays, numbers, slices, dtypes). An operation made otherwise (a Python
function of its own) cannot be stored, and says so.
"""
import numpy as np

from ..errors import at_user_line
from ..saving import archive
from ..saving.errors import FormatError, NotSerializableError
from ..saving.values import encode, encode_dtype
from .functions_table import name_of
from .graph import Graph
from .numpy_calls import _Slot
from .state import Variable

KIND = "graph_def"


class NodeDef:
    """One stored operation, as TensorFlow's GraphDef shows it: name, op, input."""

    def __init__(self, record):
        self.name, self.op = record["name"], record["type"]
        self.input = list(record["inputs"]) + [f"^{n}" for n in record["control_inputs"]]

    def __repr__(self):
        return f"<NodeDef {self.name!r} op={self.op}>"


class GraphDef:
    """A graph as data: `document` (JSON) and `arrays` (its constants)."""

    def __init__(self, document, arrays):
        self.document, self.arrays = document, list(arrays)
        operations = document.get("operations")
        if not isinstance(operations, list) or not all(
                isinstance(r, dict) and isinstance(r.get("name"), str) and
                isinstance(r.get("type"), str) and isinstance(r.get("inputs"), list) and
                isinstance(r.get("control_inputs"), list) for r in operations):
            raise FormatError("a GraphDef's 'operations' must be a list of operations "
                              "with name, type, inputs and control_inputs")
        self.node = [NodeDef(r) for r in operations]

    def __repr__(self):
        return f"<jitflow.v1.GraphDef: {len(self.node)} operations>"


# --- writing --------------------------------------------------------------------------------

def as_graph_def(graph):
    """The GraphDef of `graph`'s operations (Graph.as_graph_def)."""
    arrays = []
    return GraphDef({"operations": [_record(op, arrays) for op in graph.get_operations()]},
                    arrays)


def _record(op, arrays):
    record = {"name": op.name, "type": op.type,
              "inputs": [t.name for t in op.inputs],
              "control_inputs": [c.name for c in op.control_inputs],
              "outputs": [[_dims(t.shape), encode_dtype(t.dtype, op.name)]
                          for t in op.outputs]}
    record.update(_how_made(op, arrays))
    if op.gradient_name is not None:  # (gradient_override_map)
        record["gradient_name"] = op.gradient_name
    return record


def _dims(shape):
    """A static shape: a list with None for unknown sizes, or None for an unknown rank."""
    return None if shape.dims is None else list(shape.dims)


def _how_made(op, arrays):
    if op.type == "VariableV2" and isinstance(op.outputs[0], Variable):
        variable = op.outputs[0]
        return {"made": "variable", "initial_value": variable.initial_value.name,
                "trainable": variable.trainable}
    if op.assigns is not None:
        how = "initializer" if op is op.assigns.initializer else op.type
        return {"made": "assign", "variable": op.assigns.op.name, "how": how}
    if op.type == "Const" and "value" in op.attrs:
        arrays.append(np.asarray(op.attrs["value"]))
        return {"made": "const", "array": len(arrays) - 1}
    if op.type in ("Placeholder", "PlaceholderWithDefault", "NoOp", "LoopVar",
                   "GradientInput"):
        return {"made": op.type}
    if op.type == "If" and hasattr(op, "bodies"):
        return {"made": "cond", "true": _body(op.bodies[0]), "false": _body(op.bodies[1])}
    if op.type == "While" and hasattr(op, "bodies"):
        return {"made": "while", "carried": [t.name for t in op.carried],
                "cond": _body(op.bodies[0]), "body": _body(op.bodies[1])}
    if op.type == "Gradients" and hasattr(op, "derivative"):
        return _gradients_record(op)
    if hasattr(op, "random"):
        return _random_record(op, arrays)
    recipe = getattr(op, "recipe", None)
    name = name_of(recipe[0]) if recipe is not None else None
    if name is None:
        raise NotSerializableError(at_user_line(
            f"as_graph_def: operation {op.name!r} ({op.type}) applies "
            f"{_described(recipe)}, which a GraphDef cannot name; a GraphDef holds "
            f"operations made by jitflow.v1's op functions, operators and NumPy's "
            f"functions on tensors (for anything else, save a function: jitflow.save)"))
    args, kwargs = recipe[1]
    return {"made": "call", "function": name,
            "arguments": _encode_argument([list(args), kwargs], arrays, op.name)}


def _random_record(op, arrays):
    """A random operation: its function and static arguments, and its two operands
    (mean and stddev, or minval and maxval) as the op function took them."""
    function, statics = op.random
    if statics["seed"] is None:
        raise NotSerializableError(at_user_line(
            f"as_graph_def: random operation {op.name!r} has no seed: its draws could not "
            f"be made again; give seed="))
    return {"made": "random", "function": function.__name__,
            "statics": _encode_argument(statics, arrays, op.name),
            "arguments": _encode_argument(list(op.recipe[1][0]), arrays, op.name)}


def _body(body):
    return {"operations": [op.name for op in body.operations],
            "outputs": [t.name for t in body.outputs], "listed": body.listed}


def _gradients_record(op):
    xs, ys, grad_ys, path, blocked = op.derivative
    return {"made": "gradients", "xs": len(xs), "ys": len(ys),
            "weighted": [g is not None for g in grad_ys],
            "path": [step.name for step in path],
            "blocked": sorted(t.name for t in blocked),
            "registered": [_registered(step) for step in path
                           if step.custom_gradient is not None]}


def _registered(op):
    """An operation's registered gradient (custom_gradients.py) as the operations the
    registered function made: the stand-ins of the incoming gradients, the operations,
    and the gradient of each input (None for none)."""
    gradient = op.custom_gradient
    return {"op": op.name, "incoming": [t.name for t in gradient.incoming],
            "operations": [o.name for o in gradient.operations],
            "results": [None if r is None else r.name for r in gradient.results]}


def _described(recipe):
    if recipe is None:
        return "a computation of its own"
    function = recipe[0]
    return f"the function {getattr(function, '__qualname__', function)!r}"


def _encode_argument(value, arrays, where):
    if isinstance(value, _Slot):
        return {"input": value.index}
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return {"array": len(arrays) - 1}
    if isinstance(value, slice):
        return {"slice": [_encode_argument(v, arrays, where)
                          for v in (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, dict):
        return {"dict": [[encode(k, where), _encode_argument(v, arrays, where)]
                         for k, v in value.items()]}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [_encode_argument(v, arrays, where) for v in value]}
    if isinstance(value, type) and value in PYTHON_TYPES.values():
        return {"pytype": value.__name__}
    if isinstance(value, type) and issubclass(value, np.generic):
        return {"dtype": encode_dtype(value, where)}
    return encode(value, f"as_graph_def: operation {where!r}, an argument")


PYTHON_TYPES = {"float": float, "int": int, "bool": bool}


# --- files ----------------------------------------------------------------------------------

def write_graph_def(graph_def, path, as_text=False):
    archive.write(path, KIND, graph_def.document, graph_def.arrays, as_text=as_text)
    return path


def read_graph_def(path):
    document, arrays = archive.read(path, KIND)
    return GraphDef(document, arrays)


Graph.as_graph_def = as_graph_def  # (installed from here: graph.py knows no GraphDef)
