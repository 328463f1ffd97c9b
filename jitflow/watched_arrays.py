"""Named arrays seen while tracing: which of them NumPy reads on its own.

While a function is traced, each writable array its code names (named_arrays.py) is
replaced where the name leads by a view of it, a WatchedArray. The view is the same
memory, and NumPy computes with it as with the array; but NumPy's ufuncs and functions
(`w.sum()`, `np.linalg.norm(w)`), scalar reads (`w[0]`, `float(w)`, `w.item()`) and the
views and copies made of it tell the trace that NumPy read the array's contents there:
NumPy's result is a constant of the trace, which a later change of the array makes
stale. Such an array is then copied and compared at every call, and the function traced
again when it changed, even when the trace also takes it as an input (`x * w + w.sum()`).

What no view sees: np.asarray(w) (and np.array(w, copy=False)) hands NumPy a plain view
of the same memory without asking the view, so NumPy's reads of that are not seen. An
array no trace takes as an input is copied and compared at every call for that reason
(named_arrays.py); one the trace also takes as an input is not.

Traced values met on the way (`w * x`) are left to their own operators: the view answers
NotImplemented and the Tracer's __array_ufunc__ takes the array as an input, the array
itself, not the view (trace/builders.py asks for `_jitflow_unwatched`).
"""
import numpy as np

from . import in_place
from .errors import at_user_line
from .indexing import holds_tracer
from .trace import Tracer


class WatchedArray(np.ndarray):
    """A view of a named array that reports NumPy's reads of its contents."""

    # the _Source: the named array and who hears of reads, kept by views of views and
    # by copies (their contents came from it)
    _jitflow_source = None

    def __array_finalize__(self, obj):
        self._jitflow_source = getattr(obj, "_jitflow_source", None)
        self._jitflow_top = False

    # --- what the trace asks --------------------------------------------------------
    def _jitflow_unwatched(self):
        """The plain array the trace takes as an input in place of this one: the named
        array itself for the view standing for it; a plain view for a view of it. A
        copy NumPy made of it holds its contents as they were: that is a read."""
        if self._jitflow_top:
            return self._jitflow_source.array
        if self.flags.owndata:
            self._jitflow_note_read()
        return self.view(np.ndarray)

    def _jitflow_note_read(self):
        if self._jitflow_source is not None:
            self._jitflow_source.read()

    def _jitflow_note_write(self):
        """A traced value was written into the named array (`w += x`: its name now
        holds the traced result): NumPy's later reads through another name (`t = w`
        before) would see contents known only when the compiled code runs."""
        if self._jitflow_source is not None:
            self._jitflow_source.written = True

    # --- NumPy's protocols: computing with the contents -------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if _others_override(inputs + tuple(kwargs.get("out", ()))):
            return NotImplemented
        inputs = _plain(inputs)
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if any(not issubclass(t, (WatchedArray, np.ndarray)) for t in types):
            return NotImplemented
        if func in _VIEWS:  # a view of the memory, watched in turn: no read yet
            return super().__array_function__(func, types, args, kwargs)
        read = func not in _METADATA
        return func(*_plain(args, read), **_plain(kwargs, read))

    def put(self, indices, values, mode="raise"):
        """ndarray.put through np.put, so that traced values go to jitflow's (which
        writes the named array after the call) rather than being converted."""
        np.put(self, indices, values, mode=mode)

    def fill(self, value):
        """ndarray.fill through np.copyto (casting as fill casts), for the same reason."""
        np.copyto(self, value, casting="unsafe")

    @property
    def flat(self):
        """NumPy's flat iterator, whose writes of traced values go to jitflow's."""
        return _WatchedFlat(self)

    # --- reads that bypass the protocols ------------------------------------------------
    def __getitem__(self, key):
        part = super().__getitem__(key)
        if not isinstance(part, np.ndarray):
            self._jitflow_note_read()
        return part

    def __iter__(self):
        self._jitflow_note_read()
        return iter(self.view(np.ndarray))

    def __array__(self, dtype=None, copy=None):
        self._jitflow_note_read()
        plain = self.view(np.ndarray)
        return plain if dtype is None else plain.astype(dtype, copy=bool(copy))


