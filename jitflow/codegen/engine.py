"""Target machine, optimization pipeline and JIT: LLVM IR text in, callable code out.

Each compiled module gets its own MCJIT engine and its own TargetMachine: an engine takes
ownership of the TargetMachine it is given, and using that TargetMachine after the engine
is gone aborts the process, so target machines are never shared.
"""
import ctypes
import ctypes.util
import functools

import llvmlite
import llvmlite.binding as llvm

from . import disk_cache


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
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)


class CompiledModule:
    """Native code for one LLVM module; keeps its engine (and so the code) alive."""

    def __init__(self, llvm_ir, speed_level=3):
        """Compile `llvm_ir`, or load its object code from the disk cache."""
        _initialize()
        text = str(llvm_ir)
        entry = disk_cache.key(f"O{speed_level}\n{text}", host_fingerprint())
        cached = disk_cache.load(entry)
        self.from_cache = cached is not None
        module = llvm.parse_assembly(text)
        module.verify()
        machine = _target_machine(opt=speed_level)
        # The optimized IR is printed only when asked for: printing costs milliseconds.
        self._source, self._speed_level, self._optimized_ir = text, speed_level, None
        if cached is None:
            optimize_module(module, machine, speed_level)
        self._engine = llvm.create_mcjit_compiler(module, machine)  # owns `machine`
        self._engine.set_object_cache(
            notify_func=lambda _, code: disk_cache.store(entry, code),
            getbuffer_func=lambda _: cached)
        self._engine.finalize_object()

    @property
    def optimized_ir(self):
        """The optimized module's text, recomputed from the source when first asked for."""
        if self._optimized_ir is None:
            module = llvm.parse_assembly(self._source)
            optimize_module(module, _target_machine(self._speed_level), self._speed_level)
            self._optimized_ir = str(module)
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
