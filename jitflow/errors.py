"""Errors users see, and how they point at the user's own source line."""
import contextlib
import linecache
import os
import sys

import numpy as np

_SKIPPED_DIRS = (os.path.dirname(os.path.abspath(__file__)) + os.sep,
                 os.path.dirname(os.path.abspath(np.__file__)) + os.sep)
_SKIPPED_FILES = (os.path.abspath(contextlib.__file__),)  # jitflow's `with` machinery


def user_frame():
    """The innermost stack frame that belongs to the user, not to jitflow or NumPy."""
    frame = sys._getframe(1)
    while frame is not None:
        if _is_user_file(frame.f_code.co_filename):
            return frame
        frame = frame.f_back
    return None


def _is_user_file(filename):
    if filename.endswith(".pyx"):  # a compiled NumPy module names its source relatively
        return False
    filename = os.path.abspath(filename)
    return not filename.startswith(_SKIPPED_DIRS) and not filename.startswith("<frozen") \
        and filename not in _SKIPPED_FILES


def _describe(filename, lineno):
    line = linecache.getline(filename, lineno).strip()
    return f"{filename}:{lineno}: {line}" if line else f"{filename}:{lineno}"


def user_location():
    """'file.py:12: the line' for the user's innermost frame (or '' if there is none)."""
    frame = user_frame()
    if frame is None:
        return ""
    return _describe(frame.f_code.co_filename, frame.f_lineno)


def with_user_line(error):
    """`error` with the user's line where it arose, taken from its traceback, added to
    its message, unless the message already has a location. Used while tracing, so that
    errors raised deep inside jitflow.numpy still point at the user's code."""
    if LOCATION_MARK in str(error) or not isinstance(error, (ValueError, TypeError,
                                                             IndexError)):
        return error
    where = None
    tb = error.__traceback__
    while tb is not None:
        if _is_user_file(tb.tb_frame.f_code.co_filename):
            where = _describe(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    if where is None:
        return error
    try:
        annotated = type(error)(f"{error}{LOCATION_MARK}{where}")
    except Exception:  # an exception class with a constructor of its own: leave it be
        return error
    return annotated.with_traceback(error.__traceback__)


LOCATION_MARK = "\n  at "


def at_user_line(message):
    location = user_location()
    return f"{message}{LOCATION_MARK}{location}" if location else message


class ConcretizationError(TypeError):
    """A traced value was asked for a concrete Python value (bool, int, float, array)."""


class TracerLeakError(RuntimeError):
    """A traced value was used after the trace that made it had ended."""


class BooleanIndexError(IndexError):
    """Boolean-mask indexing of a traced value, whose result shape depends on data."""


class RetraceWarning(UserWarning):
    """A jitflow.function keeps being traced again for new signatures."""


class CacheWarning(RuntimeWarning):
    """A damaged entry of the disk cache of compiled code was found, removed and
    compiled again."""


class CompileWarning(RuntimeWarning):
    """Native code for a traced signature could not be built: it runs on the
    interpreter instead."""
