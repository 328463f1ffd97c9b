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
    function is traced and optimized (unless the disk cache holds the machine code:
    the first call then runs it). Off, the first call waits for the machine code.
    Either way the results are NumPy's, to rounding.

    auto_dynamic_axes (JITFLOW_AUTO_DYNAMIC_AXES, on by default): a function traced
    again for arrays that differ from its last call's in the size of one axis only
    (the same axis in each, one new size) treats that axis as its dynamic_axes
    (dynamic_axes.py): later sizes share one compile where the graph allows. Each size
    gets the bits code compiled for it would give, so results never depend on which
    sizes came first.

    cache_size (JITFLOW_CACHE_SIZE, 256): how many signatures each function keeps
    compiled; beyond it the least recently used one is forgotten (and traced again if
    it comes back).

    debug_nans (JITFLOW_DEBUG_NANS) and debug_infs (JITFLOW_DEBUG_INFS): a compiled call
    whose results hold a NaN (an inf) raises FloatingPointError naming the operation and
    the line that made it, writing no Variable (nan_check.py). Off, they cost nothing but
    this check of two flags per call.

    matmul_precision (JITFLOW_MATMUL_PRECISION, "float32"): "bfloat16" makes the float32
    matrix products traced from then on (matmul, @, dot, einsum and the products of
    their derivatives) round their operands to bfloat16 and sum the products in
    float32, as bfloat16 matrix units do: Intel's AMX runs them at several times
    float32's speed; elsewhere they take float32's path on rounded operands, as slow as
    float32 or slower. Results differ from float32's by about 2**-8 relative per
    operand. Setting it makes every function trace again at its next call.
    """

    MATMUL_PRECISIONS = ("float32", "bfloat16")
    # Whether calls may take the shortest path (function.py): none of these is on.
    # Kept up to date as they are set, so that a call reads one flag, not three.
    _NOT_PLAIN = ("run_eagerly", "debug_nans", "debug_infs")
    plain_calls = True

    def __init__(self):
        self.run_eagerly = _flag("JITFLOW_EAGER")
        self.dump_ir = _flag("JITFLOW_DUMP")
        self.check_ir = _flag("JITFLOW_CHECK")
        self.retrace_warning_after = 5
        self.backend = os.environ.get("JITFLOW_BACKEND", "native").strip().lower()
        self.background_compile = _flag("JITFLOW_BACKGROUND_COMPILE", default=True)
        self.cache_size = int(os.environ.get("JITFLOW_CACHE_SIZE", "256"))
        self.auto_dynamic_axes = _flag("JITFLOW_AUTO_DYNAMIC_AXES", default=True)
        self.debug_nans = _flag("JITFLOW_DEBUG_NANS")
        self.debug_infs = _flag("JITFLOW_DEBUG_INFS")
        self.on_matmul_precision_change = []  # callables, run after a change
        self._matmul_precision = "float32"
        self.matmul_precision = os.environ.get("JITFLOW_MATMUL_PRECISION",
                                               "float32").strip().lower() or "float32"

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in self._NOT_PLAIN:
            object.__setattr__(self, "plain_calls", not any(
                getattr(self, flag, False) for flag in self._NOT_PLAIN))

    @property
    def matmul_precision(self):
        return self._matmul_precision

    @matmul_precision.setter
    def matmul_precision(self, value):
        if value not in self.MATMUL_PRECISIONS:
            raise ValueError(f"jitflow.config.matmul_precision must be one of "
                             f"{', '.join(map(repr, self.MATMUL_PRECISIONS))}, not {value!r}")
        changed = value != self._matmul_precision
        self._matmul_precision = value
        if changed:
            for forget in self.on_matmul_precision_change:
                forget()

    def __repr__(self):
        return (f"Config(run_eagerly={self.run_eagerly}, dump_ir={self.dump_ir}, "
                f"check_ir={self.check_ir}, backend={self.backend!r}, "
                f"background_compile={self.background_compile}, "
                f"retrace_warning_after={self.retrace_warning_after}, "
                f"cache_size={self.cache_size}, debug_nans={self.debug_nans}, "
                f"debug_infs={self.debug_infs}, "
                f"matmul_precision={self.matmul_precision!r})")


config = Config()
