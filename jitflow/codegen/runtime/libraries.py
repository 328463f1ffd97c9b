"""The native libraries every process builds once: the thread pool (jit/pool.py), the
Python entry's shared code (python_call.py) and the sgemm kernels (gemm/sgemm.py).

Each is built on first use, under a lock of its own, and kept in the disk cache, where
a later process finds it (~10 ms for all three, against ~250 ms of CPU to build them).
`start_building()`, called by `import jitflow`, builds them on a thread of its own
while the import goes on, so that a process's first compile finds them ready instead
of building them in its lowering. That thread only calls the same loaders a compile
calls: a compile that needs a library first waits for the lock and then finds it
built, never a half-built one. It is started only when the disk cache is on (with it
off, a process that never multiplies matrices would build sgemm for nothing), and not
with JITFLOW_PREBUILD=0. The process waits for it before it exits (it is not a daemon
thread: LLVM must not be torn down under it) and before it forks (a child must not
inherit a lock held by a thread it does not have).
"""
import os
import threading

from ..gemm import sgemm
from ..jit import disk_cache, engine, pool
from ..jit.engine import quick_thread_switches
from . import python_call, python_entry

PREBUILD_VARIABLE = "JITFLOW_PREBUILD"
# How long a fork waits for the libraries: far longer than building them takes, but a
# bound, in case the thread waits for something the forking thread holds.
FORK_WAIT_SECONDS = 30

_builder = None  # the thread building them, once started


def ensure_built():
    """Build (or load) every library now, in this thread, waiting for one another
    thread is building."""
    pool.runtime()
    if python_entry.python_entry_abi():
        python_call.generic_entry()  # needs python_entry_abi's symbols
    sgemm.ensure_loaded()


def wanted():
    """Whether start_building() builds anything: the disk cache on, JITFLOW_PREBUILD
    not 0."""
    setting = os.environ.get(PREBUILD_VARIABLE, "1").strip().lower()
    return disk_cache.enabled() and setting not in ("0", "false", "no")


def start_building():
    """Start building the libraries on a thread (once per process); returns it, or None
    when not wanted or no thread could be started (they are then built on first use)."""
    global _builder
    if _builder is not None or not wanted():
        return _builder
    # The cache keys' source hash reads ~370 files: ~10 ms here, where on the thread,
    # each read waiting for the GIL beside the import, it took 130 ms.
    disk_cache.source_digest()
    builder = threading.Thread(target=_build_quietly, name="jitflow libraries")
    try:
        builder.start()
    except RuntimeError:
        return None
    _builder = builder
    return builder


def settled():
    """Whether no library is being built and none was built by this process (the
    disk cache held them, or none was needed yet): no LLVM IR is waiting to be
    collected."""
    running = _builder is not None and _builder.is_alive()
    return not running and not engine.libraries_built()


def wait(timeout=None):
    """Block until the thread started by start_building() (if any) is done."""
    builder = _builder
    if builder is not None and builder is not threading.current_thread():
        builder.join(timeout)


def _build_quietly():
    """Errors are left to the compile that needs the library: it builds it again and
    raises there, in the user's thread (the loaders cache no failure)."""
    try:
        with quick_thread_switches():  # it runs beside the import, Python code
            ensure_built()
    except Exception:
        pass


os.register_at_fork(before=lambda: wait(FORK_WAIT_SECONDS))
