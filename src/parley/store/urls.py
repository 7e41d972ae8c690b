"""Store URLs: ``sqlite:///path`` and ``postgresql://...``, parsed, redacted, and opened once per process."""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlencode, urlsplit

from parley.store.base import ChatStore, Durability
from parley.store.errors import StoreUnavailableError, StoreURLError

ACCEPTED_FORMS = (
    "sqlite:///relative/path.db, sqlite:////absolute/path.db, or "
    "postgresql://user:password@host:port/database, either ending with ?durability=power if need be; "
    "or memory:// (kept in this process only)"
)
SQLITE_SCHEMES = ("sqlite",)
POSTGRES_SCHEMES = ("postgresql", "postgres")
DURABILITY_PARAMETER = "durability"


@dataclass(frozen=True, slots=True)
class StoreURL:
    """A parsed store URL."""

    scheme: str
    """``sqlite``, ``postgresql`` or ``memory``."""
    target: str
    """SQLite: the database file's path; PostgreSQL: the connection URL for libpq, without parley's own
    parameters; memory: the store's name."""
    durability: Durability
    redacted: str
    """The URL as given, with any password replaced by ``***``."""


def parse_store_url(url: str) -> StoreURL:
    """Parse a store URL, or raise :class:`StoreURLError` naming it and the accepted forms."""
    if not isinstance(url, str):
        raise TypeError(f"a store is a URL string or a ChatStore, not {type(url).__name__}")
    redacted = redact(url)
    try:
        parts = urlsplit(url.strip())
        query = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError as error:
        raise _malformed(redacted, str(error)) from None
    scheme = parts.scheme.lower()
    known = scheme in SQLITE_SCHEMES or scheme in POSTGRES_SCHEMES or scheme == "memory"
    if known and not url.strip()[len(scheme) + 1 :].startswith("//"):
        raise _malformed(redacted, f"'{parts.scheme}:' is not followed by '//'")
    durability = _durability(redacted, query)
    if scheme in SQLITE_SCHEMES:
        return _sqlite(redacted, parts.netloc, parts.path, query, durability)
    if scheme in POSTGRES_SCHEMES:
        return _postgres(redacted, parts, query, durability)
    if scheme == "memory":
        if parts.path or query:
            raise _malformed(redacted, "a memory store has a name at most (memory://NAME)")
        return StoreURL("memory", parts.netloc, durability, redacted)
    why = f"unknown scheme {parts.scheme!r}" if parts.scheme else "it has no scheme"
    raise _malformed(redacted, why)


def redact(url: str) -> str:
    """``url`` with the password (in the authority or a ``password=`` parameter) replaced by ``***``."""
    redacted = url
    scheme, separator, rest = url.partition("://")
    if separator:
        authority, slash, tail = rest.partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and ":" in userinfo:
            authority = f"{userinfo.split(':', 1)[0]}:***@{host}"
        redacted = f"{scheme}://{authority}{slash}{tail}"
    return re.sub(r"(?i)([?&]password=)[^&#]*", r"\1***", redacted)


def _malformed(redacted: str, why: str) -> StoreURLError:
    return StoreURLError(f"malformed store URL {redacted!r}: {why}; the accepted forms are {ACCEPTED_FORMS}")


def _durability(redacted: str, query: list[tuple[str, str]]) -> Durability:
    values = [value for key, value in query if key == DURABILITY_PARAMETER]
    if not values:
        return Durability.PROCESS
    if len(values) > 1 or values[0] not in {d.value for d in Durability}:
        choices = " or ".join(repr(d.value) for d in Durability)
        raise _malformed(redacted, f"durability must be {choices}, not {', '.join(map(repr, values))}")
    return Durability(values[0])


