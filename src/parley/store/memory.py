"""A store in this process's memory (``memory://``): it keeps chats only as long as the process lives.

For tests and one-off runs: it behaves as the durable stores do (leases within the process, conflicts,
listing), without a file or a server.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType

from parley.store.base import ChatInfo, StoredRecord, check_chat_id, first_seq_conflict, this_process
from parley.store.errors import ChatInUseError, Holder, RecordConflictError, StoreError


@dataclass
class _Chat:
    records: list[StoredRecord] = field(default_factory=list)
    seqs: set[int] = field(default_factory=set)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class MemoryStore:
    """Chats kept in memory: ``open_store("memory://")`` (one per process) or ``MemoryStore()``."""

    def __init__(self, url: str = "memory://") -> None:
        self.url = url
        self.closed = False
        self._chats: dict[str, _Chat] = {}
        self._holders: dict[str, Holder] = {}
        self._logs: dict[str, MemoryChatLog] = {}
        self._lock = threading.Lock()

    def open(self, chat_id: str) -> MemoryChatLog:
        """Take the chat's lease (within this process) and return its log."""
        check_chat_id(chat_id)
        with self._lock:
            self._check_open()
            if chat_id in self._holders:
                raise ChatInUseError(chat_id, self._holders[chat_id], self.url)
            pid, host = this_process()
            self._holders[chat_id] = Holder(pid, host, datetime.now(UTC))
            log = self._logs[chat_id] = MemoryChatLog(self, chat_id)
            return log

    def load(self, chat_id: str) -> list[StoredRecord]:
        """The chat's records in seq order (empty for an unknown chat)."""
        check_chat_id(chat_id)
        with self._lock:
            self._check_open()
            chat = self._chats.get(chat_id)
            return sorted(chat.records, key=_seq) if chat else []

    def list_chats(self) -> list[ChatInfo]:
        """Every chat that has records, oldest first."""
        with self._lock:
            self._check_open()
            chats = []
            for chat_id, chat in self._chats.items():
                assert chat.created_at is not None and chat.updated_at is not None
                ordered = sorted(chat.records, key=_seq)
                chats.append(
                    ChatInfo(
                        chat_id,
                        chat.created_at,
                        chat.updated_at,
                        len(ordered),
                        chat.records[0].kind,
                        ordered[-1].kind,
                        self._holders.get(chat_id),
                    )
                )
            return chats

    def chat_ids(self) -> list[str]:
        """The ids of the chats that have records, oldest first."""
        with self._lock:
            return list(self._chats)

    def close(self) -> None:
        """Close the logs still open; the chats stay readable until the store object goes."""
        for log in list(self._logs.values()):
            log.close()
        self.closed = True

    def _append(self, chat_id: str, records: Sequence[StoredRecord]) -> None:
        with self._lock:
            self._check_open()
            chat = self._chats.get(chat_id) or _Chat()
            conflict = first_seq_conflict(chat.seqs, records)
            if conflict is not None:
                raise RecordConflictError(chat_id, conflict, self.url)
            now = datetime.now(UTC)
            chat.created_at = chat.created_at or now
            chat.updated_at = now
            chat.records.extend(records)
            chat.seqs.update(record.seq for record in records)
            self._chats[chat_id] = chat

    def _release(self, log: MemoryChatLog) -> None:
        with self._lock:
            if self._logs.get(log.chat_id) is log:
                del self._logs[log.chat_id]
                self._holders.pop(log.chat_id, None)

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError(f"the store {self.url} is closed")

    def __repr__(self) -> str:
        return f"MemoryStore({self.url!r})"


class MemoryChatLog:
    """One chat in a :class:`MemoryStore`, leased until :meth:`close`."""

    def __init__(self, store: MemoryStore, chat_id: str) -> None:
        self.chat_id = chat_id
        self.store = store
        self.closed = False

    def records(self) -> list[StoredRecord]:
        """Everything stored for the chat so far, in seq order."""
        return self.store.load(self.chat_id)

    def append(self, records: Sequence[StoredRecord]) -> None:
        """Keep ``records``, all or none."""
        if self.closed:
            raise StoreError(f"the log of chat {self.chat_id!r} in {self.store.url} is closed")
        if records:
            self.store._append(self.chat_id, records)

    async def a_append(self, records: Sequence[StoredRecord]) -> None:
        """:meth:`append`."""
        self.append(records)

    def close(self) -> None:
        """Release the chat's lease (closing twice is harmless)."""
        if not self.closed:
            self.closed = True
            self.store._release(self)

    def __enter__(self) -> MemoryChatLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _seq(record: StoredRecord) -> int:
    return record.seq
