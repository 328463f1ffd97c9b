"""The collectives in native code: generated code calls MPI on the buffers themselves.

Each collective node becomes a call of the MPI library mpi4py loaded, nonblocking,
then a wait for it, e.g.

    i32 MPI_Iallreduce(ptr send, ptr receive, i32 count, Datatype, Op, Comm, ptr request)
    i32 jitflow_mpi_wait(ptr request, ptr what)    (MPI_Test until done, or the timeout)

with the operand's contiguous buffer (its own memory, or a copy for a strided view or
a constant) and the output's buffer: no Python and no copy beyond that. The call runs
outside loop nests, so on worker 0 alone, the calling thread, in the graph's order, and
it is made even after an earlier error of the same call, since the other processes are
waiting for it. A failing MPI call (its error handler returns codes, mpi4py's default)
flags COLLECTIVE_FAILED, which the call boundary raises. Past the timeout, the wait
calls back into Python, which keeps the CollectiveTimeout (naming `what`, a string
constant describing the collective) for the call boundary to raise; after that no
collective calls MPI again (timeouts.py).

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
import hashlib

from llvmlite import binding as llvm
from llvmlite import ir

from ..codegen.control.callees import address, buffer, byte_pointer, contiguous_output
from ..codegen.emitter import I32, PTR, define_function, external_byte, module_global
from ..codegen.errors import MESSAGES, OK, PYTHON_RAISED, record_raised
from ..codegen.lowering.structural import STRUCTURAL
from .datatypes import CHUNK, DATATYPES, REDUCTIONS, chunks
from .mpi import MPI
from .runtime import communicator
from .timeouts import SECONDS, STOPPED, describe, refused, timed_out

COLLECTIVE_FAILED = 64
MESSAGES.setdefault(COLLECTIVE_FAILED, (
    RuntimeError, "an MPI collective called from compiled code returned an error (do "
                  "all the processes pass arrays of one shape and dtype?)"))

COMM, DATATYPE, OP, REQUEST = (ir.IntType(8 * MPI._sizeof(kind))
                               for kind in (MPI.Comm, MPI.Datatype, MPI.Op, MPI.Request))
assert REQUEST.width <= 64, "an MPI_Request is kept in an int64 (all_reduce_start)"
STATUS = ir.ArrayType(ir.IntType(8), MPI._sizeof(MPI.Status))
DOUBLE = ir.DoubleType()
FUNCTIONS = {  # the nonblocking collectives (their last argument: the request made)
    "MPI_Iallreduce": ir.FunctionType(I32, [PTR, PTR, I32, DATATYPE, OP, COMM, PTR]),
    "MPI_Iallgather": ir.FunctionType(I32, [PTR, I32, DATATYPE, PTR, I32, DATATYPE, COMM,
                                            PTR]),
    "MPI_Ireduce_scatter_block": ir.FunctionType(I32, [PTR, PTR, I32, DATATYPE, OP, COMM,
                                                       PTR]),
    "MPI_Ibcast": ir.FunctionType(I32, [PTR, I32, DATATYPE, I32, COMM, PTR]),
    "MPI_Test": ir.FunctionType(I32, [PTR, PTR, PTR]),  # request, done flag, status
    "MPI_Wtime": ir.FunctionType(DOUBLE, []),
    "sched_yield": ir.FunctionType(I32, []),  # libc's
}
# As MPICH's own waits (MPIR_CVAR_POLLS_BEFORE_YIELD): polling without a pause, the
# wait would keep its core for a whole time slice from a process of the job that
# shares it, and a collective of microseconds took milliseconds on a busy machine.
POLLS_BEFORE_YIELD = 1000
# Python, called from the wait loop when its deadline passes, and in place of a
# collective once one has timed out: each keeps the CollectiveTimeout for the call
# boundary to raise (errors.record_raised) and returns PYTHON_RAISED.
REPORT = ir.FunctionType(I32, [PTR, DOUBLE])  # (what, the C string; seconds waited)
_REPORT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_char_p, ctypes.c_double)


def _report(what, waited):
    comm, what = communicator(), what.decode()
    record_raised(refused(what) if waited < 0 else timed_out(comm, what, waited))
    return PYTHON_RAISED


_REPORTER = _REPORT(_report)  # kept alive with the module: native code calls it


@functools.cache
def _register_symbols():
    """The MPI functions and handles, made known to the linker once per process."""
    library = ctypes.CDLL(MPI.__file__)  # its symbols include the MPI library's and libc's
    for name in FUNCTIONS:
        llvm.add_symbol(name, ctypes.cast(getattr(library, name), ctypes.c_void_p).value)
    llvm.add_symbol("jitflow_mpi_comm", MPI._addressof(communicator()))
    for dtype, datatype in DATATYPES.items():
        llvm.add_symbol(f"jitflow_mpi_{dtype.name}", MPI._addressof(datatype))
    for name, op in REDUCTIONS.items():
        llvm.add_symbol(f"jitflow_mpi_{name}", MPI._addressof(op))
    llvm.add_symbol("jitflow_mpi_timeout", ctypes.addressof(SECONDS))
    llvm.add_symbol("jitflow_mpi_stopped", ctypes.addressof(STOPPED))
    llvm.add_symbol("jitflow_mpi_request_null", MPI._addressof(MPI.REQUEST_NULL))
    llvm.add_symbol("jitflow_mpi_report", ctypes.cast(_REPORTER, ctypes.c_void_p).value)


def _function(module, name, type=None):
    return module.globals.get(name) or ir.Function(module, type or FUNCTIONS[name], name)


class Call:
    """What one collective's lowering needs: the handles and the call itself."""

    def __init__(self, lo, node):
        _register_symbols()
        self.lo, self.b = lo, lo.builder
        x = node.inputs[0].type
        self.what = _c_string(lo.module, describe(_named(node), x.dtype, x.shape))

    def handle(self, symbol, type):
        return self.b.load(external_byte(self.lo.module, symbol), typ=type)

    def comm(self):
        return self.handle("jitflow_mpi_comm", COMM)

    def datatype(self, dtype):
        return self.handle(f"jitflow_mpi_{dtype.name}", DATATYPE)

    def op(self, name):
        return self.handle(f"jitflow_mpi_{name}", OP)

    def __call__(self, name, *arguments):
        """Start the collective, then wait for it."""
        request = self.lo.entry_alloca(REQUEST, align=8)
        self.start(name, request, *arguments)
        self.wait(request)

    def start(self, name, request, *arguments):
        """Start the nonblocking collective `name`, its handle written to `request`.
        Once a collective has timed out, report that instead, calling no MPI; the
        request is then left null, as it is when MPI fails, so that waiting for it
        ends at once."""
        b, module, error = self.b, self.lo.module, self.lo.em.error
        going = b.icmp_signed("==", self.handle("jitflow_mpi_stopped", I32), I32(0))
        with b.if_else(going, likely=True) as (start, refuse):
            with start:
                status = b.call(_function(module, name), list(arguments) + [request])
                failed = b.icmp_signed("!=", status, I32(0))
                error.flag_if(failed, COLLECTIVE_FAILED)
                with b.if_then(failed, likely=False):
                    b.store(self.handle("jitflow_mpi_request_null", REQUEST), request)
            with refuse:
                b.store(self.handle("jitflow_mpi_request_null", REQUEST), request)
                error.merge(b.call(_function(module, "jitflow_mpi_report", REPORT),
                                   [self.what, DOUBLE(-1.0)]))

    def wait(self, request):
        """Wait for `request` (no longer than the timeout)."""
        self.lo.em.error.merge(self.b.call(_wait_function(self.lo.module),
                                           [request, self.what]))


