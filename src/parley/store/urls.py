"""Stores named by URL."""

from __future__ import annotations

from parley.store.base import ChatStore
from parley.store.errors import StoreError


def open_store(store: str | ChatStore) -> ChatStore:
    """A store object as it is, or the store a URL names."""
    if not isinstance(store, str):
        return store
    raise StoreError(f"no store for the URL {store!r}")
