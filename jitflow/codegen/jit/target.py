"""Which CPU native code is generated for, and the vector width LLVM tunes it to.

By default jitflow generates for the machine it runs on: LLVM's name for the host CPU
(which brings LLVM's tuning for it) and the host's features. JITFLOW_CPU, read once per
process, names an x86-64 micro-architecture level instead, so that one machine can build
and test another's code paths: "x86-64-v3" gives the AVX2 code an AVX2-only CPU (AMD Zen
3, Intel Haswell to Alder Lake) gets, "x86-64-v4" AVX-512 code tuned as LLVM tunes Intel's
server cores (256-bit vectors preferred). A level the host cannot run is refused, since
its code would stop at the first instruction the CPU lacks.
"""
import functools
import os
import re

import llvmlite.binding as llvm

from .. import emitter

CPU_VARIABLE = "JITFLOW_CPU"

# The x86-64 psABI levels, each adding to the one before, in LLVM's feature names.
_LEVEL_FEATURES = {
    "x86-64": ("64bit", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2"),
    "x86-64-v2": ("cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3"),
    "x86-64-v3": ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"),
    "x86-64-v4": ("avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"),
}
LEVELS = tuple(_LEVEL_FEATURES)


def level_features(level):
    """Every feature of `level` and of the levels below it."""
    upto = LEVELS[:LEVELS.index(level) + 1]
    return tuple(feature for name in upto for feature in _LEVEL_FEATURES[name])


def requested():
    """JITFLOW_CPU's value: "native" (the default) or one of LEVELS."""
    name = os.environ.get(CPU_VARIABLE, "native").strip().lower() or "native"
    if name != "native" and name not in LEVELS:
        raise ValueError(f"{CPU_VARIABLE} must be 'native' or one of {', '.join(LEVELS)}, "
                         f"not {name!r}")
    return name


@functools.cache
def selected():
    """(triple, cpu name, feature string) that code is generated for."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    triple = llvm.get_process_triple()
    host_features = llvm.get_host_cpu_features().flatten()
    level = requested()
    if level == "native":
        return triple, llvm.get_host_cpu_name(), host_features
    missing = [f for f in level_features(level) if f not in features(host_features)]
    if missing:
        raise RuntimeError(f"{CPU_VARIABLE}={level} needs {', '.join(missing)}, which this "
                           f"CPU ({llvm.get_host_cpu_name()}) does not have")
    return triple, level, ",".join("+" + f for f in level_features(level))


def machine(opt):
    """A new TargetMachine for the selected target (an engine owns the one it is given:
    engine.py)."""
    triple, cpu, feature_string = selected()
    return llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=feature_string, opt=opt, reloc="default", codemodel="jitdefault",
        jit=True)


def features(feature_string=None):
    """The set of enabled features in an LLVM feature string (the selected target's)."""
    text = selected()[2] if feature_string is None else feature_string
    return {flag[1:] for flag in text.split(",") if flag.startswith("+")}


# A float loop for LLVM's loop vectorizer: the widest vector it makes of it is the width
# LLVM's cost model prefers on the target, which is not always the widest registers
# (LLVM prefers 256-bit vectors on Intel's AVX-512 cores, 512-bit ones on AMD Zen 4/5).
_PROBE = r"""
define void @probe(ptr noalias %out, ptr noalias %in, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %from = getelementptr float, ptr %in, i64 %i
  %x = load float, ptr %from
  %y = fmul float %x, 2.0
  %to = getelementptr float, ptr %out, i64 %i
  store float %y, ptr %to
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""


@functools.cache
def preferred_vector_bits():
    """The vector width, in bits, LLVM vectorizes loops to on the selected target: 512,
    256 or 128 (measured once per process on a probe loop, about a millisecond)."""
    probe_machine = machine(opt=3)
    module = llvm.parse_assembly(_PROBE)
    module.triple = probe_machine.triple
    module.data_layout = str(probe_machine.target_data)
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization, options.loop_interleaving = True, False
    builder = llvm.create_pass_builder(probe_machine, options)
    builder.getModulePassManager().run(module, builder)
    lanes = [int(n) for n in re.findall(r"<(\d+) x float>", str(module))]
    return 32 * max(lanes, default=1)


def describe():
    """One line for README figures and bug reports: CPU, level and vector width."""
    _, cpu, _ = selected()
    isa = ("AVX-512" if "avx512f" in features() else "AVX2" if "avx2" in features()
           else "SSE")
    return f"{cpu} ({isa}, {preferred_vector_bits()}-bit vectors preferred)"


def _half_in_hardware():
    return "f16c" in features()


def _vector_register_bits():
    return 512 if "avx512f" in features() else 256 if "avx" in features() else 128


# The emitter converts float16 with F16C's instructions where the target has them, and
# hides values from LLVM in asm operands as wide as the target's registers.
emitter.half_in_hardware = _half_in_hardware
emitter.vector_register_bits = _vector_register_bits
