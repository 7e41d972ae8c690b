"""What can go wrong with a chat store: each error names what was wrong, and nothing stored is lost."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


class StoreError(Exception):
    """Base class of every chat-store error."""


class StoreURLError(StoreError, ValueError):
    """A store URL that parley cannot use: it names the URL and the forms that are accepted."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached, opened or read: it names the store (password redacted) and why."""


@dataclass(frozen=True, slots=True)
class Holder:
    """The process that holds a chat's lease: its pid, its host, and since when it has held it."""

    pid: int
    host: str
    since: datetime

    def __str__(self) -> str:
        since = self.since.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"process {self.pid} on host {self.host} (since {since})"


class ChatInUseError(StoreError):
    """Another live process (or another open log in this one) holds the chat: nothing was written."""

    def __init__(self, chat_id: str, holder: Holder | None, store_url: str) -> None:
        self.chat_id = chat_id
        self.holder = holder
        self.store_url = store_url
        who = str(holder) if holder is not None else "another process"
        super().__init__(
            f"chat {chat_id!r} in {store_url} is in use by {who}: it can be opened once that process "
            "closes it or ends"
        )


class StoreVersionError(StoreError):
    """The store was written by a newer schema version than this parley reads."""

    def __init__(self, store_url: str, found: int, supported: int) -> None:
        self.store_url = store_url
        self.found = found
        self.supported = supported
        super().__init__(
            f"{store_url} has store schema version {found}, newer than version {supported} that this "
            "parley reads: upgrade parley to use this store (nothing was changed)"
        )


class RecordConflictError(StoreError):
    """A record with that seq is already stored: someone else wrote the chat; nothing was overwritten."""

    def __init__(self, chat_id: str, seq: int, store_url: str, detail: str = "") -> None:
        self.chat_id = chat_id
        self.seq = seq
        self.store_url = store_url
        super().__init__(
            detail
            or f"chat {chat_id!r} in {store_url} already has a record with seq {seq}: someone else wrote "
            "this chat; nothing was overwritten and none of the records of this append were stored"
        )


def schema_version(store_url: str, value: object) -> int:
    """The schema version a store's ``parley_meta`` table records, which must be a whole number.

    Raises:
        StoreUnavailableError: it is not one (the table was changed by hand, or is another program's).
    """
    try:
        return int(str(value))
    except ValueError:
        raise StoreUnavailableError(
            f"cannot open the store {store_url}: its schema version is {value!r}, not a number "
            "(parley_meta was not written by parley)"
        ) from None
