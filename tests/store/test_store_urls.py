"""Store URLs: the accepted forms, durability, redaction, and a clear error for anything else."""

from __future__ import annotations

import pytest

from parley.store import Durability, StoreURLError, open_store, parse_store_url, redact


@pytest.mark.parametrize(
    ("url", "scheme", "target", "durability"),
    [
        ("sqlite:///chats.db", "sqlite", "chats.db", Durability.PROCESS),
        ("sqlite:///data/chats.db", "sqlite", "data/chats.db", Durability.PROCESS),
        ("sqlite:////var/lib/app/chats.db", "sqlite", "/var/lib/app/chats.db", Durability.PROCESS),
        ("sqlite:////tmp/my%20chats.db?durability=power", "sqlite", "/tmp/my chats.db", Durability.POWER),
        ("sqlite:///chats.db?durability=process", "sqlite", "chats.db", Durability.PROCESS),
        (
            "postgresql://app:pw@db.internal:5433/chats",
            "postgresql",
            "postgresql://app:pw@db.internal:5433/chats",
            Durability.PROCESS,
        ),
        (
            "postgres://app@db/chats?sslmode=require&durability=power&connect_timeout=3",
            "postgresql",
            "postgresql://app@db/chats?sslmode=require&connect_timeout=3",
            Durability.POWER,
        ),
        ("postgresql:///chats", "postgresql", "postgresql:///chats", Durability.PROCESS),
        ("memory://", "memory", "", Durability.PROCESS),
        ("memory://tests", "memory", "tests", Durability.PROCESS),
    ],
)
def test_accepted_forms(url: str, scheme: str, target: str, durability: Durability):
    parsed = parse_store_url(url)

    assert (parsed.scheme, parsed.target, parsed.durability) == (scheme, target, durability)


def test_a_home_directory_path_is_expanded(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")

    assert parse_store_url("sqlite:///~/chats.db").target == "/home/someone/chats.db"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("chats.db", "it has no scheme"),
        ("mysql://localhost/chats", "unknown scheme 'mysql'"),
        ("sqlite://chats.db", "a SQLite URL has no host ('chats.db'): use three slashes"),
        ("sqlite:/data/chats.db", "'sqlite:' is not followed by '//'"),
        ("sqlite:chats.db", "'sqlite:' is not followed by '//'"),
        ("postgresql:/db", "'postgresql:' is not followed by '//'"),
        ("memory:chats", "'memory:' is not followed by '//'"),
        ("sqlite:///", "it names no database file"),
        ("sqlite:///data/", "it names no database file"),
        ("sqlite:///:memory:", "a durable store is a file"),
        ("sqlite:///chats.db?durability=disk", "durability must be 'process' or 'power', not 'disk'"),
        ("sqlite:///chats.db?durability=power&durability=process", "durability must be"),
        ("sqlite:///chats.db?timeout=3", "unknown parameter 'timeout' for SQLite"),
        ("postgresql://db:port/chats", "Port could not be cast to integer value as 'port'"),
        ("postgresql://db/chats?durability=", "durability must be 'process' or 'power', not ''"),
        ("memory:///chats", "a memory store has a name at most (memory://NAME)"),
    ],
)
def test_a_malformed_url_names_itself_what_is_wrong_and_the_accepted_forms(url: str, why: str):
    with pytest.raises(StoreURLError) as caught:
        parse_store_url(url)

    message = str(caught.value)
    assert message.startswith(f"malformed store URL {url!r}: {why}")
    assert message.endswith(
        "the accepted forms are sqlite:///relative/path.db, sqlite:////absolute/path.db, or "
        "postgresql://user:password@host:port/database, either ending with ?durability=power if need be; "
        "or memory:// (kept in this process only)"
    )
    assert isinstance(caught.value, ValueError)


def test_open_store_refuses_a_malformed_url_and_a_non_store():
    with pytest.raises(StoreURLError, match="unknown scheme 'redis'"):
        open_store("redis://localhost/0")
    with pytest.raises(TypeError, match="a store is a URL string or a ChatStore, not int"):
        open_store(42)  # type: ignore[arg-type]


def test_an_unknown_libpq_parameter_is_a_malformed_url(postgres_database: str):
    with pytest.raises(StoreURLError, match="invalid URI query parameter"):
        open_store(postgres_database + "?colour=blue")


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        ("postgresql://app:s3cret@db:5432/chats", "postgresql://app:***@db:5432/chats"),
        ("postgresql://app:p%40ss@db/chats?sslmode=require", "postgresql://app:***@db/chats?sslmode=require"),
        (
            "postgresql://app@db/chats?password=s3cret&sslmode=require",
            "postgresql://app@db/chats?password=***&sslmode=require",
        ),
        ("postgresql://app@db/chats", "postgresql://app@db/chats"),
        ("sqlite:////tmp/chats.db", "sqlite:////tmp/chats.db"),
    ],
)
def test_redaction_hides_passwords_and_keeps_the_rest(url: str, redacted: str):
    assert redact(url) == redacted
    assert parse_store_url(url).redacted == redacted


def test_a_malformed_url_with_a_password_does_not_show_it():
    with pytest.raises(StoreURLError) as caught:
        parse_store_url("postgresql://app:s3cret@db:port/chats")

    assert "s3cret" not in str(caught.value)
