"""Chats on a PostgreSQL server, through psycopg 3 and its connection pools (the ``postgres`` extra).

Appends go through a pool (``psycopg_pool.ConnectionPool``): each is one statement, so one round trip,
committed on its own. :meth:`PostgresChatLog.a_append` runs the same append on a thread of the store's
own (as many as the pool has connections), so that it serves any event loop, one after another or at
once; a pool of asyncio connections belongs to one loop, and its tasks keep ``asyncio.run`` from ending
unless it is closed inside that loop, which a store shared by loops cannot promise.
Leases are session-level advisory locks, all held on ONE connection per store (however many chats the
process runs): the server releases them when that connection closes or its process dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from parley.store.base import (
    SCHEMA_VERSION,
    ChatInfo,
    Durability,
    StoredRecord,
    check_chat_id,
    first_seq_conflict,
    lease_key,
    this_process,
)
from parley.store.errors import (
    ChatInUseError,
    Holder,
    RecordConflictError,
    StoreError,
    StoreUnavailableError,
    StoreURLError,
    StoreVersionError,
    schema_version,
)
from parley.store.urls import redact

if TYPE_CHECKING:
    import psycopg

DEFAULT_POOL_SIZE = 10
"""Connections per pool: appends beyond that many at once wait for one (one round trip each)."""
CONNECT_TIMEOUT_S = 10
"""How long connecting may take, unless the URL says (``connect_timeout=``)."""
POOL_TIMEOUT_S = 15.0
"""How long an append waits for a pooled connection before the store counts as unavailable."""
APPLICATION_NAME = "parley"
"""How the store's connections name themselves to the server (``pg_stat_activity``), unless the URL says."""
TAKEOVER_GRACE = "500ms"
"""How long opening a chat whose lease is taken waits for it: the server may take a moment to notice
that the holder's process died (a live holder keeps it, and the open fails)."""
LEASE_KEEPALIVES = {"tcp_keepalives_idle": 10, "tcp_keepalives_interval": 5, "tcp_keepalives_count": 3}
"""The lease connection's TCP keepalives, set on the server's side: a holder whose host vanished (rather
than its process: the kernel closes a dead process's connections) loses its leases within 25 s."""
_SETUP_LOCK = (0x70617273, 0x6C6579)  # a two-int advisory key: apart from the chats' one-bigint keys

_TABLES = (
    """CREATE TABLE IF NOT EXISTS parley_chats (
        chat_id text PRIMARY KEY,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        record_count bigint NOT NULL,
        first_kind text NOT NULL,
        last_kind text NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS parley_records (
        chat_id text NOT NULL,
        seq bigint NOT NULL,
        kind text NOT NULL,
        data text NOT NULL,
        PRIMARY KEY (chat_id, seq))""",
    """CREATE TABLE IF NOT EXISTS parley_leases (
        chat_id text PRIMARY KEY,
        pid integer NOT NULL,
        host text NOT NULL,
        since timestamptz NOT NULL,
        lock_key bigint NOT NULL)""",
)
_UPSERT_CHAT = """
INSERT INTO parley_chats AS c (chat_id, created_at, updated_at, record_count, first_kind, last_kind)
VALUES (%s, now(), now(), %s, %s, %s)
ON CONFLICT (chat_id) DO UPDATE SET
    updated_at = excluded.updated_at,
    record_count = c.record_count + excluded.record_count,
    last_kind = excluded.last_kind
"""
_APPEND_SQL: dict[int, str] = {}
"""The append statement for n records, one row of parameters each (no array: dumping one escapes every
character of the records' text); kept for small n, which is nearly every append."""
_SELECT_RECORDS = "SELECT seq, kind, data FROM parley_records WHERE chat_id = %s ORDER BY seq"
_LIST_CHATS = """
WITH live AS MATERIALIZED (
    SELECT classid::bigint * 4294967296 + objid::bigint AS lock_key
    FROM pg_locks
    WHERE locktype = 'advisory' AND granted AND objsubid = 1
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
)
SELECT c.chat_id, c.created_at, c.updated_at, c.record_count, c.first_kind, c.last_kind,
       l.pid, l.host, l.since, l.lock_key IN (SELECT lock_key FROM live) AS alive
FROM parley_chats c LEFT JOIN parley_leases l USING (chat_id)
ORDER BY c.created_at, c.chat_id
"""


