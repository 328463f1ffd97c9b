"""The collectives as primitives: all_reduce, all_gather, reduce_scatter, broadcast.

Each is one block with its type rule, its NumPy implementation (mpi4py on the array:
eager calls and the interpreter) and its derivatives; native code calls MPI on the
buffers themselves (native.py), and vmap has rules of its own (batching.py).

A collective is not pure: every process must make the same collectives in the same
order, so no pass may drop, merge, hoist or fold one (its result also depends on the
other processes, which constant folding cannot see).

Derivatives follow from the job computing one loss, the sum of every process's loss
(as in JAX's collectives): the gradient on process r of that sum gathers, from every
process, the cotangent of what r's value became there. Hence
    all_reduce(sum)  <-> all_reduce(sum) of the cotangent,
    all_gather       <-> reduce_scatter(sum) of the cotangent (each rank's own part,
                         summed over the processes), and the converse,
    broadcast(root)  <-> the cotangents summed, on the root; zero elsewhere.

all_gather and reduce_scatter are tiled along axis 0, as Horovod's allgather and MPI's
Reduce_scatter_block are: all_gather of (n, ...) arrays is (size * n, ...), rank r's
rows at r * n; a 0-d value counts as one row. reduce_scatter of a (size * n, ...) array
gives each rank its n rows of the sum.
"""
import numpy as np

from .. import ops
from ..ir.primitive import Primitive, register
from ..ir.types import TensorType
from ..trace import bind, constant_type
from .datatypes import DATATYPES, REDUCTIONS, check_dtype, check_reduction, chunks
from .runtime import communicator, rank, size
from .timeouts import run


