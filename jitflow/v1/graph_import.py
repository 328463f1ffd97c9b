"""import_graph_def: a GraphDef's operations (graph_def.py) made again in a graph, each
with the graph API that made it first, so shapes left open (None) stay open and runs
compile as they did. Names in the file are looked up in fixed tables only (op kinds,
functions_table.py): importing runs no code from the file.
"""
from ..errors import at_user_line
from ..saving.errors import FormatError
from ..saving.values import decode, decode_dtype
from .control_flow import _Body, cond_operation, while_operation
from .custom_gradients import CustomGradient
from .functions_table import function_named
from .graph import get_default_graph
from .graph_def import PYTHON_TYPES, GraphDef
from .gradients import gradients_operation
from .numpy_calls import operation
from .random_ops import random_normal, random_uniform
from .state import Variable, constant, placeholder, placeholder_with_default
from .tensor import Operation, Tensor, TensorShape


def import_graph_def(graph_def, input_map=None, return_elements=None, name=""):
    """Add `graph_def`'s operations to the default graph, their names under the scope
    `name` ('' keeps them). input_map {tensor name: Tensor} stands those tensors in for
    the stored ones; return_elements names the tensors ('x:0') or operations ('x') to
    return, in a list."""
    if not isinstance(graph_def, GraphDef):
        raise TypeError(at_user_line(f"import_graph_def: {graph_def!r} is not a GraphDef"))
    graph = get_default_graph()
    importer = _Importer(graph, dict(input_map or {}), graph_def.arrays)
    with graph.name_scope(name):
        for record in graph_def.document["operations"]:
            importer.add(record)
    if return_elements is None:
        return None
    return [importer.element(e) for e in return_elements]


class _Importer:
    def __init__(self, graph, input_map, arrays):
        self.graph, self.input_map, self.arrays = graph, input_map, arrays
        self.operations = {}  # stored name -> the Operation made for it
        for key, tensor in input_map.items():
            if not isinstance(tensor, Tensor):
                raise TypeError(at_user_line(f"import_graph_def: input_map[{key!r}] is "
                                             f"not a Tensor"))

    def add(self, record):
        where = f"GraphDef operation {record['name']!r} ({record['type']})"
        make = _MAKERS.get(record.get("made"))
        if make is None:
            raise FormatError(f"{where}: made by {record.get('made')!r}, which this "
                              f"jitflow does not know")
        try:
            op = make(self, record, [self.tensor(n, where) for n in record["inputs"]])
        except FormatError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
            raise FormatError(f"{where} could not be made again: {type(error).__name__}: "
                              f"{error}") from None
        if len(op.outputs) != len(record.get("outputs", ())):
            raise FormatError(f"{where}: imported with {len(op.outputs)} outputs, stored "
                              f"with {len(record.get('outputs', ()))}")
        if isinstance(record.get("gradient_name"), str):  # its gradient, by name
            op.gradient_name = record["gradient_name"]
        self.operations[record["name"]] = op

    def tensor(self, name, where):
        if name in self.input_map:
            return self.input_map[name]
        op_name, _, index = str(name).rpartition(":")
        op = self.operations.get(op_name)
        if op is None or not index.isdigit() or int(index) >= len(op.outputs):
            raise FormatError(f"{where}: its input {name!r} is no tensor stored before it")
        return op.outputs[int(index)]

    def operation(self, name, where):
        op = self.operations.get(name)
        if op is None:
            raise FormatError(f"{where}: {name!r} is no operation stored before it")
        return op

    def element(self, name):
        if ":" in name:
            return self.tensor(name, "import_graph_def: return_elements")
        return self.operation(name, "import_graph_def: return_elements")


def _types(record):
    return [(_shape(dims), decode_dtype(dtype, record["name"]))
            for dims, dtype in record["outputs"]]


def _shape(dims):
    return TensorShape(dims)


def _made_const(importer, record, inputs):
    array = importer.arrays[record["array"]]
    return constant(array, name=record["name"]).op


def _made_placeholder(importer, record, inputs):
    (shape, dtype), = _types(record)
    return placeholder(dtype, shape.dims, name=record["name"]).op


def _made_placeholder_with_default(importer, record, inputs):
    (shape, _), = _types(record)
    return placeholder_with_default(inputs[0], shape.dims, name=record["name"]).op


def _made_group(importer, record, inputs):
    controls = [importer.operation(n, record["name"]) for n in record["control_inputs"]]
    graph = importer.graph
    return Operation(graph, "NoOp", graph.unique_name(record["name"]), (), None, [],
                     control_inputs=controls)


def _made_source(importer, record, inputs):
    """A LoopVar or GradientInput: a stand-in fed by the operation that runs it."""
    graph = importer.graph
    return Operation(graph, record["type"], graph.unique_name(record["name"]), (), None,
                     _types(record))


def _made_variable(importer, record, inputs):
    initial = importer.tensor(record["initial_value"], record["name"])
    variable = Variable(initial, trainable=bool(record["trainable"]), name=record["name"])
    return variable.op


