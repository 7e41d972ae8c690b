"""Running a tool with a time limit.

- Async functions are cancelled when the limit passes.
- Synchronous functions in an asynchronous chat run in a worker thread; when the limit passes the chat
  goes on and the thread is abandoned: Python cannot stop a thread, so the function runs on until it
  returns, and its result is dropped.
- Synchronous functions in a synchronous chat on the main thread are interrupted: a watchdog thread,
  asleep until the deadline, sends the main thread ``SIGALRM`` if the call is still running then, which
  also interrupts ``time.sleep`` and blocking socket calls. The interruption is a ``BaseException``,
  which a function's ``except Exception`` lets through; one that returns after its limit (having caught
  the interruption, or before the watchdog got to send it) times out all the same. parley's handler
  passes other ``SIGALRM``\\ s to the handler that was there before (an interval timer of the
  application's own keeps running), and takes its place again before a timed call if something replaced
  it. Off the main thread they run in a worker thread that is abandoned as above.
"""

from __future__ import annotations

import _signal as _signal_module
import contextvars
import math
import os
import queue
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


def call_with_timeout(function: Callable[..., Any], arguments: dict[str, Any], seconds: float) -> Any:
    """``function(**arguments)``, or :class:`ToolTimeout` after ``seconds``."""
    if threading.get_ident() == _timer.main_ident or _timer.ready():
        return _timer.run(function, arguments, seconds)
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


