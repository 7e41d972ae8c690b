"""The PostgreSQL store's own ways: reaching the server, one lease connection, durability levels."""

from __future__ import annotations

import asyncio
import socket
import uuid

import psycopg
import pytest

from parley.store import ChatInUseError, PostgresStore, StoreUnavailableError, open_store
from services import postgres_url

from .store_helpers import message_record

HOLD = """
import sys
from parley.store import open_store
log = open_store(sys.argv[1]).open(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
"""


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_server_is_named_with_its_password_redacted():
    url = f"postgresql://parley:s3cret@127.0.0.1:{closed_port()}/chats"

    with pytest.raises(StoreUnavailableError) as caught:
        open_store(url)

    message = str(caught.value)
    assert message.startswith(f"cannot reach the store postgresql://parley:***@127.0.0.1:{url.split(':')[3]}")
    assert "Connection refused" in message
    assert "s3cret" not in message


def test_a_database_without_parley_tables_is_no_store_for_readers(postgres_database: str):
    with pytest.raises(StoreUnavailableError, match="it holds no parley chats"):
        open_store(postgres_database, create=False)


def test_a_thousand_open_chats_hold_their_leases_on_one_connection(postgres_database: str):
    store = open_store(postgres_database)
    assert isinstance(store, PostgresStore)
    prefix = uuid.uuid4().hex
    logs = [store.open(f"{prefix}-{number}") for number in range(1000)]

    with psycopg.connect(postgres_database, autocommit=True) as admin:
        connections = admin.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = 'parley'"
        ).fetchone()
        locks = admin.execute(
            "SELECT count(DISTINCT pid), count(*) FROM pg_locks WHERE locktype = 'advisory'"
        ).fetchone()

    assert connections is not None and connections[0] <= 1 + 10  # the lease connection, and the pool
    assert locks == (1, 1000)
    for log in logs:
        log.close()
    store.close()


def test_durability_sets_synchronous_commit(postgres_database: str):
    for suffix, expected in (("", "off"), ("?durability=power", "on")):
        store = open_store(postgres_database + suffix)
        assert isinstance(store, PostgresStore)
        with store._pool.connection() as connection:
            assert connection.execute("SHOW synchronous_commit").fetchone() == (expected,)
        store.close()


def test_chats_whose_lease_connection_broke_are_locked_again_or_lost(postgres_database: str, child):
    store = open_store(postgres_database)
    assert isinstance(store, PostgresStore)
    kept, taken = store.open(f"kept-{uuid.uuid4().hex}"), store.open(f"taken-{uuid.uuid4().hex}")
    with psycopg.connect(postgres_database, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (store._lease_connection.info.backend_pid,))
    other = child(
        HOLD, postgres_database, taken.chat_id
    )  # the server released the leases with the connection

    store.open(f"another-{uuid.uuid4().hex}").close()  # reconnects, and locks the open chats again

    kept.append([message_record(0)])
    with pytest.raises(ChatInUseError, match=f"in use by process {other.pid}"):
        taken.append([message_record(0)])
    other.kill()
    kept.close()
    taken.close()
    store.close()


def test_a_store_serves_several_event_loops_one_after_another(postgres_database: str):
    store = open_store(postgres_database)
    log = store.open(f"loops-{uuid.uuid4().hex}")

    for seq in range(3):
        asyncio.run(log.a_append([message_record(seq)]))

    assert [stored.seq for stored in log.records()] == [0, 1, 2]
    log.close()
    store.close()


async def test_async_appends_do_not_block_the_event_loop(postgres_database: str):
    store = open_store(postgres_database)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    with store.open(f"async-{uuid.uuid4().hex}") as log:
        for seq in range(20):
            await log.a_append([message_record(seq)])
    ticker.cancel()

    assert ticks >= 20  # the loop ran other tasks while each append waited for the server
    store.close()


def test_the_tests_server_is_the_one_scripts_test_started():
    assert postgres_url().startswith("postgresql://")
