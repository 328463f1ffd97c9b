"""A native entry point that Python calls directly, as it calls a builtin function.

    PyObject *jitflow_python_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)

(CPython's METH_FASTCALL convention.) It checks every argument itself: exactly an
ndarray (no subclass), of the compiled rank, shape and dtype, C-contiguous and aligned.
Then it allocates the outputs with NumPy's own PyArray_Empty, runs the graph (with the
GIL released when the graph moves enough data to be worth it), and returns the result:
one array, or a tuple of them, 0-d results as NumPy scalars (PyArray_Return), as the
checked path returns them. When an argument does not match, it returns the int
FALLBACK and the caller takes the checked path; on an error, the int status.

Going through ctypes cost ~0.25 us for the call and ~0.12 us for each output allocated
in Python, besides Python's own work to find the entry; this way a call of a compiled
function on small arrays costs about what NumPy's own ufunc call does.

The layouts it reads are NumPy's public ABI (PyArrayObject_fields, the C-API table),
verified on live objects before the first use; where they do not hold (another Python
or NumPy build), `python_entry_abi` is None and every call takes the checked path.
Addresses that change from process to process (types, functions) are reached through
symbols registered with the linker, so the module's text, and its disk cache entry,
stay the same.
"""
import ctypes
import functools

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

from .emitter import I32, I64, PTR
from .errors import FALLBACK, OK, OUT_OF_MEMORY
from .memory import ALIGNMENT

PYTHON_ENTRY = "jitflow_python_call"
METH_FASTCALL = 0x0080
C_CONTIGUOUS_AND_ALIGNED = 0x0001 | 0x0100  # NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED
# Release the GIL around graphs whose arguments and results span this many bytes:
# below, saving and restoring the thread state (~0.1 us) outweighs what other threads
# would gain.
RELEASE_GIL_BYTES = 1 << 16

# Offsets in PyArrayObject_fields (after PyObject_HEAD: refcount, type).
TYPE, DATA, NDIM, DIMENSIONS, DESCR, FLAGS = 8, 16, 24, 32, 56, 64
# Slots of NumPy's C-API table (numpy/__multiarray_api.h), fixed by its ABI.
API_NDARRAY_TYPE, API_RETURN, API_EMPTY = 2, 76, 184
PYTHON_FUNCTIONS = ("Py_IncRef", "Py_DecRef", "PyLong_FromLong", "PyTuple_New",
                    "PyTuple_SetItem", "PyEval_SaveThread", "PyEval_RestoreThread")
NDARRAY_SYMBOL, EMPTY_SYMBOL, RETURN_SYMBOL = \
    "jitflow_ndarray_type", "jitflow_PyArray_Empty", "jitflow_PyArray_Return"


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


@functools.cache
def python_entry_abi():
    """True once the layouts above are verified and the symbols registered; False
    where they do not hold."""
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    try:
        from numpy._core import _multiarray_umath
        table = api.PyCapsule_GetPointer(_multiarray_umath._ARRAY_API, None)
    except (ImportError, AttributeError, ValueError):
        return False

    def api_slot(index):
        return ctypes.c_void_p.from_address(table + 8 * index).value
    if api_slot(API_NDARRAY_TYPE) != id(np.ndarray) or not _layout_holds():
        return False
    symbols = {NDARRAY_SYMBOL: id(np.ndarray), EMPTY_SYMBOL: api_slot(API_EMPTY),
               RETURN_SYMBOL: api_slot(API_RETURN)}
    for name in PYTHON_FUNCTIONS:
        symbols[name] = ctypes.cast(getattr(api, name), ctypes.c_void_p).value
    for name in _DTYPES:
        symbols[_dtype_symbol(name)] = id(np.dtype(name))
    for name, address in symbols.items():
        llvm.add_symbol(name, address)
    return True


_DTYPES = ("bool", "int32", "int64", "float32", "float64")


