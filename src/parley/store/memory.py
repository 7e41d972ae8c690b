"""A store in this process's memory: durable only as long as the process lives (tests, one-off runs)."""

from __future__ import annotations

from collections.abc import Sequence

from parley.store.base import StoredRecord
from parley.store.errors import ChatInUseError, RecordConflictError


class MemoryStore:
    """Keeps each chat's records in a list; one open log per chat at a time."""

    url = "memory://"

    def __init__(self) -> None:
        self._chats: dict[str, list[StoredRecord]] = {}
        self._open: set[str] = set()

    def open(self, chat_id: str) -> MemoryLog:
        if chat_id in self._open:
            raise ChatInUseError(f"chat {chat_id!r} is already running in this process")
        self._open.add(chat_id)
        return MemoryLog(self, chat_id)

    def load(self, chat_id: str) -> list[StoredRecord]:
        return list(self._chats.get(chat_id, ()))

    def chat_ids(self) -> list[str]:
        """The ids of the chats stored."""
        return list(self._chats)

    def close(self) -> None:
        pass


class MemoryLog:
    """One chat of a :class:`MemoryStore`."""

    def __init__(self, store: MemoryStore, chat_id: str) -> None:
        self.store = store
        self.chat_id = chat_id
        self._closed = False

    def records(self) -> list[StoredRecord]:
        return self.store.load(self.chat_id)

    def append(self, records: Sequence[StoredRecord]) -> None:
        stored = self.store._chats.setdefault(self.chat_id, [])
        for record in records:
            if record.seq != len(stored):
                raise RecordConflictError(
                    f"chat {self.chat_id!r} has {len(stored)} records; cannot store record {record.seq}"
                )
            stored.append(record)

    async def a_append(self, records: Sequence[StoredRecord]) -> None:
        self.append(records)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.store._open.discard(self.chat_id)
