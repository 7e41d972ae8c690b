"""``run_many``: one function over many inputs, each item a chat (or a few), on one event loop or on Ray."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeVar

from parley.runners.outcome import Outcome
from parley.runners.ray_config import RayRunner

T = TypeVar("T")

DEFAULT_CONCURRENCY = 100
RunnerChoice = Literal["local", "ray"] | RayRunner


def run_many(
    fn: Callable[[Any], T],
    inputs: Iterable[Any],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    runner: RunnerChoice = "local",
    store: Any = None,
    batch_id: str | None = None,
    progress: bool | None = None,
) -> list[Outcome[Any]]:
    """Run ``fn(item)`` for every item of ``inputs``, at most ``concurrency`` at once; one outcome per item,
    in input order.

    ``fn`` runs one chat (or a few) and returns anything; it may be a plain function (run in a thread)
    or an ``async def`` (run on the event loop, which is what lets thousands of chats share one process).
    It may build its agents or reuse shared ones: one set of agents serves any number of chats at once.
    An item that raises does not stop the others: its outcome holds the exception.

    Args:
        fn: called once per item.
        inputs: the items (any iterable; it is read once, before the first item starts).
        concurrency: how many items run at once (across all actors with the Ray runner).
        runner: ``"local"`` (this process's event loop), ``"ray"``, or a :class:`RayRunner` with options.
        store: a store URL (``sqlite:///chats.db``, ``postgresql://...``) or store object: every chat
            of every item is durable, with the id ``<batch_id>/<index>`` (then ``.2``, ``.3``... for an
            item's further chats). The Ray runner needs a URL that every actor can open.
        batch_id: names the batch in the store (default: a new id). Running the same ``fn`` over the same
            ``inputs`` with the same store and ``batch_id`` again (after a crash) continues every
            unfinished chat from its last record; finished chats return their recorded results without
            calling any model or tool. ``fn`` itself is called again for every item.
        progress: show a progress line on standard error: ``None`` at a terminal only, ``True`` always,
            ``False`` never.

    Raises:
        ValueError, TypeError: bad arguments (named in the message), before any item starts.
        ImportError: ``runner="ray"`` without Ray installed.
        RuntimeError: called while an event loop runs in this thread: ``await a_run_many(...)`` there.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "run_many was called where an event loop is running: await a_run_many(...) instead"
        )
    return asyncio.run(
        a_run_many(
            fn,
            inputs,
            concurrency=concurrency,
            runner=runner,
            store=store,
            batch_id=batch_id,
            progress=progress,
        )
    )


async def a_run_many(
    fn: Callable[[Any], Any],
    inputs: Iterable[Any],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    runner: RunnerChoice = "local",
    store: Any = None,
    batch_id: str | None = None,
    progress: bool | None = None,
) -> list[Outcome[Any]]:
    """Async twin of :func:`run_many`, on the running event loop."""
    from parley.engine import new_chat_id
    from parley.runners.progress import ProgressDisplay
    from parley.runners.tally import Tally

    _check_call(fn, concurrency, store, batch_id, progress)
    chosen = _runner(runner)
    items = _items(inputs)
    batch = batch_id if batch_id is not None else new_chat_id()
    tally = Tally(len(items))
    if chosen is None:
        from parley.durable import open_store
        from parley.runners.collection import fewer_collections
        from parley.runners.local import run_local

        opened = open_store(store) if store is not None else None
        with ProgressDisplay(tally, progress), fewer_collections():
            return await run_local(
                fn, items, concurrency=concurrency, store=opened, batch_id=batch, tally=tally
            )
    from parley.runners.ray_driver import run_on_ray

    return await run_on_ray(
        fn,
        items,
        options=chosen,
        concurrency=concurrency,
        store=store,
        batch_id=batch,
        tally=tally,
        progress=lambda: ProgressDisplay(tally, progress, label="run_many on Ray"),
    )


def _items(inputs: Iterable[Any]) -> list[Any]:
    if isinstance(inputs, str | bytes):
        raise TypeError(
            f"inputs must be an iterable of items, not a {type(inputs).__name__} (it would run one item per "
            "character): pass [text] for one item"
        )
    try:
        iterator = iter(inputs)
    except TypeError:
        raise TypeError(
            f"inputs must be an iterable of items (a list, a generator...), not {type(inputs).__name__}"
        ) from None
    return list(iterator)


def _check_call(fn: Any, concurrency: Any, store: Any, batch_id: Any, progress: Any) -> None:
    if not callable(fn):
        raise TypeError(f"fn must be a callable that runs one item, not {fn!r}")
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ValueError(f"concurrency must be an int of at least 1, not {concurrency!r}")
    if batch_id is not None:
        if not isinstance(batch_id, str) or not batch_id:
            raise ValueError(f"batch_id must be a non-empty string, not {batch_id!r}")
        if store is None:
            raise ValueError(
                "batch_id names a batch's chats in a store: give store= too (without a store nothing is "
                "kept to continue the batch from)"
            )
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(f"progress must be True, False or None (at a terminal only), not {progress!r}")


def _runner(runner: Any) -> RayRunner | None:
    """``None`` for the local runner, else the Ray runner's options."""
    if isinstance(runner, RayRunner):
        return runner
    if runner == "local":
        return None
    if runner == "ray":
        return RayRunner()
    raise ValueError(f"runner must be 'local', 'ray' or a RayRunner(...), not {runner!r}")