class PostgresStore:
    """Chats on a PostgreSQL server: ``open_store("postgresql://user:password@host:port/database")``.

    ``conninfo`` is anything libpq takes (a ``postgresql://`` URL or ``key=value`` pairs).
    ``durability="process"`` (the default) counts an append done once the server has taken its commit
    (``synchronous_commit=off``: it survives this process being killed); ``"power"`` waits until the
    server has flushed it to disk (``synchronous_commit=on``). With ``create=False`` the tables must
    exist already. ``pool_size`` bounds the connections of each pool.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        durability: Durability | str = Durability.PROCESS,
        create: bool = True,
        url: str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        self.url = url or redact(conninfo)
        self.durability = Durability(durability)
        self.closed = False
        self._conninfo = conninfo
        self._pool_size = pool_size
        self._synchronous_commit = "on" if self.durability is Durability.POWER else "off"
        self._connect_options = self._options(conninfo)
        self._logs: dict[str, PostgresChatLog] = {}
        self._lease_lock = threading.Lock()
        self._threads = ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="parley-store")
        self._lease_connection = self._connect(lease=True)
        try:
            self._prepare(create)
            from psycopg_pool import ConnectionPool

            self._pool = ConnectionPool(
                conninfo,
                min_size=1,
                max_size=pool_size,
                kwargs=self._connect_options,
                configure=self._configure,
                open=True,
                timeout=POOL_TIMEOUT_S,
                name="parley-store",
            )
        except BaseException:
            self._lease_connection.close()
            raise

    # connecting ---------------------------------------------------------------------------------------

    def _options(self, conninfo: str) -> dict[str, Any]:
        try:
            from psycopg.conninfo import conninfo_to_dict
        except ImportError:
            raise StoreUnavailableError(
                f"cannot open the store {self.url}: PostgreSQL stores need psycopg 3 "
                "(pip install 'parley-llm[postgres]')"
            ) from None
        import psycopg

        try:
            given = conninfo_to_dict(conninfo)
        except psycopg.Error as error:
            raise StoreURLError(f"malformed store URL {self.url!r}: {error}") from None
        options: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in given:
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        if "application_name" not in given:
            options["application_name"] = APPLICATION_NAME
        return options

    def _connect(self, *, lease: bool = False) -> psycopg.Connection[Any]:
        import psycopg

        try:
            connection = psycopg.connect(self._conninfo, **self._connect_options)
            self._configure(connection)
            if lease:
                for setting, value in LEASE_KEEPALIVES.items():
                    connection.execute(f"SET {setting} TO {value}")
        except psycopg.Error as error:
            raise StoreUnavailableError(f"cannot reach the store {self.url}: {_cause(error)}") from error
        return connection

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        connection.execute(f"SET synchronous_commit TO {self._synchronous_commit}")

    def _prepare(self, create: bool) -> None:
        """Create the tables on first use (one process at a time); refuse a newer schema."""
        import psycopg

        connection = self._lease_connection
        try:
            with connection.transaction():
                connection.execute("SELECT pg_advisory_xact_lock(%s, %s)", _SETUP_LOCK)
                version = self._schema_version(connection)
                if version is None:
                    if not create:
                        raise StoreUnavailableError(
                            f"cannot open the store {self.url}: it holds no parley chats"
                        )
                    connection.execute(
                        "CREATE TABLE IF NOT EXISTS parley_meta (key text PRIMARY KEY, value text NOT NULL)"
                    )
                    connection.execute(
                        "INSERT INTO parley_meta (key, value) VALUES ('schema_version', %s)",
                        (str(SCHEMA_VERSION),),
                    )
                    version = SCHEMA_VERSION
                if version > SCHEMA_VERSION:
                    raise StoreVersionError(self.url, version, SCHEMA_VERSION)
                if version < SCHEMA_VERSION:  # version 2 changed only SQLite's tables
                    connection.execute(
                        "UPDATE parley_meta SET value = %s WHERE key = 'schema_version'",
                        (str(SCHEMA_VERSION),),
                    )
                if create:
                    for statement in _TABLES:
                        connection.execute(statement)
        except psycopg.Error as error:
            raise StoreUnavailableError(f"cannot open the store {self.url}: {_cause(error)}") from error

    def _schema_version(self, connection: psycopg.Connection[Any]) -> int | None:
        row = connection.execute("SELECT to_regclass('parley_meta') IS NOT NULL").fetchone()
        if row is None or not row[0]:
            return None
        row = connection.execute("SELECT value FROM parley_meta WHERE key = 'schema_version'").fetchone()
        return None if row is None else schema_version(self.url, row[0])

    # the store ----------------------------------------------------------------------------------------

    def open(self, chat_id: str) -> PostgresChatLog:
        """Take the chat's lease and return its log; :class:`ChatInUseError` if a live process has it."""
        check_chat_id(chat_id)
        self._check_open()
        pid, host = this_process()
        with self._lease_lock:
            if chat_id in self._logs or not self._lock(chat_id):
                raise ChatInUseError(chat_id, self._holder(chat_id), self.url)
            try:
                self._lease_query(
                    "INSERT INTO parley_leases (chat_id, pid, host, since, lock_key) "
                    "VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (chat_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, "
                    "since = excluded.since, lock_key = excluded.lock_key RETURNING true",
                    (chat_id, pid, host, datetime.now(UTC), lease_key(chat_id)),
                )
            except BaseException:
                self._unlock(chat_id)
                raise
            log = self._logs[chat_id] = PostgresChatLog(self, chat_id)
            return log

    def load(self, chat_id: str) -> list[StoredRecord]:
        """The chat's records in seq order, without its lease (empty for an unknown chat)."""
        check_chat_id(chat_id)
        rows = self._read(_SELECT_RECORDS, (chat_id,))
        return [StoredRecord(seq, kind, data) for seq, kind, data in rows]

    def list_chats(self) -> list[ChatInfo]:
        """Every chat that has records, oldest first, with the live process running it, if any."""
        chats = []
        for chat_id, created, updated, count, first, last, pid, host, since, alive in self._read(
            _LIST_CHATS, ()
        ):
            holder = Holder(pid, host, since.astimezone(UTC)) if alive else None
            chats.append(
                ChatInfo(
                    chat_id, created.astimezone(UTC), updated.astimezone(UTC), count, first, last, holder
                )
            )
        return chats

    def close(self) -> None:
        """Close the logs still open (releasing their leases), the lease connection and the pools."""
        if self.closed:
            return
        for log in list(self._logs.values()):
            log.close()
        self.closed = True
        with self._lease_lock:
            self._lease_connection.close()
        self._threads.shutdown(wait=True)
        self._pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"

    # appending ----------------------------------------------------------------------------------------

    def _append(self, chat_id: str, records: Sequence[StoredRecord]) -> None:
        import psycopg
        from psycopg_pool import PoolTimeout

        self._check_open()
        try:
            with self._pool.connection() as connection:
                connection.execute(_append_statement(records), _append_parameters(chat_id, records))
        except psycopg.errors.UniqueViolation:
            raise self._conflict(chat_id, records) from None
        except (psycopg.Error, PoolTimeout) as error:
            raise self._append_failed(chat_id, error) from error

    async def _a_append(self, chat_id: str, records: Sequence[StoredRecord]) -> None:
        self._check_open()
        await asyncio.get_running_loop().run_in_executor(self._threads, self._append, chat_id, records)

    def _conflict(self, chat_id: str, records: Sequence[StoredRecord]) -> RecordConflictError:
        stored = {
            seq for (seq,) in self._read("SELECT seq FROM parley_records WHERE chat_id = %s", (chat_id,))
        }
        seq = first_seq_conflict(stored, records)
        return RecordConflictError(chat_id, records[0].seq if seq is None else seq, self.url)

    def _append_failed(self, chat_id: str, error: Exception) -> StoreError:
        import psycopg

        if isinstance(error, psycopg.DataError | psycopg.ProgrammingError):
            return StoreError(f"cannot append to chat {chat_id!r} in {self.url}: {_cause(error)}")
        return StoreUnavailableError(
            f"cannot append to chat {chat_id!r} in {self.url}: {_cause(error)} (if the server took the "
            "commit before the connection failed, the records are stored: loading the chat tells)"
        )

    # leases -------------------------------------------------------------------------------------------

    def _lease_query(self, sql: str, parameters: tuple[Any, ...]) -> Any:
        """Run ``sql`` on the lease connection (under ``_lease_lock``), reconnecting once if it broke.

        A broken connection has lost its locks with it: after reconnecting, the chats still open are
        locked again, and a chat that another process took meanwhile can no longer be appended to.
        """
        import psycopg

        if self._lease_connection.closed or self._lease_connection.broken:
            self._reconnect_leases()
        try:
            row = self._lease_connection.execute(sql, parameters).fetchone()
        except psycopg.OperationalError:
            self._reconnect_leases()
            try:
                row = self._lease_connection.execute(sql, parameters).fetchone()
            except psycopg.Error as error:
                raise StoreUnavailableError(f"cannot reach the store {self.url}: {_cause(error)}") from error
        except psycopg.Error as error:
            raise StoreUnavailableError(f"cannot use the store {self.url}: {_cause(error)}") from error
        return None if row is None else row[0]

    def _lock(self, chat_id: str) -> bool:
        """Take the chat's advisory lock on the lease connection, waiting a moment for a dying holder."""
        import psycopg

        key = lease_key(chat_id)
        if self._lease_query("SELECT pg_try_advisory_lock(%s)", (key,)):
            return True
        connection = self._lease_connection
        try:
            with connection.transaction():
                connection.execute(f"SET LOCAL lock_timeout = '{TAKEOVER_GRACE}'")
                connection.execute("SELECT pg_advisory_lock(%s)", (key,))
        except psycopg.errors.LockNotAvailable:
            return False
        except psycopg.Error as error:
            raise StoreUnavailableError(f"cannot use the store {self.url}: {_cause(error)}") from error
        return True

    def _reconnect_leases(self) -> None:
        self._lease_connection.close()
        self._lease_connection = self._connect(lease=True)
        for chat_id, log in self._logs.items():
            row = self._lease_connection.execute(
                "SELECT pg_try_advisory_lock(%s)", (lease_key(chat_id),)
            ).fetchone()
            if not (row and row[0]):
                log.lost = True

    def _unlock(self, chat_id: str) -> None:
        import psycopg

        with contextlib.suppress(psycopg.Error):  # if the connection is gone, its locks went with it
            self._lease_connection.execute("SELECT pg_advisory_unlock(%s)", (lease_key(chat_id),))

    def _release(self, log: PostgresChatLog) -> None:
        import psycopg

        pid, host = this_process()
        with self._lease_lock:
            if self._logs.get(log.chat_id) is log:
                del self._logs[log.chat_id]
            if log.lost or self._lease_connection.closed:
                return
            with contextlib.suppress(psycopg.Error):  # the record only describes the holder: the lock counts
                self._lease_connection.execute(
                    "DELETE FROM parley_leases WHERE chat_id = %s AND pid = %s AND host = %s",
                    (log.chat_id, pid, host),
                )
            self._unlock(log.chat_id)

    def _holder(self, chat_id: str) -> Holder | None:
        rows = self._read("SELECT pid, host, since FROM parley_leases WHERE chat_id = %s", (chat_id,))
        if not rows:
            return None
        pid, host, since = rows[0]
        return Holder(pid, host, since.astimezone(UTC))

    # reading ------------------------------------------------------------------------------------------

    def _read(self, sql: str, parameters: tuple[Any, ...]) -> list[Any]:
        import psycopg
        from psycopg_pool import PoolTimeout

        self._check_open()
        try:
            with self._pool.connection() as connection:
                return connection.execute(sql, parameters).fetchall()
        except (psycopg.Error, PoolTimeout) as error:
            raise StoreUnavailableError(f"cannot read the store {self.url}: {_cause(error)}") from error

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(f"the store {self.url} is closed")


