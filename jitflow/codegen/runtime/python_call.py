"""The native code behind every compiled signature's Python entry (python_entry.py):

    PyObject *jitflow_python_call_with(const Signature *signature,
                                       PyObject *const *args, Py_ssize_t nargs,
                                       int64_t outputs_given)

One function, compiled once per process (and kept in the disk cache), reads what it
checks and allocates from a table: each signature's module holds only that table and a
call. Written out per signature, the checks were 560 lines of IR for a training step
of 8 arguments and 7 results, which took ~5 ms to build and print and ~9 ms to compile,
on every compile.

The signature table, as laid out in memory (every field 8 bytes):

    {i64 inputs, i64 outputs, i64 workspace bytes, i64 release the GIL, ptr entry,
     ptr spare workspace, ptr over (outputs x i64),
     [inputs + outputs x {i64 ndim, ptr dtype, ptr dimensions, i64 bytes}]}

A call passes the arguments, or (`outputs_given` not 0) the arguments and then one
array per output to write it into. Given outputs are checked as arguments are, and
must be writeable; any two arrays of the call whose bytes overlap, one of them a given
output, decline the call: the compiled code reads its arguments while it writes its
results and was built on the promise that they never overlap. (The checked path then
computes such a result apart and copies it in.) The one exception is `over`: output i
may be the very buffer of argument over[i] (-1: none), which the code may write over
(in_place.py): a donated parameter updated in place.

The spare workspace is a pointer the signature's module holds: the workspace of the last
call, kept for the next. A workspace of more than glibc's mmap threshold (128 KiB to
32 MiB) would otherwise be mapped fresh by every call and given back after it, so every
call page-faults its way through zeroed pages: for a training step with a 54 MiB
workspace, about 16 ms of system time per step. Calls take the spare with an atomic
exchange, so a call made while another runs allocates its own and one of them is kept.
"""
import threading

from llvmlite import binding as llvm
from llvmlite import ir

from ..emitter import I32, I64, PTR, Emitter, external_byte, module_global
from ..errors import FALLBACK, OK, OUT_OF_MEMORY
from ..jit.engine import SHORT_PIPELINE, CompiledModule
from ..memory import ALIGNMENT

GENERIC = "jitflow_python_call_with"
RELEASE = "jitflow_release_objects"
INPUTS, OUTPUTS, WORKSPACE, RELEASE_GIL, ENTRY, SPARE, OVER, ARRAYS = \
    0, 8, 16, 24, 32, 40, 48, 56
ARRAY_BYTES, ARRAY_NDIM, ARRAY_DTYPE, ARRAY_DIMENSIONS, ARRAY_SIZE = 32, 0, 8, 16, 24
ARRAY_TYPE = ir.LiteralStructType([I64, PTR, PTR, I64])
ENTRY_POINTER = ir.FunctionType(I32, [PTR]).as_pointer()  # i32 entry(ptr slots)
GENERIC_TYPE = ir.FunctionType(PTR, [PTR, PTR, I64, I64])

# Offsets in PyArrayObject_fields (after PyObject_HEAD: refcount, type).
TYPE, DATA, NDIM, DIMENSIONS, DESCR, FLAGS = 8, 16, 24, 32, 56, 64
C_CONTIGUOUS_AND_ALIGNED = 0x0001 | 0x0100  # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED
WRITEABLE = 0x0400  # NPY_ARRAY_WRITEABLE
# Symbols python_entry.py registers with the linker: addresses that change from
# process to process stay out of the module's text, and so out of its cache key.
NDARRAY_SYMBOL, EMPTY_SYMBOL, RETURN_SYMBOL = \
    "jitflow_ndarray_type", "jitflow_PyArray_Empty", "jitflow_PyArray_Return"


def signature_type(arrays):
    return ir.LiteralStructType([I64, I64, I64, I64, PTR, PTR, PTR,
                                 ir.ArrayType(ARRAY_TYPE, arrays)])


_COMPILING = threading.Lock()
_compiled = None