def _layout_holds():
    """Read a live array's fields at the offsets above and compare with what NumPy says."""
    probe = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    strided = probe[:, :, ::2]

    def pointer(offset, obj=probe):
        return ctypes.c_void_p.from_address(id(obj) + offset).value

    def int32(offset, obj=probe):
        return ctypes.c_int32.from_address(id(obj) + offset).value
    dimensions = (ctypes.c_int64 * 3).from_address(pointer(DIMENSIONS))
    return (pointer(TYPE) == id(np.ndarray) and pointer(DATA) == probe.ctypes.data and
            int32(NDIM) == 3 and tuple(dimensions) == probe.shape and
            pointer(DESCR) == id(probe.dtype) and
            int32(FLAGS) & C_CONTIGUOUS_AND_ALIGNED == C_CONTIGUOUS_AND_ALIGNED and
            int32(FLAGS, strided) & 1 == 0)


def _dtype_symbol(dtype):
    return f"jitflow_dtype_{np.dtype(dtype).name}"


def make_callable(address, owner, name):
    """A builtin function object running the entry at `address`; it keeps `owner`
    (which must keep the code alive) alive, and `owner` keeps the method table."""
    owner._method_name = name.encode()
    owner._method_def = _MethodDef(owner._method_name, address, METH_FASTCALL, None)
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.POINTER(_MethodDef), ctypes.py_object, ctypes.c_void_p]
    return new(ctypes.byref(owner._method_def), owner, None)


def add_python_entry(module, entry, in_types, out_types, workspace_size):
    """Define PYTHON_ENTRY in `module`, calling `entry` (the args-array entry)."""
    return _EntryBuilder(module, entry, in_types, out_types, workspace_size).function


