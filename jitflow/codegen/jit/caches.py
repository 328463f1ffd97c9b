"""The host's last-level cache, which decides when a loop's stores bypass the caches.

A loop that touches more bytes than the last-level cache holds streams through memory:
whatever it writes is evicted before anything reads it again. Its plain stores then
cost a read of each line from memory before the write (the line is fetched to be
modified), a third more traffic for a loop like `a = b + s * c`. Non-temporal stores
write whole lines without that read. Below the cache's size plain stores win: the next
kernel finds the result in the cache.

The threshold is the last-level cache or CAP_BYTES, whichever is smaller: a virtual
machine reports its socket's whole cache, of which it holds a small share. On 2 cores of
an Intel Xeon (Emerald Rapids) reporting 300 MiB of L3, `x * 2 + y` on float32 ran at
the memory's speed with plain stores from 12 MiB touched on, and non-temporal stores
took it from 0.85 to 0.58-0.74 ms at 24 MiB and from 1.45 to 1.04-1.43 ms at 48 MiB;
at 3 MiB they lost (0.038 against 0.028-0.035 ms).

JITFLOW_STREAMING_BYTES overrides the threshold (in bytes; 0 turns streaming stores
off), for tests and for machines whose cache the system does not report.
"""
import functools
import os
import pathlib

# When the system reports no cache (some containers hide sysfs): a common size for
# the L3 of one CPU chiplet or a small server part; also the most a loop may touch
# before its stores stream, whatever the cache reported.
FALLBACK_BYTES = CAP_BYTES = 32 << 20
_SYSFS = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")


def streaming_bytes():
    """The bytes a loop must touch (read and written) for its stores to stream, or 0
    when streaming stores are off."""
    configured = os.environ.get("JITFLOW_STREAMING_BYTES")
    if configured is not None and configured.strip():
        try:
            return max(0, int(configured))
        except ValueError:
            raise ValueError(f"JITFLOW_STREAMING_BYTES={configured!r} is not a number "
                             f"of bytes") from None
    return min(last_level_cache_bytes(), CAP_BYTES)


@functools.cache
def last_level_cache_bytes():
    """The size of the largest cache level cpu0 reports, or FALLBACK_BYTES."""
    best_level, best_size = 0, 0
    for index in sorted(_SYSFS.glob("index*")):
        try:
            level = int((index / "level").read_text())
            size = _parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if level > best_level:
            best_level, best_size = level, size
    return best_size or FALLBACK_BYTES


def _parse_size(text):
    """sysfs's cache size ("32768K", "300M") in bytes."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale
