"""Target machine, optimization pipeline and JIT: LLVM IR text in, callable code out.

Each compiled module gets its own MCJIT engine and its own TargetMachine: an engine takes
ownership of the TargetMachine it is given, and using that TargetMachine after the engine
is gone aborts the process, so target machines are never shared.
"""
import contextlib
import ctypes
import ctypes.util
import functools
import os
import sys
import threading

import llvmlite
import llvmlite.binding as llvm
from llvmlite.binding import ffi

from . import disk_cache, target
from .threads import thread_count


# Code generation passes that cost compile time and made no kernel faster, measured A/B
# on the benchmarks' kernels and on every sgemm shape: loop strength reduction (it runs
# again in code generation, after the pass pipeline has shaped the loops) and the
# machine instruction schedulers. Without them, code generation of the MLP training
# step's modules took 49-56 ms instead of 100-105; without the post-RA list scheduler
# too, 37-39 ms of CPU instead of 41-43 (the same object code size). These are LLVM's
# process-wide options: other llvmlite users in the process see them too.
CODEGEN_OPTIONS = ("-disable-lsr", "-enable-misched=false", "-enable-post-misched=false",
                   "-post-RA-scheduler=false")


_INITIALIZING = threading.Lock()
# Called before every link, each making sure of symbols the modules may need
# (half_conversions.py installs its own from above).
BEFORE_LINKING = []
# The runtime libraries generated code calls by name (the thread pool, sgemm, the Python
# entry's shared code), as (name prefix, loader): a loader compiles its library once and
# registers its symbols. Lowering only declares their functions; a module's link loads
# the libraries whose names its object code holds. So a first compile lowers and
# compiles while the libraries are still being built (runtime/libraries.py), and waits
# for them only to link.
_LIBRARIES = []
# The names of the libraries compiled in this process, not found in the disk cache.
_LIBRARIES_BUILT = []
_initialized = False


def _initialize():
    """Once per process, under a lock: the libraries may be built on a thread of their
    own (runtime/libraries.py) while the first compile starts, and LLVM's options must
    be set once."""
    global _initialized
    if _initialized:
        return
    with _INITIALIZING:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            for option in CODEGEN_OPTIONS:
                llvm.set_option("", option)
            libmvec()
            _initialized = True


@functools.cache
def libmvec():
    """glibc's vector math library as a ctypes handle, loaded into the process so that
    JIT-compiled code can call its vector functions (mathlib's "libmvec" route); None on
    platforms without it."""
    for path in filter(None, (ctypes.util.find_library("mvec"), "libmvec.so.1")):
        try:
            handle = ctypes.CDLL(path)
            llvm.load_library_permanently(path)
            return handle
        except (OSError, RuntimeError):
            continue
    return None


def host():
    """(triple, cpu name, feature string) that code is generated for: this machine's
    (without the host CPU and its features LLVM targets baseline x86-64 and emits SSE
    code only), or the level JITFLOW_CPU names (target.py)."""
    _initialize()
    return target.selected()


def host_fingerprint():
    """What compiled code depends on besides the IR: used in cache keys."""
    triple, cpu, features = host()
    return f"{triple}|{cpu}|{features}|llvmlite {llvmlite.__version__}"


def target_machine(opt):
    """A new TargetMachine for host(): each engine owns its own (see the top)."""
    _initialize()
    return target.machine(opt)


# The speed level of a module whose loops are vector code already
# (loops/vector_loops.py): it gets a short pipeline of clean-up passes instead of LLVM's,
# whose loop passes and vectorizer would find nothing to do. On a training step's
# modules (a 3-layer MLP): 25 ms of optimizer time against 77 for LLVM's pipeline on the
# scalar loops.
SHORT_PIPELINE = 1


def optimize_module(module, machine, speed_level=3):
    """Run the pipeline of `speed_level` on `module` (through llvmlite's lock)."""
    builder = pass_builder(machine, speed_level)
    module_passes(builder, speed_level).run(module, builder)


def module_passes(builder, speed_level):
    """The module pass manager of `speed_level`: LLVM's pipeline from pass_builder, or
    at SHORT_PIPELINE: inlining of the math functions (math/math_inline.py), scalars out of
    stack slots (the reductions' accumulators), then redundancy and dead code removal."""
    if speed_level != SHORT_PIPELINE:
        return builder.getModulePassManager()
    passes = llvm.create_new_module_pass_manager()
    passes.add_always_inliner_pass()
    passes.add_sroa_pass()
    passes.add_instruction_combine_pass()
    passes.add_simplify_cfg_pass()
    passes.add_new_gvn_pass()
    passes.add_instruction_combine_pass()
    passes.add_dead_code_elimination_pass()
    return passes


def pass_builder(machine, speed_level):
    """LLVM's new-pass-manager pipeline at `speed_level`, with the loop vectorizer on and
    the passes that cost compile time without paying for it off.

    Measured on the benchmarks (same process, A/B): the SLP vectorizer, loop unrolling
    and interleaving of vectorized loops made no kernel faster (the reductions'
    accumulators are explicit vectors already, and the loops are memory- or math-bound),
    while they took 55-60% of the compile time: the MLP training step compiled in
    563-682 ms with them and 263-266 ms without.
    """
    options = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    options.loop_vectorization = True
    options.slp_vectorization = False
    options.loop_unrolling = False
    options.loop_interleaving = False
    return llvm.create_pass_builder(machine, options)


class CompiledModule:
    """Native code for one or more LLVM modules linked together (they may call each
    other's functions by name); keeps its engine, and so the code, alive."""

    _is_library = False

    def __init__(self, llvm_irs, speed_level=3):
        """Compile each module of `llvm_irs` (a module or its text, or a list of them),
        or load its object code from the disk cache."""
        texts = llvm_irs if isinstance(llvm_irs, (list, tuple)) else [llvm_irs]
        compilation = Compilation(speed_level)
        for index, text in enumerate(texts):
            compilation.add(str(text), in_background=index < len(texts) - 1)
        self._link(compilation)

    @classmethod
    def library(cls, name, build, speed_level=3):
        """A module that jitflow generates the same way every time (a runtime library:
        `build()` returns its IR), cached under `name` and the code generator's source
        rather than under its text (with jitflow's source: disk_cache.source_digest),
        so that a process finding it cached never builds
        it: building the sgemm library's IR took 20-30 ms of each process's first
        matrix product."""
        # Not a miss of the compile that needs it (disk_cache.reporting_misses): which
        # thread builds a library, this one or the import's, is a matter of timing.
        with disk_cache.reporting_misses(None):
            compilation = Compilation(speed_level)
            compilation.add(lambda: str(build()),
                            f"library {name}\n{disk_cache.source_digest()}",
                            in_background=False)
            # A library loads the libraries it calls itself, before it links (its
            # loader holds its own lock, which a lookup of its own names would wait for).
            compiled = cls.from_compilation(compilation, is_library=True)
        if not compiled.from_cache:
            _LIBRARIES_BUILT.append(name)
        return compiled

    @classmethod
    def from_compilation(cls, compilation, is_library=False):
        """The modules added to `compilation`, once they are all compiled."""
        compiled = cls.__new__(cls)
        compiled._is_library = is_library
        compiled._link(compilation)
        return compiled

    @classmethod
    def from_object_code(cls, objects, sources, speed_levels, speed_level=3):
        """Modules compiled before (runtime/graph_cache.py): their object code, and
        `sources()`, which gives their texts when asked for (optimized_ir, assembly)."""
        compiled = cls.__new__(cls)
        compiled._attach(objects, sources, speed_levels, speed_level, from_cache=True)
        return compiled

    def _link(self, compilation):
        objects = compilation.finish()
        self._attach(objects, compilation.sources, compilation.speed_levels,
                     compilation.speed_level, compilation.from_cache)

    def _attach(self, objects, sources, speed_levels, speed_level, from_cache):
        _initialize()
        for prepare in BEFORE_LINKING:
            prepare()
        if not self._is_library:
            _load_libraries_named_in(objects)
        self.from_cache = from_cache
        self._sources, self._speed_levels = sources, speed_levels
        self._optimized_ir = None
        self._engine = llvm.create_mcjit_compiler(  # owns its TargetMachine
            llvm.parse_assembly(""), target_machine(speed_level))
        for code in objects:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        self._engine.finalize_object()

    @property
    def optimized_ir(self):
        """The optimized modules' text, recomputed from the sources when first asked for
        (printing costs milliseconds)."""
        if self._optimized_ir is None:
            texts = []
            for source, level in zip(self._sources(), self._speed_levels):
                module = llvm.parse_assembly(source)
                optimize_module(module, target_machine(level), level)
                texts.append(str(module))
            self._optimized_ir = "\n".join(texts)
        return self._optimized_ir

    @property
    def assembly(self):
        """The machine code as assembly text, recomputed from the sources: what the
        engine runs, though its object code may have come from the disk cache."""
        texts = []
        for source, level in zip(self._sources(), self._speed_levels):
            module = llvm.parse_assembly(source)
            machine = target_machine(level)  # never given to an engine
            optimize_module(module, machine, level)
            texts.append(machine.emit_assembly(module))
        return "\n".join(texts)

    def keep_for_the_process(self):
        """Never free this code, even once this object is gone: for code that threads
        run until the process ends."""
        self._engine.detach()

    def address(self, name):
        address = self._engine.get_function_address(name)
        if not address:
            raise KeyError(f"compiled module has no function '{name}'")
        return address

    def global_address(self, name):
        """Where the global variable `name` is."""
        address = self._engine.get_global_value_address(name)
        if not address:
            raise KeyError(f"compiled module has no global '{name}'")
        return address


