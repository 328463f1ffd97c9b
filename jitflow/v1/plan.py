"""Plan: what one kind of Session.run computes, as a compiled jitflow function.

The plan's function takes the fed values, then the values of the Variables read; it
returns the fetched tensors' values, then the new values of the Variables assigned.
It is made a @jitflow.function, which traces it once per feed shape to jitflow's IR,
optimizes and compiles it.
"""
import inspect

import numpy as np

from .. import pytree
from ..errors import at_user_line
from ..function import function
from .replay import Replay
from .tensor import Tensor


class Plan:
    def __init__(self, graph, elements, structure, fed):
        self.graph = graph
        self.structure = structure
        self.fed = fed
        self.fetched = list(dict.fromkeys(e for e in elements if isinstance(e, Tensor)))
        self.positions = [self.fetched.index(e) if isinstance(e, Tensor) else None
                          for e in elements]
        self.operations = prune(elements, set(fed))
        _check_fed(self.operations, set(fed))
        self.reads = [op.outputs[0] for op in self.operations if op.type == "VariableV2"]
        self.writes = _assigned(self.operations)
        self.feeders = [_feeder(t) for t in fed]
        self.single = structure == pytree.LEAF and elements and self.positions[0] is not None
        self.function = function(_replayer(self))

    def run(self, session, feeds):
        arrays = [feeder(value) for feeder, value in zip(self.feeders, feeds.values())]
        if self.reads:
            arrays += session.variable_values(self.reads)
        results = self.function(*arrays)
        count = len(self.fetched)
        if self.writes:
            session.store(self.writes, results[count:])
        if self.single:
            return _plain(results[0])
        values = [_plain(results[i]) for i in range(count)]
        return pytree.unflatten(self.structure,
                                [None if p is None else values[p] for p in self.positions])


def _plain(value):
    """A 0-d result as NumPy's scalar, as TensorFlow's sessions give it."""
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


def prune(elements, fed):
    """The operations the fetched `elements` need, in creation order: inputs are
    followed up to the fed tensors, control inputs always."""
    needed, stack = set(), [e.op if isinstance(e, Tensor) else e for e in elements]
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs if t not in fed)
        stack.extend(op.control_inputs)
    return sorted(needed, key=lambda op: op.index)


def _check_fed(operations, fed):
    for op in operations:
        if op.type == "LoopVar" and op.outputs[0] not in fed:
            raise ValueError(at_user_line(
                f"{op.outputs[0].name!r} is a loop variable of a while_loop: its values "
                f"exist only inside the loop; fetch the loop's outputs"))
        if op.type == "Placeholder" and op.outputs[0] not in fed:
            tensor = op.outputs[0]
            raise ValueError(at_user_line(
                f"placeholder {op.name!r} (dtype {tensor.dtype}, shape {tensor.shape}) "
                f"needs a value: this run's fetches depend on it; give it in feed_dict"))


def _assigned(operations):
    written = {}
    for op in operations:
        if op.assigns is not None:
            if op.assigns in written:
                raise ValueError(at_user_line(
                    f"one run assigns Variable {op.assigns.op.name!r} twice (operations "
                    f"{written[op.assigns].name!r} and {op.name!r}); which comes last "
                    f"would be arbitrary: run them separately"))
            written[op.assigns] = op
    return list(written)


def _feeder(tensor):
    """fed value -> a C-contiguous ndarray of `tensor`'s dtype, checked against its
    static shape; a value that would not fit (float into int, or another shape) raises
    naming both."""
    dtype, shape = tensor.dtype, tensor.shape
    rank = shape.ndims
    known = [] if rank is None else [(i, d) for i, d in enumerate(shape.dims) if d is not None]

    def feed(value):
        if value.__class__ is not np.ndarray or value.dtype != dtype:
            array = np.asarray(value)
            if not np.can_cast(array.dtype, dtype, "same_kind"):
                raise TypeError(at_user_line(
                    f"cannot feed a value of dtype {array.dtype} to tensor {tensor.name!r} "
                    f"of dtype {dtype}"))
            value = array.astype(dtype, copy=False)
        sizes = value.shape
        if rank is not None and (len(sizes) != rank or any(sizes[i] != d for i, d in known)):
            raise ValueError(at_user_line(
                f"cannot feed a value of shape {value.shape} to tensor {tensor.name!r} of "
                f"shape {shape}"))
        return value if value.flags.c_contiguous else np.ascontiguousarray(value)
    return feed


def _replayer(plan):
    """The plan as a function of flat positional arrays, for jitflow.function."""
    fed, reads, writes, fetched = plan.fed, plan.reads, plan.writes, plan.fetched
    operations = plan.operations

    def session_run(*arrays):
        replay = Replay(dict(zip(fed, arrays)), dict(zip(reads, arrays[len(fed):])))
        replay.run(operations)
        return tuple([replay.env[t] for t in fetched] +
                     [replay.assigned[v] for v in writes])
    count = len(fed) + len(reads)
    session_run.__signature__ = inspect.Signature(
        [inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
         for i in range(count)])
    return session_run
