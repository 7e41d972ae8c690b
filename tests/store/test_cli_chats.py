"""``parley chats list|show|export``: plain text when piped, rich at a terminal, JSON for export."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

from parley.cli import main
from parley.store import ChatStore, read_transcript

from .store_helpers import message_record, record, support_chat_records

SHOWN = """\
chat support-1: swarm of triage, billing; finished, 12 records

  context refunds = []
customer: I was charged twice
triage: calls transfer_to_billing(issue="charged twice")
_Swarm_Tool_Executor: ↳ Transferred to billing.
  context issue = "charged twice"
  handoff to billing
billing: calls refund_charge(charge_id="CH-301")
_Swarm_Tool_Executor: ↳ Refunded $29.00 for CH-301.
  context refunds = ["CH-301"], issue removed
billing: Refunded.
         It reaches your card in 3-5 days.

stop reason: terminate_target: billing's after-work ends the chat
usage: gpt-4o-mini: 3 calls (1 from the cache), 960 tokens (900 prompt, 60 completion), $0.000300
context: {"refunds": ["CH-301"]}
summary: Refunded.
         It reaches your card in 3-5 days.
"""


@pytest.fixture
def support_chat(store: ChatStore) -> str:
    """A store holding the finished support chat ``support-1`` (and nothing else of this test's)."""
    with store.open("support-1") as log:
        log.append(support_chat_records())
    yield store.url
    _forget(store, "support-1")


def test_show_prints_the_conversation_and_how_it_ended(support_chat: str, capsys):
    assert main(["chats", "show", support_chat, "support-1"]) == 0

    assert capsys.readouterr().out == SHOWN


def test_export_prints_the_chat_as_json(support_chat: str, store: ChatStore, capsys):
    assert main(["chats", "export", support_chat, "support-1"]) == 0

    exported = json.loads(capsys.readouterr().out)
    assert list(exported) == [
        "chat_id",
        "shape",
        "agents",
        "finished",
        "messages",
        "context_variables",
        "stop_reason",
        "usage",
        "summary",
    ]
    assert exported == read_transcript("support-1", store.load("support-1")).to_json()
    assert (exported["finished"], len(exported["messages"]), exported["summary"]) == (
        True,
        6,
        "Refunded.\nIt reaches your card in 3-5 days.",
    )
    assert exported["messages"][1]["tool_calls"][0]["function"]["name"] == "transfer_to_billing"
    assert exported["stop_reason"]["kind"] == "terminate_target"
    assert exported["usage"]["usage_including_cached_inference"]["gpt-4o-mini"]["total_tokens"] == 960


def test_export_records_prints_the_raw_records(support_chat: str, capsys):
    assert main(["chats", "export", support_chat, "support-1", "--records"]) == 0

    exported = json.loads(capsys.readouterr().out)
    assert [(entry["seq"], entry["kind"]) for entry in exported] == [
        (stored.seq, stored.kind) for stored in support_chat_records()
    ]
    assert exported[2]["data"] == {"kind": "turn", "speaker": "triage", "some_future_key": True}


def test_list_prints_one_line_per_chat(support_chat: str, store: ChatStore, capsys):
    with store.open("support-2") as log:
        log.append([record(0, "chat_started"), message_record(1)])
    running = store.open("support-3")
    running.append([record(0, "chat_started")])

    assert main(["chats", "list", support_chat]) == 0

    header, *lines = [re.split(r"\s{2,}", line) for line in capsys.readouterr().out.splitlines()]
    assert header == ["chat", "records", "started", "updated", "last record", "status"]
    rows = {line[0]: line for line in lines}
    assert list(rows) == ["support-1", "support-2", "support-3"]
    assert (rows["support-1"][1], rows["support-1"][4:]) == ("12", ["result", "finished"])
    assert (rows["support-2"][1], rows["support-2"][4:]) == ("2", ["message", "unfinished"])
    assert (rows["support-3"][1], rows["support-3"][4]) == ("1", "chat_started")
    assert rows["support-3"][5].startswith(
        f"running: process {os.getpid()} on host {socket.gethostname()} (since "
    )
    assert rows["support-1"][2].endswith(" UTC")
    running.close()
    _forget(store, "support-2")
    _forget(store, "support-3")


def test_rich_output_at_a_terminal(support_chat: str, capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")

    assert main(["chats", "show", support_chat, "support-1"]) == 0

    out = capsys.readouterr().out
    assert "\x1b[" in out
    for text in ("customer", "I was charged twice", "transfer_to_billing", "terminate_target", "960 tokens"):
        assert text in out


def test_an_unknown_chat_is_an_error_that_says_how_to_list_the_chats(support_chat: str, capsys):
    assert main(["chats", "show", support_chat, "no-such-chat"]) == 1

    error = capsys.readouterr().err
    assert (
        f"error: no chat 'no-such-chat' in {support_chat} (parley chats list {support_chat} lists its chats)"
        in error
    )


@pytest.mark.parametrize("chat_id", ["", "   ", "tab\there"])
def test_a_chat_id_no_chat_can_have_is_a_usage_error(support_chat: str, chat_id: str, capsys):
    assert main(["chats", "show", support_chat, chat_id]) == 2

    assert "error: a chat_id must be a non-empty string of printable characters" in capsys.readouterr().err


def test_text_with_lone_surrogates_is_shown_and_exported_as_escapes(tmp_path: Path, capsys):
    """A model's reply with a byte that did not decode is stored, and the command line shows it."""
    from parley import ConversableAgent, FunctionModel
    from parley.models import ModelResponse, Usage

    def reply(request: object) -> ModelResponse:
        return ModelResponse({"role": "assistant", "content": "bad \udcff byte"}, Usage(1, 1))

    url = f"sqlite:///{tmp_path / 'chats.db'}"
    for _ in range(2):  # the second run returns the recorded result
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
        result = user.initiate_chat(assistant, "hi \ud800", max_turns=1, store=url, chat_id="s", silent=True)
        assert [m["content"] for m in result.chat_history] == ["hi \ud800", "bad \udcff byte"]

    assert main(["chats", "show", url, "s"]) == 0
    assert "assistant: bad \\udcff byte" in capsys.readouterr().out
    assert main(["chats", "export", url, "s"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert [m["content"] for m in exported["messages"]] == ["hi \ud800", "bad \udcff byte"]


def test_a_missing_store_is_an_error_and_is_not_created(tmp_path: Path, capsys):
    missing = tmp_path / "typo.db"

    assert main(["chats", "list", f"sqlite:///{missing}"]) == 2

    assert (
        f"error: cannot open the store sqlite:///{missing}: there is no file {missing}"
        in capsys.readouterr().err
    )
    assert not missing.exists()


def test_a_malformed_url_is_an_error(capsys):
    assert main(["chats", "show", "chats.db", "x"]) == 2

    assert (
        "error: malformed store URL 'chats.db': it has no scheme; the accepted forms are"
        in capsys.readouterr().err
    )


def test_an_unreachable_server_is_an_error(capsys):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    assert main(["chats", "list", f"postgresql://parley:pw@127.0.0.1:{port}/chats"]) == 2

    error = capsys.readouterr().err
    assert f"error: cannot reach the store postgresql://parley:***@127.0.0.1:{port}/chats" in error
    assert ":pw@" not in error


def _forget(store: ChatStore, chat_id: str) -> None:
    """Remove a chat, so that the next test on this module's PostgreSQL database starts without it."""
    if store.url.startswith("sqlite"):
        return
    import psycopg

    from services import postgres_url

    url = postgres_url().rsplit("/", 1)[0] + "/" + store.url.rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as connection:
        for table in ("parley_records", "parley_chats", "parley_leases"):
            connection.execute(f"DELETE FROM {table} WHERE chat_id = %s", (chat_id,))


def _chat_saying(url: str, text: str) -> None:
    from parley import ConversableAgent, ScriptedModel

    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel([text]), human_input_mode="NEVER")
    user.initiate_chat(assistant, "hi", max_turns=1, store=url, chat_id="c", silent=True)


@pytest.mark.parametrize("terminal", [False, True])
def test_control_characters_in_a_message_are_shown_escaped_not_sent_to_the_terminal(
    tmp_path: Path, capsys, monkeypatch, terminal: bool
):
    if terminal:
        monkeypatch.setenv("FORCE_COLOR", "1")
    url = f"sqlite:///{tmp_path / 'chats.db'}"
    _chat_saying(url, "All good.\x1b[2K\r\x1b[1Arewritten\x1b]0;title\x07")

    assert main(["chats", "show", url, "c"]) == 0

    out = capsys.readouterr().out
    assert "All good.\\x1b[2K\\x0d\\x1b[1Arewritten\\x1b]0;title\\x07" in out
    assert "\x1b[2K" not in out and "\x07" not in out and "\r" not in out


def test_a_long_unbroken_text_is_shown_whole_at_a_terminal(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "80")
    url = f"sqlite:///{tmp_path / 'chats.db'}"
    link = "https://example.com/download?token=" + "abcdef0123" * 20 + "END"
    _chat_saying(url, link)

    assert main(["chats", "show", url, "c"]) == 0

    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    conversation = out.split("stop reason")[0]
    wrapped = [line.split()[-1] for line in conversation.splitlines() if "abcdef" in line or "END" in line]
    assert "…" not in out
    assert "".join(wrapped) == link


def test_piped_list_lines_up_chat_ids_of_wide_characters(tmp_path: Path, capsys):
    from parley import ConversableAgent, ScriptedModel

    url = f"sqlite:///{tmp_path / 'chats.db'}"
    for chat_id in ("plain", "注文-日本"):
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["ok"]), human_input_mode="NEVER")
        user.initiate_chat(assistant, "hi", max_turns=1, store=url, chat_id=chat_id, silent=True)

    assert main(["chats", "list", url]) == 0

    lines = capsys.readouterr().out.splitlines()
    from rich.cells import cell_len

    starts = {cell_len(line[: line.index(" 5 ")]) for line in lines[1:]}
    assert len(starts) == 1, lines
