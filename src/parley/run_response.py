"""AG2's run API: ``agent.run(...)`` starts a chat and returns at once with a response to process.

The chat runs in a worker thread (``a_run``: in a task on the running event loop) and its events stream
into the response. ``process()`` prints them as the console does; ``messages``, ``summary``, ``cost``,
``last_speaker`` and ``context_variables`` are the chat's once it has finished (reading them waits for
it). An exception that ended the chat is raised again by ``process()`` and by those attributes.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Protocol

from parley.chat_result import ChatResult
from parley.events import ConsolePrinter, Event, Listener, wants
from parley.messages import Message


class RunOutcome:
    """What a run produced: the chat's result, its context variables and the last speaker's name."""

    __slots__ = ("context_variables", "last_speaker", "result")

    def __init__(self, result: ChatResult, last_speaker: str | None, context_variables: Any = None) -> None:
        self.result = result
        self.last_speaker = last_speaker
        self.context_variables = context_variables


class EventProcessor(Protocol):
    """Something that consumes a response's events (``response.process(processor)``)."""

    def process(self, response: Any) -> Any: ...


_DONE = object()


class RunResponse:
    """The response of :meth:`~parley.agent.ConversableAgent.run`: the chat runs in a worker thread."""

    def __init__(self, start: Callable[[Listener], RunOutcome], agents: list[Any]) -> None:
        self.agents = agents
        self.uuid = uuid.uuid4()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._outcome: RunOutcome | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(start,), name="parley-run", daemon=True)
        self._thread.start()

    def _run(self, start: Callable[[Listener], RunOutcome]) -> None:
        try:
            self._outcome = start(self._queue.put)
        except BaseException as error:
            self._error = error
        finally:
            self._queue.put(_DONE)

    @property
    def events(self) -> Iterator[Event]:
        """The chat's events as they happen, until it ends (then its error, if it failed)."""
        while True:
            event = self._queue.get()
            if event is _DONE:
                break
            yield event
        self._thread.join()
        if self._error is not None:
            raise self._error

    def process(self, processor: EventProcessor | None = None) -> None:
        """Print the chat's events as they happen (or hand the response to ``processor``), until it ends."""
        if processor is not None:
            processor.process(self)
            return
        printer = ConsolePrinter()
        for event in self.events:
            if wants(printer, type(event)):
                printer(event)

    def _finished(self) -> RunOutcome:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._outcome is not None
        return self._outcome

    @property
    def messages(self) -> list[Message]:
        """The chat's history."""
        return self._finished().result.chat_history

    @property
    def summary(self) -> Any:
        """The chat's summary."""
        return self._finished().result.summary

    @property
    def cost(self) -> dict[str, Any]:
        """The chat's usage and cost, in AG2's shape (as ``ChatResult.cost``)."""
        return self._finished().result.cost

    @property
    def last_speaker(self) -> str | None:
        """The name of the agent that spoke last."""
        return self._finished().last_speaker

    @property
    def context_variables(self) -> Any:
        """The context variables of a swarm or group pattern (``None`` for a two-agent chat)."""
        return self._finished().context_variables

    @property
    def chat_result(self) -> ChatResult:
        """The whole :class:`ChatResult`, with its ``stop_reason``."""
        return self._finished().result


class AsyncRunResponse:
    """The response of :meth:`~parley.agent.ConversableAgent.a_run`: the chat runs in a task; await
    ``process()`` and the attributes (``await response.summary``)."""

    def __init__(self, start: Callable[[Listener], Awaitable[RunOutcome]], agents: list[Any]) -> None:
        self.agents = agents
        self.uuid = uuid.uuid4()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.ensure_future(self._run(start))

    async def _run(self, start: Callable[[Listener], Awaitable[RunOutcome]]) -> RunOutcome:
        try:
            return await start(self._queue.put_nowait)
        finally:
            self._queue.put_nowait(_DONE)

    @property
    async def events(self) -> AsyncIterator[Event]:
        """The chat's events as they happen, until it ends (then its error, if it failed)."""
        while True:
            event = await self._queue.get()
            if event is _DONE:
                break
            yield event
        await self._task

    async def process(self, processor: Any = None) -> None:
        """Print the chat's events as they happen (or hand the response to ``processor``), until it ends."""
        if processor is not None:
            outcome = processor.process(self)
            if asyncio.iscoroutine(outcome):
                await outcome
            return
        printer = ConsolePrinter()
        async for event in self.events:
            if wants(printer, type(event)):
                printer(event)

    @property
    async def messages(self) -> list[Message]:
        """The chat's history."""
        return (await self._task).result.chat_history

    @property
    async def summary(self) -> Any:
        """The chat's summary."""
        return (await self._task).result.summary

    @property
    async def cost(self) -> dict[str, Any]:
        """The chat's usage and cost, in AG2's shape."""
        return (await self._task).result.cost

    @property
    async def last_speaker(self) -> str | None:
        """The name of the agent that spoke last."""
        return (await self._task).last_speaker

    @property
    async def context_variables(self) -> Any:
        """The context variables of a swarm or group pattern (``None`` for a two-agent chat)."""
        return (await self._task).context_variables

    @property
    async def chat_result(self) -> ChatResult:
        """The whole :class:`ChatResult`, with its ``stop_reason``."""
        return (await self._task).result
