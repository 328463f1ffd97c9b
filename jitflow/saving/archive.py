"""The file: one JSON document (what the file holds) and the arrays it names.

Binary form: a zip archive holding `jitflow.json` and each array as `arrays/<i>.npy`
(NumPy's .npy format, read with allow_pickle=False). Text form: the JSON document
alone, each array inline as {"dtype", "shape", "base64" of its little-endian bytes}.
Both start with the same header: {"format": "jitflow", "version": 1, "kind": ...}.
Reading never runs code from the file: JSON, .npy and base64 are data only.
"""
import base64
import io
import json
import zipfile
import zlib

import numpy as np

from ..ir.types import SUPPORTED_DTYPES
from .errors import FormatError
from .values import decode_dtype

FORMAT = "jitflow"
VERSION = 1  # the format version written; files of this version or older are read
DOCUMENT = "jitflow.json"


def write(path, kind, document, arrays, as_text=False):
    """Write `document` (JSON data) and `arrays` to `path` as a file of `kind`."""
    document = {"format": FORMAT, "version": VERSION, "kind": kind, **document}
    if as_text:
        document["arrays"] = [_array_text(a) for a in arrays]
        with open(path, "w", encoding="utf-8") as file:
            json.dump(document, file, indent=1, allow_nan=False)
        return
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(DOCUMENT, json.dumps(document, allow_nan=False))
        for index, array in enumerate(arrays):
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.array(array, order="C"),
                                      allow_pickle=False)
            archive.writestr(f"arrays/{index}.npy", buffer.getvalue())


def read(path, kind):
    """(document, arrays) of the file at `path`, which must hold a `kind`; FormatError
    for anything else."""
    try:
        with open(path, "rb") as file:
            start = file.read(4)
    except IsADirectoryError:
        raise FormatError(f"{path}: is a directory, not a jitflow file") from None
    if start.startswith(b"PK"):
        document, arrays = _read_zip(path)
    else:
        document, arrays = _read_text(path)
    _check_header(document, kind, path)
    return document, arrays


def _read_zip(path):
    try:
        with zipfile.ZipFile(path) as archive:
            document = _json(archive.read(DOCUMENT), path)
            count = _array_count(document, archive.namelist(), path)
            arrays = [_npy(archive.read(f"arrays/{i}.npy"), path, i) for i in range(count)]
    except FormatError:
        raise
    except (zipfile.BadZipFile, KeyError, EOFError, OSError, zlib.error,
            NotImplementedError, RuntimeError, ValueError) as error:  # damaged archives
        raise FormatError(f"{path}: not a complete jitflow file (a damaged or truncated "
                          f"archive: {error})") from None
    return document, arrays


def _read_text(path):
    with open(path, "rb") as file:
        document = _json(file.read(), path)
    arrays = document.pop("arrays", [])
    if not isinstance(arrays, list):
        raise FormatError(f"{path}: 'arrays' must be a list")
    return document, [_array_from_text(a, path, i) for i, a in enumerate(arrays)]


def _json(data, path):
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FormatError(f"{path}: not a jitflow file (its document is not JSON: "
                          f"{error})") from None
    if not isinstance(document, dict):
        raise FormatError(f"{path}: not a jitflow file (its document is not a JSON object)")
    return document


def _check_header(document, kind, path):
    if document.get("format") != FORMAT:
        raise FormatError(f"{path}: not a jitflow file (format {document.get('format')!r})")
    version = document.get("version")
    if not isinstance(version, int) or version < 1:
        raise FormatError(f"{path}: the format version {version!r} is not valid")
    if version > VERSION:
        raise FormatError(f"{path}: written in format version {version}, by a newer jitflow;"
                          f" this one reads versions up to {VERSION}")
    if document.get("kind") != kind:
        raise FormatError(f"{path}: holds a {document.get('kind')!r}, not a {kind!r}")


def _array_count(document, names, path):
    count = sum(1 for name in names if name.startswith("arrays/"))
    for index in range(count):
        if f"arrays/{index}.npy" not in names:
            raise FormatError(f"{path}: array {index} is missing")
    return count


def _npy(data, path, index):
    try:
        array = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
    except (ValueError, EOFError, OSError) as error:
        raise FormatError(f"{path}: array {index} is not a valid .npy array "
                          f"({error})") from None
    return _supported(array, path, index)


def _supported(array, path, index):
    if array.dtype.newbyteorder("=") not in SUPPORTED_DTYPES:
        raise FormatError(f"{path}: array {index} has dtype {array.dtype}, which jitflow "
                          f"does not support")
    array = np.array(array, dtype=array.dtype.newbyteorder("="), order="C")
    array.flags.writeable = False
    return array


def _array_text(array):
    array = np.array(array, order="C")
    little = array.astype(array.dtype.newbyteorder("<"), copy=False)
    return {"dtype": array.dtype.name, "shape": list(array.shape),
            "base64": base64.b64encode(little.tobytes()).decode("ascii")}


def _array_from_text(data, path, index):
    where = f"{path}: array {index}"
    if not isinstance(data, dict) or not isinstance(data.get("shape"), list) or \
            not isinstance(data.get("base64"), str):
        raise FormatError(f"{where} is not {{dtype, shape, base64}}")
    dtype = decode_dtype(data.get("dtype"), where)
    shape = data["shape"]
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise FormatError(f"{where}: shape {shape!r:.80} is not a list of sizes")
    try:
        raw = base64.b64decode(data["base64"], validate=True)
    except ValueError:
        raise FormatError(f"{where}: its data is not base64") from None
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) != size:
        raise FormatError(f"{where}: holds {len(raw)} bytes, {dtype}{shape} needs {size}")
    array = np.frombuffer(raw, dtype.newbyteorder("<")).reshape(shape)
    return _supported(array, path, index)
