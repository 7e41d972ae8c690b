"""The embedded store: one SQLite file in WAL mode, through the standard library's ``sqlite3``.

One connection per store, shared by every thread and task of the process under a lock: an append is a
short transaction (tens of microseconds), so queuing for the connection costs less than more
connections would. Other processes may use the same file at the same time (WAL lets readers run beside
the one writer; writers wait for each other up to ``busy_timeout``). Leases are byte-range locks on the
``<database>-leases`` file beside it (:mod:`parley.store.lease_files`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from parley.store.base import (
    SCHEMA_VERSION,
    ChatInfo,
    Durability,
    StoredRecord,
    check_chat_id,
    first_seq_conflict,
    this_process,
)
from parley.store.errors import (
    ChatInUseError,
    Holder,
    RecordConflictError,
    StoreError,
    StoreUnavailableError,
    StoreVersionError,
    schema_version,
)
from parley.store.lease_files import LeaseFile, stop_using, use_lease_file

BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's write to the same file before giving up."""

_RECORDS_TABLE = """CREATE TABLE IF NOT EXISTS {name} (
        chat_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        data TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (chat_id, seq))"""
# Nothing but the record is written per append (its row, and its key in the primary key's index). A
# chat's listing (its count, first and last kinds, times) is read from its records when asked for. A
# rowid table rather than WITHOUT ROWID: appended rows fill its pages, where keeping the records in the
# key's b-tree left pages half full (half as many bytes again on disk, for 3 us less per append).
_TABLES = (
    _RECORDS_TABLE.format(name="parley_records"),
    """CREATE TABLE IF NOT EXISTS parley_leases (
        chat_id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        since REAL NOT NULL)""",
)
_FROM_VERSION_1 = (
    _RECORDS_TABLE.format(name="parley_records_2"),
    """INSERT INTO parley_records_2 (chat_id, seq, kind, data, at)
    SELECT r.chat_id, r.seq, r.kind, r.data,
        CASE WHEN r.seq = (SELECT min(seq) FROM parley_records f WHERE f.chat_id = r.chat_id)
            THEN c.created_at ELSE c.updated_at END
    FROM parley_records r JOIN parley_chats c USING (chat_id)""",
    "DROP TRIGGER IF EXISTS parley_record_appended",
    "DROP TABLE parley_records",
    "DROP TABLE parley_chats",
    "ALTER TABLE parley_records_2 RENAME TO parley_records",
)
"""Version 1 kept a row per chat, updated by a trigger on every record; version 2 reads it from the
records, each of which carries its time."""
_INSERT_RECORD = "INSERT INTO parley_records (chat_id, seq, kind, data, at) VALUES (?, ?, ?, ?, ?)"
_LIST_CHATS = """
SELECT c.chat_id, c.created, c.updated, c.count, f.kind, z.kind, l.pid, l.host, l.since
FROM (SELECT chat_id, min(at) AS created, max(at) AS updated, count(*) AS count,
             min(seq) AS first_seq, max(seq) AS last_seq
      FROM parley_records GROUP BY chat_id) c
JOIN parley_records f ON f.chat_id = c.chat_id AND f.seq = c.first_seq
JOIN parley_records z ON z.chat_id = c.chat_id AND z.seq = c.last_seq
LEFT JOIN parley_leases l ON l.chat_id = c.chat_id
ORDER BY c.created, c.chat_id
"""
_SELECT_RECORDS = "SELECT seq, kind, data FROM parley_records WHERE chat_id = ? ORDER BY seq"
_SELECT_TEXTS = "SELECT data FROM parley_records WHERE chat_id = ? ORDER BY seq"


