"""Global switches, read from the environment at import and settable at run time."""
import os


def _flag(name, default=False):
    value = os.environ.get(name, "").strip().lower()
    return default if value == "" else value not in ("0", "false", "no")


class Config:
    """jitflow.config.run_eagerly = True runs every jitflow.function as plain Python.

    dump_ir prints the IR after every pass (JITFLOW_DUMP=1); check_ir verifies it after
    every pass (JITFLOW_CHECK=1). A function traced `retrace_warning_after` times warns.
    backend is "native" (compile with LLVM, the default) or "interpreter" (the NumPy
    reference interpreter), from JITFLOW_BACKEND.

    background_compile (JITFLOW_BACKGROUND_COMPILE, on by default): the native backend
    builds machine code for a new signature on a background thread, and the calls made
    before it is ready run on the interpreter, so the first call returns as soon as the
    function is traced and optimized. Off, the first call waits for the machine code.
    Either way the results are NumPy's, to rounding.

    cache_size (JITFLOW_CACHE_SIZE, 256): how many signatures each function keeps
    compiled; beyond it the least recently used one is forgotten (and traced again if
    it comes back).

    debug_nans (JITFLOW_DEBUG_NANS) and debug_infs (JITFLOW_DEBUG_INFS): a compiled call
    whose results hold a NaN (an inf) raises FloatingPointError naming the operation and
    the line that made it, writing no Variable (nan_check.py). Off, they cost nothing but
    this check of two flags per call.
    """

    def __init__(self):
        self.run_eagerly = _flag("JITFLOW_EAGER")
        self.dump_ir = _flag("JITFLOW_DUMP")
        self.check_ir = _flag("JITFLOW_CHECK")
        self.retrace_warning_after = 5
        self.backend = os.environ.get("JITFLOW_BACKEND", "native").strip().lower()
        self.background_compile = _flag("JITFLOW_BACKGROUND_COMPILE", default=True)
        self.cache_size = int(os.environ.get("JITFLOW_CACHE_SIZE", "256"))
        self.debug_nans = _flag("JITFLOW_DEBUG_NANS")
        self.debug_infs = _flag("JITFLOW_DEBUG_INFS")

    def __repr__(self):
        return (f"Config(run_eagerly={self.run_eagerly}, dump_ir={self.dump_ir}, "
                f"check_ir={self.check_ir}, backend={self.backend!r}, "
                f"background_compile={self.background_compile}, "
                f"retrace_warning_after={self.retrace_warning_after}, "
                f"cache_size={self.cache_size}, debug_nans={self.debug_nans}, "
                f"debug_infs={self.debug_infs})")


config = Config()
