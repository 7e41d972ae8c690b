"""Stores to test against: a SQLite file per test, and a PostgreSQL database per test module.

The PostgreSQL server is the one ``./scripts/test`` starts (``PARLEY_TEST_POSTGRES_URL``); each module
gets a fresh database, so its chats are its own, and chat ids are unique per test within it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from parley.store import ChatStore, open_store
from services import postgres_url

from .store_helpers import Child


@pytest.fixture(scope="module")
def postgres_database(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a fresh PostgreSQL database for this test module, dropped after it."""
    import psycopg

    server = postgres_url()
    name = f"parley_{Path(request.path).stem}_{uuid.uuid4().hex[:8]}".lower()
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(server)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))
    yield url
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL of each kind: a new SQLite file, or this module's PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/chats.db"
    return request.getfixturevalue("postgres_database")


@pytest.fixture
def store(store_url: str) -> Iterator[ChatStore]:
    """The store at ``store_url``, closed after the test."""
    opened = open_store(store_url)
    yield opened
    opened.close()


@pytest.fixture
def chat_id(request: pytest.FixtureRequest) -> str:
    """A chat id of this test's own."""
    return f"{request.node.name}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def child() -> Iterator[Callable[..., Child]]:
    """Start child processes; any still running at the end of the test is killed."""
    started: list[Child] = []

    def start(code: str, *args: str) -> Child:
        started.append(Child(code, *args))
        return started[-1]

    yield start
    for process in started:
        if process.process.poll() is None:
            process.kill()
