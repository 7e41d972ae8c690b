"""Model responses cached on disk by request, as AG2's ``cache_seed`` and ``Cache`` ask.

Each seed has its own SQLite file, ``<cache_path_root>/<seed>/parley.sqlite`` (``.cache/41/...`` by
default, the directory AG2 uses). A request's key is a hash of everything that decides the answer: the
model and endpoint, the messages, the tools and the request parameters; never the API key.

A :class:`Cache` made active (``with Cache.disk(...):``, or :func:`using_cache` around a chat) answers
every request of a config list from its own seed, before and instead of any ``cache_seed``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TYPE_CHECKING, Any

from parley.messages import Message
from parley.models.base import ModelResponse, Usage

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_CACHE_ROOT = ".cache"
CACHE_FILE = "parley.sqlite"


class ResponseCache:
    """A disk cache of model responses for one ``cache_seed``; safe across threads and processes."""

    def __init__(self, seed: int | str, root: str | Path = DEFAULT_CACHE_ROOT) -> None:
        from pathlib import Path  # imported on use: most chats never cache

        self.seed = seed
        self.path = Path(root) / str(seed) / CACHE_FILE

    def get(self, key: str) -> ModelResponse | None:
        """The response cached under ``key`` (marked ``cached``), or ``None``."""
        if not self.path.exists():
            return None
        with self._connect() as connection:
            row = connection.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else _decode(row[0])

    def set(self, key: str, response: ModelResponse) -> None:
        """Cache ``response`` under ``key``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO responses (key, response, created) VALUES (?, ?, ?)",
                (key, _encode(response), time.time()),
            )

    def count(self) -> int:
        """How many responses are cached."""
        if not self.path.exists():
            return 0
        with self._connect() as connection:
            count: int = connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        return count

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        import sqlite3

        with closing(sqlite3.connect(self.path, timeout=30)) as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS responses "
                "(key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL)"
            )
            with connection:
                yield connection


def request_key(
    identity: dict[str, Any],
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]] | None,
    params: dict[str, Any],
) -> str:
    """The cache key of one request to the model ``identity`` describes."""
    request = {"model": identity, "messages": list(messages), "tools": list(tools or ()), "params": params}
    encoded = json.dumps(request, sort_keys=True, ensure_ascii=False, default=_jsonable)
    import hashlib

    return hashlib.sha256(encoded.encode()).hexdigest()


def _jsonable(value: Any) -> Any:
    schema = getattr(value, "model_json_schema", None)
    if callable(schema):
        return schema()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    return repr(value)


def _encode(response: ModelResponse) -> str:
    return json.dumps(
        {
            "message": response.message,
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "cost": response.cost,
            "model": response.model,
        },
        ensure_ascii=False,
    )


def _decode(text: str) -> ModelResponse:
    data = json.loads(text)
    return ModelResponse(
        data["message"],
        Usage(data["prompt_tokens"], data["completion_tokens"]),
        cost=data["cost"],
        model=data["model"],
        cached=True,
    )


class Cache:
    """AG2's ``Cache``: a response cache to use for every model call of a chat, whatever its ``cache_seed``.

    ``Cache.disk(cache_seed=..., cache_path_root=...)`` keeps responses on disk (in the same files as
    ``cache_seed``). Use it as a context manager, which makes it the cache of every chat run inside the
    block, or pass it to ``initiate_chat(cache=...)``. ``get`` and ``set`` read and write model responses
    (:class:`~parley.models.base.ModelResponse`) by request key.
    """

    ALLOWED_CONFIG_KEYS = ("cache_seed", "redis_url", "cache_path_root", "cosmos_db_config")

    def __init__(self, config: dict[str, Any]) -> None:
        if not isinstance(config, dict):
            raise TypeError(
                f"Cache takes a dict of {list(self.ALLOWED_CONFIG_KEYS)}, not {type(config).__name__}"
            )
        unknown = sorted(str(key) for key in config if key not in self.ALLOWED_CONFIG_KEYS)
        if unknown:
            raise ValueError(
                f"unknown Cache config keys {unknown}; the keys are {list(self.ALLOWED_CONFIG_KEYS)}"
            )
        remote = [key for key in ("redis_url", "cosmos_db_config") if config.get(key)]
        if remote:
            raise ValueError(
                f"parley keeps its response cache on disk and does not support {remote}: use Cache.disk(...)"
            )
        self.config: dict[str, Any] = {
            "cache_seed": str(config.get("cache_seed", 42)),
            "cache_path_root": str(config.get("cache_path_root") or DEFAULT_CACHE_ROOT),
        }
        self.cache = ResponseCache(self.config["cache_seed"], self.config["cache_path_root"])
        self._tokens: list[Token[Cache | None]] = []

    @staticmethod
    def disk(cache_seed: str | int = 42, cache_path_root: str = DEFAULT_CACHE_ROOT) -> Cache:
        """A cache on disk under ``<cache_path_root>/<cache_seed>``."""
        return Cache({"cache_seed": cache_seed, "cache_path_root": cache_path_root})

    @staticmethod
    def redis(cache_seed: str | int = 42, redis_url: str = "redis://localhost:6379/0") -> Cache:
        """Not supported: parley caches on disk (the error says so)."""
        return Cache({"cache_seed": cache_seed, "redis_url": redis_url})

    @classmethod
    def get_current_cache(cls, cache: Cache | None = None) -> Cache | None:
        """``cache`` if given, else the cache active in this context, if any."""
        return cache if cache is not None else active_cache.get()

    def get(self, key: str, default: Any = None) -> Any:
        """The response cached under ``key``, or ``default``."""
        found = self.cache.get(key)
        return default if found is None else found

    def set(self, key: str, value: ModelResponse) -> None:
        """Cache a model response under ``key``."""
        if not isinstance(value, ModelResponse):
            raise TypeError(f"a Cache holds model responses (ModelResponse), not {type(value).__name__}")
        self.cache.set(key, value)

    def close(self) -> None:
        """Nothing to release: each read and write opens and closes its own connection."""

    def __enter__(self) -> Cache:
        self._tokens.append(active_cache.set(self))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        active_cache.reset(self._tokens.pop())

    def __repr__(self) -> str:
        seed, root = self.config["cache_seed"], self.config["cache_path_root"]
        return f"Cache.disk(cache_seed={seed!r}, cache_path_root={root!r})"


active_cache: ContextVar[Cache | None] = ContextVar("parley_active_cache", default=None)
"""The cache every model call in this context uses before any ``cache_seed``, or ``None``."""


def using_cache(cache: Cache | None) -> AbstractContextManager[Cache | None]:
    """A context manager making ``cache`` the active cache for the duration of the block (``None``
    changes nothing)."""
    if cache is None:
        return nullcontext(active_cache.get())
    if not isinstance(cache, Cache):
        raise TypeError(f"cache must be a parley Cache (such as Cache.disk(...)), not {type(cache).__name__}")
    return _active(cache)


@contextmanager
def _active(cache: Cache) -> Iterator[Cache | None]:
    token = active_cache.set(cache)
    try:
        yield cache
    finally:
        active_cache.reset(token)
