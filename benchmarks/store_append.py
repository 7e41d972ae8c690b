"""What durable chats cost: an append per message, the bytes a chat takes, and loading a long chat.

    .venv/bin/python -m benchmarks.store_append                 # SQLite; PostgreSQL too if it has a URL
    .venv/bin/python -m benchmarks.store_append --postgres postgresql://user@127.0.0.1:5432/postgres
    .venv/bin/python -m benchmarks.store_append --quick         # small sizes: checks the harness only

PostgreSQL's URL comes from ``--postgres`` or ``PARLEY_TEST_POSTGRES_URL`` (``./scripts/test`` starts such
a server); the benchmark works in a database of its own, created and dropped (or, without the right to
create one, in the given database under chat ids of its own). Every figure is measured in this one run,
so that the goals, which are ratios and bounds, compare like with like. The records are realistic
message records (user and assistant text, tool calls and results, usage), JSON as the engine writes them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from parley.store import ChatStore, StoredRecord, open_store


@dataclass
class Figure:
    """One measured figure, and the goal it has, if any."""

    label: str
    value: float
    unit: str
    goal: float | None = None
    """The bound the value must stay within (at most, or for a ratio, within ``goal`` of 1)."""
    ratio: bool = False

    @property
    def met(self) -> bool | None:
        if self.goal is None:
            return None
        if self.ratio:
            return abs(self.value - 1) <= self.goal  # False for NaN
        return self.value <= self.goal

    def line(self) -> str:
        value = f"{self.value:,.2f} {self.unit}" if self.value < 100 else f"{self.value:,.0f} {self.unit}"
        if self.goal is None:
            return f"{self.label:<62} {value:>16}"
        goal = f"1 ± {self.goal:g}" if self.ratio else f"≤ {self.goal:g} {self.unit}"
        return f"{self.label:<62} {value:>16}   goal {goal}: {'met' if self.met else 'NOT MET'}"


@dataclass
class Sizes:
    appends: int = 2000
    """Appends timed at the default durability, one message record each."""
    power_appends: int = 300
    """Appends timed with ``durability=power`` (an fsync each: milliseconds)."""
    short_chat: int = 100
    long_chat: int = 10_000
    concurrent_chats: int = 1000
    appends_per_concurrent_chat: int = 5


WORDS = (
    "the customer order refund charge card account subscription billing invoice days reach update "
    "please thanks error issue resolved ticket support number status shipped delivery address"
)
QUICK = Sizes(appends=50, power_appends=10, short_chat=20, long_chat=200, concurrent_chats=20)


def message_records(count: int, seed: int = 7) -> list[StoredRecord]:
    """``count`` message records of a plausible support conversation (seq 1..count after a chat_started)."""
    rng = random.Random(seed)
    words = WORDS.split()

    def text(low: int, high: int) -> str:
        length = rng.randint(low, high)
        out: list[str] = []
        while sum(len(word) + 1 for word in out) < length:
            out.append(rng.choice(words))
        return " ".join(out).capitalize() + "."

    records = []
    for seq in range(1, count + 1):
        usage = [
            {
                "model": "gpt-4o-mini",
                "prompt_tokens": 200 + 40 * seq % 4000,
                "completion_tokens": rng.randint(10, 200),
                "cost": 0.00012,
                "cached": False,
            }
        ]
        turn = seq % 4
        if turn == 1:
            message: dict[str, Any] = {"role": "user", "name": "customer", "content": text(30, 300)}
            record: dict[str, Any] = {"kind": "message", "speaker": "customer", "message": message}
        elif turn == 2:
            call = {
                "id": f"call_{seq}",
                "type": "function",
                "function": {"name": "lookup_order", "arguments": json.dumps({"order_id": f"A-{seq}"})},
            }
            message = {"role": "assistant", "name": "support", "content": None, "tool_calls": [call]}
            record = {"kind": "message", "speaker": "support", "message": message, "usage": usage}
        elif turn == 3:
            result = text(50, 400)
            message = {
                "role": "tool",
                "name": "support",
                "content": result,
                "tool_responses": [{"tool_call_id": f"call_{seq - 1}", "role": "tool", "content": result}],
            }
            record = {"kind": "message", "speaker": "support", "message": message}
            record["context_set"] = {"last_order": f"A-{seq - 1}"}
        else:
            message = {"role": "user", "name": "support", "content": text(100, 1200)}
            record = {"kind": "message", "speaker": "support", "message": message, "usage": usage}
        records.append(StoredRecord(seq, "message", json.dumps(record, separators=(",", ":"))))
    return records


def chat_started() -> StoredRecord:
    data = {"kind": "chat_started", "shape": "swarm", "agents": ["triage", "support"], "context": {}}
    return StoredRecord(0, "chat_started", json.dumps(data, separators=(",", ":")))


# the stores ----------------------------------------------------------------------------------------------


class Backend:
    """A kind of store to measure: how to open it at a durability, and what its chats take on disk."""

    name: str

    def url(self, durability: str) -> str:
        raise NotImplementedError

    def stored_bytes(self, store: ChatStore) -> int:
        raise NotImplementedError

    def floor_us(self, records: list[StoredRecord]) -> tuple[str, float]:
        """What the database itself takes for the least an append must do, in microseconds (wall)."""
        raise NotImplementedError


class SQLiteBackend(Backend):
    name = "SQLite"

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def url(self, durability: str) -> str:
        suffix = "?durability=power" if durability == "power" else ""
        return f"sqlite:///{self.directory}/{durability}-{uuid.uuid4().hex[:8]}.db{suffix}"

    def stored_bytes(self, store: ChatStore) -> int:
        connection = store._connection  # type: ignore[attr-defined]
        with store._lock:  # type: ignore[attr-defined]
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = connection.execute("PRAGMA page_count").fetchone()[0]
            free = connection.execute("PRAGMA freelist_count").fetchone()[0]
            size = connection.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def floor_us(self, records: list[StoredRecord]) -> tuple[str, float]:
        import sqlite3

        connection = sqlite3.connect(f"{self.directory}/floor.db", isolation_level=None)
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(
            "CREATE TABLE records (chat_id TEXT, seq INTEGER, kind TEXT, data TEXT, "
            "PRIMARY KEY (chat_id, seq))"
        )
        started = time.perf_counter()
        for record in records:
            connection.execute(
                "INSERT INTO records VALUES (?, ?, ?, ?)", ("floor", record.seq, record.kind, record.data)
            )
        elapsed = time.perf_counter() - started
        connection.close()
        return "one bare sqlite3 INSERT, committed (WAL, NORMAL)", elapsed / len(records) * 1e6


class PostgresBackend(Backend):
    name = "PostgreSQL"

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url

    def url(self, durability: str) -> str:
        separator = "&" if "?" in self.database_url else "?"
        return self.database_url + (f"{separator}durability=power" if durability == "power" else "")

    def stored_bytes(self, store: ChatStore) -> int:
        rows = store._read(  # type: ignore[attr-defined]
            "SELECT pg_total_relation_size('parley_records') + pg_total_relation_size('parley_chats')", ()
        )
        return int(rows[0][0])

    def floor_us(self, records: list[StoredRecord]) -> tuple[str, float]:
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as connection:
            started = time.perf_counter()
            for _ in records:
                connection.execute("SELECT 1").fetchone()
            elapsed = time.perf_counter() - started
        return "one round trip to the server (SELECT 1)", elapsed / len(records) * 1e6


@contextmanager
def postgres_database(server_url: str) -> Iterator[str]:
    """A database of the benchmark's own on the server (or the given one, without the right to create)."""
    import psycopg

    name = f"parley_bench_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error:
        yield server_url
        return
    base, _, _ = server_url.partition("?")
    query = server_url[len(base) :]
    try:
        yield base.rsplit("/", 1)[0] + f"/{name}" + query
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# the measurements ----------------------------------------------------------------------------------------


