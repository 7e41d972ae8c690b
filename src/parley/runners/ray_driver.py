"""The Ray runner's driver side: actors, batches out, outcomes back, dead actors replaced.

``fn`` is put in Ray's object store once (Ray's own serialization) and each actor loads it when it
starts. Items go out in batches, one actor call per batch; each call is a streaming generator that
yields outcomes as they finish. When an actor dies, the items it had not finished go back to the
queue (to be started again on another actor, each at most ``max_attempts`` times) and a new actor
takes its place.
"""

from __future__ import annotations

import asyncio
import io
import math
import os
import pickle
import warnings
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager, suppress
from typing import Any
from urllib.parse import quote

from parley.runners.errors import BatchStopped, ItemLostError, RemoteItemError, UnsendableError
from parley.runners.outcome import Outcome
from parley.runners.ray_actor import ChatWorker, Shipped
from parley.runners.ray_config import RayRunner
from parley.runners.tally import Tally

#: How long the actors may take to start before run_many says why they may not.
STARTUP_NOTICE_S = 30.0
INSTALL_HINT = "the Ray runner needs Ray: pip install 'parley-llm[ray]'"


def import_ray() -> Any:
    """The ``ray`` module, or an ImportError saying which extra to install."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(f"{INSTALL_HINT} ({error})") from error
    return ray


async def run_on_ray(
    fn: Callable[[Any], Any],
    items: list[Any],
    *,
    options: RayRunner,
    concurrency: int,
    store: Any,
    batch_id: str,
    tally: Tally,
    progress: Callable[[], AbstractContextManager[Any]],
) -> list[Outcome[Any]]:
    """Run ``fn`` over ``items`` on Ray actors; one outcome per item, in input order."""
    ray = import_ray()
    check_serializable(fn)
    store_url = store_url_for_ray(store)
    if not items:
        return []
    if not ray.is_initialized():
        ray.init(include_dashboard=False)
    if store_url is not None and store_url.startswith("sqlite:"):
        nodes = [node for node in ray.nodes() if node.get("Alive")]
        if len(nodes) > 1:
            raise ValueError(
                f"a SQLite store is a file on one machine, and this Ray cluster has {len(nodes)} nodes: use "
                "a PostgreSQL store (store='postgresql://...') that the actors on every node share"
            )
    actors = options.actors or max(1, int(ray.cluster_resources().get("CPU", 1)))
    actors = min(actors, concurrency, len(items))
    with progress():
        pool = ActorPool(ray, ray.put(fn), options, shares(concurrency, actors), store_url, batch_id)
        try:
            await pool.started()
            return await Dispatch(ray, pool, items, options, tally).run()
        finally:
            pool.shutdown()


def shares(concurrency: int, actors: int) -> list[int]:
    """``concurrency`` shared out between ``actors`` as evenly as it goes."""
    base, extra = divmod(concurrency, actors)
    return [base + (1 if index < extra else 0) for index in range(actors)]


def check_serializable(fn: Callable[[Any], Any]) -> None:
    """Raise :class:`UnsendableError` naming what in ``fn`` cannot be pickled (Ray's cloudpickle)."""
    from ray import cloudpickle

    try:
        cloudpickle.dumps(fn)
    except Exception as error:
        culprits = _unpicklable_parts(fn)
        what = f" ({culprits})" if culprits else ""
        raise UnsendableError(
            f"fn cannot be sent to the Ray actors: {_name(fn)} could not be pickled{what}: "
            f"{type(error).__name__}: {error}. Build what it needs inside fn (or in a module the actors "
            "import) rather than capturing it"
        ) from error


def _unpicklable_parts(fn: Any) -> str:
    """What Ray's inspector finds that cannot be pickled in ``fn``: ``"lock (a _thread.lock)"``..."""
    from ray.util import inspect_serializability

    try:
        _, failures = inspect_serializability(fn, name=_name(fn), print_file=io.StringIO())
    except Exception:
        return ""
    parts = []
    for failure in failures:
        path = [str(step) for step in failure.path if step is not None]
        name = " -> ".join(path) if path else "?"
        parts.append(f"{name} (a {type(failure.obj).__module__}.{type(failure.obj).__qualname__})")
    return ", ".join(sorted(parts))


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def store_url_for_ray(store: Any) -> str | None:
    """The URL each actor opens its store by: a shared store's URL, with a SQLite path made absolute."""
    if store is None:
        return None
    if not isinstance(store, str):
        raise TypeError(
            "the Ray runner opens the store in each actor, so store must be its URL "
            f"('sqlite:///path/chats.db' on one machine, 'postgresql://...'), not {store!r}"
        )
    from parley.store import parse_store_url

    parsed = parse_store_url(store)
    if parsed.scheme == "memory":
        raise ValueError(
            f"a {parsed.redacted!r} store lives in one process; the Ray runner's actors need a store they "
            "share: 'sqlite:///path/chats.db' (on one machine) or 'postgresql://...'"
        )
    if parsed.scheme == "sqlite":  # the actors' working directory may not be this one
        _, question, query = store.partition("?")
        return f"sqlite:///{quote(os.path.abspath(parsed.target))}{question}{query}"
    return store


class ActorPool:
    """The actors, one per share of the concurrency; a dead one is replaced in its place."""

    def __init__(
        self,
        ray: Any,
        fn_ref: Any,
        options: RayRunner,
        concurrency_shares: list[int],
        store_url: str | None,
        batch_id: str,
    ) -> None:
        self.ray = ray
        self.fn_ref = fn_ref
        self.store_url = store_url
        self.batch_id = batch_id
        self.actor_options = {"num_cpus": 1, "scheduling_strategy": "SPREAD", **options.actor_options}
        self.actor_class = ray.remote(ChatWorker).options(**self.actor_options)
        self.shares = concurrency_shares
        self.actors = [self._new(share) for share in concurrency_shares]
        self.generations = [0] * len(concurrency_shares)

    def _new(self, share: int) -> Any:
        return self.actor_class.remote(self.fn_ref, share, self.store_url, self.batch_id)

    async def started(self) -> None:
        """Wait until every actor has loaded ``fn`` (and opened the store).

        Raises:
            RuntimeError: an actor could not start: ``fn`` could not be loaded there, or the store opened.
        """
        ready = asyncio.gather(*(actor.ready.remote() for actor in self.actors))
        try:
            try:
                await asyncio.wait_for(asyncio.shield(ready), STARTUP_NOTICE_S)
            except TimeoutError:
                warnings.warn(self._not_started(), RuntimeWarning, stacklevel=2)
                await ready
        except self.ray.exceptions.RayActorError as error:
            raise RuntimeError(
                "a Ray actor could not start: the actors load fn (and the store) when they start; the "
                f"modules fn uses must be importable on every node. Ray says: {error}"
            ) from error

    def _not_started(self) -> str:
        cpus = self.actor_options.get("num_cpus", 1)
        total = self.ray.cluster_resources().get("CPU", 0)
        free = self.ray.available_resources().get("CPU", 0)
        return (
            f"run_many asked Ray for {len(self.actors)} actors of {cpus:g} CPU each, and they have not all "
            f"started after {STARTUP_NOTICE_S:g} s: the cluster has {total:g} CPUs, {free:g} of them free. "
            "The batch waits for them; ask for fewer (RayRunner(actors=...)) or add nodes"
        )

    def replace(self, slot: int, generation: int) -> None:
        """Start a new actor in ``slot``, unless it has been replaced since ``generation``."""
        if self.generations[slot] != generation:
            return
        self._kill(self.actors[slot])
        self.actors[slot] = self._new(self.shares[slot])
        self.generations[slot] += 1

    def _kill(self, actor: Any) -> None:
        with suppress(Exception):  # it is dead already
            self.ray.kill(actor, no_restart=True)

    def shutdown(self) -> None:
        for actor in self.actors:
            self._kill(actor)


class ActorGate:
    """Who may call one actor: any number of batches at once, or one suspect item alone."""

    def __init__(self) -> None:
        self.calls = 0
        self.alone = False
        self.changed = asyncio.Condition()

    @asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        async with self.changed:
            await self.changed.wait_for(lambda: not self.alone)
            self.calls += 1
        try:
            yield
        finally:
            async with self.changed:
                self.calls -= 1
                self.changed.notify_all()

    @asynccontextmanager
    async def alone_on_it(self) -> AsyncIterator[None]:
        async with self.changed:
            await self.changed.wait_for(lambda: not self.alone)
            self.alone = True
            await self.changed.wait_for(lambda: self.calls == 0)
        try:
            yield
        finally:
            async with self.changed:
                self.alone = False
                self.changed.notify_all()


class Dispatch:
    """Sends items out in batches, lands outcomes, requeues the items of actors that died.

    Ray cannot say which item killed an actor, so every item it was running is started again. An item
    that was running at two deaths is a suspect: it runs alone on its actor from then on, so that its
    actor's next death is surely its own and an item that kills every actor takes no other down with it
    again.
    """

    def __init__(self, ray: Any, pool: ActorPool, items: list[Any], options: RayRunner, tally: Tally) -> None:
        self.ray = ray
        self.pool = pool
        self.items = items
        self.options = options
        self.tally = tally
        self.outcomes: list[Outcome[Any] | None] = [None] * len(items)
        self.attempts = [0] * len(items)
        self.deaths = [0] * len(items)
        self.queue: deque[int] = deque(range(len(items)))
        self.suspects: deque[int] = deque()
        self.unfinished = len(items)
        self.changed = asyncio.Condition()
        self.gates = [ActorGate() for _ in pool.actors]

    async def run(self) -> list[Outcome[Any]]:
        per_actor = math.ceil(len(self.items) / len(self.pool.actors))
        plans = []
        for slot, share in enumerate(self.pool.shares):
            size = max(1, min(self.options.batch_size or share, per_actor))
            plans.append((slot, size, math.ceil(min(share, per_actor) / size) + 1))
        # every actor's first call goes out before any actor's second one
        rounds = max(calls for _, _, calls in plans)
        feeders = [
            self._feed(slot, size) for turn in range(rounds) for slot, size, calls in plans if turn < calls
        ]
        await asyncio.gather(*feeders)
        return [outcome for outcome in self.outcomes if outcome is not None]

    async def _feed(self, slot: int, size: int) -> None:
        gate = self.gates[slot]
        while True:
            batch, suspect = await self._next_batch(size)
            if not batch:
                return
            async with gate.alone_on_it() if suspect else gate.shared():
                await self._send(slot, batch)

    async def _next_batch(self, size: int) -> tuple[list[int], bool]:
        """The next items to send (a suspect alone), and whether it is a suspect; none when all are done."""
        async with self.changed:
            while not self.queue and not self.suspects and self.unfinished:
                await self.changed.wait()
            if self.suspects:
                return [self.suspects.popleft()], True
            return [self.queue.popleft() for _ in range(min(size, len(self.queue)))], False

    async def _send(self, slot: int, batch: list[int]) -> None:
        actor, generation = self.pool.actors[slot], self.pool.generations[slot]
        try:
            stream = actor.run.remote([(index, self.items[index]) for index in batch])
        except Exception as error:  # an item that cannot be pickled
            await self._unsendable(batch, error)
            return
        for index in batch:
            self.attempts[index] += 1
        self.tally.start(len(batch))
        pending = set(batch)
        try:
            async for ref in stream:
                shipped: list[Shipped] = await ref
                for entry in shipped:
                    pending.discard(entry[0])
                    await self._land(self._unpacked(entry))
        except BatchStopped:
            raise
        except self.ray.exceptions.RayActorError as error:
            self.tally.requeue(len(pending))
            self.pool.replace(slot, generation)
            await self._requeue(sorted(pending), error)
        except Exception as error:
            self.tally.requeue(len(pending))
            for index in sorted(pending):
                await self._land(_failed(index, error), started=False)

    def _unpacked(self, entry: Shipped) -> Outcome[Any]:
        index, payload, described = entry
        if payload is not None:
            try:
                outcome: Outcome[Any] = pickle.loads(payload)
                return outcome
            except Exception as error:
                described = f"{described} (it could not be unpickled here: {type(error).__name__}: {error})"
        return Outcome(index, error=RemoteItemError(described))

    async def _land(self, outcome: Outcome[Any], *, started: bool = True) -> None:
        index = outcome.index
        outcome.item = self.items[index]
        outcome.attempts = self.attempts[index]
        self.outcomes[index] = outcome
        self.tally.finish(outcome, was_running=started)
        async with self.changed:
            self.unfinished -= 1
            self.changed.notify_all()

    async def _requeue(self, indexes: list[int], error: BaseException) -> None:
        """The items a dead actor was running: started again (suspects alone), or given up."""
        retry, suspects = [], []
        for index in indexes:
            self.deaths[index] += 1
            if self.attempts[index] >= self.options.max_attempts:
                lost = ItemLostError(
                    f"item {index} was started {self.attempts[index]} times and each time the Ray actor "
                    f"running it died; the last time: {error}"
                )
                lost.__cause__ = error
                await self._land(_failed(index, lost), started=False)
            elif self.deaths[index] >= 2:
                suspects.append(index)
            else:
                retry.append(index)
        async with self.changed:
            self.queue.extendleft(reversed(retry))
            self.suspects.extend(suspects)
            self.changed.notify_all()

    async def _unsendable(self, batch: list[int], error: BaseException) -> None:
        from ray import cloudpickle

        sendable = []
        for index in batch:
            try:
                cloudpickle.dumps(self.items[index])
            except Exception as problem:
                unsendable = UnsendableError(
                    f"item {index} cannot be sent to a Ray actor: {type(problem).__name__}: {problem}"
                )
                await self._land(_failed(index, unsendable), started=False)
            else:
                sendable.append(index)
        if len(sendable) == len(batch):  # the items pickle one by one: the call failed for another reason
            for index in batch:
                await self._land(_failed(index, error), started=False)
            return
        async with self.changed:
            self.queue.extendleft(reversed(sendable))
            self.changed.notify_all()


def _failed(index: int, error: BaseException) -> Outcome[Any]:
    import traceback

    return Outcome(index, error=error, traceback="".join(traceback.format_exception(error)))
