"""Static values as JSON: parameters of nodes, pytree structures, tensor types.

JSON alone cannot say tuple from list, nor keep -0.0, NaN or infinities exactly, so
every value that is not a bool, an int, a string or None is an object with one tag:

    {"tuple": [...]}          a tuple (params are hashed: they come back as tuples)
    {"float": "0x1.8p+1"}     a float, by float.hex: exact, -0.0, inf and nan included
    {"dtype": "float32"}      a NumPy dtype
    {"scalar": [dtype, v]}    a NumPy scalar (np.float32(1.5)): its dtype and value
    {"list": [...]}           a list

Decoding builds only these types: no name in a file is ever looked up as code.
"""
import numpy as np

from .. import pytree
from ..ir.types import SUPPORTED_DTYPES, TensorType
from .errors import FormatError, NotSerializableError

_DTYPES = {dtype.name: dtype for dtype in SUPPORTED_DTYPES}


def encode(value, where):
    """`value` as JSON data; NotSerializableError naming `where` for anything else."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):  # before int and float: np.float64 is a float
        return {"scalar": [encode_dtype(value.dtype, where), encode(value.item(), where)]}
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return {"float": value.hex()}
    if isinstance(value, np.dtype):
        return {"dtype": encode_dtype(value, where)}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"tuple": [encode(v, where) for v in value]}
    if isinstance(value, list):
        return {"list": [encode(v, where) for v in value]}
    raise NotSerializableError(f"{where}: a {type(value).__name__} ({value!r:.60}) cannot "
                               f"be saved: the format holds numbers, strings, dtypes and "
                               f"tuples of them, never Python objects or code")


def decode(data, where):
    if data is None or isinstance(data, (bool, str, int)):
        return data
    if isinstance(data, dict) and len(data) == 1:
        (tag, body), = data.items()
        if tag == "float" and isinstance(body, str):
            return _float(body, where)
        if tag == "tuple" and isinstance(body, list):
            return tuple(decode(v, where) for v in body)
        if tag == "list" and isinstance(body, list):
            return [decode(v, where) for v in body]
        if tag == "dtype":
            return decode_dtype(body, where)
        if tag == "scalar" and isinstance(body, list) and len(body) == 2:
            return decode_dtype(body[0], where).type(decode(body[1], where))
    raise FormatError(f"{where}: {data!r:.80} is not a value the format knows")


def _float(text, where):
    try:
        return float.fromhex(text)
    except (ValueError, OverflowError):
        raise FormatError(f"{where}: {text!r} is not a float in hex form") from None


def encode_dtype(dtype, where):
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise NotSerializableError(f"{where}: dtype {dtype} is not one jitflow supports")
    return dtype.name


def decode_dtype(name, where):
    dtype = _DTYPES.get(name) if isinstance(name, str) else None
    if dtype is None:
        raise FormatError(f"{where}: {name!r} is not a dtype jitflow supports "
                          f"({', '.join(_DTYPES)})")
    return dtype


# --- tensor types -------------------------------------------------------------------------

def encode_type(type):
    """TensorType -> [shape, dtype name, weak]."""
    return [list(type.shape), type.dtype.name, type.weak]


def decode_type(data, where):
    if not (isinstance(data, list) and len(data) == 3 and isinstance(data[0], list)
            and isinstance(data[2], bool)):
        raise FormatError(f"{where}: {data!r:.80} is not a type [shape, dtype, weak]")
    shape, dtype, weak = data
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise FormatError(f"{where}: shape {shape!r:.80} is not a list of sizes")
    try:
        return TensorType(tuple(shape), decode_dtype(dtype, where), weak)
    except ValueError as error:
        raise FormatError(f"{where}: {error}") from None


# --- pytree structures (jitflow.pytree) -----------------------------------------------------

def encode_structure(structure, where):
    """A pytree structure: "*" a leaf, null nothing, else [kind, keys, children] with
    kind "tuple", "list" or "dict" (a namedtuple is stored as a tuple), or "complex"
    (a complex value: keys its dtype's name, null for a Python complex; its children
    one leaf, an array's parts interleaved, or two, a scalar's parts)."""
    if structure is None or isinstance(structure, str):
        return structure
    kind, keys, children = structure
    if kind is pytree.Complex:
        return ["complex", None if keys is None else np.dtype(keys).name, list(children)]
    name = "dict" if kind is dict else "list" if kind is list else "tuple"
    return [name, None if keys is None else [encode(k, where) for k in keys],
            [encode_structure(c, where) for c in children]]


_KINDS = {"tuple": tuple, "list": list, "dict": dict}


def decode_structure(data, where):
    if data is None or data == "*":
        return "*" if data else None
    if isinstance(data, list) and len(data) == 3 and data[0] == "complex":
        return _decode_complex(data, where)
    if not (isinstance(data, list) and len(data) == 3 and data[0] in _KINDS
            and isinstance(data[2], list)):
        raise FormatError(f"{where}: {data!r:.80} is not a pytree structure")
    kind = _KINDS[data[0]]
    keys = None if data[1] is None else tuple(decode(k, where) for k in data[1])
    if (kind is dict) != (keys is not None) or \
            (keys is not None and len(keys) != len(data[2])):
        raise FormatError(f"{where}: the keys of {data!r:.80} do not fit its kind")
    return (kind, keys, tuple(decode_structure(c, where) for c in data[2]))


_COMPLEX = {"complex64": np.dtype(np.complex64), "complex128": np.dtype(np.complex128),
            None: None}


def _decode_complex(data, where):
    _, dtype, children = data
    if dtype not in _COMPLEX or not isinstance(children, list) or \
            children not in (["*"], ["*", "*"]):
        raise FormatError(f"{where}: {data!r:.80} is not a complex value's structure")
    return (pytree.Complex, _COMPLEX[dtype], tuple(children))


__all__ = ["encode", "decode", "encode_type", "decode_type", "encode_structure",
           "decode_structure"]