class _EntryBuilder:
    def __init__(self, module, entry, in_types, out_types, workspace_size):
        self.module = module
        self.function = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]),
                                    PYTHON_ENTRY)
        self.b = ir.IRBuilder(self.function.append_basic_block("entry"))
        _, args, count = self.function.args
        self.decline = self.function.append_basic_block("decline")
        self.slots = self.b.alloca(PTR, size=len(in_types) + len(out_types) + 1)
        self._branch_unless(self.b.icmp_signed("==", count, I64(len(in_types))))
        for index, type in enumerate(in_types):
            self._check_argument(self.b.load(self._at(args, 8 * index), typ=PTR), type, index)
        outputs = []
        for type in out_types:
            outputs.append(self._allocate_output(type, outputs, len(in_types)))
        moved = sum(t.size * t.dtype.itemsize for t in [*in_types, *out_types])
        status = self._run(entry, len(in_types) + len(out_types), workspace_size,
                           moved >= RELEASE_GIL_BYTES, outputs)
        self._return_results(status, outputs)
        self.b.position_at_end(self.decline)
        self.b.ret(self._long(I64(FALLBACK)))

    # --- arguments ------------------------------------------------------------------
    def _check_argument(self, array, type, index):
        b = self.b
        self._branch_unless(b.icmp_unsigned("==", self._field(array, TYPE, PTR),
                                            self._symbol(NDARRAY_SYMBOL)))
        flags = b.and_(self._field(array, FLAGS, I32), I32(C_CONTIGUOUS_AND_ALIGNED))
        matches = b.and_(
            b.icmp_signed("==", self._field(array, NDIM, I32), I32(len(type.shape))),
            b.and_(b.icmp_unsigned("==", self._field(array, DESCR, PTR),
                                   self._symbol(_dtype_symbol(type.dtype))),
                   b.icmp_signed("==", flags, I32(C_CONTIGUOUS_AND_ALIGNED))))
        self._branch_unless(matches)  # only now are `ndim` dimensions there to read
        dimensions = self._field(array, DIMENSIONS, PTR)
        for axis, size in enumerate(type.shape):
            read = b.load(self._at(dimensions, 8 * axis), typ=I64)
            self._branch_unless(b.icmp_signed("==", read, I64(size)))
        b.store(self._field(array, DATA, PTR), b.gep(self.slots, [I64(index)], source_etype=PTR))

    def _branch_unless(self, condition):
        after = self.function.append_basic_block("checked")
        self.b.cbranch(condition, after, self.decline)
        self.b.position_at_end(after)

    # --- outputs ----------------------------------------------------------------------
    def _allocate_output(self, type, made, first_slot):
        """A fresh array from PyArray_Empty (which takes over one reference to the
        dtype); on failure (NumPy has set MemoryError) the outputs `made` so far go."""
        b, index = self.b, len(made)
        descr = self._symbol(_dtype_symbol(type.dtype))
        b.call(self._python("Py_IncRef", None, [PTR]), [descr])
        shape = ir.ArrayType(I64, max(1, len(type.shape)))
        dimensions = ir.GlobalVariable(self.module, shape, f"jitflow_output_shape.{index}")
        dimensions.initializer = ir.Constant(shape, list(type.shape) or [0])
        dimensions.global_constant, dimensions.linkage = True, "internal"
        empty = self._python(EMPTY_SYMBOL, PTR, [I32, PTR, PTR, I32])
        array = b.call(empty, [I32(len(type.shape)), dimensions, descr, I32(0)])
        self._fail_if_null(array, made)
        b.store(self._field(array, DATA, PTR),
                b.gep(self.slots, [I64(first_slot + index)], source_etype=PTR))
        return array

    def _fail_if_null(self, value, owned):
        """Return NULL (the exception is set) if `value` is NULL, releasing `owned`."""
        b = self.b
        failed = self.function.append_basic_block("failed")
        after = self.function.append_basic_block("made")
        b.cbranch(b.icmp_unsigned("==", value, ir.Constant(PTR, None)), failed, after)
        b.position_at_end(failed)
        self._release(owned)
        b.ret(ir.Constant(PTR, None))
        b.position_at_end(after)

    def _release(self, objects):
        for obj in objects:
            self.b.call(self._python("Py_DecRef", None, [PTR]), [obj])

    # --- the run ------------------------------------------------------------------------
    def _run(self, entry, count, workspace_size, release_gil, outputs):
        """Run `entry` on the slots with a fresh workspace; returns its status."""
        b = self.b
        size = -(-workspace_size // ALIGNMENT) * ALIGNMENT or ALIGNMENT
        workspace = b.call(self._python("aligned_alloc", PTR, [I64, I64]),
                           [I64(ALIGNMENT), I64(size)])
        missing = b.icmp_unsigned("==", workspace, ir.Constant(PTR, None))
        with b.if_then(missing, likely=False):
            self._release(outputs)
            b.ret(self._long(I64(OUT_OF_MEMORY)))
        b.store(workspace, b.gep(self.slots, [I64(count)], source_etype=PTR))
        state = b.call(self._python("PyEval_SaveThread", PTR, []), []) if release_gil else None
        status = b.call(entry, [self.slots])
        if state is not None:
            b.call(self._python("PyEval_RestoreThread", None, [PTR]), [state])
        b.call(self._python("free", None, [PTR]), [workspace])
        return status

    def _return_results(self, status, outputs):
        b = self.b
        with b.if_then(b.icmp_signed("!=", status, I32(OK)), likely=False):
            self._release(outputs)
            b.ret(self._long(b.sext(status, I64)))
        scalar_or_array = self._python(RETURN_SYMBOL, PTR, [PTR])  # takes the reference
        if len(outputs) == 1:
            b.ret(b.call(scalar_or_array, outputs))
            return
        results = b.call(self._python("PyTuple_New", PTR, [I64]), [I64(len(outputs))])
        self._fail_if_null(results, outputs)
        set_item = self._python("PyTuple_SetItem", I32, [PTR, I64, PTR])
        for index, array in enumerate(outputs):
            result = b.call(scalar_or_array, [array])
            self._fail_if_null(result, [results, *outputs[index + 1:]])
            b.call(set_item, [results, I64(index), result])  # takes the reference
        b.ret(results)

    # --- helpers ------------------------------------------------------------------------
    def _long(self, value):
        return self.b.call(self._python("PyLong_FromLong", PTR, [I64]), [value])

    def _field(self, obj, offset, type):
        return self.b.load(self._at(obj, offset), typ=type)

    def _at(self, pointer, offset):
        return self.b.gep(pointer, [I64(offset)], source_etype=ir.IntType(8))

    def _symbol(self, name):
        existing = self.module.globals.get(name)
        return existing if existing is not None else \
            ir.GlobalVariable(self.module, ir.IntType(8), name)

    def _python(self, name, result, params):
        existing = self.module.globals.get(name)
        return existing if existing is not None else ir.Function(
            self.module, ir.FunctionType(result or ir.VoidType(), params), name)