class SQLiteStore:
    """Chats in a SQLite file: ``open_store("sqlite:///path/chats.db")``.

    ``durability="process"`` (the default) keeps every appended record through the process being killed
    (WAL, ``synchronous=NORMAL``); ``"power"`` through a power cut as well (``synchronous=FULL``: an
    fsync per append). With ``create=False`` the file must exist and hold a parley store.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        durability: Durability | str = Durability.PROCESS,
        create: bool = True,
        url: str | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.durability = Durability(durability)
        suffix = "?durability=power" if self.durability is Durability.POWER else ""
        self.url = url or f"sqlite:///{self.path}{suffix}"
        self.closed = False
        self._lock = threading.Lock()
        self._logs: dict[str, SQLiteChatLog] = {}
        self._connection = self._connect(create)
        try:
            self._prepare(create)
            self._lease_file: LeaseFile = use_lease_file(self.path + "-leases")
        except OSError as error:
            self._connection.close()
            raise StoreUnavailableError(f"cannot open the store {self.url}: lease file: {error}") from error
        except BaseException:
            self._connection.close()
            raise

    # connecting ---------------------------------------------------------------------------------------

    def _connect(self, create: bool) -> sqlite3.Connection:
        if not create and not os.path.exists(self.path):
            raise StoreUnavailableError(f"cannot open the store {self.url}: there is no file {self.path}")
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(folder):
            raise StoreUnavailableError(
                f"cannot open the store {self.url}: there is no directory {folder} (parley creates the "
                "file, not the directories it goes in)"
            )
        if os.path.isdir(self.path):
            raise StoreUnavailableError(f"cannot open the store {self.url}: {self.path} is a directory")
        try:
            connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise StoreUnavailableError(f"cannot open the store {self.url}: {error}") from error
        return connection

    def _prepare(self, create: bool) -> None:
        """WAL, the durability level, and the tables (created on first use, brought up to date from an older
        schema); refuse newer schemas."""
        connection = self._connection
        try:
            sync = "FULL" if self.durability is Durability.POWER else "NORMAL"
            connection.execute(f"PRAGMA synchronous = {sync}")
            if not create:
                version = self._schema_version()
                self._check_version(version)
                if version == SCHEMA_VERSION:
                    return
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS parley_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
                )
                version = self._schema_version()
                if version is None:
                    connection.execute(
                        "INSERT INTO parley_meta (key, value) VALUES ('schema_version', ?)",
                        (str(SCHEMA_VERSION),),
                    )
                    version = SCHEMA_VERSION
                self._check_version(version)
                if version == 1:
                    for statement in _FROM_VERSION_1:
                        connection.execute(statement)
                    connection.execute(
                        "UPDATE parley_meta SET value = ? WHERE key = 'schema_version'",
                        (str(SCHEMA_VERSION),),
                    )
                for statement in _TABLES:
                    connection.execute(statement)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        except sqlite3.Error as error:
            raise StoreUnavailableError(f"cannot open the store {self.url}: {error}") from error

    def _check_version(self, version: int | None) -> None:
        if version is None:
            raise StoreUnavailableError(
                f"cannot open the store {self.url}: {self.path} holds no parley chats"
            )
        if version > SCHEMA_VERSION:
            raise StoreVersionError(self.url, version, SCHEMA_VERSION)

    def _schema_version(self) -> int | None:
        found = self._connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'parley_meta'"
        ).fetchone()
        if found is None:
            return None
        row = self._connection.execute(
            "SELECT value FROM parley_meta WHERE key = 'schema_version'"
        ).fetchone()
        return None if row is None else schema_version(self.url, row[0])

    # the store ----------------------------------------------------------------------------------------

    def open(self, chat_id: str) -> SQLiteChatLog:
        """Take the chat's lease and return its log; :class:`ChatInUseError` if a live process has it."""
        check_chat_id(chat_id)
        self._check_open()
        if not self._lease_file.acquire(chat_id):
            raise ChatInUseError(chat_id, self._holder(chat_id), self.url)
        pid, host = this_process()
        try:
            self._write(
                "INSERT OR REPLACE INTO parley_leases VALUES (?, ?, ?, ?)", (chat_id, pid, host, _now())
            )
        except BaseException:
            self._lease_file.release(chat_id)
            raise
        log = SQLiteChatLog(self, chat_id)
        self._logs[chat_id] = log
        return log

    def load(self, chat_id: str) -> list[StoredRecord]:
        """The chat's records in seq order, without its lease (empty for an unknown chat)."""
        check_chat_id(chat_id)
        rows = self._read(_SELECT_RECORDS, (chat_id,))
        return [StoredRecord(seq, kind, data) for seq, kind, data in rows]

    def load_texts(self, chat_id: str) -> list[str]:
        """The ``data`` (JSON text) of the chat's records in seq order: :meth:`load` without the rest."""
        check_chat_id(chat_id)
        return [data for (data,) in self._read(_SELECT_TEXTS, (chat_id,))]

    def list_chats(self) -> list[ChatInfo]:
        """Every chat that has records, oldest first, with the live process running it, if any."""
        rows = self._read(_LIST_CHATS, ())
        chats = []
        for chat_id, created, updated, count, first, last, pid, host, since in rows:
            holder = None
            if pid is not None and self._lease_file.is_held(chat_id):
                holder = Holder(pid, host, _time(since))
            chats.append(ChatInfo(chat_id, _time(created), _time(updated), count, first, last, holder))
        return chats

    def close(self) -> None:
        """Close the logs still open (releasing their leases) and the database."""
        if self.closed:
            return
        for log in list(self._logs.values()):
            log.close()
        with self._lock:
            self.closed = True
            self._connection.close()
        stop_using(self._lease_file)

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteStore({self.url!r})"

    # inside -------------------------------------------------------------------------------------------

    def _append(self, chat_id: str, records: Sequence[StoredRecord]) -> None:
        at = time.time()
        with self._lock:
            self._check_open()
            connection = self._connection
            try:
                if len(records) == 1:  # one statement is one transaction
                    record = records[0]
                    connection.execute(_INSERT_RECORD, (chat_id, record.seq, record.kind, record.data, at))
                else:
                    _insert_all(connection, [(chat_id, r.seq, r.kind, r.data, at) for r in records])
            except sqlite3.IntegrityError:
                raise self._conflict(chat_id, records) from None
            except sqlite3.Error as error:
                raise StoreUnavailableError(
                    f"cannot append to chat {chat_id!r} in {self.url}: {error} (nothing of it was stored)"
                ) from error

    def _conflict(self, chat_id: str, records: Sequence[StoredRecord]) -> RecordConflictError:
        """The error for ``records`` of which one has a seq already stored (or repeated among them)."""
        rows = self._connection.execute("SELECT seq FROM parley_records WHERE chat_id = ?", (chat_id,))
        seq = first_seq_conflict({seq for (seq,) in rows}, records)
        return RecordConflictError(chat_id, records[0].seq if seq is None else seq, self.url)

    def _release(self, log: SQLiteChatLog) -> None:
        if self._logs.get(log.chat_id) is log:
            del self._logs[log.chat_id]
        try:
            if not self.closed:
                pid, host = this_process()
                self._write(
                    "DELETE FROM parley_leases WHERE chat_id = ? AND pid = ? AND host = ?",
                    (log.chat_id, pid, host),
                )
        finally:
            self._lease_file.release(log.chat_id)

    def _holder(self, chat_id: str) -> Holder | None:
        rows = self._read("SELECT pid, host, since FROM parley_leases WHERE chat_id = ?", (chat_id,))
        if not rows:
            return None
        pid, host, since = rows[0]
        return Holder(pid, host, _time(since))

    def _read(self, sql: str, parameters: tuple[Any, ...]) -> list[Any]:
        with self._lock:
            self._check_open()
            try:
                return self._connection.execute(sql, parameters).fetchall()
            except sqlite3.Error as error:
                raise StoreUnavailableError(f"cannot read the store {self.url}: {error}") from error

    def _write(self, sql: str, parameters: tuple[Any, ...]) -> None:
        with self._lock:
            self._check_open()
            try:
                self._connection.execute(sql, parameters)
            except sqlite3.Error as error:
                raise StoreUnavailableError(f"cannot write to the store {self.url}: {error}") from error

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(f"the store {self.url} is closed")


