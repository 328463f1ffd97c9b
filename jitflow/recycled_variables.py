"""The arrays of Variables' old values, reused for their new values.

A compiled call that assigns a Variable computes the new value into an array that the
Variable then holds (Variable.adopt), so every training step took fresh memory for
every parameter it updated; for a large one (above glibc's mmap threshold) that is
fresh pages from the kernel, zeroed and faulted in, on every step. Instead, once the
call has succeeded and the Variable holds its new value, the array of its old value is
kept for the next call to compute that Variable's value into (out_arrays.Destinations)
when nothing but this call refers to it any more: sys.getrefcount proves it, so an
old value anyone can still read (`before = v.value`, a call running on another thread
that reads it) is never written. A step then alternates between two arrays per
Variable.
"""
import sys

# Smaller arrays come from glibc's free lists at no cost: not worth the bookkeeping.
RECYCLE_BYTES = 1 << 17


def assigned_arrays(state, count, variables):
    """[(output index, the array held now)] for each large Variable the call assigns;
    `count`: how many of the graph's outputs are the function's own."""
    return [(count + k, variables[slot].held()) for k, slot in enumerate(state.assigned)
            if variables[slot].held().nbytes >= RECYCLE_BYTES]


def recycle(previous, keep):
    """After the Variables adopted their new values: keep(index, array) each array of
    `previous` (which is emptied) nothing else refers to."""
    while previous:
        index, old = previous.pop()
        if sys.getrefcount(old) == 2 and old.base is None:  # `old` and the argument
            old.flags.writeable = True
            keep(index, old)
