"""Whole compiled graphs in the disk cache, found by the graph rather than by its LLVM IR.

The disk cache of modules (jit/disk_cache.py) is keyed by each module's text, so even a
process that finds every module cached lowers the graph to get those texts: for the MLP
training step, ~85 ms of Python, where loading and linking its object code takes ~5.
This cache is keyed by what the lowering reads instead:

- the fused graph, exactly: every node's primitive, parameters, operand and result
  types, and every constant's bytes (a graph holding anything else, a Python function
  say, gets no key and is lowered as before); the template of code for all sizes
  (dynamic_native.py) holds Sizes among them, written as such;
- how it is compiled (name, threads, Python entry, profiling, NaN checks);
- the host and jitflow's version (disk_cache.key), the source of every jitflow module
  (lowering rules live beside the primitives), the JITFLOW_* environment variables
  (routes, thread counts), the structural lowerings installed (distributed/ adds its
  own) and the size of loop whose stores stream past the caches (jit/caches.py).

An entry holds the object code of each module, the workspace size and the timed nodes,
and the symbols the code needs from the process (jitflow's libraries, NumPy's and
Python's functions, large constants): all must be known to the linker before the code
is linked, else the entry is not used and the graph is lowered, which registers them.
Graphs that call other compiled code (control flow's callees, Python callbacks) and
graphs with a while_grad are not kept here: their code holds addresses of this process.
JITFLOW_GRAPH_CACHE=0 turns this cache off (the module cache stays on): code that
changes how jitflow lowers without changing its source (a patched constant of the
lowering, as tests do) would otherwise get code lowered the old way.
"""
import hashlib
import json
import os
import struct
from typing import NamedTuple

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from ...ir.graph import Lit
from ...ir.size_templates import SizeLit
from ...ir.sizes import Size
from ..gemm import blas
from ..jit import disk_cache
from ..jit.caches import streaming_bytes
from ..jit.engine import host_fingerprint
from ..lowering.structural import STRUCTURAL
from . import libraries

FORMAT = "jitflow graph 2"
SWITCH = "JITFLOW_GRAPH_CACHE"  # 0: look modules up by their text alone, as before
_PLAIN = (bool, int, str, type(None))
BLAS_SYMBOLS = {name for name, _ in blas.GEMM.values()}


class Unkeyable(Exception):
    """The graph holds something whose identity its text would not capture."""


def key(graph, options):
    """The cache key of `graph` compiled with `options` (a dict of plain values), or
    None when the graph cannot be keyed or the cache is off."""
    if not enabled():
        return None
    try:
        text = _graph_text(graph)
    except Unkeyable:
        return None
    settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("JITFLOW_")
                      and k not in ("JITFLOW_CACHE_DIR", "JITFLOW_PREBUILD", SWITCH))
    head = json.dumps([FORMAT, disk_cache.source_digest(), sorted(options.items()), settings,
                       sorted(STRUCTURAL), streaming_bytes()])
    return disk_cache.key(f"{head}\n{text}", host_fingerprint())


def enabled():
    """The disk cache on, and JITFLOW_GRAPH_CACHE not 0 (the test suite turns it off:
    its tests patch lowering's knobs, which no key can see)."""
    setting = os.environ.get(SWITCH, "1").strip().lower()
    return disk_cache.enabled() and setting not in ("0", "false", "no")


class Entry(NamedTuple):
    objects: list  # each module's object code
    workspace_size: object  # an int, or a Size for code for all sizes
    timed_nodes: list
    speed_levels: list
    extra: dict  # what the code's maker stored beside it (plain values)


def load(entry_key):
    """The Entry under the key, or None: missing, or needing a symbol this process has
    not registered."""
    if entry_key is None:
        disk_cache.report_miss()
        return None
    payload = disk_cache.load(entry_key)
    if payload is None:
        return None
    (length,) = struct.unpack_from("<Q", payload)
    header = json.loads(payload[8:8 + length])
    if not _symbols_known(header["externals"]):
        disk_cache.report_miss()
        return None
    objects, start = [], 8 + length
    for size in header["sizes"]:
        objects.append(payload[start:start + size])
        start += size
    return Entry(objects, _size(header["workspace"]), header["timed_nodes"],
                 header["levels"], header["extra"])


def _symbols_known(names):
    """Whether the linker will find every one of `names`, once the libraries that
    register them (jitflow's own; OpenBLAS, which lowering loads on first use) are."""
    missing = _unknown(names)
    if missing and not missing <= BLAS_SYMBOLS:
        libraries.ensure_built()  # usually built by the import's thread already
    if missing & BLAS_SYMBOLS and blas.wanted():
        blas.library()
    return not _unknown(missing)


def _unknown(names):
    return {name for name in names if not llvm.address_of_symbol(name)}


def store(entry_key, objects, modules, speed_levels, workspace_size, timed_nodes,
          extra=None):
    if entry_key is None:
        return
    header = json.dumps({"sizes": [len(o) for o in objects],
                         "workspace": _size_parts(workspace_size),
                         "timed_nodes": list(timed_nodes), "levels": list(speed_levels),
                         "externals": sorted(external_symbols(modules)),
                         "extra": extra or {}}).encode()
    disk_cache.store(entry_key, struct.pack("<Q", len(header)) + header + b"".join(objects))


def _size_parts(size):
    """An int, or a Size (the workspace of code for all sizes) as [per, const]."""
    return [size.per, size.const] if isinstance(size, Size) else size


def _size(parts):
    return Size.of(*parts) if isinstance(parts, list) else parts


def external_symbols(modules):
    """The names `modules` (llvmlite.ir) use but none of them defines: what the linker
    must find in the process (intrinsics aside)."""
    declared, defined = set(), set()
    for module in modules:
        for value in module.global_values:
            if value.name.startswith("llvm."):
                continue
            is_declaration = (value.is_declaration if isinstance(value, ir.Function)
                              else value.initializer is None)
            (declared if is_declaration else defined).add(value.name)
    return declared - defined


# --- the graph's exact text ---------------------------------------------------------------

def _graph_text(graph):
    names = {}
    lines = []
    _body(graph, names, lines)
    return "\n".join(lines)


def _body(graph, names, lines):
    for var in graph.inputs:
        names[var] = len(names)
    lines.append("in " + " ".join(_type(v.type) for v in graph.inputs))
    for node in graph.nodes:
        params = ",".join(f"{k}={_param(v)}" for k, v in sorted(node.params.items()))
        operands = " ".join(_operand(v, names) for v in node.inputs)
        for var in node.outputs:
            names[var] = len(names)
        results = " ".join(_type(v.type) for v in node.outputs)
        lines.append(f"{node.op} [{params}] ({operands}) -> {results} "
                     f"{{{len(node.subgraphs)}")
        for sub in node.subgraphs:
            _body(sub, names, lines)
        lines.append("}")
    lines.append("out " + " ".join(_operand(v, names) for v in graph.outputs))


def _type(type):
    return f"{type.dtype.str}{list(type.shape)}{'w' if type.weak else ''}"


def _operand(value, names):
    if isinstance(value, SizeLit):  # (a run-time size: its Size says all it is)
        return f"size:{_type(value.type)}:{value.value.item()!r}"
    if isinstance(value, Lit):
        data = np.ascontiguousarray(value.value)
        if data.dtype.hasobject:
            raise Unkeyable("an object constant")
        digest = hashlib.sha256(data.tobytes()).hexdigest()
        return f"lit:{_type(value.type)}:{data.dtype.str}:{digest}"
    if value not in names:
        raise Unkeyable("a value defined outside the graph")
    return f"%{names[value]}"


def _param(value):
    """Parameters whose repr says all they are; anything else is Unkeyable."""
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, Size):
        return f"size({value.per},{value.const})"
    if isinstance(value, float):
        return value.hex()  # exact, and tells -0.0 from 0.0
    if isinstance(value, np.dtype):
        return f"dtype:{value.str}"
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return f"{value.dtype.str}:{value.tobytes().hex()}"
    if isinstance(value, slice):
        return f"slice({_param(value.start)},{_param(value.stop)},{_param(value.step)})"
    if isinstance(value, (tuple, list)):
        inner = ",".join(_param(v) for v in value)
        return f"{type(value).__name__}({inner})"
    raise Unkeyable(f"a parameter of type {type(value).__name__}")
