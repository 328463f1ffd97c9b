"""Target machine, optimization pipeline and JIT: LLVM IR text in, callable code out.

Each compiled module gets its own MCJIT engine and its own TargetMachine: an engine takes
ownership of the TargetMachine it is given, and using that TargetMachine after the engine
is gone aborts the process, so target machines are never shared.
"""
import contextlib
import ctypes
import ctypes.util
import functools
import hashlib
import os
import pathlib
import threading

import llvmlite
import llvmlite.binding as llvm
from llvmlite.binding import ffi

from . import disk_cache
from .threads import thread_count


@functools.cache
def _initialize():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    libmvec()


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


@functools.cache
def host():
    """(triple, cpu name, feature string) of this machine: without the host CPU and its
    features LLVM targets baseline x86-64 and emits SSE code only."""
    _initialize()
    return (llvm.get_process_triple(), llvm.get_host_cpu_name(),
            llvm.get_host_cpu_features().flatten())


@functools.cache
def _generator_digest():
    """A hash of the code generator's source: what a library's machine code depends on
    besides the host (CompiledModule.library)."""
    digest = hashlib.sha256()
    folder = pathlib.Path(__file__).parent
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def host_fingerprint():
    """What compiled code depends on besides the IR: used in cache keys."""
    triple, cpu, features = host()
    return f"{triple}|{cpu}|{features}|llvmlite {llvmlite.__version__}"


def _target_machine(opt):
    triple, cpu, features = host()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=opt,
                                        reloc="default", codemodel="jitdefault", jit=True)


def optimize_module(module, machine, speed_level=3):
    """Run pass_builder's pipeline on `module` (through llvmlite's lock)."""
    builder = pass_builder(machine, speed_level)
    builder.getModulePassManager().run(module, builder)


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

    def __init__(self, llvm_irs, speed_level=3):
        """Compile each module of `llvm_irs` (a module or its text, or a list of them),
        or load its object code from the disk cache."""
        several = isinstance(llvm_irs, (list, tuple))
        sources = [str(text) for text in (llvm_irs if several else [llvm_irs])]
        keys = [disk_cache.key(f"O{speed_level}\n{text}", host_fingerprint())
                for text in sources]
        self._load(keys, lambda: sources, speed_level)

    @classmethod
    def library(cls, name, build, speed_level=3):
        """A module that jitflow generates the same way every time (a runtime library:
        `build()` returns its IR), cached under `name` and the code generator's source
        rather than under its text, so that a process finding it cached never builds
        it: building the sgemm library's IR took 20-30 ms of each process's first
        matrix product."""
        compiled = cls.__new__(cls)
        key = disk_cache.key(f"O{speed_level}\nlibrary {name}\n{_generator_digest()}",
                             host_fingerprint())
        compiled._load([key], lambda: [str(build())], speed_level)
        return compiled

    def _load(self, keys, sources, speed_level):
        """Link the object code of the modules `sources()` returns, each taken from the
        disk cache under its key when there, else compiled (and stored)."""
        _initialize()
        self._sources, self._speed_level, self._optimized_ir = sources, speed_level, None
        objects = [disk_cache.load(key) for key in keys]
        missing = [i for i, code in enumerate(objects) if code is None]
        if missing:
            texts = sources()
            built = compile_objects([texts[i] for i in missing], speed_level)
            for i, code in zip(missing, built):
                objects[i] = code
                disk_cache.store(keys[i], code)
        self.from_cache = not missing
        self._engine = llvm.create_mcjit_compiler(  # owns its TargetMachine
            llvm.parse_assembly(""), _target_machine(speed_level))
        for code in objects:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(code))
        self._engine.finalize_object()

    @property
    def optimized_ir(self):
        """The optimized modules' text, recomputed from the sources when first asked for
        (printing costs milliseconds)."""
        if self._optimized_ir is None:
            texts = []
            for source in self._sources():
                module = llvm.parse_assembly(source)
                optimize_module(module, _target_machine(self._speed_level),
                                self._speed_level)
                texts.append(str(module))
            self._optimized_ir = "\n".join(texts)
        return self._optimized_ir

    def keep_for_the_process(self):
        """Never free this code, even once this object is gone: for code that threads
        run until the process ends."""
        self._engine.detach()

    def address(self, name):
        address = self._engine.get_function_address(name)
        if not address:
            raise KeyError(f"compiled module has no function '{name}'")
        return address


# --- compiling modules on several cores ---------------------------------------------------
# llvmlite serializes every call into LLVM behind one process-wide lock, which protects
# LLVM's global context. A module parsed into a context of its own, optimized and turned
# into object code by a TargetMachine of its own, shares nothing with other threads, as
# LLVM allows; so those long calls go to LLVM directly, without the lock, and a graph
# lowered into several modules (lower.py) compiles on several cores at once. Measured
# here: two copies of the MLP training step's module compiled in two threads in 1.0-1.4
# times the time of one, and one after the other through the lock in 1.8-2.4 times.

def compile_objects(texts, speed_level):
    """Object code for each LLVM module text, compiled by up to thread_count() threads
    (the calling thread is one of them), largest first so that they finish together."""
    results, errors = [None] * len(texts), []
    pending = iter(sorted(range(len(texts)), key=lambda i: -len(texts[i])))
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                index = next(pending, None)
            if index is None:
                return
            try:
                results[index] = _object_code(texts[index], speed_level)
            except BaseException as error:  # raised again in the calling thread
                errors.append(error)
    helpers = []
    for _ in range(min(thread_count(), len(texts)) - 1):
        helper = threading.Thread(target=work, daemon=True)
        try:
            helper.start()
        except RuntimeError:  # no thread to be had: the calling thread does it all
            break
        helpers.append(helper)
    work()
    for helper in helpers:
        helper.join()
    if errors:
        raise errors[0]
    return results


def _object_code(text, speed_level):
    context = llvm.create_context()
    module = llvm.parse_assembly(text, context)
    with ffi.OutputString() as message:
        if _unlocked("LLVMPY_VerifyModule")(module, message):
            raise RuntimeError(str(message))
    with _spare_machine(speed_level) as machine:
        builder = pass_builder(machine, speed_level)
        _unlocked("LLVMPY_RunNewModulePassManager")(builder.getModulePassManager(), module,
                                                    builder)
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
    """A child forked while another thread held the lock would wait for it forever."""
    global _spare_lock
    _spare_lock = threading.Lock()
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
    machine = machine or _target_machine(opt=speed_level)
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
