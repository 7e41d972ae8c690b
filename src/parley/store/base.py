"""What a chat store is: append-only records per chat, and a lease that lets one process write a chat."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One record of a chat: its position, its kind, and the record itself as JSON text."""

    seq: int
    kind: str
    data: str


class ChatLog(Protocol):
    """One chat's records, leased by this process until :meth:`close`."""

    chat_id: str

    def records(self) -> list[StoredRecord]:
        """Everything stored so far, in ``seq`` order."""
        ...

    def append(self, records: Sequence[StoredRecord]) -> None:
        """Store ``records`` in one transaction, durably before returning."""
        ...

    async def a_append(self, records: Sequence[StoredRecord]) -> None:
        """Async twin of :meth:`append`."""
        ...

    def close(self) -> None:
        """Release the lease (idempotent)."""
        ...


class ChatStore(Protocol):
    """Where chats are kept."""

    url: str

    def open(self, chat_id: str) -> ChatLog:
        """Take the chat's lease and return its log."""
        ...

    def load(self, chat_id: str) -> list[StoredRecord]:
        """A chat's records, read-only."""
        ...

    def close(self) -> None: ...
