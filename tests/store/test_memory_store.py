"""``memory://``: a store that behaves as the durable ones do, for as long as the process lives."""

from __future__ import annotations

import pytest

from parley.cli import main
from parley.store import ChatInUseError, MemoryStore, RecordConflictError, StoreError, open_store

from .store_helpers import message_record, record


def test_one_memory_store_per_name_per_process():
    store = open_store("memory://one")

    assert isinstance(store, MemoryStore)
    assert open_store("memory://one") is store
    assert open_store("memory://two") is not store
    store.close()


def test_records_leases_conflicts_and_listing():
    store = MemoryStore()
    log = store.open("chat")
    log.append([record(0, "chat_started"), message_record(1)])

    with pytest.raises(ChatInUseError, match="chat 'chat' in memory:// is in use by process"):
        store.open("chat")
    with pytest.raises(RecordConflictError, match="seq 1"):
        log.append([message_record(2), message_record(1)])

    assert log.records() == [record(0, "chat_started"), message_record(1)]
    [listed] = store.list_chats()
    assert (listed.chat_id, listed.record_count, listed.first_kind, listed.last_kind) == (
        "chat",
        2,
        "chat_started",
        "message",
    )
    assert listed.holder is not None and store.chat_ids() == ["chat"]
    log.close()
    assert store.list_chats()[0].holder is None
    store.open("chat").close()


async def test_async_appends():
    store = MemoryStore()
    with store.open("chat") as log:
        await log.a_append([message_record(0)])

    assert store.load("chat") == [message_record(0)]


def test_a_closed_store_refuses_work():
    store = MemoryStore()
    log = store.open("chat")
    store.close()

    assert log.closed
    with pytest.raises(StoreError, match="closed"):
        store.open("other")


def test_the_cli_says_it_cannot_read_another_processs_memory(capsys):
    assert main(["chats", "list", "memory://"]) == 2

    printed = capsys.readouterr()
    assert printed.out == ""
    assert "a memory store keeps its chats inside the process that runs them" in " ".join(printed.err.split())
