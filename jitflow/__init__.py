"""jitflow: NumPy code, traced to an SSA graph, optimized and run.

    import jitflow
    import numpy as np

    @jitflow.function
    def f(x, w):
        return np.tanh(x @ w).sum(axis=1)
"""
from .config import config
from .codegen.runtime import libraries as _libraries

if config.backend == "native" and not config.run_eagerly:
    _libraries.start_building()  # on a thread, while the rest of jitflow is imported

from . import numpy  # noqa: E402
from . import array_methods  # noqa: F401  (gives the Tracer its operators and methods)
from .autodiff import (custom_jvp, custom_vjp, grad, hessian, jacfwd, jacobian, jacrev, jvp, jvp_graph,
                       value_and_grad, vjp, vjp_graph)
from .batching import vmap
from .control_flow import cond, fori_loop, scan, switch, while_loop
from .errors import (BooleanIndexError, CacheWarning, CompileWarning,
                     ConcretizationError, RetraceWarning, TracerLeakError)
from .function import CacheInfo, Function, function
from .ir.graph import Graph, Lit, Node, Var, verify
from .ir.passes import PIPELINE
from .ir.passes import optimize as _optimize
from .ir.types import (TensorType, bool_, float32, float64, int8, int16, int32, int64,
                       uint8, uint16, uint32, uint64)
from .ops import stop_gradient
from .trace import Tracer
from .tape import GradientTape
from .variables import Variable

from ._version import __version__
# They build on everything above.
from . import datasets, debug, drawing, nn, optim, profiler, random, testing  # noqa: E402
from .callbacks import ShapeDtypeStruct, pure_callback  # noqa: E402
from . import saving  # noqa: E402
from .saving import load, save  # noqa: E402
from .drawing import to_dot  # noqa: E402
from .profiler import profile  # noqa: E402


from . import import_objects as _import_objects  # noqa: E402

_import_objects.freeze(libraries_settled=_libraries.settled())


def __getattr__(name):
    """jitflow.summary is loaded when first used: it loads tensorboard (~0.2 s), an
    optional dependency."""
    if name == "summary":
        import importlib
        return importlib.import_module(f"{__name__}.summary")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def optimize(graph):
    """`graph` after the whole pass pipeline (honours JITFLOW_DUMP and JITFLOW_CHECK)."""
    return _optimize(graph, dump=config.dump_ir, check=config.check_ir)


__all__ = ["numpy", "config", "function", "cond", "switch", "while_loop", "fori_loop", "scan",
           "grad", "value_and_grad", "vjp", "jvp",
           "jacrev", "jacfwd", "jacobian", "hessian", "vmap", "vjp_graph", "jvp_graph",
           "stop_gradient", "custom_vjp", "custom_jvp", "Function", "CacheInfo", "optimize", "verify",
           "Graph", "Node", "Var", "Lit", "TensorType", "Tracer", "PIPELINE", "Variable", "GradientTape",
           "ConcretizationError", "TracerLeakError", "BooleanIndexError", "RetraceWarning",
           "CompileWarning", "CacheWarning",
           "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64", "nn", "optim", "random", "datasets",
           "testing", "debug", "drawing", "to_dot", "profiler", "profile", "saving", "save",
           "load", "pure_callback", "ShapeDtypeStruct"]