def generic_entry():
    """Compile GENERIC (once per process) and register it with the linker; the symbols
    it uses must be registered first."""
    global _compiled
    with _COMPILING:  # LLVM releases the GIL: two threads could compile it twice
        if _compiled is None:
            # The short pipeline: LLVM's full one took 20 ms more of the first run's
            # CPU time (47 against 27 ms to build), for calls no faster (8 arguments
            # and 7 results: 2.93 us either way).
            library = CompiledModule.library("python call", lambda: _Builder().module,
                                             speed_level=SHORT_PIPELINE)
            llvm.add_symbol(GENERIC, library.address(GENERIC))
            _compiled = library  # kept: signature modules call into it
    return GENERIC


class _Builder:
    def __init__(self):
        self.module = ir.Module("python call")
        self.function = ir.Function(self.module, GENERIC_TYPE, GENERIC)
        self.b = b = ir.IRBuilder(self.function.append_basic_block("entry"))
        self.em = Emitter(b)
        self.release = self._define_release()
        self.signature, args, count, outputs_given = self.function.args
        self.decline = self.function.append_basic_block("decline")
        inputs, outputs = self._word(INPUTS), self._word(OUTPUTS)
        self.slots = b.alloca(PTR, size=b.add(b.add(inputs, outputs), I64(1)))
        made = b.alloca(PTR, size=b.add(outputs, I64(1)))
        given = b.icmp_signed("!=", outputs_given, I64(0))
        self._branch_unless(b.icmp_signed("==", count, b.select(
            given, b.add(inputs, outputs), inputs)))
        with self.em.for_range(inputs, name="argument") as index:
            self._check_array(self._argument(args, index), index, C_CONTIGUOUS_AND_ALIGNED)
        with b.if_else(given) as (into_given, into_fresh):
            with into_given:
                self._take_outputs(args, inputs, outputs, made)
            with into_fresh:
                with self.em.for_range(outputs, name="output") as index:
                    self._allocate_output(b.add(inputs, index), made, index)
        status = self._run(b.add(inputs, outputs), made, outputs)
        self._return_results(status, made, outputs)
        b.position_at_end(self.decline)
        b.ret(self._long(I64(FALLBACK)))

    # --- arguments ------------------------------------------------------------------
    def _argument(self, args, index):
        return self.b.load(self._at(args, self.b.mul(index, I64(8))), typ=PTR)

    def _check_array(self, array, index, required_flags):
        """Decline unless `array` is exactly an ndarray of array `index`'s rank, dtype
        and shape, with `required_flags`; its data pointer goes to its slot."""
        b, spec = self.b, self._array_spec(index)
        self._branch_unless(b.icmp_unsigned("==", self._field(array, TYPE, PTR),
                                            external_byte(self.module, NDARRAY_SYMBOL)))
        ndim = self._field(spec, ARRAY_NDIM, I64)
        flags = b.and_(self._field(array, FLAGS, I32), I32(required_flags))
        matches = b.and_(
            b.icmp_signed("==", b.sext(self._field(array, NDIM, I32), I64), ndim),
            b.and_(b.icmp_unsigned("==", self._field(array, DESCR, PTR),
                                   self._field(spec, ARRAY_DTYPE, PTR)),
                   b.icmp_signed("==", flags, I32(required_flags))))
        self._branch_unless(matches)  # only now are `ndim` dimensions there to read
        found = self._field(array, DIMENSIONS, PTR)
        wanted = self._field(spec, ARRAY_DIMENSIONS, PTR)
        with self.em.for_range(ndim, name="axis") as axis:
            at = b.mul(axis, I64(8))
            self._branch_unless(b.icmp_signed("==", b.load(self._at(found, at), typ=I64),
                                              b.load(self._at(wanted, at), typ=I64)))
        b.store(self._field(array, DATA, PTR), self._slot(self.slots, index))

    def _branch_unless(self, condition):
        after = self.function.append_basic_block("checked")
        self.b.cbranch(condition, after, self.decline)
        self.b.position_at_end(after)

    # --- outputs ----------------------------------------------------------------------
    def _take_outputs(self, args, inputs, outputs, made):
        """The arrays passed after the arguments as the outputs: each checked, none
        overlapping another array of the call (but the argument it may be written
        over, if it is that very buffer), then one reference more of each."""
        b = self.b
        with self.em.for_range(outputs, name="given") as index:
            slot = b.add(inputs, index)
            self._check_array(self._argument(args, slot), slot,
                              C_CONTIGUOUS_AND_ALIGNED | WRITEABLE)
            over = b.load(self._at(self._word(OVER, PTR), b.mul(index, I64(8))), typ=I64)
            with self.em.for_range(slot, name="other") as other:
                same_buffer = b.and_(b.icmp_signed("==", other, over),
                                     b.icmp_unsigned("==", self._data(slot), self._data(other)))
                self._branch_unless(b.or_(same_buffer, b.not_(self._overlap(slot, other))))
        with self.em.for_range(outputs, name="taken") as index:
            array = self._argument(args, b.add(inputs, index))
            b.call(self._python("Py_IncRef", None, [PTR]), [array])
            b.store(array, self._slot(made, index))

    def _overlap(self, first, second):
        """Whether the bytes of the arrays in slots `first` and `second` overlap (the
        arrays checked: C-contiguous, of their compiled sizes)."""
        b = self.b

        def extent(slot):
            start = self._data(slot)
            return start, b.add(start, self._field(self._array_spec(slot), ARRAY_SIZE, I64))
        (start, end), (other_start, other_end) = extent(first), extent(second)
        return b.and_(b.and_(b.icmp_unsigned("<", start, other_end),
                             b.icmp_unsigned("<", other_start, end)),
                      b.and_(b.icmp_unsigned("<", start, end),
                             b.icmp_unsigned("<", other_start, other_end)))

    def _allocate_output(self, slot, made, index):
        """A fresh array from PyArray_Empty (which takes over one reference to the
        dtype); on failure (NumPy has set MemoryError) the outputs made so far go."""
        b, spec = self.b, self._array_spec(slot)
        dtype = self._field(spec, ARRAY_DTYPE, PTR)
        b.call(self._python("Py_IncRef", None, [PTR]), [dtype])
        empty = self._python(EMPTY_SYMBOL, PTR, [I32, PTR, PTR, I32])
        array = b.call(empty, [b.trunc(self._field(spec, ARRAY_NDIM, I64), I32),
                               self._field(spec, ARRAY_DIMENSIONS, PTR), dtype, I32(0)])
        self._fail_if_null(array, made, index)
        b.store(array, self._slot(made, index))
        b.store(self._field(array, DATA, PTR), self._slot(self.slots, slot))

    def _fail_if_null(self, value, objects, count):
        """Return NULL (the exception is set) if `value` is NULL, releasing the first
        `count` of `objects`."""
        b = self.b
        with b.if_then(b.icmp_unsigned("==", value, ir.Constant(PTR, None)), likely=False):
            b.call(self.release, [objects, count])
            b.ret(ir.Constant(PTR, None))

    def _define_release(self):
        """void release(PyObject **objects, i64 count): one reference of each less."""
        function = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR, I64]),
                               RELEASE)
        function.linkage = "internal"
        objects, count = function.args
        b = ir.IRBuilder(function.append_basic_block("entry"))
        with Emitter(b).for_range(count, name="object") as index:
            item = b.load(b.gep(objects, [index], source_etype=PTR), typ=PTR)
            b.call(self._python("Py_DecRef", None, [PTR]), [item])
        b.ret_void()
        return function

    # --- the run ------------------------------------------------------------------------
    def _run(self, workspace_slot, made, outputs):
        """Run the entry on the slots with the spare workspace, or a fresh one if another
        call holds it; returns its status."""
        b = self.b
        workspace = self._take_workspace()
        missing = b.icmp_unsigned("==", workspace, ir.Constant(PTR, None))
        with b.if_then(missing, likely=False):
            b.call(self.release, [made, outputs])
            b.ret(self._long(I64(OUT_OF_MEMORY)))
        b.store(workspace, self._slot(self.slots, workspace_slot))
        release_gil = b.icmp_signed("!=", self._word(RELEASE_GIL), I64(0))
        state = b.alloca(PTR)
        b.store(ir.Constant(PTR, None), state)
        with b.if_then(release_gil):
            b.store(b.call(self._python("PyEval_SaveThread", PTR, []), []), state)
        status = b.call(self._word(ENTRY, ENTRY_POINTER), [self.slots])
        with b.if_then(release_gil):
            b.call(self._python("PyEval_RestoreThread", None, [PTR]),
                   [b.load(state, typ=PTR)])
        self._keep_workspace(workspace)
        return status

    def _take_workspace(self):
        b, null = self.b, ir.Constant(PTR, None)
        spare = b.atomic_rmw("xchg", self._word(SPARE, PTR), null, "acq_rel")
        taken = b.alloca(PTR)
        b.store(spare, taken)
        with b.if_then(b.icmp_unsigned("==", spare, null), likely=False):
            b.store(b.call(self._python("aligned_alloc", PTR, [I64, I64]),
                           [I64(ALIGNMENT), self._word(WORKSPACE)]), taken)
        return b.load(taken, typ=PTR)

    def _keep_workspace(self, workspace):
        """Make `workspace` the spare; free the one it replaces (a concurrent call's)."""
        b = self.b
        replaced = b.atomic_rmw("xchg", self._word(SPARE, PTR), workspace, "acq_rel")
        with b.if_then(b.icmp_unsigned("!=", replaced, ir.Constant(PTR, None))):
            b.call(self._python("free", None, [PTR]), [replaced])

    def _return_results(self, status, made, outputs):
        b = self.b
        with b.if_then(b.icmp_signed("!=", status, I32(OK)), likely=False):
            b.call(self.release, [made, outputs])
            b.ret(self._long(b.sext(status, I64)))
        scalar_or_array = self._python(RETURN_SYMBOL, PTR, [PTR])  # takes the reference
        with b.if_then(b.icmp_signed("==", outputs, I64(1))):
            b.ret(b.call(scalar_or_array, [b.load(made, typ=PTR)]))
        results = b.call(self._python("PyTuple_New", PTR, [I64]), [outputs])
        self._fail_if_null(results, made, outputs)
        set_item = self._python("PyTuple_SetItem", I32, [PTR, I64, PTR])
        with self.em.for_range(outputs, name="result") as index:
            result = b.call(scalar_or_array, [b.load(self._slot(made, index), typ=PTR)])
            with b.if_then(b.icmp_unsigned("==", result, ir.Constant(PTR, None)),
                           likely=False):
                b.call(self._python("Py_DecRef", None, [PTR]), [results])
                following = b.add(index, I64(1))
                b.call(self.release, [self._slot(made, following),
                                      b.sub(outputs, following)])
                b.ret(ir.Constant(PTR, None))
            b.call(set_item, [results, index, result])  # takes the reference
        b.ret(results)

    # --- helpers ------------------------------------------------------------------------
    def _data(self, slot):
        """The data address of the checked array in `slot`, as an integer."""
        return self.b.ptrtoint(self.b.load(self._slot(self.slots, slot), typ=PTR), I64)

    def _word(self, offset, type=I64):
        return self._field(self.signature, offset, type)

    def _array_spec(self, index):
        return self._at(self.signature, self.b.add(I64(ARRAYS),
                                                   self.b.mul(index, I64(ARRAY_BYTES))))

    def _long(self, value):
        return self.b.call(self._python("PyLong_FromLong", PTR, [I64]), [value])

    def _field(self, obj, offset, type):
        return self.b.load(self._at(obj, I64(offset)), typ=type)

    def _at(self, pointer, offset):
        return self.b.gep(pointer, [offset], source_etype=ir.IntType(8))

    def _slot(self, pointers, index):
        return self.b.gep(pointers, [index], source_etype=PTR)

    def _python(self, name, result, params):
        return module_global(self.module, name, lambda: ir.Function(
            self.module, ir.FunctionType(result or ir.VoidType(), params), name))
