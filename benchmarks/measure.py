"""Measuring, framework-neutrally: CPU and wall time of a block, memory, and a fresh interpreter."""

from __future__ import annotations

import cProfile
import gc
import os
import subprocess
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Timing:
    """CPU time (``time.process_time``, all threads of the process) and wall time of a block."""

    cpu_s: float = 0.0
    wall_s: float = 0.0


_profiler: cProfile.Profile | None = None


@contextmanager
def profiling(profiler: cProfile.Profile) -> Iterator[cProfile.Profile]:
    """Profile exactly the blocks :func:`timed` measures, while in this block."""
    global _profiler
    _profiler = profiler
    try:
        yield profiler
    finally:
        _profiler = None


@contextmanager
def timed() -> Iterator[Timing]:
    """Time the block; garbage left from before it is collected first, so it is not charged to it."""
    gc.collect()
    timing = Timing()
    profiler = _profiler
    if profiler is not None:
        profiler.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        yield timing
    finally:
        timing.cpu_s = time.process_time() - cpu
        timing.wall_s = time.perf_counter() - wall
        if profiler is not None:
            profiler.disable()


@dataclass
class Memory:
    """Python memory a block allocated: still held at its end (``retained``) and at most (``peak``)."""

    retained_bytes: int = 0
    peak_bytes: int = 0


@contextmanager
def traced_memory() -> Iterator[Memory]:
    """Trace the block's Python allocations with ``tracemalloc`` (which slows it: do not time it too)."""
    gc.collect()
    memory = Memory()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        yield memory
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
        memory.retained_bytes = current - base
        memory.peak_bytes = peak - base
    finally:
        tracemalloc.stop()


def rss_bytes() -> int:
    """This process's resident set size now (Linux)."""
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


#: Appended to the code a fresh process runs: print the process's peak RSS (VmHWM, in KiB). The
#: ``ru_maxrss`` that ``wait4`` reports for a child cannot be used: Linux carries the peak of the memory
#: the child was forked with (the parent's, with vfork) across ``execve``.
_PRINT_PEAK_RSS = (
    "\nprint(next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')).split()[1])"
)


def fresh_process(python: str, code: str) -> dict[str, float]:
    """Run ``python -c code`` in a new process: its CPU time, wall time and peak RSS.

    Raises:
        RuntimeError: the process failed.
    """
    start = time.perf_counter()
    process = subprocess.Popen(
        [python, "-c", code + _PRINT_PEAK_RSS],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall_s = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    output, errors = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"{python} -c {code!r} failed ({process.returncode}): {errors.decode()[-2000:]}")
    return {
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "wall_s": wall_s,
        "maxrss_bytes": int(output.split()[-1]) * 1024,
    }
