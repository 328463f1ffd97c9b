"""jitflow's bfloat16 product on Intel's tile unit (AMX-BF16): whether this process can
run it, and its library (amx_ir.py), compiled once per process when first asked for.

Linux hands the tile registers to a process only on request (arch_prctl
ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, once per process); without it the first
tile instruction kills the process. `available()` asks, and says yes only where the
selected target (jit/target.py: JITFLOW_CPU names levels without AMX) has the
features and the kernel granted them.
"""
import ctypes
import functools
import threading

import llvmlite.binding as llvm

from ..jit import target
from ..jit.engine import CompiledModule, link_library_on_demand
from .amx_ir import PACK_A, PACK_B, PRODUCT, module_text

_SYS_ARCH_PRCTL = 158  # x86-64
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18
FEATURES = frozenset({"amx-tile", "amx-bf16"})

_LOADING = threading.Lock()


@functools.cache
def available():
    """Whether the tile unit's bfloat16 products can run here (asks the kernel for the
    tile registers the first time; the answer holds for the process)."""
    if not FEATURES <= target.features():
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA) == 0
    except (OSError, AttributeError):  # no C library to call through
        return False


def ensure_loaded():
    """Compile the library (once per process, thread-safe), register its entry points
    for the linker, and return {name: address}. Only where available()."""
    if not available():
        raise RuntimeError("this CPU, or the selected target, has no AMX-BF16 tile unit "
                           f"(needs {', '.join(sorted(FEATURES))})")
    with _LOADING:
        return _load()


@functools.cache
def _load():
    """Its code is never freed: generated modules may link against it by name."""
    compiled = CompiledModule.library("amx bfloat16 product", module_text, speed_level=3)
    addresses = {name: compiled.address(name) for name in (PACK_A, PACK_B, PRODUCT)}
    compiled.keep_for_the_process()
    for name, address in addresses.items():
        llvm.add_symbol(name, address)
    return addresses


def _load_for_linking():
    """Generated code calls the library only where it is available; a name that
    occurs by chance elsewhere loads nothing."""
    if available():
        ensure_loaded()


link_library_on_demand("jitflow_amx_", _load_for_linking)

_PACK = [ctypes.c_void_p] + [ctypes.c_int64] * 4 + [ctypes.c_void_p] + [ctypes.c_int64] * 2
_PRODUCT = [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 5 + [ctypes.c_void_p, ctypes.c_int64]


def functions():
    """(pack_a, pack_b, product) as ctypes functions, with amx_ir's arguments."""
    addresses = ensure_loaded()
    return (ctypes.CFUNCTYPE(None, *_PACK)(addresses[PACK_A]),
            ctypes.CFUNCTYPE(None, *_PACK)(addresses[PACK_B]),
            ctypes.CFUNCTYPE(None, *_PRODUCT)(addresses[PRODUCT]))
