"""Shared test helpers: golden IR text, tracing a function to a graph, and naming a
line of a function's source as errors name it."""
import inspect
import os
import textwrap

import jitflow


def golden(text):
    """Expected IR text written indented inside a test."""
    return textwrap.dedent(text).strip()


def trace(fn, *args):
    """The unoptimized graph of fn traced on args."""
    return jitflow.function(fn).trace(*args)


def line_of(marker, fn):
    """'file.py:N' for the line of fn's source that contains `marker`, as jitflow's
    errors name the user's line."""
    lines, start = inspect.getsourcelines(fn)
    offset = next(i for i, text in enumerate(lines) if marker in text)
    return f"{os.path.basename(inspect.getsourcefile(fn))}:{start + offset}"
