"""Both stores, one suite: records round-trip, conflicts, leases across processes, durability, listing."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from parley.store import (
    SCHEMA_VERSION,
    ChatInUseError,
    ChatLog,
    ChatStore,
    Holder,
    RecordConflictError,
    StoredRecord,
    StoreError,
    StoreUnavailableError,
    StoreVersionError,
    open_store,
)

from .store_helpers import message_record, record

HOLD = """
import sys
from parley.store import open_store
log = open_store(sys.argv[1]).open(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
"""

APPEND_THEN_WAIT = """
import sys
from parley.store import StoredRecord, open_store
log = open_store(sys.argv[1]).open(sys.argv[2])
log.append([StoredRecord(0, "chat_started", '{"kind": "chat_started"}')])
log.append([StoredRecord(1, "message", sys.argv[3])])
print("ready", flush=True)
sys.stdin.readline()
"""


def test_appended_records_come_back_in_seq_order(store: ChatStore, chat_id: str):
    log = store.open(chat_id)
    started = record(0, "chat_started", shape="chat", agents=["user", "assistant"])
    log.append([started])
    log.append([message_record(1, "user"), message_record(2, "assistant")])
    log.append([message_record(3, "user")])

    expected = [started, message_record(1, "user"), message_record(2, "assistant"), message_record(3, "user")]
    assert log.records() == expected
    assert store.load(chat_id) == expected
    assert isinstance(log, ChatLog)
    log.close()


def test_records_keep_any_text_exactly(store: ChatStore, chat_id: str):
    text = json.dumps({"kind": "message", "message": {"content": 'naïve ✓ "quoted" \\ \n\t and \u0000 nul'}})
    with store.open(chat_id) as log:
        log.append([StoredRecord(0, "message", text)])

    assert store.load(chat_id)[0].data == text


def test_a_reopened_chat_has_its_records_and_goes_on(store: ChatStore, chat_id: str):
    with store.open(chat_id) as log:
        log.append([message_record(0), message_record(1)])

    with store.open(chat_id) as log:
        assert [stored.seq for stored in log.records()] == [0, 1]
        log.append([message_record(2)])

    assert [stored.seq for stored in store.load(chat_id)] == [0, 1, 2]


def test_a_new_store_object_on_the_same_url_sees_the_chats(store_url: str, chat_id: str):
    first = open_store(store_url)
    with first.open(chat_id) as log:
        log.append([message_record(0)])
    first.close()

    second = open_store(store_url)
    try:
        assert second is not first
        assert second.load(chat_id) == [message_record(0)]
    finally:
        second.close()


def test_open_store_gives_one_store_per_url(store: ChatStore, store_url: str):
    assert open_store(store_url) is store
    assert open_store(store) is store


def test_appending_a_seq_already_stored_is_a_conflict_that_stores_nothing(store: ChatStore, chat_id: str):
    log = store.open(chat_id)
    log.append([message_record(0), message_record(1)])

    with pytest.raises(
        RecordConflictError, match=rf"chat {re.escape(repr(chat_id))} .* seq 1: someone else wrote"
    ) as caught:
        log.append([message_record(2), message_record(1, content="overwritten?")])

    assert caught.value.seq == 1
    assert store.load(chat_id) == [message_record(0), message_record(1)]
    log.append([message_record(2)])  # the log goes on
    assert [stored.seq for stored in store.load(chat_id)] == [0, 1, 2]
    log.close()


def test_a_seq_repeated_within_one_append_is_a_conflict(store: ChatStore, chat_id: str):
    with store.open(chat_id) as log:
        with pytest.raises(RecordConflictError, match="seq 0"):
            log.append([message_record(0), message_record(0)])

        assert log.records() == []


def test_an_empty_append_stores_nothing(store: ChatStore, chat_id: str):
    with store.open(chat_id) as log:
        log.append([])

    assert store.load(chat_id) == []
    assert chat_id not in {chat.chat_id for chat in store.list_chats()}


def test_load_needs_no_lease_and_an_unknown_chat_has_no_records(store: ChatStore, chat_id: str):
    with store.open(chat_id) as log:
        log.append([message_record(0)])
        assert store.load(chat_id) == [message_record(0)]  # while the chat is open

    assert store.load(f"{chat_id}-unknown") == []


def test_a_chat_open_in_this_process_cannot_be_opened_twice(store: ChatStore, chat_id: str):
    log = store.open(chat_id)

    with pytest.raises(ChatInUseError) as caught:
        store.open(chat_id)

    assert caught.value.holder is not None
    assert caught.value.holder.pid == _pid()
    log.close()
    log.close()  # closing twice is harmless
    store.open(chat_id).close()


def test_a_chat_held_by_a_live_process_is_in_use_and_taken_over_at_once_when_it_is_killed(
    store: ChatStore, store_url: str, chat_id: str, child
):
    holder = child(HOLD, store_url, chat_id)

    with pytest.raises(
        ChatInUseError, match=rf"chat {re.escape(repr(chat_id))} .* in use by process {holder.pid} on host"
    ):
        store.open(chat_id)
    with pytest.raises(ChatInUseError) as caught:
        store.open(chat_id)
    assert caught.value.holder is not None
    assert (caught.value.holder.pid, caught.value.holder.host) == (holder.pid, socket.gethostname())
    assert datetime.now(UTC) - caught.value.holder.since < timedelta(minutes=5)

    holder.kill()

    log = store.open(chat_id)  # at once: no lease timeout to wait for
    log.append([message_record(0)])
    log.close()


def test_a_chat_closed_by_another_process_can_be_opened(
    store: ChatStore, store_url: str, chat_id: str, child
):
    holder = child(HOLD, store_url, chat_id)
    holder.finish()

    store.open(chat_id).close()


def test_a_record_survives_the_process_being_killed_right_after_append_returns(
    store: ChatStore, store_url: str, chat_id: str, child
):
    data = json.dumps({"kind": "message", "speaker": "assistant", "message": {"content": "kept"}})
    writer = child(APPEND_THEN_WAIT, store_url, chat_id, data)
    writer.kill()

    assert store.load(chat_id) == [
        StoredRecord(0, "chat_started", '{"kind": "chat_started"}'),
        StoredRecord(1, "message", data),
    ]
    with store.open(chat_id) as log:  # and the dead writer's chat is free
        log.append([message_record(2)])


def test_a_store_written_by_a_newer_schema_version_is_refused(store: ChatStore, store_url: str):
    store.close()
    newer = SCHEMA_VERSION + 1
    _set_schema_version(store_url, newer)
    try:
        with pytest.raises(
            StoreVersionError, match=f"schema version {newer}, newer than version {SCHEMA_VERSION}"
        ) as caught:
            open_store(store_url)
        assert (caught.value.found, caught.value.supported) == (newer, SCHEMA_VERSION)
    finally:
        _set_schema_version(store_url, SCHEMA_VERSION)
    open_store(store_url).close()


def test_listing_says_what_each_chat_is(store: ChatStore, chat_id: str):
    before = datetime.now(UTC) - timedelta(seconds=1)
    finished = f"{chat_id}-finished"
    with store.open(finished) as log:
        log.append([record(0, "chat_started"), message_record(1)])
        log.append([record(2, "stopped"), record(3, "result", summary="done")])
    running = store.open(f"{chat_id}-running")
    running.append([record(0, "chat_started"), message_record(1), message_record(2)])
    idle = f"{chat_id}-idle"
    with store.open(idle) as log:
        log.append([record(0, "chat_started")])

    chats = {chat.chat_id: chat for chat in store.list_chats() if chat.chat_id.startswith(chat_id)}

    assert list(chats) == [finished, f"{chat_id}-running", idle]  # oldest first
    done = chats[finished]
    assert (done.record_count, done.first_kind, done.last_kind, done.finished) == (
        4,
        "chat_started",
        "result",
        True,
    )
    assert before <= done.created_at <= done.updated_at <= datetime.now(UTC)
    assert done.holder is None
    live = chats[f"{chat_id}-running"]
    assert (live.record_count, live.last_kind, live.finished) == (3, "message", False)
    assert live.holder is not None and live.holder.pid == _pid()
    assert chats[idle].holder is None and chats[idle].record_count == 1
    running.close()
    assert next(chat for chat in store.list_chats() if chat.chat_id == f"{chat_id}-running").holder is None


def test_listing_shows_a_chat_held_by_another_live_process(
    store: ChatStore, store_url: str, chat_id: str, child
):
    with store.open(chat_id) as log:
        log.append([record(0, "chat_started")])
    holder = child(HOLD, store_url, chat_id)

    listed = next(chat for chat in store.list_chats() if chat.chat_id == chat_id)
    assert listed.holder is not None and listed.holder.pid == holder.pid

    holder.kill()

    def listed_holder() -> Holder | None:
        return next(chat for chat in store.list_chats() if chat.chat_id == chat_id).holder

    for _ in range(100):  # the kernel closes a killed process's connection; the server then notices
        if listed_holder() is None:
            break
        time.sleep(0.05)
    assert listed_holder() is None


async def test_a_thousand_chats_append_concurrently_from_asyncio_tasks(store: ChatStore, chat_id: str):
    async def run(number: int) -> None:
        log = store.open(f"{chat_id}-{number}")
        try:
            for seq in range(3):
                await log.a_append([message_record(seq, content=f"chat {number} message {seq}")])
                await asyncio.sleep(0)
        finally:
            log.close()

    await asyncio.gather(*(run(number) for number in range(1000)))

    for number in (0, 1, 499, 998, 999):
        assert store.load(f"{chat_id}-{number}") == [
            message_record(seq, content=f"chat {number} message {seq}") for seq in range(3)
        ]
    counts = [chat.record_count for chat in store.list_chats() if chat.chat_id.startswith(f"{chat_id}-")]
    assert counts == [3] * 1000


def test_threads_append_to_their_own_chats_at_once(store: ChatStore, chat_id: str):
    errors: list[BaseException] = []

    def run(thread: int) -> None:
        try:
            for number in range(10):
                with store.open(f"{chat_id}-{thread}-{number}") as log:
                    for seq in range(5):
                        log.append([message_record(seq)])
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(thread,)) for thread in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    counts = [chat.record_count for chat in store.list_chats() if chat.chat_id.startswith(f"{chat_id}-")]
    assert counts == [5] * 80


def test_a_closed_log_or_store_refuses_to_write(store_url: str, chat_id: str):
    store = open_store(store_url)
    log = store.open(chat_id)
    other = store.open(f"{chat_id}-other")
    log.close()
    with pytest.raises(StoreError, match="closed"):
        log.append([message_record(0)])

    store.close()
    store.close()  # closing twice is harmless

    assert other.closed  # closing the store closed its logs, releasing their leases
    with pytest.raises(StoreError, match="closed"):
        store.load(chat_id)
    reopened = open_store(store_url)
    assert reopened is not store
    reopened.open(f"{chat_id}-other").close()
    reopened.close()


@pytest.mark.parametrize("chat", ["", None, 42, " ", "a\x00b", "line\nbreak"])
def test_a_chat_id_is_a_non_empty_string(store: ChatStore, chat):
    with pytest.raises(ValueError, match="chat_id must be a non-empty string"):
        store.open(chat)


@pytest.mark.parametrize("chat", [" t1", "t1 "])
def test_a_chat_id_with_spaces_around_it_is_refused(store: ChatStore, chat: str):
    """``"t1 "`` would be another chat than ``"t1"`` that reads the same in ``parley chats list``."""
    with pytest.raises(ValueError, match="a chat_id must not begin or end with spaces"):
        store.open(chat)
    assert store.load("t1") == []


def test_the_power_durability_keeps_records_too(store_url: str, chat_id: str):
    separator = "&" if "?" in store_url else "?"
    store = open_store(f"{store_url}{separator}durability=power")
    try:
        assert store.url.endswith("durability=power")
        with store.open(chat_id) as log:
            log.append([message_record(0)])
        assert store.load(chat_id) == [message_record(0)]
    finally:
        store.close()


def _pid() -> int:
    import os

    return os.getpid()


def _set_schema_version(store_url: str, version: int) -> None:
    if store_url.startswith("sqlite:///"):
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as connection:
            connection.execute(
                "UPDATE parley_meta SET value = ? WHERE key = 'schema_version'", (str(version),)
            )
        return
    import psycopg

    with psycopg.connect(store_url, autocommit=True) as connection:
        connection.execute("UPDATE parley_meta SET value = %s WHERE key = 'schema_version'", (str(version),))


def test_a_schema_version_that_is_no_number_is_a_clear_error(store: ChatStore, store_url: str):
    store.close()
    _set_schema_version(store_url, "two")  # type: ignore[arg-type]
    try:
        with pytest.raises(StoreUnavailableError, match="its schema version is 'two', not a number"):
            open_store(store_url)
    finally:
        _set_schema_version(store_url, SCHEMA_VERSION)
    open_store(store_url).close()


def test_a_sqlite_store_in_a_missing_directory_or_on_a_directory_says_so(tmp_path):
    missing = tmp_path / "no-such-dir" / "chats.db"
    with pytest.raises(
        StoreUnavailableError, match=f"there is no directory {re.escape(str(missing.parent))}"
    ):
        open_store(f"sqlite:///{missing}")
    with pytest.raises(StoreUnavailableError, match="is a directory"):
        open_store(f"sqlite:///{tmp_path}")