def link_library_on_demand(prefix, load):
    """Have `load()` called before any module whose object code names a symbol starting
    with `prefix` links (see _LIBRARIES)."""
    _LIBRARIES.append((prefix.encode(), load))


def _load_libraries_named_in(objects):
    """An object file holds the name of every symbol it calls outside itself; a name
    that occurs by chance only loads a library early."""
    for prefix, load in _LIBRARIES:
        if any(prefix in code for code in objects):
            load()


# --- compiling modules on several cores ---------------------------------------------------
# llvmlite serializes every call into LLVM behind one process-wide lock, which protects
# LLVM's global context. A module parsed into a context of its own, optimized and turned
# into object code by a TargetMachine of its own, shares nothing with other threads, as
# LLVM allows; so those long calls go to LLVM directly, without the lock, and a graph
# lowered into several modules (lowering/lower.py) compiles on several cores at once.
# Measured here: two copies of the MLP training step's module compiled in two threads in
# 1.0-1.4 times the time of one, and one after the other through the lock in 1.8-2.4
# times.

class Compilation:
    """The object code of modules handed in one by one (`add`): taken from the disk
    cache, or compiled by helper threads while the caller goes on (lowering the next
    module), and by the caller too once it has no more (`finish`)."""

    def __init__(self, speed_level):
        self.speed_level = speed_level  # of modules added without one
        self.speed_levels = []
        self._texts, self._keys, self._objects = [], [], []
        self._queue, self._closed, self._errors, self._helpers = [], False, [], []
        self._ready = threading.Condition()
        self.from_cache = True

    def add(self, text, key_text=None, in_background=True, speed_level=None):
        """Add a module: `text`, or a function returning it (called only if the module
        is not cached; then `key_text` names it in the cache, else its text does).
        in_background: start a helper thread on it now, rather than leaving it to the
        caller's finish() (so a single module never starts a thread)."""
        level = self.speed_level if speed_level is None else speed_level
        key = disk_cache.key(f"O{level}\n{key_text or text}", host_fingerprint())
        code = disk_cache.load(key)
        self.speed_levels.append(level)
        self._texts.append(text)
        self._keys.append(key)
        self._objects.append(code)
        if code is not None:
            return
        self.from_cache = False
        with self._ready:
            self._queue.append(len(self._texts) - 1)
            self._ready.notify()
        if in_background and len(self._helpers) < thread_count() - 1:
            self._start_helper()

    @property
    def objects(self):
        """Each module's object code, once finish() returned."""
        return self._objects

    def sources(self):
        """The modules' texts (built now for a module added as a function)."""
        return [text() if callable(text) else text for text in self._texts]

    def finish(self):
        """Compile what is left, largest first, with the calling thread's help, and
        return every module's object code."""
        with self._ready:
            self._closed = True
            self._queue.sort(key=lambda i: len(self._texts[i]) if isinstance(
                self._texts[i], str) else 0)
            self._ready.notify_all()
        self._work()
        for helper in self._helpers:
            helper.join()
        if self._errors:
            raise self._errors[0]
        return self._objects

    def abandon(self):
        """Stop the helpers (the caller failed before adding every module)."""
        with self._ready:
            self._closed = True
            self._queue.clear()
            self._ready.notify_all()

    def _start_helper(self):
        helper = threading.Thread(target=self._work, daemon=True)
        try:
            helper.start()
        except RuntimeError:  # no thread to be had: the calling thread does it all
            return
        self._helpers.append(helper)

    def _work(self):
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if not self._queue:
                    return
                index = self._queue.pop()
            text = self._texts[index]
            try:
                code = _object_code(text() if callable(text) else text,
                                    self.speed_levels[index])
            except BaseException as error:  # raised again by finish()
                self._errors.append(error)
                continue
            self._objects[index] = code
            disk_cache.store(self._keys[index], code)


