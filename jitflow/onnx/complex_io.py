"""Complex inputs and outputs of an exported model, and of the same model loaded back.

jitflow computes a complex value as real arrays (pytree.py): a complex array is one real
array with a last axis of 2 (real, imaginary; ONNX's own layout for complex signals, as
in its DFT), a complex scalar two real scalars. A model exported from a function of
complex values takes and gives those real arrays, and each says what it holds in its
doc_string (`note`). jitflow.onnx.load reads the notes back: the loaded function takes
and returns the complex values themselves.
"""
import inspect
import re

import numpy as np

from .. import pytree

_INTERLEAVED = "real and imaginary parts along the last axis"
_PARTS = {"real": "the real part", "imag": "the imaginary part"}
_NOTE = re.compile(r"^(complex64|complex128): (.*)$")


def note(path, part_dtype):
    """The doc_string of the leaf at pytree `path` of a value of real `part_dtype`:
    what it holds of a complex value, or "" for a real value."""
    kind = np.result_type(part_dtype, np.complex64)
    if path.endswith(pytree.INTERLEAVED):
        return f"{kind}: {_INTERLEAVED}"
    for part, text in _PARTS.items():
        if path.endswith(f"].{part}"):
            return f"{kind}: {text}"
    return ""


def groups(value_infos):
    """The model's inputs or outputs as the values they hold: (names, structure) per
    value, the structure pytree's (a complex array's, a complex scalar's or a real
    leaf's)."""
    infos, found = list(value_infos), []
    i = 0
    while i < len(infos):
        match = _NOTE.match(infos[i].doc_string)
        kind = match.group(2) if match else None
        pair = i + 1 < len(infos) and kind == _PARTS["real"] and \
            infos[i + 1].doc_string == f"{match.group(1)}: {_PARTS['imag']}"
        if kind == _INTERLEAVED or pair:
            count = 2 if pair else 1
            structure = (pytree.Complex, np.dtype(match.group(1)), (pytree.LEAF,) * count)
        else:
            count, structure = 1, pytree.LEAF
        found.append(([v.name for v in infos[i:i + count]], structure))
        i += count
    return found


def has_complex(value_infos):
    return any(structure != pytree.LEAF for _, structure in groups(value_infos))


def with_complex_values(run, inputs, outputs, parameter_name):
    """`run` (a function of the model's real inputs, returning its outputs) as a
    function of the complex values they hold, returning complex values."""
    input_groups, output_groups = groups(inputs), groups(outputs)
    taken = set()
    names = [parameter_name(_value_name(group_names), taken)
             for group_names, _ in input_groups]

    def complex_run(*args):
        leaves = []
        for name, arg, (_, structure) in zip(names, args, input_groups, strict=True):
            leaves += _leaves(name, arg, structure)
        results = run(*leaves)
        results = list(results) if isinstance(results, tuple) else [results]
        values, start = [], 0
        for group_names, structure in output_groups:
            count = len(group_names)
            values.append(pytree.unflatten(structure, results[start:start + count]))
            start += count
        return values[0] if len(values) == 1 else tuple(values)

    complex_run.__name__ = complex_run.__qualname__ = run.__name__
    complex_run.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return complex_run


def _value_name(names):
    """z for the input z, s for s.real and s.imag."""
    return re.sub(r"\.real$", "", names[0]) if len(names) == 2 else names[0]


def _leaves(name, arg, structure):
    """The real inputs of the model that hold `arg`."""
    if structure == pytree.LEAF:
        return [arg]
    dtype = structure[1]
    actual = np.result_type(arg) if not hasattr(arg, "dtype") else np.dtype(arg.dtype)
    if actual != dtype:
        raise TypeError(f"jitflow.onnx.load: input {name!r} is {dtype}, got {actual}")
    leaves, _, flat_structure = pytree.flatten(arg)
    if flat_structure != structure:
        raise TypeError(f"jitflow.onnx.load: input {name!r} is a {dtype} "
                        f"{'array' if len(structure[2]) == 1 else 'scalar'}, got "
                        f"shape {np.shape(arg)}")
    return leaves
