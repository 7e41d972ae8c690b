"""Running a tool with a time limit.

- Async functions are cancelled when the limit passes.
- Synchronous functions in an asynchronous chat run in a worker thread; when the limit passes the chat
  goes on and the thread is abandoned: Python cannot stop a thread, so the function runs on until it
  returns, and its result is dropped.
- Synchronous functions in a synchronous chat on the main thread are interrupted by a ``SIGALRM`` timer
  (which also interrupts ``time.sleep`` and blocking socket calls). Off the main thread, or while another
  timer is running, they run in a worker thread that is abandoned as above.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import signal
import threading
from collections.abc import Awaitable, Callable
from typing import Any


class ToolTimeout(Exception):
    """A tool did not finish within its time limit."""


def call_with_timeout(function: Callable[..., Any], arguments: dict[str, Any], seconds: float) -> Any:
    """``function(**arguments)``, or :class:`ToolTimeout` after ``seconds``."""
    if _can_use_alarm():
        return _with_alarm(function, arguments, seconds)
    return _in_abandonable_thread(function, arguments, seconds).result(timeout=None)


async def a_call_with_timeout(
    function: Callable[..., Any], arguments: dict[str, Any], seconds: float, *, is_async: bool
) -> Any:
    """Async twin of :func:`call_with_timeout`: an async function is cancelled, a synchronous one runs in
    a worker thread that is abandoned when the limit passes."""
    if is_async:
        awaitable: Awaitable[Any] = function(**arguments)
    else:
        future = _start_thread(function, arguments)
        awaitable = asyncio.wrap_future(future)
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except TimeoutError:
        raise ToolTimeout(_message(seconds)) from None


def _can_use_alarm() -> bool:
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    )


def _with_alarm(function: Callable[..., Any], arguments: dict[str, Any], seconds: float) -> Any:
    def expire(signum: int, frame: Any) -> None:
        raise ToolTimeout(_message(seconds))

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return function(**arguments)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


def _start_thread(function: Callable[..., Any], arguments: dict[str, Any]) -> concurrent.futures.Future[Any]:
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
