"""Native entry points that Python calls directly, as it calls a builtin function.

    PyObject *jitflow_python_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
    PyObject *jitflow_python_call_into(<the same>)

(CPython's METH_FASTCALL convention.) It checks every argument itself: exactly an
ndarray (no subclass), of the compiled rank, shape and dtype, C-contiguous and aligned.
Then the first allocates the outputs with NumPy's own PyArray_Empty, while the second
takes the arrays passed after the arguments, one per output (`f(..., out=...)`: each
checked as an argument is, writeable too, and sharing no byte with any other array of
the call). Either runs the
graph (with the GIL released when the graph moves enough data to be worth it), and
returns the result:
one array, or a tuple of them, 0-d results as NumPy scalars (PyArray_Return), as the
checked path returns them. When an argument does not match, it returns the int
FALLBACK and the caller takes the checked path; on an error, the int status. The code
doing all this is the same for every signature (python_call.py): each signature's
module holds a table of what to check and allocate, and a call.

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

from ...ir.types import SUPPORTED_DTYPES
from ..emitter import I64, PTR, external_byte
from ..jit.engine import link_library_on_demand
from ..memory import ALIGNMENT
from .python_call import (ARRAY_TYPE, C_CONTIGUOUS_AND_ALIGNED, DATA, DESCR, DIMENSIONS,
                          EMPTY_SYMBOL, FLAGS, GENERIC, GENERIC_TYPE, NDARRAY_SYMBOL, NDIM,
                          RETURN_SYMBOL, TYPE, generic_entry, signature_type)

PYTHON_ENTRY = "jitflow_python_call"
PYTHON_ENTRY_INTO = "jitflow_python_call_into"
SPARE_WORKSPACE = "jitflow_spare_workspace"  # the workspace kept between calls
METH_FASTCALL = 0x0080
# Release the GIL around graphs whose arguments and results span this many bytes:
# below, saving and restoring the thread state (~0.1 us) outweighs what other threads
# would gain.
RELEASE_GIL_BYTES = 1 << 16

# Slots of NumPy's C-API table (numpy/__multiarray_api.h), fixed by its ABI.
API_NDARRAY_TYPE, API_RETURN, API_EMPTY = 2, 76, 184
PYTHON_FUNCTIONS = ("Py_IncRef", "Py_DecRef", "PyLong_FromLong", "PyTuple_New",
                    "PyTuple_SetItem", "PyEval_SaveThread", "PyEval_RestoreThread")


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
    for dtype in SUPPORTED_DTYPES:
        symbols[_dtype_symbol(dtype)] = id(dtype)
    for name, address in symbols.items():
        llvm.add_symbol(name, address)
    return True


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
    method = _MethodDef(name.encode(), address, METH_FASTCALL, None)
    owner.__dict__.setdefault("_method_defs", []).append(method)
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.POINTER(_MethodDef), ctypes.py_object, ctypes.c_void_p]
    return new(ctypes.byref(method), owner, None)


def add_python_entry(module, entry, in_types, out_types, workspace_size, in_place=None):
    """Define PYTHON_ENTRY and PYTHON_ENTRY_INTO in `module`: the signature's table
    (python_call.py) and calls of the code every signature shares, which runs `entry`
    (the args-array entry). in_place: {output: argument indices} it may write over
    (in_place.py); PYTHON_ENTRY_INTO takes the first of them as the output's array."""
    arrays = [*in_types, *out_types]
    moved = sum(t.size * t.dtype.itemsize for t in arrays)
    size = -(-workspace_size // ALIGNMENT) * ALIGNMENT or ALIGNMENT
    spare = ir.GlobalVariable(module, PTR, SPARE_WORKSPACE)
    spare.initializer = ir.Constant(PTR, None)
    over = ir.ArrayType(I64, max(1, len(out_types)))
    overs = ir.GlobalVariable(module, over, "jitflow_over")
    overs.initializer = ir.Constant(over, [min((in_place or {}).get(i, ()), default=-1)
                                           for i in range(len(out_types))] or [-1])
    overs.global_constant, overs.linkage = True, "internal"
    table = ir.GlobalVariable(module, signature_type(len(arrays)), "jitflow_signature")
    table.initializer = ir.Constant(table.value_type, [
        I64(len(in_types)), I64(len(out_types)), I64(size),
        I64(int(moved >= RELEASE_GIL_BYTES)), entry, spare, overs,
        ir.Constant(ir.ArrayType(ARRAY_TYPE, len(arrays)),
                    [_array_spec(module, t, i) for i, t in enumerate(arrays)])])
    table.global_constant, table.linkage = True, "internal"
    generic = ir.Function(module, GENERIC_TYPE, GENERIC)
    for name, outputs_given in ((PYTHON_ENTRY, 0), (PYTHON_ENTRY_INTO, 1)):
        function = ir.Function(module, ir.FunctionType(PTR, [PTR, PTR, I64]), name)
        b = ir.IRBuilder(function.append_basic_block("entry"))
        _, args, count = function.args
        b.ret(b.call(generic, [table, args, count, I64(outputs_given)], tail=True))


def _load_generic_entry():
    if python_entry_abi():  # the symbols GENERIC calls, registered first
        generic_entry()


link_library_on_demand(GENERIC, _load_generic_entry)

_free = ctypes.CDLL(None).free
_free.argtypes, _free.restype = [ctypes.c_void_p], None


def free_spare_workspace(compiled, address):
    """Free the workspace a signature's module keeps at `address` (SPARE_WORKSPACE),
    once no call can run it any more; `compiled` is passed to keep the module, where
    that pointer lives, alive until then."""
    spare = ctypes.c_void_p.from_address(address)
    if spare.value:
        _free(spare.value)
        spare.value = None


def _array_spec(module, type, index):
    """{ndim, dtype, dimensions, bytes} of one argument or result."""
    shape = ir.ArrayType(I64, max(1, len(type.shape)))
    dimensions = ir.GlobalVariable(module, shape, f"jitflow_shape.{index}")
    dimensions.initializer = ir.Constant(shape, list(type.shape) or [0])
    dimensions.global_constant, dimensions.linkage = True, "internal"
    dtype = external_byte(module, _dtype_symbol(type.dtype))
    return ir.Constant(ARRAY_TYPE, [I64(len(type.shape)), dtype, dimensions,
                                    I64(type.size * type.dtype.itemsize)])