class _WatchedFlat:
    """w.flat of a named array: reads are NumPy's (and reads of w); a traced index or
    value written goes to jitflow's flat write, which writes w after the call."""

    def __init__(self, array):
        self._array = array

    def __setitem__(self, index, value):
        if isinstance(index, Tracer) or isinstance(value, Tracer) or (
                isinstance(value, (list, tuple)) and holds_tracer(value)):
            in_place.flat_write(self._array, index, value)
        else:
            self._array.view(np.ndarray).flat[index] = value

    def _plain(self):
        self._array._jitflow_note_read()
        return self._array.view(np.ndarray).flat

    def __getitem__(self, index):
        return self._plain()[index]

    def __iter__(self):
        return iter(self._plain())

    def __len__(self):
        return self._array.size

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._plain(), dtype=dtype)

    def __getattr__(self, name):  # base, coords, index, copy
        return getattr(self._plain(), name)


def _read_through(name):
    def read(self, *args, **kwargs):
        self._jitflow_note_read()
        return getattr(self.view(np.ndarray), name)(*args, **kwargs)
    read.__name__ = name
    return read


for _name in ("item", "tolist", "tobytes", "__float__", "__int__", "__index__",
              "__bool__", "__complex__", "argmax", "argmin", "argsort", "nonzero",
              "searchsorted", "dot", "copy", "astype", "__copy__", "__deepcopy__",
              "__reduce__", "__reduce_ex__"):
    setattr(WatchedArray, _name, _read_through(_name))


def watched_view(array, on_read):
    """A WatchedArray viewing `array`; on_read(array) is called at each read."""
    view = array.view(WatchedArray)
    view._jitflow_source = _Source(array, on_read)
    view._jitflow_top = True
    return view


class _Source:
    """The named array a WatchedArray (and what is made from it) stands for."""

    def __init__(self, array, on_read):
        self.array, self.on_read, self.written = array, on_read, False

    def read(self):
        if self.written:
            raise TypeError(at_user_line(
                "NumPy reads an array after a traced value was written into it under "
                "another name (`t = w; w += x; t.sum()`): its contents are known only "
                "when the compiled code runs; read the traced result (w) instead"))
        self.on_read(self.array)


def original_of(value):
    """The named array a WatchedArray standing for it stands for, else `value`."""
    if isinstance(value, WatchedArray) and value._jitflow_top:
        return value._jitflow_source.array
    return value


def _others_override(values):
    """Whether a value other than arrays overrides NumPy's ufuncs (a Tracer)."""
    return any(not isinstance(v, np.ndarray) and hasattr(type(v), "__array_ufunc__")
               and type(v).__array_ufunc__ is not None for v in values)


# NumPy functions that read no contents: shapes and dtypes only.
_METADATA = {np.shape, np.ndim, np.size, np.result_type, np.can_cast, np.min_scalar_type,
             np.may_share_memory, np.shares_memory, np.iscomplexobj, np.isrealobj}
# NumPy functions that give views of the same memory (or, for ravel, a copy, which
# owns its data: _jitflow_unwatched counts that as a read when a trace meets it).
_VIEWS = {np.transpose, np.reshape, np.ravel, np.squeeze, np.expand_dims, np.swapaxes,
          np.moveaxis, np.broadcast_to, np.atleast_1d, np.atleast_2d, np.atleast_3d,
          np.diagonal, np.matrix_transpose}


def _plain(value, read=True):
    """`value` with each WatchedArray in it (in tuples, lists and dicts) a plain view of
    it, noted as read if `read`."""
    if isinstance(value, WatchedArray):
        if read:
            value._jitflow_note_read()
        return value.view(np.ndarray)
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v, read) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v, read) for k, v in value.items()}
    return value
