"""jitflow.onnx.load: an ONNX model as a jitflow.function.

The model's graph is run node by node on jitflow's arrays, each ONNX operator written
with jitflow.numpy (load_math, load_arrays, load_nn, load_resize, load_control,
load_fourier, load_sorting): traced, the whole model becomes one jitflow graph,
optimized and compiled per input signature, and differentiable like any other. Values
known while tracing (shapes, and what is computed from them and from constants alone)
are computed then with onnx's reference evaluator, so shape arithmetic is folded away
as ONNX exporters expect.
"""
import inspect
import keyword
import re

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

from ..function import function
from ..trace import Tracer
from .complex_io import has_complex, with_complex_values
from .dtypes import jitflow_dtype
from .errors import unsupported
from .load_arrays import ARRAY_OPS
from .load_control import CONTROL_OPS
from .load_fourier import FOURIER_OPS
from .load_math import MATH_OPS
from .load_nn import NN_OPS
from .load_resize import RESIZE_OPS
from .load_sorting import SORTING_OPS
from .onnx_node import OnnxNode

OPS = {**MATH_OPS, **ARRAY_OPS, **NN_OPS, **RESIZE_OPS, **CONTROL_OPS, **FOURIER_OPS,
       **SORTING_OPS}
DOMAINS = ("", "ai.onnx")


def load(model):
    """The ONNX model (a path or a ModelProto) as a jitflow.function of its inputs
    (those that are not initializers), in the graph's order; it returns the one output,
    or a tuple of them. The inputs and outputs of a model jitflow exported from complex
    values are those complex values again (complex_io.py)."""
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(model)
    onnx.checker.check_model(model)
    opset = _default_opset(model)
    unsupported("jitflow.onnx.load: jitflow cannot run the ONNX operators",
                operators_in(model.graph), OPS)
    run = _runner(model.graph, opset)
    inputs = [i for i in model.graph.input if i.name not in _initializer_names(model.graph)]
    if has_complex(inputs) or has_complex(model.graph.output):
        run = with_complex_values(run, inputs, model.graph.output, _identifier)
    return function(run)


def _initializer_names(graph):
    return {t.name for t in graph.initializer}


def operators_in(graph):
    """The op types of a graph and its subgraphs."""
    names = set()
    for node in graph.node:
        names.add(node.op_type)
        for attribute in node.attribute:
            for sub in [attribute.g, *attribute.graphs]:
                names |= operators_in(sub)
    return names


def _default_opset(model):
    versions = {o.domain: o.version for o in model.opset_import}
    others = [d for d in versions if d not in DOMAINS]
    if others:
        raise NotImplementedError(f"jitflow.onnx.load: operators of the domains {others} "
                                  f"are not supported (only ONNX's own)")
    return max(versions.get(d, 0) for d in DOMAINS)


def _runner(graph, opset):
    """The Python function of the graph's inputs, with a signature named after them."""
    initializers = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]

    def run(*args):
        scope = dict(initializers)
        for value_info, arg in zip(inputs, args, strict=True):
            scope[value_info.name] = _checked(value_info, arg)
        outputs = run_graph(graph, scope, opset)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    run.__name__ = run.__qualname__ = _identifier(graph.name or "onnx_model", set())
    taken = set()
    run.__signature__ = inspect.Signature(
        [inspect.Parameter(_identifier(i.name, taken), inspect.Parameter.POSITIONAL_OR_KEYWORD)
         for i in inputs])
    return run


def run_graph(graph, scope, opset):
    """The values of the graph's outputs, its inputs' values (and those of the scope
    around it) in `scope`."""
    env = dict(scope)
    env.update((t.name, numpy_helper.to_array(t)) for t in graph.initializer)
    for proto in graph.node:
        values = [env[name] if name else None for name in proto.input]
        outputs = run_node(proto, values, env, opset)
        for name, value in zip(proto.output, outputs):
            if name:
                env[name] = value
    return [env[o.name] for o in graph.output]


def run_node(proto, values, scope, opset):
    node = OnnxNode(proto, opset, run_graph, scope)
    if _foldable(proto, values):
        return _fold(proto, values, opset)
    outputs = OPS[proto.op_type](node, *values)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    wanted = [i for i, name in enumerate(proto.output) if name]
    if wanted and max(wanted) >= len(outputs):
        raise node.fail(f"its output {max(wanted)} is not supported (jitflow gives its "
                        f"first {len(outputs)})")
    return outputs


def _foldable(proto, values):
    """Whether the node's outputs can be computed now: every input is known and it
    runs no subgraph."""
    return all(not isinstance(v, Tracer) for v in values) and \
        not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                for a in proto.attribute)


def _fold(proto, values, opset):
    feeds = {name: np.asarray(v) for name, v in zip(proto.input, values) if name}
    with np.errstate(all="ignore"):  # (IEEE results, as compiled code gives them)
        return ReferenceEvaluator(proto, opsets={"": opset}).run(None, feeds)


def _checked(value_info, arg):
    """An input as the model declares it: its dtype and rank, and each fixed size."""
    kind = value_info.type.WhichOneof("value")
    if kind != "tensor_type":
        raise TypeError(f"jitflow.onnx.load: input {value_info.name!r} is a {kind}; "
                        f"jitflow runs models whose inputs are tensors")
    tensor = value_info.type.tensor_type
    dtype = jitflow_dtype(tensor.elem_type, f"input {value_info.name!r}")
    declared = [d.dim_value if d.HasField("dim_value") else None
                for d in tensor.shape.dim] if tensor.HasField("shape") else None
    shape = tuple(np.shape(arg))
    actual = arg.dtype if hasattr(arg, "dtype") else np.asarray(arg).dtype
    if actual != dtype or not _fits(shape, declared):
        shown = "any shape" if declared is None else \
            f"shape {['?' if d is None else d for d in declared]}"
        raise TypeError(f"jitflow.onnx.load: input {value_info.name!r} is declared "
                        f"{dtype} of {shown}, got {actual} of shape {list(shape)}")
    return arg


def _fits(shape, declared):
    return declared is None or (len(shape) == len(declared) and all(
        d is None or d == s for d, s in zip(declared, shape)))


def _identifier(name, taken):
    """A Python identifier for an ONNX name (parameters must be), unique in `taken`."""
    text = re.sub(r"\W", "_", name)
    if not text or text[0].isdigit() or keyword.iskeyword(text):
        text = "_" + text
    while text in taken:
        text += "_"
    taken.add(text)
    return text