def _contiguous(what, x):
    """x as a C-contiguous array MPI can read, its dtype checked (eagerly, bind runs
    the implementation without the type rule)."""
    x = np.asarray(x, order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
    check_dtype(what, x.dtype)
    return x


def _run(method, what, x, out, *args, **kwargs):
    """MPI's `method` on the buffers, waiting no longer than the timeout."""
    run(communicator(), method, args, (what, x.dtype, x.shape), kept=(x, out), **kwargs)


def _extremum_weights(x, chosen, dtype):
    """The derivative of max and min goes to the processes that held the extremum,
    shared between ties as np.max's is: 1/ties where a process's x is the extremum
    chosen (a NaN counts as holding a NaN result)."""
    hit = ops.logical_or(ops.equal(x, chosen),
                         ops.logical_and(ops.isnan(x), ops.isnan(chosen)))
    weight = ops.cast(hit, dtype)
    return ops.divide(weight, _reduce_all(weight, "sum"))


# --- all_reduce ---------------------------------------------------------------------------

def _all_reduce_type(x, *, op):
    check_dtype("all_reduce", x.dtype)
    check_reduction("all_reduce", op)
    return x.strong()


def _all_reduce_impl(x, *, op):
    check_reduction("all_reduce", op)
    x = _contiguous("all_reduce", x)
    out = np.empty_like(x)
    _run("Allreduce", f"all_reduce({op})", x, out, [x, DATATYPES[x.dtype]],
         [out, DATATYPES[x.dtype]], op=REDUCTIONS[op])
    return out


def _all_reduce_vjp(ct, x, *, op, out):
    total = _reduce_all(ct, "sum")
    if op == "sum":
        return [total]
    return [ops.multiply(total, _extremum_weights(x, out, constant_type(out).dtype))]


def _all_reduce_jvp(tangents, x, *, op, out):
    if op == "sum":
        return _reduce_all(tangents[0], "sum")
    weights = _extremum_weights(x, out, constant_type(out).dtype)
    return _reduce_all(ops.multiply(tangents[0], weights), "sum")


all_reduce_p = register(Primitive(
    "all_reduce", _all_reduce_type, _all_reduce_impl, pure=False,
    vjp=_all_reduce_vjp, jvp=_all_reduce_jvp))


def _reduce_all(x, op):
    return bind(all_reduce_p, x, op=op)


# --- all_reduce(sum) in two: a start and a wait ------------------------------------------
# Native code starts the reduction (MPI_Iallreduce) at the start and waits for it at the
# wait; the native backend's scheduling (ir/passes/schedule.py) runs a start as soon as
# its operand is ready and a wait only when its result is needed, so the work between
# them (the rest of the backward pass) overlaps the communication. The start's result is
# MPI's request handles (one per call of at most CHUNK elements), which only native code
# fills: eagerly and in the interpreter the start does nothing and the wait makes the
# whole all_reduce, so every process makes its collectives in the same order either way.

def _start_type(x, *, op):
    check_dtype("all_reduce", x.dtype)
    check_reduction("all_reduce", op, ("sum",))
    return TensorType((len(chunks(x.size)),), np.dtype(np.int64))


def _start_impl(x, *, op):
    return np.zeros(len(chunks(np.size(x))), np.int64)


all_reduce_start_p = register(Primitive(
    "all_reduce_start", _start_type, _start_impl, pure=False, schedule="early",
    no_gradient="its result is MPI's request handles; the wait carries the derivative"))


def _wait_type(x, requests, *, op):
    if requests.shape != (len(chunks(x.size)),):
        raise TypeError(f"all_reduce_wait: requests {requests} do not match the operand "
                        f"{x}")
    return x.strong()


def _wait_impl(x, requests, *, op):
    return _all_reduce_impl(x, op=op)


def _wait_vjp(ct, x, requests, *, op, out):
    return [_reduce_all(ct, "sum"), None]


def _wait_jvp(tangents, x, requests, *, op, out):
    return None if tangents[0] is None else _reduce_all(tangents[0], "sum")


all_reduce_wait_p = register(Primitive(
    "all_reduce_wait", _wait_type, _wait_impl, pure=False, schedule="late",
    vjp=_wait_vjp, jvp=_wait_jvp))


def all_reduce_overlapped(x):
    """all_reduce(x, "sum"), whose communication compiled code overlaps with the work
    that does not need its result."""
    return bind(all_reduce_wait_p, x, bind(all_reduce_start_p, x, op="sum"), op="sum")


# --- all_gather ---------------------------------------------------------------------------

def _gathered_shape(shape, processes):
    rows, rest = (shape[0], shape[1:]) if shape else (1, ())
    return (processes * rows,) + tuple(rest)


def _all_gather_type(x, *, processes):
    check_dtype("all_gather", x.dtype)
    return TensorType(_gathered_shape(x.shape, processes), x.dtype)


def _all_gather_impl(x, *, processes):
    x = _contiguous("all_gather", x)
    out = np.empty(_gathered_shape(x.shape, processes), x.dtype)
    _run("Allgather", "all_gather", x, out, [x, DATATYPES[x.dtype]],
         [out, DATATYPES[x.dtype]])
    return out


def _all_gather_vjp(ct, x, *, processes, out):
    return [ops.reshape(_reduce_scatter(ct, processes), constant_type(x).shape)]


def _all_gather_jvp(tangents, x, *, processes, out):
    return bind(all_gather_p, tangents[0], processes=processes)


all_gather_p = register(Primitive(
    "all_gather", _all_gather_type, _all_gather_impl, pure=False,
    vjp=_all_gather_vjp, jvp=_all_gather_jvp))


# --- reduce_scatter (a sum) ---------------------------------------------------------------

def _scattered_shape(what, shape, processes):
    if not shape or shape[0] % processes:
        raise ValueError(f"{what}: the array's first axis must split evenly between the "
                         f"{processes} processes, got shape {shape}")
    return (shape[0] // processes,) + tuple(shape[1:])


def _reduce_scatter_type(x, *, processes):
    check_dtype("reduce_scatter", x.dtype)
    return TensorType(_scattered_shape("reduce_scatter", x.shape, processes), x.dtype)


def _reduce_scatter_impl(x, *, processes):
    x = _contiguous("reduce_scatter", x)
    out = np.empty(_scattered_shape("reduce_scatter", x.shape, processes), x.dtype)
    _run("Reduce_scatter_block", "reduce_scatter", x, out, [x, DATATYPES[x.dtype]],
         [out, DATATYPES[x.dtype]], op=REDUCTIONS["sum"])
    return out


def _reduce_scatter_vjp(ct, x, *, processes, out):
    return [bind(all_gather_p, ct, processes=processes)]


def _reduce_scatter_jvp(tangents, x, *, processes, out):
    return _reduce_scatter(tangents[0], processes)


reduce_scatter_p = register(Primitive(
    "reduce_scatter", _reduce_scatter_type, _reduce_scatter_impl, pure=False,
    vjp=_reduce_scatter_vjp, jvp=_reduce_scatter_jvp))


def _reduce_scatter(x, processes):
    return bind(reduce_scatter_p, x, processes=processes)


# --- broadcast ----------------------------------------------------------------------------

def _broadcast_type(x, *, root):
    check_dtype("broadcast", x.dtype)
    return x.strong()


def _broadcast_impl(x, *, root):
    out = np.array(_contiguous("broadcast", x), copy=True)
    _run("Bcast", f"broadcast(root={root})", out, out, [out, DATATYPES[out.dtype]],
         root=root)
    return out


def _broadcast_vjp(ct, x, *, root, out):
    total = _reduce_all(ct, "sum")  # made on every process: it is a collective
    return [total if rank() == root else None]


def _broadcast_jvp(tangents, x, *, root, out):
    return bind(broadcast_p, tangents[0], root=root)


broadcast_p = register(Primitive(
    "broadcast_root", _broadcast_type, _broadcast_impl, pure=False,
    vjp=_broadcast_vjp, jvp=_broadcast_jvp))


# --- the functions ------------------------------------------------------------------------

def all_reduce(x, op="sum"):
    """x combined elementwise over every process ("sum", "mean", "max" or "min"); every
    process gets the result. A NaN on any process makes that element NaN for max and
    min, as np.max over the processes' arrays would (MPI's own comparison would not)."""
    check_reduction("all_reduce", op, ("sum", "mean", "max", "min"))
    if op == "mean":
        return ops.divide(_reduce_all(x, "sum"), size())
    result = _reduce_all(x, op)
    if op == "sum" or constant_type(x).dtype.kind != "f":
        return result
    any_nan = _reduce_all(ops.cast(ops.isnan(x), np.dtype(np.int32)), "max")
    return ops.where(ops.cast(any_nan, np.dtype(np.bool_)), np.nan, result)


def all_gather(x):
    """Every process's x, concatenated along axis 0 in rank order (a 0-d x as one row):
    (size * n, ...) from (n, ...)."""
    return bind(all_gather_p, x, processes=size())


def reduce_scatter(x):
    """The sum over the processes of x, a (size * n, ...) array, of which each process
    gets its own n rows (rank r: rows r * n to (r + 1) * n)."""
    return _reduce_scatter(x, size())


def broadcast(x, root=0):
    """Process `root`'s x, on every process (all must pass the same shape and dtype)."""
    if not isinstance(root, (int, np.integer)) or not 0 <= root < size():
        raise ValueError(f"broadcast: root must be a rank from 0 to {size() - 1}, got "
                         f"{root!r}")
    return bind(broadcast_p, x, root=int(root))


__all__ = ["all_reduce", "all_gather", "reduce_scatter", "broadcast",
           "all_reduce_overlapped"]
