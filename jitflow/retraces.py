"""Why a jitflow.function was traced again (the differences between its signatures),
and the warning when it keeps being traced."""
import warnings

from .errors import RetraceWarning, user_frame


def differences(old, new):
    """What changed from the signature `old` to `new`, each as a sentence."""
    if old.structure != new.structure:
        return [f"the structure of the arguments changed (now {new.paths})"]
    diffs = [f"argument '{path}' changed from {a} to {b}"
             for path, a, b in zip(new.paths, old.types, new.types) if a != b]
    before, after = dict(old.statics), dict(new.statics)
    diffs += [f"static argument '{name}' changed from {_shown(before, name)} to "
              f"{_shown(after, name)}" for name in sorted(before.keys() | after.keys())
              if before.get(name, _DEFAULT) != after.get(name, _DEFAULT)]
    if old.matmul_precision != new.matmul_precision:
        diffs.append(f"jitflow.config.matmul_precision changed from "
                     f"{old.matmul_precision!r} to {new.matmul_precision!r}")
    return diffs


_DEFAULT = object()  # a static argument left to its default


def _shown(statics, name):
    return repr(statics[name]) if name in statics else "its default"


def warn_retraces(name, traces, reasons):
    """A RetraceWarning at the user's line: `name` traced `traces` times, the last
    `reasons` (differences' sentences) quoted."""
    frame = user_frame()
    recent = "\n  ".join(reasons[-5:])
    message = (f"jitflow.function '{name}' has been traced {traces} times. Each trace "
               f"compiles the function again. Recent reasons:\n  {recent}\n"
               f"If shapes keep changing, pad inputs to a few fixed sizes; if a static "
               f"argument keeps changing, pass it as an array instead; if Python scalars "
               f"switch between int and float, pass one kind consistently.")
    if frame is None:
        warnings.warn(message, RetraceWarning, stacklevel=3)
    else:
        warnings.warn_explicit(message, RetraceWarning, frame.f_code.co_filename,
                               frame.f_lineno)