class PostgresChatLog:
    """One chat in a :class:`PostgresStore`, leased by this process until :meth:`close`."""

    def __init__(self, store: PostgresStore, chat_id: str) -> None:
        self.chat_id = chat_id
        self.store = store
        self.closed = False
        self.lost = False
        """Set when the lease connection broke and another process took the chat meanwhile."""

    def records(self) -> list[StoredRecord]:
        """Everything stored for the chat so far, in seq order."""
        return self.store.load(self.chat_id)

    def append(self, records: Sequence[StoredRecord]) -> None:
        """Store ``records`` in one transaction, durable (as the store's ``durability`` says) on return."""
        self._check_writable()
        if records:
            self.store._append(self.chat_id, records)

    async def a_append(self, records: Sequence[StoredRecord]) -> None:
        """:meth:`append` on a thread of the store's, without blocking the event loop.

        If the awaiting task is cancelled, the append still completes (or fails) on its thread.
        """
        self._check_writable()
        if records:
            await self.store._a_append(self.chat_id, records)

    def close(self) -> None:
        """Release the chat's lease (closing twice is harmless)."""
        if self.closed:
            return
        self.closed = True
        self.store._release(self)

    def _check_writable(self) -> None:
        if self.closed:
            raise StoreError(f"the log of chat {self.chat_id!r} in {self.store.url} is closed")
        if self.lost:
            raise ChatInUseError(self.chat_id, self.store._holder(self.chat_id), self.store.url)

    def __enter__(self) -> PostgresChatLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresChatLog({self.chat_id!r}, {self.store.url!r})"


def _append_statement(records: Sequence[StoredRecord]) -> str:
    """One statement that inserts the records and updates the chat's row: one round trip, atomic."""
    count = len(records)
    statement = _APPEND_SQL.get(count)
    if statement is None:
        rows = ", ".join(["(%s, %s, %s, %s)"] * count)
        statement = f"WITH appended AS (INSERT INTO parley_records (chat_id, seq, kind, data) VALUES {rows})"
        statement += _UPSERT_CHAT
        if count <= 64:
            _APPEND_SQL[count] = statement
    return statement


def _append_parameters(chat_id: str, records: Sequence[StoredRecord]) -> list[Any]:
    parameters: list[Any] = []
    for record in records:
        parameters += (chat_id, record.seq, record.kind, record.data)
    parameters += (chat_id, len(records), records[0].kind, records[-1].kind)
    return parameters


def _cause(error: BaseException) -> str:
    """The first line of a database error, which says what went wrong."""
    text = str(error).strip() or type(error).__name__
    return " ".join(line.strip() for line in text.splitlines() if line.strip())
