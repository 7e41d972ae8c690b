"""The embedded store's own ways: its file, WAL and durability levels, and leases on a lock file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from parley.store import ChatInUseError, SQLiteStore, StoreUnavailableError, open_store

from .store_helpers import message_record

HOLD = """
import sys
from parley.store import open_store
log = open_store(sys.argv[1]).open(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
"""


def test_the_database_is_a_wal_file_with_its_lease_file_beside_it(tmp_path: Path):
    store = open_store(f"sqlite:///{tmp_path}/chats.db")

    assert isinstance(store, SQLiteStore)
    assert store._connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store._connection.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    assert (tmp_path / "chats.db-leases").exists()
    store.close()


def test_power_durability_syncs_every_commit(tmp_path: Path):
    store = open_store(f"sqlite:///{tmp_path}/chats.db?durability=power")

    assert store._connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store._connection.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    store.close()


def test_an_empty_file_made_beforehand_becomes_a_store_as_a_new_one_does(tmp_path: Path):
    (tmp_path / "chats.db").touch()
    store = open_store(f"sqlite:///{tmp_path}/chats.db")
    with store.open("one") as log:
        log.append([message_record(0)])

    assert store._connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert [record.seq for record in store.load("one")] == [0]
    store.close()


def test_a_relative_path_is_relative_to_the_working_directory(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    store = open_store("sqlite:///data/chats.db")
    with store.open("one") as log:
        log.append([message_record(0)])
    store.close()

    assert (tmp_path / "data" / "chats.db").exists()


def test_a_reader_does_not_create_a_missing_store(tmp_path: Path):
    missing = tmp_path / "missing.db"

    with pytest.raises(
        StoreUnavailableError, match=f"cannot open the store sqlite:///{missing}: there is no file"
    ):
        open_store(f"sqlite:///{missing}", create=False)

    assert not missing.exists()


def test_a_file_that_is_no_database_is_unavailable_and_left_alone(tmp_path: Path):
    notes = tmp_path / "notes.txt"
    notes.write_text("these are not chats\n" * 100)

    with pytest.raises(
        StoreUnavailableError, match=rf"cannot open the store sqlite:///{notes}: file is not a database"
    ):
        open_store(f"sqlite:///{notes}")

    assert notes.read_text() == "these are not chats\n" * 100


def test_a_directory_or_an_unwritable_place_is_unavailable(tmp_path: Path):
    with pytest.raises(StoreUnavailableError, match="cannot open the store"):
        open_store(f"sqlite:///{tmp_path}")
    with pytest.raises(StoreUnavailableError, match="cannot open the store"):
        open_store(f"sqlite:///{tmp_path}/no/such/directory/chats.db")


def test_a_sqlite_database_of_another_application_is_no_store_for_readers(tmp_path: Path):
    import sqlite3

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE things (name TEXT)")

    with pytest.raises(StoreUnavailableError, match="holds no parley chats"):
        open_store(f"sqlite:///{other}", create=False)


def test_closing_one_store_keeps_the_leases_of_another_on_the_same_file(tmp_path: Path, child):
    """POSIX locks drop when any descriptor of the file closes: the stores share one descriptor."""
    path = tmp_path / "chats.db"
    first = open_store(f"sqlite:///{path}")
    second = open_store(f"sqlite:///{path}?durability=power")
    assert first is not second
    log = second.open("shared")
    with pytest.raises(ChatInUseError):
        first.open("shared")  # one process, two stores: still one holder

    first.close()

    with pytest.raises(AssertionError, match="did not get ready"):
        child(HOLD, f"sqlite:///{path}", "shared")
    log.close()
    second.close()


def test_the_lease_file_is_closed_once_no_store_uses_it(tmp_path: Path):
    path = tmp_path / "chats.db"
    descriptors = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        store = open_store(f"sqlite:///{path}")
        store.open("chat").close()
        store.close()

    assert len(os.listdir("/proc/self/fd")) == descriptors


_VERSION_1 = (
    "CREATE TABLE parley_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "INSERT INTO parley_meta VALUES ('schema_version', '1')",
    """CREATE TABLE parley_chats (chat_id TEXT PRIMARY KEY, created_at REAL NOT NULL,
        updated_at REAL NOT NULL, record_count INTEGER NOT NULL, first_kind TEXT NOT NULL,
        last_kind TEXT NOT NULL)""",
    """CREATE TABLE parley_records (chat_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
        data TEXT NOT NULL, PRIMARY KEY (chat_id, seq))""",
    """CREATE TABLE parley_leases (chat_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL,
        since REAL NOT NULL)""",
    "INSERT INTO parley_chats VALUES ('old', 1700000000.0, 1700000060.0, 2, 'chat_started', 'message')",
    "INSERT INTO parley_records VALUES ('old', 0, 'chat_started', '{\"kind\":\"chat_started\"}')",
    "INSERT INTO parley_records VALUES ('old', 1, 'message', '{\"kind\":\"message\"}')",
)


@pytest.mark.parametrize("reader", [False, True], ids=["writer", "reader"])
def test_a_store_of_schema_version_1_is_brought_up_to_date_and_keeps_its_chats(tmp_path: Path, reader: bool):
    import sqlite3
    from datetime import UTC, datetime

    from parley.store import SCHEMA_VERSION

    path = tmp_path / "chats.db"
    with sqlite3.connect(path) as connection:
        for statement in _VERSION_1:
            connection.execute(statement)

    store = open_store(f"sqlite:///{path}", create=not reader)
    [info] = store.list_chats()
    assert (info.chat_id, info.record_count, info.first_kind, info.last_kind) == (
        "old",
        2,
        "chat_started",
        "message",
    )
    assert info.created_at == datetime.fromtimestamp(1700000000.0, UTC)
    assert info.updated_at == datetime.fromtimestamp(1700000060.0, UTC)
    assert [(record.seq, record.kind) for record in store.load("old")] == [
        (0, "chat_started"),
        (1, "message"),
    ]
    with store.open("old") as log:
        log.append([message_record(2)])
    assert store.list_chats()[0].record_count == 3
    version = store._connection.execute("SELECT value FROM parley_meta").fetchone()
    store.close()
    assert version == (str(SCHEMA_VERSION),)
