"""Measuring, framework-neutrally: CPU and wall time of a block, memory, and a fresh interpreter."""

from __future__ import annotations

import contextlib
import cProfile
import gc
import os
import subprocess
import tempfile
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


#: Where a printed workload's console output goes: a file on disk, or a pseudo-terminal.
OUTPUTS = ("file", "tty")


@contextmanager
def printing_to(output: str) -> Iterator[None]:
    """Send ``sys.stdout`` to a fresh file on disk (``"file"``) or to a pseudo-terminal (``"tty"``)
    within the block. The terminal is line-buffered, as a real one is, with ``TERM`` set to
    ``xterm-256color`` unless it is set already; a ``cat`` process reads its other side, so that
    writes never wait and the reader's work is not charged to this process."""
    if output not in OUTPUTS:
        raise ValueError(f"unknown output {output!r}; known: {OUTPUTS}")
    with contextlib.ExitStack() as stack:
        if output == "file":
            out = stack.enter_context(tempfile.TemporaryFile("w", encoding="utf-8"))
        else:
            controller, terminal = os.openpty()
            reader = subprocess.Popen(
                ["cat"], stdin=controller, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            os.close(controller)
            stack.callback(reader.wait)
            out = stack.enter_context(open(terminal, "w", encoding="utf-8", buffering=1))
            if "TERM" not in os.environ:
                os.environ["TERM"] = "xterm-256color"
                stack.callback(os.environ.pop, "TERM", None)
        stack.enter_context(contextlib.redirect_stdout(out))
        yield


def printing_or_silent(output: str | None) -> contextlib.AbstractContextManager[None]:
    """:func:`printing_to` ``output``, or nothing for a silent workload (``None``)."""
    return contextlib.nullcontext() if output is None else printing_to(output)
