"""The local runner: every item on this process's event loop, at most ``concurrency`` at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from parley.runners.item import ItemRunner
from parley.runners.outcome import Outcome
from parley.runners.tally import Tally

if TYPE_CHECKING:
    from parley.store import ChatStore


async def run_local(
    fn: Callable[[Any], Any],
    items: list[Any],
    *,
    concurrency: int,
    store: ChatStore | None,
    batch_id: str,
    tally: Tally,
) -> list[Outcome[Any]]:
    """Run ``fn`` over ``items`` with ``concurrency`` workers, each taking the next item when it is free.

    Synchronous ``fn``s run in a pool of ``concurrency`` threads.
    """
    runner = ItemRunner(fn, threads=concurrency, store=store, batch_id=batch_id)
    outcomes: list[Outcome[Any] | None] = [None] * len(items)
    queue: Iterator[tuple[int, Any]] = enumerate(items)

    async def work() -> None:
        for index, item in queue:
            tally.start()
            outcome = await runner.run(index, item)
            outcome.item = item
            outcomes[index] = outcome
            tally.finish(outcome)

    workers = [asyncio.create_task(work()) for _ in range(min(concurrency, len(items)))]
    try:
        await asyncio.gather(*workers)
    except BaseException:  # fn raised something that is not an item's failure (a cancellation, an exit)
        runner.interrupt()
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    finally:
        runner.close()
    return [outcome for outcome in outcomes if outcome is not None]
