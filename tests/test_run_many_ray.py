"""run_many on Ray: a local Ray started here (loopback only, 2 CPUs, no dashboard) runs the same items
to the same outcomes as one event loop; the items of an actor that dies are started again on another.

Ray is the ``ray`` extra; ./scripts/test installs it and sets PARLEY_REQUIRE_RAY=1, which makes these
tests fail rather than skip without it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley import RayRunner, StopKind, a_run_many, run_many
from parley.runners import ray_driver
from parley.runners.errors import BatchStopped, ItemLostError, RemoteItemError, UnsendableError
from parley.store import MemoryStore, StoreURLError, open_store
from run_many_items import support_chat
from services import postgres_url

TESTS = Path(__file__).resolve().parent

if os.environ.get("PARLEY_REQUIRE_RAY") != "1":
    pytest.importorskip("ray")


def descendants() -> list[int]:
    """The ids of this process's live descendants (Linux's /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if fields[0] != "Z":  # not a zombie
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """A Ray of this test module's own, stopped at its end with every process it started."""
    import ray

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    ledger = Path(temp_dir) / "ledger"  # the actors' model calls, by customer (see run_many_items)
    ledger.mkdir()
    python_path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))  # for the items
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024 * 1024,
        _node_ip_address="127.0.0.1",
        _temp_dir=temp_dir,
        runtime_env={"env_vars": {"PYTHONPATH": python_path, "PARLEY_RUN_MANY_LEDGER": str(ledger)}},
        log_to_driver=False,
    )
    assert descendants(), "Ray's processes are this process's descendants"
    try:
        yield ray, ledger
    finally:
        ray.shutdown()
        deadline = time.monotonic() + 30
        while descendants() and time.monotonic() < deadline:
            time.sleep(0.2)
        left = descendants()
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert not left, f"Ray left processes behind: {left}"


def customers(count: int, tag: str = "c") -> list[dict[str, Any]]:
    """Items for ``count`` customers named after ``tag`` (each test its own: the ledger is by name)."""
    return [{"customer": f"broken-{tag}-{n}" if n % 9 == 4 else f"{tag}-{n}"} for n in range(count)]


def comparable(outcome: Any) -> tuple[Any, ...]:
    value = dict(outcome.value or {})
    value.pop("pid", None)
    return (
        outcome.index,
        outcome.item,
        value,
        repr(outcome.error),
        outcome.stop_reason,
        outcome.usage,
        len(outcome.chat_ids),
        None if outcome.chat_result is None else outcome.chat_result.chat_history,
    )


def test_200_chats_on_ray_give_the_same_outcomes_as_on_one_event_loop(local_ray: Any, tmp_path: Path):
    items = customers(200, "two-hundred")
    local = run_many(
        support_chat, items, concurrency=50, store=f"sqlite:///{tmp_path}/local.db", batch_id="b"
    )
    on_ray = run_many(
        support_chat, items, concurrency=50, runner="ray", store=f"sqlite:///{tmp_path}/ray.db", batch_id="b"
    )

    assert [comparable(outcome) for outcome in on_ray] == [comparable(outcome) for outcome in local]
    assert [outcome.chat_id for outcome in on_ray] == [f"b/{n}" for n in range(200)]
    assert sum(not outcome.ok for outcome in on_ray) == 22
    assert all(isinstance(o.error, RuntimeError) for o in on_ray if not o.ok), "the exception itself"
    assert all(o.stop_reason.kind is StopKind.TERMINATE_TARGET for o in on_ray if o.ok)
    assert len({outcome.value["pid"] for outcome in on_ray if outcome.ok}) == 2, "both actors ran items"
    assert {outcome.value["pid"] for outcome in on_ray if outcome.ok}.isdisjoint({os.getpid()})
    assert all(outcome.attempts == 1 for outcome in on_ray)