def append_cost(backend: Backend, durability: str, appends: int) -> tuple[float, float]:
    """Wall and CPU microseconds per append of one message record, a chat at a time."""
    store = open_store(backend.url(durability))
    records = message_records(appends)
    try:
        with store.open(f"append-{durability}-{uuid.uuid4().hex}") as log:
            log.append([chat_started()])
            warmup = min(20, appends // 5)
            for record in records[:warmup]:  # the connection and its statements are ready after these
                log.append([record])
            rest = records[warmup:]
            wall, cpu = time.perf_counter(), time.process_time()
            for record in rest:
                log.append([record])
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        store.close()
    return wall / len(rest) * 1e6, cpu / len(rest) * 1e6


def bytes_per_message(backend: Backend, messages: int) -> tuple[float, float]:
    """Bytes the store grew by per message for one chat of ``messages``, and the JSON bytes per message."""
    store = open_store(backend.url("process"))
    try:
        with store.open(f"warm-{uuid.uuid4().hex}") as log:  # the tables' first pages are not the chat's
            log.append([chat_started()])
        before = backend.stored_bytes(store)
        records = message_records(messages)
        with store.open(f"bytes-{messages}-{uuid.uuid4().hex}") as log:
            log.append([chat_started()])
            for start in range(0, messages, 500):
                log.append(records[start : start + 500])
        grown = backend.stored_bytes(store) - before
    finally:
        store.close()
    payload = sum(len(record.data.encode()) for record in records)
    return grown / messages, payload / messages


def load_time(backend: Backend, messages: int) -> float:
    """Seconds to open a chat of ``messages`` again and read all its records (what resuming reads)."""
    store = open_store(backend.url("process"))
    chat_id = f"load-{uuid.uuid4().hex}"
    try:
        records = message_records(messages)
        with store.open(chat_id) as log:
            log.append([chat_started()])
            for start in range(0, messages, 1000):
                log.append(records[start : start + 1000])
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            with store.open(chat_id) as log:
                loaded = log.records()
            best = min(best, time.perf_counter() - started)
            assert len(loaded) == messages + 1
    finally:
        store.close()
    return best


def concurrent_cost(backend: Backend, chats: int, appends: int) -> float:
    """Wall microseconds per append while ``chats`` asyncio tasks each append ``appends`` records."""
    store = open_store(backend.url("process"))
    records = message_records(appends)
    prefix = uuid.uuid4().hex

    async def chat(number: int) -> None:
        with store.open(f"many-{prefix}-{number}") as log:
            for record in records:
                await log.a_append([record])

    async def all_chats() -> float:
        started = time.perf_counter()
        await asyncio.gather(*(chat(number) for number in range(chats)))
        return time.perf_counter() - started

    try:
        wall = asyncio.run(all_chats())
    finally:
        store.close()
    return wall / (chats * appends) * 1e6


def measure(backend: Backend, sizes: Sizes, *, local_goal_us: float) -> list[Figure]:
    name = backend.name
    default_wall, default_cpu = append_cost(backend, "process", sizes.appends)
    floor_label, floor = backend.floor_us(message_records(sizes.appends))
    power_wall, _ = append_cost(backend, "power", sizes.power_appends)
    short_bytes, _ = bytes_per_message(backend, sizes.short_chat)
    long_bytes, long_payload = bytes_per_message(backend, sizes.long_chat)
    loading = load_time(backend, sizes.long_chat)
    concurrent = concurrent_cost(backend, sizes.concurrent_chats, sizes.appends_per_concurrent_chat)
    return [
        Figure(f"{name}: append one message (default durability), wall", default_wall, "us", local_goal_us),
        Figure(f"{name}: append one message (default durability), CPU", default_cpu, "us"),
        Figure(f"{name}: {floor_label}, wall", floor, "us"),
        Figure(f"{name}: append / {floor_label}", _ratio(default_wall, floor), "x"),
        Figure(f"{name}: append one message (durability=power), wall", power_wall, "us"),
        Figure(f"{name}: durability=power / default, per append", _ratio(power_wall, default_wall), "x"),
        Figure(
            f"{name}: {sizes.concurrent_chats} chats appending at once, wall per append",
            concurrent,
            "us",
        ),
        Figure(f"{name}: bytes stored per message, {sizes.short_chat}-message chat", short_bytes, "B"),
        Figure(f"{name}: bytes stored per message, {sizes.long_chat:,}-message chat", long_bytes, "B"),
        Figure(
            f"{name}: bytes per message at {sizes.long_chat:,} / at {sizes.short_chat} (linear: 1)",
            _ratio(long_bytes, short_bytes),
            "x",
            0.25,
            ratio=True,
        ),
        Figure(
            f"{name}: bytes stored / JSON bytes of the records",
            _ratio(long_bytes, long_payload),
            "x",
        ),
        Figure(f"{name}: open and load a {sizes.long_chat:,}-message chat", loading * 1e3, "ms", 200),
    ]


def _ratio(value: float, reference: float) -> float:
    """``value / reference``; NaN (which meets no goal) when the reference is nothing."""
    return value / reference if reference else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", help="a PostgreSQL server's URL (default: PARLEY_TEST_POSTGRES_URL)")
    parser.add_argument("--quick", action="store_true", help="small sizes: checks that everything runs")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else Sizes()
    figures = run(sizes, args.postgres or os.environ.get("PARLEY_TEST_POSTGRES_URL"))
    if args.json:
        print(json.dumps([figure.__dict__ | {"met": figure.met} for figure in figures], indent=2))
    else:
        for figure in figures:
            print(figure.line())
    return 0 if all(figure.met is not False for figure in figures) or args.quick else 1


def run(sizes: Sizes, postgres_url: str | None) -> list[Figure]:
    """Measure SQLite, and PostgreSQL if there is a server's URL."""
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="parley-store-bench-") as directory:
        figures += measure(SQLiteBackend(directory), sizes, local_goal_us=100)
    if postgres_url:
        with postgres_database(postgres_url) as database:
            figures += measure(PostgresBackend(database), sizes, local_goal_us=1000)
    else:
        print("no PostgreSQL server (--postgres or PARLEY_TEST_POSTGRES_URL): SQLite only", file=sys.stderr)
    return figures


if __name__ == "__main__":
    sys.exit(main())
