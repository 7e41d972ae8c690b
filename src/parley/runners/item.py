"""Running one item of a batch: ``fn(item)`` in a chat scope of its own, its outcome built from what
its chats did. The local runner and the Ray actors both run items through :class:`ItemRunner`."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from parley.durable import ChatScope, chat_scope
from parley.engine import current_chat
from parley.models.usage import UsageSummary
from parley.runners.errors import BatchInterrupted
from parley.runners.outcome import Outcome

if TYPE_CHECKING:
    from parley.engine import Chat
    from parley.store import ChatStore
    from parley.termination import StopReason


class ItemChats(list["Chat"]):
    """The chats created in one item's scope, telling apart those ``fn`` started itself (``started``)
    from the ones started inside another chat (nested chats, speaker selection). Given ``halt``, each
    chat stops at its next step once it is set."""

    __slots__ = ("halt", "outside", "started")

    def __init__(self, outside: Chat | None, halt: Halt | None = None) -> None:
        super().__init__()
        self.outside = outside
        self.halt = halt
        self.started: list[Chat] = []

    def append(self, chat: Chat) -> None:
        super().append(chat)
        if current_chat.get() is self.outside:
            self.started.append(chat)
        if self.halt is not None:
            chat.conditions.append(self.halt)


class Halt:
    """A chat condition that raises :class:`BatchInterrupted` once the batch is interrupted: a chat
    running in a thread stops at its next step, as one on the event loop stops when it is cancelled."""

    __slots__ = ("event",)

    def __init__(self) -> None:
        self.event = threading.Event()

    def check(self, chat: Chat) -> StopReason | None:
        if self.event.is_set():
            raise BatchInterrupted(
                f"the batch was interrupted: chat {chat.chat_id!r} stopped after {chat.state.rounds} messages"
            )
        return None


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` returns a coroutine to await (an ``async def``, or an object whose
    ``__call__`` is one)."""
    call = None if inspect.isroutine(fn) else type(fn).__call__
    return inspect.iscoroutinefunction(fn) or (call is not None and inspect.iscoroutinefunction(call))


class ItemRunner:
    """Runs items through ``fn``: async functions on the event loop, others in a pool of threads.

    Each item runs in a :class:`~parley.durable.ChatScope` of its own: with a ``store``, its chats are
    durable with the ids ``<batch_id>/<index>``, ``<batch_id>/<index>.2``... in the order they start, which
    is what lets a re-run of the batch continue them.
    """

    def __init__(
        self, fn: Callable[[Any], Any], *, threads: int, store: ChatStore | None, batch_id: str
    ) -> None:
        self.fn = fn
        self.store = store
        self.batch_id = batch_id
        self.is_async = is_async_callable(fn)
        self.halt = Halt()
        self._threads = threads
        self._executor: ThreadPoolExecutor | None = None

    async def run(self, index: int, item: Any) -> Outcome[Any]:
        """``fn(item)``, its value or exception caught in an :class:`Outcome` (``BaseException``s that are
        not ``Exception``s, such as a cancellation, propagate)."""
        chats = ItemChats(current_chat.get(), None if self.is_async else self.halt)
        scope = ChatScope(self.store, f"{self.batch_id}/{index}", chats=chats)
        token = chat_scope.set(scope)
        try:
            value = await self._call(item)
        except Exception as error:
            return failed(index, error, chats)
        finally:
            chat_scope.reset(token)
        return Outcome(index, value=value, **described(chats))

    async def _call(self, item: Any) -> Any:
        if self.is_async:
            return await self.fn(item)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._threads, thread_name_prefix="parley-run-many")
        context = contextvars.copy_context()
        value = await asyncio.get_running_loop().run_in_executor(self._executor, context.run, self.fn, item)
        if inspect.isawaitable(value):  # a plain function that returned a coroutine (a lambda, a partial)
            value = await value
        return value

    def interrupt(self) -> None:
        """The batch stops: the chats running in threads stop at their next step."""
        self.halt.event.set()

    def close(self) -> None:
        """Stop the threads (the items are done)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def described(chats: ItemChats) -> dict[str, Any]:
    """What an outcome says of the item's chats: their ids, the main chat's id and stop reason, the usage."""
    usage = UsageSummary()
    for chat in chats:
        usage.merge(chat.state.usage)
    main = chats.started[-1] if chats.started else (chats[-1] if chats else None)
    return {
        "chat_ids": [chat.chat_id for chat in chats],
        "chat_id": main.chat_id if main is not None else None,
        "stop_reason": main.stop_reason if main is not None else None,
        "usage": usage.to_dict() if chats else {},
    }


def failed(index: int, error: BaseException, chats: ItemChats) -> Outcome[Any]:
    """The outcome of an item whose ``fn`` raised ``error``."""
    fields = described(chats)
    chat_result = getattr(error, "chat_result", None)
    main = chats.started[-1] if chats.started else (chats[-1] if chats else None)
    if main is not None and getattr(chat_result, "chat_id", None) != main.chat_id:
        chat_result = main.result()  # the error's is of the chat it was raised in, maybe a nested one
    return Outcome(
        index,
        error=error,
        traceback="".join(traceback.format_exception(error)),
        chat_result=chat_result,
        **fields,
    )