def _sqlite(
    redacted: str, netloc: str, path: str, query: list[tuple[str, str]], durability: Durability
) -> StoreURL:
    if netloc:
        raise _malformed(redacted, f"a SQLite URL has no host ({netloc!r}): use three slashes")
    unknown = sorted({key for key, _ in query if key != DURABILITY_PARAMETER})
    if unknown:
        raise _malformed(redacted, f"unknown parameter {', '.join(map(repr, unknown))} for SQLite")
    file = unquote(path[1:]) if path.startswith("/") else ""
    if not file or file.endswith("/"):
        raise _malformed(redacted, "it names no database file")
    if file == ":memory:" or file.startswith("file:"):
        raise _malformed(redacted, "a durable store is a file: name its path")
    return StoreURL("sqlite", os.path.expanduser(file), durability, redacted)


def _postgres(
    redacted: str, parts: SplitResult, query: list[tuple[str, str]], durability: Durability
) -> StoreURL:
    try:
        parts.port  # noqa: B018 (urlsplit checks the port only when asked)
    except ValueError as error:
        raise _malformed(redacted, str(error)) from None
    rest = [(key, value) for key, value in query if key != DURABILITY_PARAMETER]
    query_text = urlencode(rest, quote_via=quote)
    target = f"postgresql://{parts.netloc}{parts.path}" + (f"?{query_text}" if query_text else "")
    return StoreURL("postgresql", target, durability, redacted)


_stores: dict[tuple[str, str, Durability], ChatStore] = {}
_stores_lock = threading.Lock()


def open_store(store: str | ChatStore, *, create: bool = True) -> ChatStore:
    """The store for ``store``: a store object as it is, or a URL's store, one per URL per process.

    ``sqlite:///path/chats.db`` is the embedded store (the file and its tables are created on first use);
    ``postgresql://user:password@host:port/database`` keeps chats on a PostgreSQL server. Add
    ``?durability=power`` for records that survive a power cut (an fsync per append), rather than only
    the process being killed. ``memory://`` keeps them in this process only (tests, one-off runs). With
    ``create=False`` the store must exist already (for readers).

    Raises :class:`StoreURLError` for a malformed URL, :class:`StoreUnavailableError` when the database
    cannot be reached or opened, and :class:`StoreVersionError` for a store written by a newer parley.
    """
    if not isinstance(store, str):
        if isinstance(store, ChatStore):
            return store
        raise TypeError(f"a store is a URL string or a ChatStore, not {type(store).__name__}")
    parsed = parse_store_url(store)
    target = os.path.realpath(parsed.target) if parsed.scheme == "sqlite" else parsed.target
    key = (parsed.scheme, target, parsed.durability)
    with _stores_lock:
        existing = _stores.get(key)
        if existing is not None and not getattr(existing, "closed", False):
            return existing
        opened = _open(parsed, create=create)
        _stores[key] = opened
        return opened


def store_from_url(url: str, *, create: bool = True) -> ChatStore:
    """A new store of its own for ``url``, apart from the one :func:`open_store` shares: close it when done.

    For a reader (such as ``parley chats``) that must not close, or keep open, a store others in the
    process may share. Raises what :func:`open_store` raises, and :class:`StoreUnavailableError` for
    ``memory://`` with ``create=False``: a new memory store holds nothing to read.
    """
    parsed = parse_store_url(url)
    if parsed.scheme == "memory" and not create:
        raise StoreUnavailableError(
            f"cannot read {parsed.redacted}: a memory store keeps its chats inside the process that runs "
            "them, where no other reader sees them. Keep the chats in sqlite:///path/chats.db to read them"
        )
    return _open(parsed, create=create)


def _open(parsed: StoreURL, *, create: bool) -> ChatStore:
    if parsed.scheme == "memory":
        from parley.store.memory import MemoryStore

        return MemoryStore(parsed.redacted)
    if parsed.scheme == "sqlite":
        from parley.store.sqlite import SQLiteStore

        return SQLiteStore(parsed.target, durability=parsed.durability, create=create, url=parsed.redacted)
    from parley.store.postgres import PostgresStore

    return PostgresStore(parsed.target, durability=parsed.durability, create=create, url=parsed.redacted)