class SQLiteChatLog:
    """One chat in a :class:`SQLiteStore`, leased by this process until :meth:`close`."""

    def __init__(self, store: SQLiteStore, chat_id: str) -> None:
        self.chat_id = chat_id
        self.store = store
        self.closed = False

    def records(self) -> list[StoredRecord]:
        """Everything stored for the chat so far, in seq order."""
        return self.store.load(self.chat_id)

    def texts(self) -> list[str]:
        """The JSON text of every record stored for the chat so far, in seq order."""
        return self.store.load_texts(self.chat_id)

    def append(self, records: Sequence[StoredRecord]) -> None:
        """Store ``records`` in one transaction, durable when this returns."""
        if self.closed:
            raise StoreError(f"the log of chat {self.chat_id!r} in {self.store.url} is closed")
        if records:
            self.store._append(self.chat_id, records)

    async def a_append(self, records: Sequence[StoredRecord]) -> None:
        """:meth:`append`: a local SQLite transaction is short enough to run on the event loop."""
        self.append(records)

    def close(self) -> None:
        """Release the chat's lease (closing twice is harmless)."""
        if self.closed:
            return
        self.closed = True
        self.store._release(self)

    def __enter__(self) -> SQLiteChatLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteChatLog({self.chat_id!r}, {self.store.url!r})"


def _insert_all(connection: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert the records' rows in one transaction."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany(_INSERT_RECORD, rows)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _now() -> float:
    return time.time()


def _time(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
