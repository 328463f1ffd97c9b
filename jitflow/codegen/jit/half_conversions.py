"""The conversions between float16 and float32 or float64 that LLVM calls on a target
without F16C's instructions (plain x86-64): __extendhfsf2, __truncsfhf2, __truncdfhf2.
A JIT process need not have them (a float16 max compiled for plain x86-64 crashed on a
call to address 0), so jitflow compiles its own, from the emitter's integer code, and
registers them for the linker before any module links (engine.py runs
ensure_registered before each link). On a target with F16C, LLVM emits those
instructions and nothing is built."""
import threading

import llvmlite.binding as llvm
from llvmlite import ir

from ..emitter import F16, F32, F64, Emitter, define_function
from .engine import BEFORE_LINKING, CompiledModule, host
from .target import features


_lock = threading.RLock()
_state = {"done": False, "building": False}


def ensure_registered():
    """Build and register the conversions once per process (another thread's link waits
    for them; this library's own link, inside the build, does not need them)."""
    if _state["done"]:
        return
    with _lock:
        if _state["done"] or _state["building"]:
            return
        _state["building"] = True
        try:
            if "f16c" not in features():
                _register()
            _state["done"] = True
        finally:
            _state["building"] = False


def _register():
    architecture = host()[0].split("-")[0]
    compiled = CompiledModule.library(f"half conversions {architecture}", _module)
    addresses = {name: compiled.address(name)
                 for name in ("__extendhfsf2", "__truncsfhf2", "__truncdfhf2")}
    compiled.keep_for_the_process()
    for name, address in addresses.items():
        llvm.add_symbol(name, address)


BEFORE_LINKING.append(ensure_registered)


def _module():
    module = ir.Module("jitflow_half_conversions")
    for name, result, parameter, convert in (
            ("__extendhfsf2", F32, F16, lambda em, x: em._half_to_float(x)),
            ("__truncsfhf2", F16, F32, lambda em, x: em._float_to_half(x)),
            ("__truncdfhf2", F16, F64,
             lambda em, x: em._float_to_half(em._to_odd_float32(x)))):
        function, builder = define_function(module, name, result, [parameter],
                                            internal=False)
        builder.ret(convert(Emitter(builder), function.args[0]))
    return module
