"""The on-disk cache of compiled object code, content-addressed and written atomically.

The key hashes the module's LLVM IR with everything else the machine code depends on:
the host CPU and its features, llvmlite's version and jitflow's. An entry is
    MAGIC | sha256(payload) | payload
so a corrupt or truncated file is detected, removed and rebuilt (with a
CacheWarning saying so), never loaded.
JITFLOW_CACHE_DIR sets the directory (default: $XDG_CACHE_HOME/jitflow or
~/.cache/jitflow); JITFLOW_CACHE=0 turns the cache off. Besides modules it holds
whole compiled graphs (runtime/graph_cache.py) and jitflow's libraries (keyed by
jitflow's source: source_digest).
"""
import contextlib
import functools
import hashlib
import os
import pathlib
import tempfile
import threading
import warnings
from dataclasses import dataclass

from ..._version import __version__
from ...errors import CacheWarning

MAGIC = b"JITFLOW\x01"
DIGEST = 32


@dataclass
class Stats:
    hits: int = 0
    misses: int = 0
    rejected: int = 0  # entries found corrupt and removed


stats = Stats()

_watch = threading.local()  # .on_miss: reporting_misses' callback on this thread


@contextlib.contextmanager
def reporting_misses(on_miss):
    """Within the block, on this thread: on_miss() each time code is not found in the
    cache (or the cache is off), so that compile work lies ahead. A first call waiting
    for code the cache holds runs on the interpreter instead (executable.py). None:
    misses within the block are not reported."""
    saved = getattr(_watch, "on_miss", None)
    _watch.on_miss = on_miss
    try:
        yield
    finally:
        _watch.on_miss = saved


def report_miss():
    """Tell reporting_misses' callback on this thread, if any, of a miss."""
    on_miss = getattr(_watch, "on_miss", None)
    if on_miss is not None:
        on_miss()

def enabled():
    return os.environ.get("JITFLOW_CACHE", "1").strip().lower() not in ("0", "false", "no")


def directory():
    configured = os.environ.get("JITFLOW_CACHE_DIR")
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jitflow")


def key(llvm_ir, host):
    """The entry's name: `host` describes the target (CPU, features, llvmlite)."""
    text = f"{host}|jitflow {__version__}\n{llvm_ir}"
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def source_digest():
    """A hash of every jitflow module's source, for keys of code that jitflow builds
    from more than the text keyed (its libraries, whole graphs): lowering rules live
    beside the primitives, the libraries' generators in codegen. ~10 ms, once per
    process (`import jitflow` computes it: runtime/libraries.py)."""
    digest = hashlib.sha256()
    package = pathlib.Path(__file__).resolve().parents[2]
    for name in _python_files(package):  # os.walk and open: half pathlib's time
        with open(os.path.join(package, name), "rb") as file:
            digest.update(name.encode() + b"\0" + file.read())
    return digest.hexdigest()


def _python_files(package):
    """The .py files under `package`, as sorted relative paths with "/"."""
    names = []
    for folder, subfolders, files in os.walk(package):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        relative = os.path.relpath(folder, package).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        names += [prefix + name for name in files if name.endswith(".py")]
    return sorted(names)


def _path(entry_key):
    return os.path.join(directory(), f"{entry_key}.o")


def load(entry_key):
    """The cached object code for `entry_key`, or None (missing, corrupt or disabled)."""
    if not enabled():
        report_miss()
        return None
    try:
        with open(_path(entry_key), "rb") as file:
            blob = file.read()
    except OSError:
        stats.misses += 1
        report_miss()
        return None
    payload = blob[len(MAGIC) + DIGEST:]
    if blob[:len(MAGIC)] != MAGIC or hashlib.sha256(payload).digest() != \
            blob[len(MAGIC):len(MAGIC) + DIGEST] or not payload:
        stats.rejected += 1
        _remove(_path(entry_key))
        warnings.warn(f"jitflow's disk cache entry {_path(entry_key)} was damaged "
                      f"({len(blob)} bytes, checksum mismatch); it was removed and the "
                      f"code is compiled again", CacheWarning, stacklevel=2)
        report_miss()
        return None
    stats.hits += 1
    return payload


def store(entry_key, payload):
    """Write an entry atomically: a reader sees the old state or the whole new file."""
    if not enabled():
        return
    folder = directory()
    try:
        os.makedirs(folder, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            file.write(MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(temporary, _path(entry_key))
    except OSError:
        pass  # a cache that cannot be written only costs a recompile next time


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass
