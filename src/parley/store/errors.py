"""The errors of chat stores."""

from __future__ import annotations


class StoreError(Exception):
    """A chat store could not do what was asked."""


class ChatInUseError(StoreError):
    """Another live process (or another chat of this one) is running the chat."""


class RecordConflictError(StoreError):
    """A record with that position is stored already: someone else wrote the chat."""
