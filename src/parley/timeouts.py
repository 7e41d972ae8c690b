"""Running a tool with a time limit.

- Async functions are cancelled when the limit passes.
- Synchronous functions in an asynchronous chat run in a worker thread; when the limit passes the chat
  goes on and the thread is abandoned: Python cannot stop a thread, so the function runs on until it
  returns, and its result is dropped.
- Synchronous functions in a synchronous chat on the main thread are interrupted: a watchdog thread sends
  the main thread ``SIGALRM`` once the limit has passed (it looks every 20 ms), which also interrupts
  ``time.sleep`` and blocking socket calls. The interruption is a ``BaseException``, which a function's
  ``except Exception`` lets through; one that catches it anyway and returns late times out all the same.
  parley's handler passes other ``SIGALRM``\\ s to the handler that was there before, and takes its place
  again before a timed call if something replaced it. Off the main thread they run in a worker thread
  that is abandoned as above.
"""

from __future__ import annotations

import contextvars
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import concurrent.futures


class ToolTimeout(Exception):
    """A tool did not finish within its time limit."""


class _Interrupted(BaseException):
    """Raised inside a timed function on the main thread when its limit passes: a ``BaseException``, so
    that the function's own ``except Exception`` does not take it for an error of its own and go on."""


NO_LIMIT = float("inf")
"""A tool's ``timeout`` that exempts it from its agent's ``tool_timeout`` (handoff tools have it)."""

WATCHDOG_INTERVAL_S = 0.02


def call_with_timeout(function: Callable[..., Any], arguments: dict[str, Any], seconds: float) -> Any:
    """``function(**arguments)``, or :class:`ToolTimeout` after ``seconds``."""
    if threading.get_ident() == _watchdog.main_ident or _watchdog.ready():
        return _watchdog.run(function, arguments, seconds)
    return _in_abandonable_thread(function, arguments, seconds).result(timeout=None)


async def a_call_with_timeout(
    function: Callable[..., Any], arguments: dict[str, Any], seconds: float, *, is_async: bool
) -> Any:
    """Async twin of :func:`call_with_timeout`: an async function is cancelled, a synchronous one runs in
    a worker thread that is abandoned when the limit passes."""
    import asyncio

    if is_async:
        awaitable: Awaitable[Any] = function(**arguments)
    else:
        awaitable = asyncio.wrap_future(_start_thread(function, arguments))
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except TimeoutError:
        raise ToolTimeout(_message(seconds)) from None


class _Watchdog:
    """Interrupts the main thread's timed call once its limit has passed."""

    def __init__(self) -> None:
        self.deadline = 0.0
        self.seconds = 0.0
        self.expired = False
        self.main_ident: int | None = None
        """The main thread's id once the watchdog watches it."""
        self._previous: Any = None
        self._installed = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def ready(self) -> bool:
        """Start the watchdog and install the handler, once; ``False`` off the main thread and where
        signals cannot be used."""
        if threading.current_thread() is not threading.main_thread():
            return False
        if not hasattr(signal, "pthread_kill") or self.deadline:
            return False
        with self._lock:
            if not self._installed:
                self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
                self._installed = True
            if self._thread is None:
                thread = threading.Thread(target=self._watch, name="parley-tool-watchdog", daemon=True)
                thread.start()
                self._thread = thread
            self.main_ident = threading.get_ident()
        return True

    def forget_thread(self) -> None:
        """In a child process after ``fork``: the watchdog thread did not come along; the next timed call
        starts another (the handler, which did, stays)."""
        self._thread = None
        self.main_ident = None
        self.deadline = 0.0
        self.expired = False
        self._lock = threading.Lock()

    def run(self, function: Callable[..., Any], arguments: dict[str, Any], seconds: float) -> Any:
        if self.deadline:  # a timed call inside a timed call: the inner one runs in a thread
            return _in_abandonable_thread(function, arguments, seconds).result(timeout=None)
        if signal.getsignal(signal.SIGALRM) != self._on_alarm:  # replaced since: parley's goes first again
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
        self.seconds, self.expired = seconds, False
        self.deadline = time.monotonic() + seconds
        try:
            result = function(**arguments)
        except _Interrupted:
            raise ToolTimeout(_message(seconds)) from None
        finally:
            self.deadline = 0.0
        if self.expired:  # it caught the interruption and returned late: as in async chats, too late
            raise ToolTimeout(_message(seconds))
        return result

    def _watch(self) -> None:
        main = threading.main_thread().ident
        while True:
            time.sleep(WATCHDOG_INTERVAL_S)
            deadline = self.deadline
            if deadline and not self.expired and time.monotonic() > deadline and main is not None:
                self.expired = True
                signal.pthread_kill(main, signal.SIGALRM)

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if self.deadline and self.expired:
            raise _Interrupted
        previous = self._previous
        if callable(previous):
            previous(signum, frame)


_watchdog = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_watchdog.forget_thread)


def _start_thread(function: Callable[..., Any], arguments: dict[str, Any]) -> concurrent.futures.Future[Any]:
    import concurrent.futures

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = context.run(function, **arguments)
        except BaseException as error:
            if not future.done():
                future.set_exception(error)
        else:
            if not future.done():
                future.set_result(result)

    threading.Thread(target=work, name="parley-tool", daemon=True).start()
    return future


def _in_abandonable_thread(
    function: Callable[..., Any], arguments: dict[str, Any], seconds: float
) -> concurrent.futures.Future[Any]:
    import concurrent.futures

    future = _start_thread(function, arguments)
    try:
        future.result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        raise ToolTimeout(_message(seconds)) from None
    except BaseException:
        pass
    return future


def _message(seconds: float) -> str:
    return f"it did not finish within its time limit of {seconds:g} s"
