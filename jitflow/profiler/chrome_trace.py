"""A Profile as Chrome's trace event format (JSON), which Perfetto and chrome://tracing
open: each call a complete event ("ph": "X") on its thread's track, its kernels nested
under it, and each trace, optimization and native build on a "compile" track.

Native code records how long each kernel ran, not when it began: the kernels of a call
are laid one after the other from the call's start, in the order the code runs them
(that order is exact; the short gaps between them are not shown).
"""
import json

COMPILE_TRACK = 0  # the tid of the compile track (threads' tids are their idents)


def chrome_trace(profile, path, pid):
    events = [_metadata(pid, COMPILE_TRACK, "compile")]
    threads = set()
    for call in profile.calls:
        threads.add(call.thread)
        events += _call_events(profile, call, pid)
    for record in profile.compiles:
        events += _compile_events(profile, record, pid)
    events += [_metadata(pid, thread, f"calls (thread {thread})") for thread in threads]
    with open(path, "w", encoding="utf-8") as file:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms",
                   "otherData": {"origin_unix_time": profile.origin_wall}}, file)


def _micros(profile, moment):
    return (moment - profile.origin) * 1e6


def _call_events(profile, call, pid):
    start = _micros(profile, call.started)
    inputs = ", ".join(str(v.type) for v in call.executable.graph.inputs)
    events = [{"name": call.executable.name, "cat": "call", "ph": "X", "ts": start,
               "dur": call.seconds * 1e6, "pid": pid, "tid": call.thread,
               "args": {"inputs": inputs}}]
    cursor = start
    for index in sorted(call.node_times):
        nanoseconds, runs = call.node_times[index]
        duration = nanoseconds / 1e3
        events.append(_kernel_event(profile, call, index, (), cursor, duration, runs, pid))
        events += _body_events(profile, call, index, cursor, pid)
        cursor += duration
    return events


def _kernel_event(profile, call, index, path, start, duration, runs, pid):
    kernel = profile.kernel_of(call.executable, index, path)
    per_run = duration * 1e-6 / runs if runs else 0.0
    return {"name": kernel.name, "cat": f"in a {kernel.body}" if path else kernel.kind,
            "ph": "X", "ts": start, "dur": duration, "pid": pid, "tid": call.thread,
            "args": {"node": index, "bytes": kernel.bytes, "flops": kernel.flops,
                     "runs": runs, "rate": kernel.rate(per_run), "lines": kernel.where()}}


def _body_events(profile, call, owner, start, pid):
    """The kernels of the bodies control-flow node `owner` ran, inside its event, each
    with its time summed over the iterations."""
    cursor, events = start, []
    for (path, index), (nanoseconds, runs) in sorted(call.body_times.items()):
        if profile.body_owner(call.executable, path) == owner:
            events.append(_kernel_event(profile, call, index, path, cursor,
                                        nanoseconds / 1e3, runs, pid))
            cursor += nanoseconds / 1e3
    return events


def _compile_events(profile, record, pid):
    name = record.executable.name
    start = _micros(profile, record.started)
    trace, optimize = record.trace_seconds * 1e6, record.optimize_seconds * 1e6
    events = [{"name": f"trace {name}", "cat": "compile", "ph": "X", "ts": start,
               "dur": trace, "pid": pid, "tid": COMPILE_TRACK},
              {"name": f"optimize {name}", "cat": "compile", "ph": "X",
               "ts": start + trace, "dur": optimize, "pid": pid, "tid": COMPILE_TRACK}]
    build = record.executable.build_seconds
    if build is not None:
        events.append({"name": f"build native code {name}", "cat": "compile", "ph": "X",
                       "ts": start + trace + optimize, "dur": build * 1e6, "pid": pid,
                       "tid": COMPILE_TRACK})
    return events


def _metadata(pid, tid, name):
    return {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
            "args": {"name": name}}
