"""Durable chats: stores that keep each chat as an append-only sequence of records.

``open_store("sqlite:///chats.db")`` (embedded, the default) or ``open_store("postgresql://...")``
returns a :class:`ChatStore` (``memory://`` one that lives as long as the process); ``store.open(chat_id)``
leases one chat and returns its :class:`ChatLog`.
The store classes are imported on first use, so that importing this package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.store.base import SCHEMA_VERSION, ChatInfo, ChatLog, ChatStore, Durability, StoredRecord
from parley.store.errors import (
    ChatInUseError,
    Holder,
    RecordConflictError,
    StoreError,
    StoreUnavailableError,
    StoreURLError,
    StoreVersionError,
)
from parley.store.transcript import ChatTranscript, ContextChange, read_transcript
from parley.store.urls import StoreURL, open_store, parse_store_url, redact, store_from_url

if TYPE_CHECKING:
    from parley.store.memory import MemoryChatLog, MemoryStore
    from parley.store.postgres import PostgresChatLog, PostgresStore
    from parley.store.sqlite import SQLiteChatLog, SQLiteStore

_LAZY = {
    "SQLiteStore": "parley.store.sqlite",
    "SQLiteChatLog": "parley.store.sqlite",
    "MemoryStore": "parley.store.memory",
    "MemoryChatLog": "parley.store.memory",
    "PostgresStore": "parley.store.postgres",
    "PostgresChatLog": "parley.store.postgres",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'parley.store' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "SCHEMA_VERSION",
    "ChatInUseError",
    "ChatInfo",
    "ChatLog",
    "ChatStore",
    "ChatTranscript",
    "ContextChange",
    "Durability",
    "Holder",
    "MemoryChatLog",
    "MemoryStore",
    "PostgresChatLog",
    "PostgresStore",
    "RecordConflictError",
    "SQLiteChatLog",
    "SQLiteStore",
    "StoreError",
    "StoreURL",
    "StoreURLError",
    "StoreUnavailableError",
    "StoreVersionError",
    "StoredRecord",
    "open_store",
    "parse_store_url",
    "read_transcript",
    "redact",
    "store_from_url",
]
