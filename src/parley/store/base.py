"""What a chat store keeps and the protocols the engine writes through.

A store keeps records, never agents: each chat is an append-only sequence of :class:`StoredRecord`,
one row per record, written before ``append`` returns. The engine encodes and decodes the records'
JSON; the store only keeps them in order and guards the chat with a lease.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from parley.store.errors import Holder

SCHEMA_VERSION = 2
"""The version of the tables this parley writes; a store written by a newer one is refused, and one
written by an older one is brought up to date when it is opened."""


class Durability(StrEnum):
    """What a record survives once ``append`` has returned."""

    PROCESS = "process"
    """The process being killed (SQLite WAL with ``synchronous=NORMAL``; a PostgreSQL commit the server
    has taken, ``synchronous_commit=off``). The default."""
    POWER = "power"
    """A power cut or an operating-system crash as well: an fsync per append (SQLite
    ``synchronous=FULL``; PostgreSQL ``synchronous_commit=on``). Costs milliseconds per append."""


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One record of a chat as stored."""

    seq: int
    """0, 1, 2... within a chat, assigned by the engine."""
    kind: str
    """``chat_started``, ``message``, ``tool_result``, ``human_input``, ``context``, ``turn``, ``stopped``,
    ``result``..."""
    data: str
    """The record as JSON text (an object that includes ``kind``)."""


@dataclass(frozen=True, slots=True)
class ChatInfo:
    """A stored chat, as :meth:`ChatStore.list_chats` describes it."""

    chat_id: str
    created_at: datetime
    """When its first record was stored (UTC)."""
    updated_at: datetime
    """When its last record was stored (UTC)."""
    record_count: int
    first_kind: str
    last_kind: str
    holder: Holder | None = None
    """The live process running the chat now, if any."""

    @property
    def finished(self) -> bool:
        """Whether the chat ended with its result recorded."""
        return self.last_kind == "result"


@runtime_checkable
class ChatLog(Protocol):
    """One chat, leased by this process until :meth:`close`: nobody else writes it meanwhile."""

    chat_id: str

    def records(self) -> list[StoredRecord]:
        """Everything stored for the chat so far, in seq order.

        A log may also have ``texts() -> list[str]``: the ``data`` of the same records and no more, which
        is all a resumed chat reads (see :func:`record_texts`).
        """
        ...

    def append(self, records: Sequence[StoredRecord]) -> None:
        """Store ``records`` in one transaction; they are durable when this returns.

        Raises :class:`~parley.store.errors.RecordConflictError` if a record with one of their seqs is
        already stored (then none of them is).
        """
        ...

    async def a_append(self, records: Sequence[StoredRecord]) -> None:
        """Async twin of :meth:`append`, which does not block the event loop on a database server."""
        ...

    def close(self) -> None:
        """Release the chat's lease (closing twice is harmless)."""
        ...


@runtime_checkable
class ChatStore(Protocol):
    """Where chats are kept: ``SQLiteStore`` (embedded) or ``PostgresStore``."""

    url: str
    """The store's URL, with any password redacted."""

    def open(self, chat_id: str) -> ChatLog:
        """Take the chat's lease and return its log.

        Raises :class:`~parley.store.errors.ChatInUseError` if a live process holds it; the lease of a
        process that died is taken over at once.
        """
        ...

    def load(self, chat_id: str) -> list[StoredRecord]:
        """A chat's records in seq order, read-only and without its lease (empty for an unknown chat)."""
        ...

    def list_chats(self) -> list[ChatInfo]:
        """Every chat that has records, oldest first."""
        ...

    def close(self) -> None:
        """Close every log still open (releasing their leases) and the connections."""
        ...


def record_texts(log: ChatLog) -> list[str]:
    """The JSON text of a chat's records, in seq order: what replaying the chat reads. Read with the log's
    ``texts()`` if it has one, else taken from its :meth:`~ChatLog.records`."""
    texts = getattr(log, "texts", None)
    if texts is not None:
        found: list[str] = texts()
        return found
    return [record.data for record in log.records()]


def check_chat_id(chat_id: object) -> str:
    """``chat_id`` if it is text a person can read back and type (not empty, no control characters, no
    spaces around it, which would make ``"t1"`` and ``"t1 "`` two chats that read alike), else a
    ``ValueError`` saying what it was."""
    if not isinstance(chat_id, str) or not chat_id.strip() or not chat_id.isprintable():
        raise ValueError(
            f"a chat_id must be a non-empty string of printable characters, not only spaces; not {chat_id!r}"
        )
    if chat_id != chat_id.strip():
        raise ValueError(f"a chat_id must not begin or end with spaces: {chat_id!r}")
    return chat_id


def lease_key(chat_id: str) -> int:
    """A 63-bit number standing for the chat in lock tables (non-negative, so it fits a signed int64)."""
    digest = hashlib.blake2b(chat_id.encode("utf-8"), digest_size=8, person=b"parley-lease").digest()
    return int.from_bytes(digest, "big") >> 1


def this_process() -> tuple[int, str]:
    """The pid and host name recorded for the leases this process takes."""
    import socket

    return os.getpid(), socket.gethostname()


def first_seq_conflict(stored: set[int], records: Sequence[StoredRecord]) -> int | None:
    """The first seq of ``records`` that is already stored or repeated within them."""
    seen: set[int] = set()
    for record in records:
        if record.seq in stored or record.seq in seen:
            return record.seq
        seen.add(record.seq)
    return None