def _made_assign(importer, record, inputs):
    variable = importer.operation(record["variable"], record["name"]).outputs[0]
    if not isinstance(variable, Variable):
        raise FormatError(f"GraphDef operation {record['name']!r}: "
                          f"{record['variable']!r} is not a Variable")
    how = record["how"]
    if how == "initializer":
        return variable.initializer
    name = record["name"]
    if how == "Assign":
        return variable.assign(inputs[0], name=name).op
    if how in ("AssignAdd", "AssignSub"):
        change = variable.assign_add if how == "AssignAdd" else variable.assign_sub
        return change(inputs[1], name=name).op
    raise FormatError(f"GraphDef operation {record['name']!r}: {how!r} is not an "
                      f"assignment")


def _made_call(importer, record, inputs):
    function = function_named(record["function"])
    if function is None:
        raise FormatError(f"GraphDef operation {record['name']!r}: "
                          f"{record['function']!r} names no function jitflow.v1 knows")
    args, kwargs = _decode_argument(record["arguments"], inputs, importer.arrays,
                                    record["name"])
    if not isinstance(kwargs, dict):
        raise FormatError(f"GraphDef operation {record['name']!r}: bad arguments")
    result = operation(record["type"], function, args, kwargs, record["name"])
    return (result[0] if isinstance(result, list) else result).op


def _decode_argument(data, inputs, arrays, where):
    if isinstance(data, dict) and len(data) == 1:
        (tag, body), = data.items()
        if tag == "input":
            return inputs[body]
        if tag == "array":
            return arrays[body]
        if tag == "slice":
            return slice(*(_decode_argument(v, inputs, arrays, where) for v in body))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "dict":
            return {decode(k, where): _decode_argument(v, inputs, arrays, where)
                    for k, v in body}
        if tag in ("list", "tuple"):
            items = [_decode_argument(v, inputs, arrays, where) for v in body]
            return items if tag == "list" else tuple(items)
        if tag == "pytype" and body in PYTHON_TYPES:
            return PYTHON_TYPES[body]
    return decode(data, f"GraphDef operation {where!r}, an argument")


def _made_random(importer, record, inputs):
    function = _RANDOM.get(record["function"])
    if function is None:
        raise FormatError(f"GraphDef operation {record['name']!r}: "
                          f"{record['function']!r} is not a random op function")
    statics = _decode_argument(record["statics"], inputs, importer.arrays, record["name"])
    first, second = _decode_argument(record["arguments"], inputs, importer.arrays,
                                     record["name"])
    return function(statics["shape"], first, second, dtype=statics["dtype"],
                    seed=statics["seed"], name=record["name"]).op


_RANDOM = {"random_normal": random_normal, "random_uniform": random_uniform}


def _made_body(importer, data, where):
    operations = [importer.operation(n, where) for n in data["operations"]]
    outputs = [importer.tensor(n, where) for n in data["outputs"]]
    return _Body.made_of(operations, outputs, bool(data["listed"]))


def _made_cond(importer, record, inputs):
    name = record["name"]
    true, false = (_made_body(importer, record[k], name) for k in ("true", "false"))
    graph = importer.graph
    return cond_operation(graph, graph.unique_name(name), inputs[0], inputs[1:], true,
                          false, _types(record))


def _made_while(importer, record, inputs):
    name = record["name"]
    carried = [importer.tensor(n, name) for n in record["carried"]]
    condition, step = (_made_body(importer, record[k], name) for k in ("cond", "body"))
    graph = importer.graph
    return while_operation(graph, graph.unique_name(name), inputs[:len(carried)],
                           inputs[len(carried):], carried, condition, step)


def _made_gradients(importer, record, inputs):
    name, count_x, count_y = record["name"], record["xs"], record["ys"]
    xs, ys = inputs[:count_x], inputs[count_x:count_x + count_y]
    weights = iter(inputs[count_x + count_y:])
    grad_ys = [next(weights) if weighted else None for weighted in record["weighted"]]
    path = [importer.operation(n, name) for n in record["path"]]
    blocked = {importer.tensor(n, name) for n in record["blocked"]}
    for registered in record.get("registered", []):
        _made_registered_gradient(importer, registered, name)
    graph = importer.graph
    return gradients_operation(graph, graph.unique_name(name), xs, ys, grad_ys, path,
                               blocked)


def _made_registered_gradient(importer, data, where):
    """The operation's registered gradient, from the operations it was made of."""
    op = importer.operation(data["op"], where)
    if op.custom_gradient is not None:
        return  # (another Gradients operation made it already)
    results = [None if r is None else importer.tensor(r, where) for r in data["results"]]
    if len(results) != len(op.inputs):
        raise FormatError(f"{where}: the registered gradient of {data['op']!r} has "
                          f"{len(results)} results for {len(op.inputs)} inputs")
    op.custom_gradient = CustomGradient.made_of(
        op, [importer.tensor(n, where) for n in data["incoming"]],
        [importer.operation(n, where) for n in data["operations"]], results)


# how each kind of stored operation (its "made") is made again
_MAKERS = {"const": _made_const, "Placeholder": _made_placeholder,
           "PlaceholderWithDefault": _made_placeholder_with_default, "NoOp": _made_group,
           "LoopVar": _made_source, "GradientInput": _made_source,
           "variable": _made_variable, "assign": _made_assign, "call": _made_call,
           "cond": _made_cond, "while": _made_while, "gradients": _made_gradients,
           "random": _made_random}