_switches_lock = threading.Lock()
_quick_switch_users = 0
_switch_interval_before = None


@contextlib.contextmanager
def quick_thread_switches():
    """While lowering (Python) runs beside helper threads compiling (LLVM): a helper
    needs the GIL back after each of its ~25 calls into LLVM, and with Python's default
    5 ms switch interval it waits for most of it each time. Measured on one module's
    compile beside a thread running Python: 66 ms at 5 ms, 15 ms at 0.2 ms (11 alone).
    Threads may build at once (a background compile beside the libraries' build): the
    first in sets the quick interval, the last out restores the one before."""
    global _quick_switch_users, _switch_interval_before
    with _switches_lock:
        if _quick_switch_users == 0:
            _switch_interval_before = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_interval_before, 0.0002))
        _quick_switch_users += 1
    try:
        yield
    finally:
        with _switches_lock:
            _quick_switch_users -= 1
            if _quick_switch_users == 0:
                sys.setswitchinterval(_switch_interval_before)


def libraries_built():
    """The names of the libraries this process built (rather than found cached)."""
    return list(_LIBRARIES_BUILT)


def _object_code(text, speed_level):
    context = llvm.create_context()
    module = llvm.parse_assembly(text, context)
    with ffi.OutputString() as message:
        if _unlocked("LLVMPY_VerifyModule")(module, message):
            raise RuntimeError(str(message))
    with _spare_machine(speed_level) as machine:
        builder = pass_builder(machine, speed_level)
        _unlocked("LLVMPY_RunNewModulePassManager")(module_passes(builder, speed_level),
                                                    module, builder)
        with ffi.OutputString() as message:
            buffer = _unlocked("LLVMPY_TargetMachineEmitToMemory")(machine, module, 1,
                                                                   message)
            if not buffer:
                raise RuntimeError(str(message))
    try:
        return ctypes.string_at(ffi.lib.LLVMPY_GetBufferStart(buffer),
                                ffi.lib.LLVMPY_GetBufferSize(buffer))
    finally:
        ffi.lib.LLVMPY_DisposeMemoryBuffer(buffer)


_spare_machines = {}  # speed level -> target machines no thread is using
_spare_lock = threading.Lock()


def _forget_spares_in_forked_children():
    """A child forked while another thread held a lock would wait for it forever."""
    global _spare_lock, _switches_lock
    _spare_lock, _switches_lock = threading.Lock(), threading.Lock()
    _spare_machines.clear()


os.register_at_fork(after_in_child=_forget_spares_in_forked_children)


@contextlib.contextmanager
def _spare_machine(speed_level):
    """A TargetMachine for one thread's use: kept for the next module, because a fresh
    one spends ~1.3 ms setting itself up on its first module (measured: 2.7 ms against
    1.4 ms to emit an empty module). These never go to an engine, which would own them."""
    with _spare_lock:
        spares = _spare_machines.setdefault(speed_level, [])
        machine = spares.pop() if spares else None
    machine = machine or target_machine(opt=speed_level)
    try:
        yield machine
    finally:
        with _spare_lock:
            _spare_machines[speed_level].append(machine)


def _unlocked(name):
    """llvmlite's C function `name` without its lock (the lock-taking wrapper where
    llvmlite has no such thing: correct, only not parallel)."""
    wrapper = getattr(ffi.lib, name)
    return getattr(wrapper, "_cfn", wrapper)