def test_the_items_of_an_actor_that_dies_are_started_again_on_another(local_ray: Any, tmp_path: Path):
    marks = tmp_path / "marks"
    marks.mkdir()
    items = customers(40, "dies")
    for n in (3, 17, 30):  # the refund tool kills its process the first time it runs for these
        items[n] = {"customer": f"dies-{n}", "die_once_in": str(marks)}

    store = f"sqlite:///{tmp_path}/chats.db"
    outcomes = run_many(support_chat, items, concurrency=8, runner=RayRunner(batch_size=4), store=store)

    killed = {path.name: int(path.read_text()) for path in marks.iterdir()}
    assert sorted(killed) == ["dies-17", "dies-3", "dies-30"]
    assert [outcome.ok for outcome in outcomes] == [item["customer"][:6] != "broken" for item in items]
    for n in (3, 17, 30):
        outcome = outcomes[n]
        assert outcome.attempts == 2
        assert outcome.value["pid"] != killed[f"dies-{n}"], "it finished in another process"
        assert outcome.value["context"]["refunded"] == len(f"dies-{n}")
    reference = run_many(support_chat, [{"customer": item["customer"]} for item in items])
    assert [o.value["history"] for o in outcomes if o.ok] == [o.value["history"] for o in reference if o.ok]
    _, ledger = local_ray
    for n in (3, 17, 30):
        calls = (ledger / f"dies-{n}").read_text().splitlines()
        assert [call.split()[0] for call in calls] == ["triage", "billing", "billing"], "no call made twice"
        assert calls[1].split()[1] != calls[2].split()[1], "the chat went on in another process"
        kinds = [record.kind for record in open_store(store).load(outcomes[n].chat_id)]
        assert kinds.count("chat_started") == 1


async def kill_every_actor(item: dict[str, Any]) -> Any:
    """Item ``"killer"`` kills its process; the others are still under way when it does."""
    if item["customer"] == "killer":
        await asyncio.sleep(0.2)
        os._exit(1)
    await asyncio.sleep(1)
    return await support_chat(item)


def test_an_item_that_kills_every_actor_is_given_up_and_takes_no_other_item_with_it(local_ray: Any):
    items: list[dict[str, Any]] = [{"customer": f"bystander-{n}"} for n in range(6)]
    items[1] = {"customer": "killer"}

    outcomes = run_many(kill_every_actor, items, concurrency=6, runner=RayRunner(actors=1, batch_size=6))

    assert [outcome.ok for outcome in outcomes] == [True, False, True, True, True, True]
    lost = outcomes[1]
    assert isinstance(lost.error, ItemLostError)
    assert "item 1 was started 3 times and each time the Ray actor running it died" in str(lost.error)
    assert lost.attempts == 3
    bystanders = [outcome for outcome in outcomes if outcome.ok]
    assert [outcome.attempts for outcome in bystanders] == [3] * 5, "two deaths beside it, then alone"


async def stops_on(item: dict[str, Any]) -> Any:
    """Item ``"exit"`` raises SystemExit and ``"interrupt"`` KeyboardInterrupt; the others take a while."""
    if item["customer"] == "exit":
        raise SystemExit("bye")
    if item["customer"] == "interrupt":
        raise KeyboardInterrupt
    await asyncio.sleep(0.5)
    return await support_chat(item)


@pytest.mark.parametrize(("customer", "raised"), [("exit", "SystemExit"), ("interrupt", "KeyboardInterrupt")])
async def test_an_exit_or_interrupt_raised_by_fn_on_an_actor_stops_the_batch_naming_it(
    local_ray: Any, customer: str, raised: str
):
    items: list[dict[str, Any]] = [{"customer": f"stop-{n}"} for n in range(6)]
    items[2] = {"customer": customer}

    with pytest.raises(
        BatchStopped, match=f"fn raised {raised} on item 2 on a Ray actor, which stops the batch"
    ):
        await asyncio.wait_for(a_run_many(stops_on, items, concurrency=6, runner=RayRunner(actors=1)), 60)


