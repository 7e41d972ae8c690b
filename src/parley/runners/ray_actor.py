"""The Ray actor that runs items: many at once on its own event loop, results streamed as they finish."""

from __future__ import annotations

import asyncio
import os
import pickle
from collections.abc import AsyncIterator, Callable
from typing import Any

from parley.runners.collection import batch_process
from parley.runners.errors import BatchStopped, RemoteItemError, UnsendableError
from parley.runners.item import ItemRunner
from parley.runners.outcome import Outcome

Shipped = tuple[int, bytes | None, str]
"""An outcome on its way back: the item's index, the pickled outcome (``None`` if it could not be
pickled), and a plain-text description of its error, in case it cannot be unpickled at the other end."""


class ChatWorker:
    """Runs items of one batch through ``fn``, at most ``concurrency`` at once, whatever the number of
    calls (batches) it is given; chats are durable in the store ``store_url`` names, if any."""

    def __init__(
        self, fn: Callable[[Any], Any], concurrency: int, store_url: str | None, batch_id: str
    ) -> None:
        batch_process()
        store = None
        if store_url is not None:
            from parley.durable import open_store

            store = open_store(store_url)
        self.runner = ItemRunner(fn, threads=concurrency, store=store, batch_id=batch_id)
        self.slots = asyncio.Semaphore(concurrency)

    def ready(self) -> int:
        """The actor's process id, once ``fn`` and the store are loaded."""
        return os.getpid()

    async def run(self, batch: list[tuple[int, Any]]) -> AsyncIterator[list[Shipped]]:
        """Run the items of ``batch`` (``(index, item)`` pairs); yield their outcomes as they finish,
        those that finished together in one list.

        Raises:
            BatchStopped: ``fn`` raised a ``BaseException`` that is not an ``Exception`` (an exit, an
                interrupt, a cancellation), which stops the batch.
        """
        finished: asyncio.Queue[Outcome[Any] | tuple[int, BaseException]] = asyncio.Queue()
        tasks = [asyncio.create_task(self._one(index, item, finished)) for index, item in batch]
        left = len(tasks)
        try:
            while left:
                ready = [await finished.get()]
                while not finished.empty():
                    ready.append(finished.get_nowait())
                for entry in ready:
                    if isinstance(entry, tuple):
                        index, error = entry
                        raise BatchStopped(
                            f"fn raised {type(error).__name__} on item {index} on a Ray actor, which stops "
                            f"the batch: {error}"
                        )
                left -= len(ready)
                yield [ship(outcome) for outcome in ready if isinstance(outcome, Outcome)]
        finally:
            for task in tasks:
                task.cancel()

    async def _one(
        self, index: int, item: Any, finished: asyncio.Queue[Outcome[Any] | tuple[int, BaseException]]
    ) -> None:
        try:
            async with self.slots:
                outcome = await self.runner.run(index, item)
        except BaseException as error:  # not an item's failure: the batch stops
            finished.put_nowait((index, error))
            if isinstance(error, asyncio.CancelledError):
                raise
            return
        finished.put_nowait(outcome)


def ship(outcome: Outcome[Any]) -> Shipped:
    """An outcome as bytes for the trip back; what cannot be pickled is replaced by an error naming it."""
    from ray import cloudpickle

    described = "" if outcome.error is None else f"{type(outcome.error).__name__}: {outcome.error}"
    if outcome.error is not None and not _round_trips(outcome.error):
        outcome.error = RemoteItemError(f"{described} (it could not be rebuilt from its pickle)")
    try:
        return outcome.index, cloudpickle.dumps(outcome), described
    except Exception as error:
        problem = f"{type(error).__name__}: {error}"
    if outcome.error is None:
        outcome.error = UnsendableError(
            f"the value fn returned for item {outcome.index} ({type(outcome.value).__name__}) cannot be "
            f"sent back from the Ray actor: {problem}"
        )
        outcome.value = None
    else:
        outcome.error = RemoteItemError(described)
    outcome.chat_result = _picklable_or_none(outcome.chat_result)
    try:
        return outcome.index, cloudpickle.dumps(outcome), described
    except Exception:
        return outcome.index, None, described or problem


def _picklable_or_none(value: Any) -> Any:
    try:
        pickle.dumps(value)
    except Exception:
        return None
    return value


def _round_trips(error: BaseException) -> bool:
    """Whether the error comes back from its pickle (one whose ``__init__`` takes other arguments than
    its ``args`` does not, and would take the whole outcome down with it at the other end)."""
    from ray import cloudpickle

    try:
        pickle.loads(cloudpickle.dumps(error))
    except Exception:
        return False
    return True
