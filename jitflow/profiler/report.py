"""The text of Profile.summary(): each function's calls, traces and builds, then the
kernels that took longest, with their achieved rate."""


def summary_text(functions, kernels):
    lines = ["Functions", _row("function", "calls", "total ms", "mean ms", "kernels %",
                               "traces", "trace ms", "optimize ms", "build ms")]
    for f in functions:
        share = f"{100 * f.kernel_seconds / f.seconds:.0f}%" if f.seconds else ""
        lines.append(_row(f.name, f.calls, _ms(f.seconds),
                          _ms(f.seconds / f.calls) if f.calls else "", share, f.traces,
                          _ms(f.trace_seconds), _ms(f.optimize_seconds),
                          _ms(f.build_seconds)))
    lines += ["", f"Top {len(kernels)} kernels (by total time)",
              _kernel_row("#", "function", "kernel", "kind", "runs", "total ms",
                          "mean us", "rate", "lines")]
    for rank, k in enumerate(kernels, 1):
        lines.append(_kernel_row(rank, k.function, k.kernel.name, k.kernel.kind, k.runs,
                                 _ms(k.seconds), f"{k.mean_seconds * 1e6:.1f}",
                                 k.kernel.rate(k.mean_seconds), k.kernel.where()))
    if any(k.kernel.body for k in kernels):
        lines.append("(a kernel named 'body: ...', 'cond: ...' or 'branchN: ...' ran "
                     "inside a control-flow node: its time, summed over its runs, is "
                     "also the node's)")
    if kernels and not any(k.kernel.lines for k in kernels):
        lines.append("(source lines are known for the functions traced inside the profile)")
    return "\n".join(lines)


def _row(name, *cells):
    return f"{_cut(_short(name), 24):<24}" + "".join(f"{str(c):>12}" for c in cells)


def _kernel_row(rank, function, name, kind, calls, total, mean, rate, lines):
    return (f"{str(rank):>3}  {_cut(_short(function), 18):<18} {_cut(str(name), 52):<52} "
            f"{kind:<12} {str(calls):>6} {str(total):>9} {str(mean):>9}  {rate:<16} "
            f"{lines}")


def _short(name):
    """A function's name without the scopes it was defined in ('train_step', not
    'make_train_step.<locals>.train_step')."""
    return str(name).rpartition(".")[2] or str(name)


def _ms(seconds):
    return f"{seconds * 1e3:.3f}"


def _cut(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."
