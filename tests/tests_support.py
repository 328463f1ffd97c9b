"""Shared test helpers: golden IR text and tracing a function to a graph."""
import textwrap

import jitflow


def golden(text):
    """Expected IR text written indented inside a test."""
    return textwrap.dedent(text).strip()


def trace(fn, *args):
    """The unoptimized graph of fn traced on args."""
    return jitflow.function(fn).trace(*args)
