"""Helpers of the durable-chat tests."""

from __future__ import annotations

from parley.store import MemoryStore, StoredRecord


def cut(records: list[StoredRecord], length: int, chat_id: str) -> MemoryStore:
    """A store holding the first ``length`` records of a chat, as a crash would have left it."""
    store = MemoryStore()
    log = store.open(chat_id)
    log.append(records[:length])
    log.close()
    return store
