"""What a compiled signature became, for reading: Function.lower(*args) returns it."""


class Lowered:
    """One signature of a jitflow.function, compiled: its graph after the passes and
    fusion, its LLVM IR before and after LLVM's optimizations, and its assembly."""

    def __init__(self, executable):
        if executable.backend != "native":
            raise ValueError(f"{executable.name}: lower() shows native code, but "
                             f"jitflow.config.backend is {executable.backend!r}")
        executable.wait()
        self._native = executable.native

    def graph_ir(self):
        """The graph as lowered: optimized, with its fused nodes' bodies."""
        return str(self._native.graph)

    def llvm_ir(self, optimized=True):
        """The LLVM IR of every module of the signature (optimized by LLVM, or as
        jitflow wrote it)."""
        return self._native.compiled.optimized_ir if optimized else self._native.llvm_ir

    def asm(self):
        """The assembly of the machine code the calls run."""
        return self._native.compiled.assembly

    def __repr__(self):
        return f"<jitflow.Lowered {self._native.name}>"
