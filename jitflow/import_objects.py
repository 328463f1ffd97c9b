"""The objects `import jitflow` leaves alive, moved out of the garbage collector's way.

The import makes some 30,000 objects that live as long as the process (modules,
classes, functions and their closures), beside NumPy's 18,000. CPython's collector
visits every tracked object in each full collection: ~20 ms for the ~50,000 on an Intel
Xeon (Emerald Rapids), where the first full collection tended to fall inside a
process's first trace, and was then most of a warm first compile's 40-100 ms.
gc.freeze() moves every object alive to a generation the collector skips, so a full
collection visits only what was made after the import.

A frozen object is never collected: one that later becomes part of unreachable cycles
stays allocated. So there is no freeze when the process built a library or is building
one (codegen/runtime/libraries.py, when the disk cache lacks them): their LLVM IR, in
Python objects, is cyclic garbage once built. That is a machine's first process.
JITFLOW_GC_FREEZE=0 turns the freeze off, for a process that must see every object in
gc.get_objects().
"""
import gc
import os

FREEZE_VARIABLE = "JITFLOW_GC_FREEZE"


def freeze(libraries_settled):
    """gc.freeze(), unless turned off or not `libraries_settled`
    (libraries.settled()); returns whether it froze."""
    setting = os.environ.get(FREEZE_VARIABLE, "1").strip().lower()
    if setting in ("0", "false", "no") or not libraries_settled:
        return False
    gc.freeze()
    return True