class _MainThreadTimer:
    """Interrupts the main thread's timed call once its limit has passed: a watchdog thread sleeps until
    the deadline, and sends the main thread ``SIGALRM`` if the call is still running then.

    A timed call only sets its deadline. The watchdog does not poll: it sleeps until the latest deadline
    set, and is woken only for a call that must end before that, or once it has gone idle (no timed call
    since it last looked), so that calls a few microseconds long cost no trip to the kernel and no hand-over
    of the interpreter lock.
    """

    def __init__(self) -> None:
        self.main_ident: int | None = None
        """The main thread's id, once a timed call ran there."""
        self._previous: Any = None
        self._handler = self._on_alarm
        """The handler installed, one object: what the signal module gives back is compared to it."""
        self.forget_state()

    def ready(self) -> bool:
        """Whether timed calls can use the watchdog here: ``False`` off the main thread and where signals
        cannot be used (:meth:`run` installs the handler)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        if not hasattr(signal, "pthread_kill") or self.deadline:
            return False
        self.main_ident = threading.get_ident()
        return True

    def forget_state(self) -> None:
        """No timed call under way and no watchdog yet (and in a child process after ``fork``, whose
        watchdog thread did not come along)."""
        self.main_ident = None
        self.deadline = 0.0
        """The deadline of the timed call under way (0: none)."""
        self.latest = 0.0
        """The latest deadline a timed call set."""
        self.wakes = math.inf
        """When the watchdog looks next (infinite: it waits to be woken, or has not started)."""
        self.expired = False
        self._sent = False
        self._poked = False
        self._condition = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def run(self, function: Callable[..., Any], arguments: dict[str, Any], seconds: float) -> Any:
        if self.deadline:  # a timed call inside a timed call: the inner one runs in a thread
            return _in_abandonable_thread(function, arguments, seconds).result(timeout=None)
        if _handler_of(_SIGALRM) is not self._handler:  # not installed yet, or replaced since
            self._previous = signal.signal(signal.SIGALRM, self._handler)
        self.expired = False
        try:  # the alarm can come at any point from the deadline on, the cleanup included
            deadline = self.deadline = self.latest = _monotonic() + seconds
            if deadline < self.wakes:
                self._wake()
            try:
                result = function(**arguments)
            finally:
                self.deadline = 0.0  # first: an alarm from here on is not this call's
        except _Interrupted:
            self.deadline = 0.0
            raise ToolTimeout(_message(seconds)) from None
        if self.expired or _monotonic() > deadline:
            # it returned after its limit (having caught the interruption, or before the watchdog, which
            # waits for the interpreter lock, could send it): as in async chats, too late
            raise ToolTimeout(_message(seconds))
        return result

    def _wake(self) -> None:
        """Have the watchdog look again now (starting it if need be)."""
        with self._condition:
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="parley-tool-watchdog", daemon=True)
                self._thread.start()
            self._poked = True
            self._condition.notify()

    def _watch(self) -> None:
        condition = self._condition
        while True:
            with condition:
                if not self._poked:
                    wait = self.wakes - _monotonic()
                    if wait > 0:
                        condition.wait(None if wait == math.inf else wait)
                self._poked = False
            self._look()

    def _look(self) -> None:
        """Interrupt the call under way if its deadline has passed; else sleep until the latest deadline,
        or until woken if there was no call since the last look."""
        self.wakes = math.inf  # first: a call that sets its deadline from here on and reads this wakes us
        now = _monotonic()
        deadline, main = self.deadline, self.main_ident
        if deadline and deadline <= now and not self.expired and main is not None:
            self._sent = True
            signal.pthread_kill(main, _SIGALRM)
        elif self.latest > now:
            self.wakes = self.latest

    def _on_alarm(self, signum: int, frame: Any) -> None:
        deadline = self.deadline
        if deadline and not self.expired and _monotonic() >= deadline:
            self.expired = True
            self._sent = False
            raise _Interrupted
        if self._sent:  # the watchdog's, for a call that ended meanwhile
            self._sent = False
            return
        previous = self._previous
        if callable(previous):
            previous(signum, frame)


_SIGALRM = int(signal.SIGALRM) if hasattr(signal, "SIGALRM") else 14
_monotonic = time.monotonic
# the C function: ``signal.getsignal`` wraps it to turn numbers into enum members, at 30 times the cost
_handler_of: Callable[[int], Any] = getattr(_signal_module, "getsignal", signal.getsignal)
_timer = _MainThreadTimer()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_timer.forget_state)


def _start_thread(function: Callable[..., Any], arguments: dict[str, Any]) -> concurrent.futures.Future[Any]:
    import concurrent.futures

    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def work() -> Callable[[], None] | None:
        if not future.set_running_or_notify_cancel():
            return None
        try:
            result = context.run(function, **arguments)
        except BaseException as error:
            failure = error
            return lambda: None if future.done() else future.set_exception(failure)
        return lambda: None if future.done() else future.set_result(result)

    _workers.run(work)
    return future


class _Workers:
    """The threads that run synchronous calls off the calling thread, each kept for the next call once
    its call has returned (starting a thread for every call costs a hundred-odd microseconds). A call
    abandoned at its limit keeps its thread until it returns; the calls meanwhile get other threads."""

    def __init__(self) -> None:
        self.forget_threads()

    def forget_threads(self) -> None:
        """No thread kept (and in a child process after ``fork``, whose threads did not come along)."""
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[Callable[[], Callable[[], None] | None]]] = []

    def run(self, work: Callable[[], Callable[[], None] | None]) -> None:
        """Run ``work`` (which raises nothing) in a kept thread, or in a new one if none is free.
        ``work`` returns what tells its caller the outcome: the thread is kept before that is called,
        so a caller that goes on to its next call finds the thread free."""
        with self._lock:
            jobs = self._idle.pop() if self._idle else None
        if jobs is None:
            jobs = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(jobs,), name="parley-tool", daemon=True).start()
        jobs.put(work)

    def _serve(self, jobs: queue.SimpleQueue[Callable[[], Callable[[], None] | None]]) -> None:
        while True:
            try:
                work = jobs.get(timeout=_WORKER_IDLE_S)
            except queue.Empty:
                with self._lock:
                    if jobs in self._idle:
                        self._idle.remove(jobs)
                        return
                continue  # taken meanwhile: its work is on the way
            tell_outcome = work()
            del work
            with self._lock:
                kept = len(self._idle) < _WORKERS_KEPT
                if kept:
                    self._idle.append(jobs)
            if tell_outcome is not None:
                tell_outcome()
                del tell_outcome
            if not kept:
                return


_WORKER_IDLE_S = 30.0
"""How long a kept thread waits for another call before it ends."""
_WORKERS_KEPT = 16
_workers = _Workers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers.forget_threads)


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
