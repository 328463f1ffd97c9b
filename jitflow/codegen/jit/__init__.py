"""LLVM IR text in, machine code out, and what that code runs on.

Owns the target CPU (target.py: JITFLOW_CPU's levels, the vector width; caches.py: its
last-level cache, past which loops' stores stream), the
optimization pipeline and the JIT (engine.py: CompiledModule, Compilation, host), the
on-disk cache of object code (disk_cache.py), the thread count (threads.py), the
process's worker pool that split loop nests run on (pool.py) and the float16
conversions a target without F16C calls (half_conversions.py, registered before every
link; pool.py imports it, as everything that links imports the pool). Nothing here
knows about graphs; everything above compiles through it.
"""
