"""The collectives in native code: generated code calls MPI on the buffers themselves.

Each collective node becomes one call of the MPI library mpi4py loaded, e.g.

    i32 MPI_Allreduce(ptr send, ptr receive, i32 count, Datatype, Op, Comm)

with the operand's contiguous buffer (its own memory, or a copy for a strided view or
a constant) and the output's buffer: no Python and no copy beyond that. The call runs
outside loop nests, so on worker 0 alone, the calling thread, in the graph's order, and
it is made even after an earlier error of the same call, since the other processes are
waiting for it. A failing MPI call (its error handler returns codes, mpi4py's default)
flags COLLECTIVE_FAILED, which the call boundary raises.

Like OpenBLAS (codegen/gemm/blas.py), everything is reached by symbols that
llvm.add_symbol resolves, so the module text, and its disk-cache entry, holds no
address: the MPI functions, and the handles (jitflow's communicator, the datatypes, the
reduction ops), read at run time from where mpi4py keeps them (MPI._addressof). A
handle is an int in MPICH and a pointer in Open MPI: its width comes from MPI._sizeof.

Counts are C ints, so a large all_reduce or broadcast goes as several calls of at most
CHUNK elements; all_gather and reduce_scatter refuse more than that per process.
"""
import ctypes
import functools

from llvmlite import binding as llvm
from llvmlite import ir

from ..codegen.control.callees import address, buffer, byte_pointer, contiguous_output
from ..codegen.emitter import I32, PTR, external_byte
from ..codegen.errors import MESSAGES
from ..codegen.lowering.structural import STRUCTURAL
from .datatypes import DATATYPES, REDUCTIONS
from .mpi import MPI
from .runtime import communicator

COLLECTIVE_FAILED = 64
MESSAGES.setdefault(COLLECTIVE_FAILED, (
    RuntimeError, "an MPI collective called from compiled code returned an error (do "
                  "all the processes pass arrays of one shape and dtype?)"))
CHUNK = 2 ** 30  # elements per call: below C's INT_MAX

COMM, DATATYPE, OP = (ir.IntType(8 * MPI._sizeof(kind))
                      for kind in (MPI.Comm, MPI.Datatype, MPI.Op))
FUNCTIONS = {
    "MPI_Allreduce": ir.FunctionType(I32, [PTR, PTR, I32, DATATYPE, OP, COMM]),
    "MPI_Allgather": ir.FunctionType(I32, [PTR, I32, DATATYPE, PTR, I32, DATATYPE, COMM]),
    "MPI_Reduce_scatter_block": ir.FunctionType(I32, [PTR, PTR, I32, DATATYPE, OP, COMM]),
    "MPI_Bcast": ir.FunctionType(I32, [PTR, I32, DATATYPE, I32, COMM]),
}


@functools.cache
def _register_symbols():
    """The MPI functions and handles, made known to the linker once per process."""
    library = ctypes.CDLL(MPI.__file__)  # its symbols include the MPI library's
    for name in FUNCTIONS:
        llvm.add_symbol(name, ctypes.cast(getattr(library, name), ctypes.c_void_p).value)
    llvm.add_symbol("jitflow_mpi_comm", MPI._addressof(communicator()))
    for dtype, datatype in DATATYPES.items():
        llvm.add_symbol(f"jitflow_mpi_{dtype.name}", MPI._addressof(datatype))
    for name, op in REDUCTIONS.items():
        llvm.add_symbol(f"jitflow_mpi_{name}", MPI._addressof(op))


class Call:
    """What one collective's lowering needs: the handles and the call itself."""

    def __init__(self, lo):
        _register_symbols()
        self.lo, self.b = lo, lo.builder

    def handle(self, symbol, type):
        return self.b.load(external_byte(self.lo.module, symbol), typ=type)

    def comm(self):
        return self.handle("jitflow_mpi_comm", COMM)

    def datatype(self, dtype):
        return self.handle(f"jitflow_mpi_{dtype.name}", DATATYPE)

    def op(self, name):
        return self.handle(f"jitflow_mpi_{name}", OP)

    def __call__(self, name, *arguments):
        module = self.lo.module
        function = module.globals.get(name) or ir.Function(module, FUNCTIONS[name], name)
        status = self.b.call(function, list(arguments))
        self.lo.em.error.flag_if(self.b.icmp_signed("!=", status, I32(0)),
                                 COLLECTIVE_FAILED)


def chunks(count):
    return [(start, min(CHUNK, count - start)) for start in range(0, count, CHUNK)]


def per_process_count(what, count):
    if count > CHUNK:
        raise NotImplementedError(f"{what}: {count} elements per process is more than "
                                  f"one MPI call takes in compiled code ({CHUNK})")
    return I32(count)


# --- the lowerings --------------------------------------------------------------------------

def all_reduce(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    call, size = Call(lo), out.dtype.itemsize
    send, receive = buffer(lo, x), address(lo, contiguous_output(out, "all_reduce"))
    for start, count in chunks(out.size):
        call("MPI_Allreduce", byte_pointer(lo, send, start * size),
             byte_pointer(lo, receive, start * size), I32(count), call.datatype(out.dtype),
             call.op(node.params["op"]), call.comm())


def all_gather(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    call = Call(lo)
    count = per_process_count("all_gather", x.size)
    datatype = call.datatype(out.dtype)
    call("MPI_Allgather", buffer(lo, x), count, datatype,
         address(lo, contiguous_output(out, "all_gather")), count, datatype, call.comm())


def reduce_scatter(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    call = Call(lo)
    call("MPI_Reduce_scatter_block", buffer(lo, x),
         address(lo, contiguous_output(out, "reduce_scatter")),
         per_process_count("reduce_scatter", out.size), call.datatype(out.dtype),
         call.op("sum"), call.comm())


def broadcast(lo, node, inputs, outputs):
    """The operand copied to the output, which MPI_Bcast then overwrites off the root."""
    (x,), (out,) = inputs, outputs
    call, size = Call(lo), out.dtype.itemsize
    lo.copy(x, contiguous_output(out, "broadcast"))
    receive = address(lo, out)
    for start, count in chunks(out.size):
        call("MPI_Bcast", byte_pointer(lo, receive, start * size), I32(count),
             call.datatype(out.dtype), I32(node.params["root"]), call.comm())


STRUCTURAL.update({"all_reduce": all_reduce, "all_gather": all_gather,
                   "reduce_scatter": reduce_scatter, "broadcast_root": broadcast})
