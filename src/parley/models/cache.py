"""Model responses cached on disk by request, as AG2's ``cache_seed`` asks.

Each seed has its own SQLite file, ``<cache_path_root>/<seed>/parley.sqlite`` (``.cache/41/...`` by
default, the directory AG2 uses). A request's key is a hash of everything that decides the answer: the
model and endpoint, the messages, the tools and the request parameters; never the API key.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from parley.messages import Message
from parley.models.base import ModelResponse, Usage

DEFAULT_CACHE_ROOT = ".cache"
CACHE_FILE = "parley.sqlite"


class ResponseCache:
    """A disk cache of model responses for one ``cache_seed``; safe across threads and processes."""

    def __init__(self, seed: int | str, root: str | Path = DEFAULT_CACHE_ROOT) -> None:
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
