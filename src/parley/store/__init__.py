"""Chat stores: where durable chats keep their records."""

from parley.store.base import ChatLog, ChatStore, StoredRecord
from parley.store.errors import ChatInUseError, RecordConflictError, StoreError
from parley.store.memory import MemoryStore
from parley.store.urls import open_store

__all__ = [
    "ChatInUseError",
    "ChatLog",
    "ChatStore",
    "MemoryStore",
    "RecordConflictError",
    "StoreError",
    "StoredRecord",
    "open_store",
]