class BillingError(Exception):
    def __init__(self, code: int, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code


async def chats_then_fails(item: dict[str, Any]) -> Any:
    await support_chat(item)
    raise BillingError(402, "card declined")


def test_an_error_that_cannot_be_rebuilt_from_its_pickle_keeps_the_rest_of_its_outcome(local_ray: Any):
    local = run_many(chats_then_fails, [{"customer": "declined"}])[0]
    on_ray = run_many(chats_then_fails, [{"customer": "declined"}], runner="ray")[0]

    assert isinstance(on_ray.error, RemoteItemError)
    assert str(on_ray.error) == "BillingError: 402: card declined (it could not be rebuilt from its pickle)"
    assert "BillingError: 402: card declined" in on_ray.traceback
    assert on_ray.chat_id is not None and len(on_ray.chat_ids) == len(local.chat_ids) == 1
    assert (on_ray.stop_reason, on_ray.usage, on_ray.tokens) == (local.stop_reason, local.usage, local.tokens)
    assert on_ray.tokens > 0


def test_a_huge_concurrency_starts_no_more_feeders_than_the_items_need(
    local_ray: Any, monkeypatch: pytest.MonkeyPatch
):
    feeders: list[int] = []
    feed = ray_driver.Dispatch._feed

    async def counted(self: Any, slot: int, size: int) -> None:
        feeders.append(slot)
        await feed(self, slot, size)

    monkeypatch.setattr(ray_driver.Dispatch, "_feed", counted)
    outcomes = run_many(support_chat, customers(6, "huge"), concurrency=10**6, runner="ray")

    assert [outcome.ok for outcome in outcomes] == [n != 4 for n in range(6)]  # see customers()
    assert len(feeders) <= 4, "two per actor"


async def test_actors_the_cluster_cannot_hold_are_named_while_the_batch_waits_for_them(
    local_ray: Any, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(ray_driver, "STARTUP_NOTICE_S", 1.0)

    with (
        pytest.warns(RuntimeWarning, match=r"asked Ray for 3 actors of 1 CPU each.*the cluster has 2 CPUs"),
        pytest.raises(TimeoutError),
    ):
        await asyncio.wait_for(
            a_run_many(support_chat, customers(3, "crowded"), concurrency=3, runner=RayRunner(actors=3)), 8
        )


def test_the_actors_share_a_postgresql_store_and_a_rerun_calls_no_model(local_ray: Any):
    _, ledger = local_ray
    tag = uuid.uuid4().hex[:8]
    items = [{"customer": f"pg-{tag}-{n}"} for n in range(30)]

    first = run_many(support_chat, items, concurrency=10, runner="ray", store=postgres_url(), batch_id=tag)
    calls = {item["customer"]: (ledger / item["customer"]).read_text() for item in items}
    again = run_many(support_chat, items, concurrency=10, runner="ray", store=postgres_url(), batch_id=tag)

    assert all(outcome.ok for outcome in first)
    assert len({outcome.value["pid"] for outcome in first}) == 2
    assert {item["customer"]: (ledger / item["customer"]).read_text() for item in items} == calls
    assert [o.value["history"] for o in again] == [o.value["history"] for o in first]
    assert [outcome.chat_id for outcome in again] == [f"{tag}/{n}" for n in range(30)]


def test_a_function_ray_cannot_pickle_is_refused_naming_what_could_not_be_pickled():
    lock = threading.Lock()

    def guarded(item: Any) -> Any:
        with lock:
            return item

    with pytest.raises(UnsendableError, match=r"guarded could not be pickled \(.*lock \(a _thread\.lock\)\)"):
        run_many(guarded, [1], runner="ray")


def test_the_ray_runner_needs_a_store_url_every_actor_can_open():
    with pytest.raises(
        TypeError, match="the Ray runner opens the store in each actor, so store must be its URL"
    ):
        run_many(support_chat, customers(1), runner="ray", store=MemoryStore())
    with pytest.raises(ValueError, match="a 'memory://' store lives in one process"):
        run_many(support_chat, customers(1), runner="ray", store="memory://")
    with pytest.raises(StoreURLError, match=r"malformed store URL 'sqlite://host/chats\.db'"):
        run_many(support_chat, customers(1), runner="ray", store="sqlite://host/chats.db")


def test_a_sqlite_store_on_a_cluster_of_several_nodes_is_refused(
    local_ray: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    ray, _ = local_ray
    nodes = ray.nodes()
    monkeypatch.setattr(ray, "nodes", lambda: [*nodes, {**nodes[0], "NodeID": "other", "Alive": True}])

    with pytest.raises(
        ValueError, match="a SQLite store is a file on one machine, and this Ray cluster has 2"
    ):
        run_many(support_chat, customers(2), runner="ray", store=f"sqlite:///{tmp_path}/chats.db")
