"""The cycle collector while a batch of chats runs.

A thousand chats in flight keep tens of thousands of live containers (their logs, views, coroutine frames),
and at its default thresholds the cycle collector walks them again and again, though almost none is
garbage: at 1,000 chats at once it took about a quarter of the process's time. While a batch runs, the
youngest generation is collected after :data:`BATCH_THRESHOLD` allocations instead of every 700 (unless
the threshold is 0, collection by threshold off, or higher already), and the thresholds are put back when
the last batch running in the process ends (unless something else changed them meanwhile).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

BATCH_THRESHOLD = 200_000
"""The allocations between two collections of the youngest generation while a batch runs."""

_lock = threading.Lock()
_running = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect the youngest generation every :data:`BATCH_THRESHOLD` allocations within the block."""
    global _running, _saved
    with _lock:
        if _running == 0:
            _saved = _raise_threshold()
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0 and _saved is not None:
                if gc.get_threshold()[0] == BATCH_THRESHOLD:
                    gc.set_threshold(*_saved)
                _saved = None


def batch_process() -> None:
    """Set the thresholds of :func:`fewer_collections` for good, in a process that only runs batches (a
    Ray actor)."""
    _raise_threshold()


def _raise_threshold() -> tuple[int, int, int] | None:
    """Set the youngest generation's threshold to :data:`BATCH_THRESHOLD`, unless it is 0 or higher; the
    thresholds it replaced, or ``None`` if it left them alone."""
    current = gc.get_threshold()
    if not 0 < current[0] < BATCH_THRESHOLD:
        return None
    gc.set_threshold(BATCH_THRESHOLD, current[1], current[2])
    return current