def _named(node):
    """How errors name the collective: all_reduce(sum), broadcast(root=1)."""
    if node.op.startswith("all_reduce"):  # its start and its wait too
        return f"all_reduce({node.params['op']})"
    if node.op == "broadcast_root":
        return f"broadcast(root={node.params['root']})"
    return node.op


def _c_string(module, text):
    """A constant NUL-ended string in `module`, named by its text."""
    data = text.encode() + b"\0"
    name = "jitflow_mpi_what_" + hashlib.sha256(data).hexdigest()[:16]

    def make():
        kind = ir.ArrayType(ir.IntType(8), len(data))
        constant = ir.GlobalVariable(module, kind, name)
        constant.initializer = ir.Constant(kind, bytearray(data))
        constant.global_constant, constant.linkage = True, "internal"
        return constant
    return module_global(module, name, make)


def _wait_function(module):
    """i32 jitflow_mpi_wait(ptr request, ptr what): MPI_Test until the request is done
    (OK), MPI fails (COLLECTIVE_FAILED) or the timeout passes (the report's status),
    yielding the core every POLLS_BEFORE_YIELD tests. One function per module, the
    loop of timeouts.run in native code: a prompt collective pays for a clock read
    beside each MPI_Test."""
    return module_global(module, "jitflow_mpi_wait", lambda: _define_wait(module))


def _define_wait(module):
    function, b = define_function(module, "jitflow_mpi_wait", I32, [PTR, PTR])
    request, what = function.args
    done, status, polls = b.alloca(I32), b.alloca(STATUS), b.alloca(I32)
    status.align = 8
    b.store(I32(0), polls)
    started = b.call(_function(module, "MPI_Wtime"), [])
    limit = b.load(external_byte(module, "jitflow_mpi_timeout"), typ=DOUBLE)
    poll = function.append_basic_block("poll")
    b.branch(poll)
    b.position_at_end(poll)
    failed = b.icmp_signed("!=", b.call(_function(module, "MPI_Test"),
                                        [request, done, status]), I32(0))
    with b.if_then(failed, likely=False):
        b.ret(I32(COLLECTIVE_FAILED))
    with b.if_then(b.icmp_signed("!=", b.load(done, typ=I32), I32(0))):
        b.ret(I32(OK))
    waited = b.fsub(b.call(_function(module, "MPI_Wtime"), []), started)
    with b.if_then(b.fcmp_ordered(">", waited, limit), likely=False):
        b.ret(b.call(_function(module, "jitflow_mpi_report", REPORT), [what, waited]))
    count = b.add(b.load(polls, typ=I32), I32(1))
    due = b.icmp_signed("==", count, I32(POLLS_BEFORE_YIELD))
    b.store(b.select(due, I32(0), count), polls)
    with b.if_then(due, likely=False):
        b.call(_function(module, "sched_yield"), [])
    b.branch(poll)
    return function


def per_process_count(what, count):
    if count > CHUNK:
        raise NotImplementedError(f"{what}: {count} elements per process is more than "
                                  f"one MPI call takes in compiled code ({CHUNK})")
    return I32(count)


# --- the lowerings --------------------------------------------------------------------------

def all_reduce(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    call, size = Call(lo, node), out.dtype.itemsize
    send, receive = buffer(lo, x), address(lo, contiguous_output(out, "all_reduce"))
    for start, count in chunks(out.size):
        call("MPI_Iallreduce", byte_pointer(lo, send, start * size),
             byte_pointer(lo, receive, start * size), I32(count), call.datatype(out.dtype),
             call.op(node.params["op"]), call.comm())


def all_reduce_start(lo, node, inputs, outputs):
    """MPI_Iallreduce into the buffer the wait will return, placed now and kept until
    the wait (as is the operand, an input of the wait); the requests, one per chunk,
    are the node's result, which the wait reads."""
    (x,), (requests,) = inputs, outputs
    wait_index, wait = _wait_of(lo, node)
    out = contiguous_output(lo.place_ahead(wait.outputs[0], wait_index), "all_reduce")
    call, size = Call(lo, node), out.dtype.itemsize
    send, receive = _kept_buffer(lo, x, wait_index), address(lo, out)
    for k, (start, count) in enumerate(chunks(out.size)):
        call.start("MPI_Iallreduce", _request(lo, requests, k),
                   byte_pointer(lo, send, start * size),
                   byte_pointer(lo, receive, start * size), I32(count),
                   call.datatype(out.dtype), call.op(node.params["op"]), call.comm())


def all_reduce_wait(lo, node, inputs, outputs):
    """Wait for each request of the start; the result is already in the output's
    buffer, the one the start placed."""
    requests = inputs[1]  # (the operand, inputs[0], is there to keep its buffer alive)
    call = Call(lo, node)
    for k in range(requests.size):
        call.wait(_request(lo, requests, k))


def _wait_of(lo, start):
    """(index, node) of the wait that reads `start`'s requests."""
    requests = start.outputs[0]
    for index in range(lo.node_index + 1, len(lo.graph.nodes)):
        node = lo.graph.nodes[index]
        if node.op == "all_reduce_wait" and requests in node.inputs:
            return index, node
    raise NotImplementedError("all_reduce_start: no all_reduce_wait reads its requests")


def _kept_buffer(lo, view, until):
    """A pointer to `view`'s elements, contiguous (a copy if they are not), which stay
    there until node `until` is done: MPI reads them until the wait."""
    if view.is_contiguous():
        return address(lo, view)
    copy = lo.memory.scratch(view.shape, view.dtype, until=until)
    lo.copy(view, copy)
    return copy.base


def _request(lo, requests, k):
    """Where request k is kept: element k of the int64 requests (an MPI_Request is an
    int or a pointer: at most 8 bytes)."""
    return byte_pointer(lo, address(lo, requests), 8 * k)


def all_gather(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    call = Call(lo, node)
    count = per_process_count("all_gather", x.size)
    datatype = call.datatype(out.dtype)
    call("MPI_Iallgather", buffer(lo, x), count, datatype,
         address(lo, contiguous_output(out, "all_gather")), count, datatype, call.comm())


def reduce_scatter(lo, node, inputs, outputs):
    (x,), (out,) = inputs, outputs
    call = Call(lo, node)
    call("MPI_Ireduce_scatter_block", buffer(lo, x),
         address(lo, contiguous_output(out, "reduce_scatter")),
         per_process_count("reduce_scatter", out.size), call.datatype(out.dtype),
         call.op("sum"), call.comm())


def broadcast(lo, node, inputs, outputs):
    """The operand copied to the output, which MPI_Bcast then overwrites off the root."""
    (x,), (out,) = inputs, outputs
    call, size = Call(lo, node), out.dtype.itemsize
    lo.copy(x, contiguous_output(out, "broadcast"))
    receive = address(lo, out)
    for start, count in chunks(out.size):
        call("MPI_Ibcast", byte_pointer(lo, receive, start * size), I32(count),
             call.datatype(out.dtype), I32(node.params["root"]), call.comm())


STRUCTURAL.update({"all_reduce": all_reduce, "all_reduce_start": all_reduce_start,
                   "all_reduce_wait": all_reduce_wait, "all_gather": all_gather,
                   "reduce_scatter": reduce_scatter, "broadcast_root": broadcast})
